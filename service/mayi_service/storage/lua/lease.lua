-- lease: functions over a client's waiting slots, held as leases (a library: the scripts
-- that use it follow it). A lease set is a sorted set, one per client, of lease id -> expiry
-- (ms, Redis' own clock). Taking a lease first drops the expired ones, then counts: a
-- refused attempt adds nothing and extends nothing. The key expires with its last lease.
local function lease_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function lease_keep(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, last[2]) end
end
-- 1 if lease was taken in key for ms milliseconds (fewer than limit unexpired), else 0.
local function take_lease(key, lease, limit, ms)
  local now = lease_now()
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= limit then return 0 end
  redis.call('ZADD', key, now + ms, lease)
  lease_keep(key)
  return 1
end
-- 1 if lease was extended to ms milliseconds from now, 0 if it is gone (it expired).
local function renew_lease(key, lease, ms)
  if not redis.call('ZSCORE', key, lease) then return 0 end
  redis.call('ZADD', key, lease_now() + ms, lease)
  lease_keep(key)
  return 1
end
