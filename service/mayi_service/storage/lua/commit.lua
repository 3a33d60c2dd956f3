-- commit: write one change to a game, if the game is still at the version it was read at.
--
-- KEYS: game (hash), events (stream), tokens (hash), idem (the idempotency record; the
--   game's key when there is none), archive (the archived events).
-- ARGV: version (read before the engine ran), idem_value ('' for none), idem_ttl (s),
--   expire ('': as it was, 0: never, n: in n s, every key of the game together),
--   then n_fields and n pairs field, value; n_events and n pairs id, event JSON;
--   n_tokens and n pairs digest, seat.
-- Answers {'gone'} (no such game), {'conflict'} (another version), {'duplicate'} (the
-- Idempotency-Key's answer is recorded already): nothing is written; or {'ok', version}.
local game, events, tokens, idem, archive = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local version, idem_value, idem_ttl, expire = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local i = 5

local current = redis.call('HGET', game, 'version')
if current == false then return {'gone'} end
if current ~= version then return {'conflict'} end
if idem_value ~= '' and redis.call('EXISTS', idem) == 1 then return {'duplicate'} end

local new_version = tonumber(current) + 1
local n = tonumber(ARGV[i]); i = i + 1
local fields = {'version', new_version}
for _ = 1, n do
  fields[#fields + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
  i = i + 2
end
redis.call('HSET', game, unpack(fields))
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('XADD', events, ARGV[i], 'e', ARGV[i + 1])
  i = i + 2
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('HSET', tokens, ARGV[i], ARGV[i + 1])
  i = i + 2
end
if idem_value ~= '' then
  if expire ~= '' and tonumber(expire) > 0 and tonumber(expire) < tonumber(idem_ttl) then idem_ttl = expire end
  redis.call('SET', idem, idem_value, 'EX', idem_ttl)
end
if expire ~= '' then
  for _, key in ipairs({game, events, tokens, archive}) do
    if tonumber(expire) > 0 then redis.call('EXPIRE', key, expire) else redis.call('PERSIST', key) end
  end
end
return {'ok', new_version}
