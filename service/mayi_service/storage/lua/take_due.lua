-- take_due: take the members of a due-set that are due, each made due again a lease later
-- (several sweepers share them: each member is taken by one).
--
-- KEYS: due (sorted set: member -> time it is due, s).
-- ARGV: now (s), again (the time they are due again), most (members taken at most).
-- Answers the members taken.
local due = KEYS[1]
local now, again, most = ARGV[1], ARGV[2], tonumber(ARGV[3])
local taken = redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, most)
for _, member in ipairs(taken) do redis.call('ZADD', due, again, member) end
return taken
