-- Renew a match's lease while this run holds it.
-- KEYS: lease
-- ARGV: token (this run's), ms (the lease's new length)
-- Answers {'renewed'} or {'lost'} (another run holds it, or it lapsed).
local lease = KEYS[1]
local token, ms = ARGV[1], ARGV[2]
if redis.call('GET', lease) ~= token then return {'lost'} end
redis.call('PEXPIRE', lease, ms)
return {'renewed'}
