-- renew_lease (after lease.lua): extend a waiting slot's lease.
--
-- KEYS: leases (the client's lease set).
-- ARGV: lease (its id), ms (it lasts this long from now).
-- Answers 1 if extended, 0 if it is gone (it expired).
local leases = KEYS[1]
local lease, ms = ARGV[1], tonumber(ARGV[2])
return renew_lease(leases, lease, ms)
