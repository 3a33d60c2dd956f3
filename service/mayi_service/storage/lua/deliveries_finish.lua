-- End an attempt's lease: the delivery is done, or its next attempt falls due.
-- KEYS: due
-- ARGV: attempt, lease (ms: the lease the job holds), then optionally next (the next attempt) and at (ms it falls due)
-- Answers {'finished'} or {'lost'} (the attempt was leased to another job, or is done).
local due = KEYS[1]
local attempt, lease, next_attempt, at = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local score = redis.call('ZSCORE', due, attempt)
if not score or tonumber(score) ~= tonumber(lease) then return {'lost'} end
redis.call('ZREM', due, attempt)
if next_attempt then redis.call('ZADD', due, at, next_attempt) end
return {'finished'}
