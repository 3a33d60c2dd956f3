-- Renew an attempt's lease while it is still the one the job was given.
-- KEYS: due
-- ARGV: attempt, lease (ms: the lease the job holds), until (ms: the renewed lease's end)
-- Answers {'claimed', until} or {'lost'} (the attempt was leased to another job, or is done).
local due = KEYS[1]
local attempt, lease, until_ms = ARGV[1], ARGV[2], ARGV[3]
local score = redis.call('ZSCORE', due, attempt)
if not score or tonumber(score) ~= tonumber(lease) then return {'lost'} end
redis.call('ZADD', due, until_ms, attempt)
return {'claimed', until_ms}
