-- take_lease (after lease.lua): take a waiting slot's lease.
--
-- KEYS: leases (the client's lease set).
-- ARGV: lease (its id), limit (leases the client may hold), ms (how long it lasts).
-- Answers 1 if taken, 0 if the client holds limit leases already.
local leases = KEYS[1]
local lease, limit, ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
return take_lease(leases, lease, limit, ms)
