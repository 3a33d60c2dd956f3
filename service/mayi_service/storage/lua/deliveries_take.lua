-- Lease the webhook attempts that are due (or whose lease ran out) to the dispatcher.
-- KEYS: due (sorted set: attempt -> ms its attempt falls due or its lease ends)
-- ARGV: now (ms), lease (ms the new leases end), most (attempts taken at once)
-- Answers {'taken', attempts, first} (first: the earliest score left, false when none).
local due = KEYS[1]
local now, lease, most = ARGV[1], ARGV[2], tonumber(ARGV[3])
local taken = redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, most)
for _, attempt in ipairs(taken) do redis.call('ZADD', due, lease, attempt) end
local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
return {'taken', taken, first[2] or false}
