-- load: a game and its token map in one call (what a request with a token reads first).
--
-- KEYS: game (hash), tokens (hash), and, on a single Redis only, lookup (a bot token's
--   bot id), optional.
-- ARGV: ttl (s: push the lookup's expiry back to this; '': leave it).
-- Answers {game fields, token fields, the lookup's value or false}.
local game, tokens, lookup = KEYS[1], KEYS[2], KEYS[3]
local ttl = ARGV[1]
local found = false
if lookup then
  if ttl ~= nil and ttl ~= '' then
    found = redis.call('GETEX', lookup, 'EX', ttl)
  else
    found = redis.call('GET', lookup)
  end
end
return {redis.call('HGETALL', game), redis.call('HGETALL', tokens), found}
