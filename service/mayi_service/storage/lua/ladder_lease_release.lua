-- Let go of a match's lease if this run still holds it.
-- KEYS: lease
-- ARGV: token (this run's)
-- Answers {'released'} or {'lost'} (another run holds it, or it lapsed).
local lease = KEYS[1]
local token = ARGV[1]
if redis.call('GET', lease) ~= token then return {'lost'} end
redis.call('DEL', lease)
return {'released'}
