-- Create a ladder match, if every entrant is entered and below its limit of games at once.
-- KEYS: entries (hash entrant -> entry JSON), active (hash entrant -> matches in progress),
--       match (the match's key), open (set of unfinished match ids), last (hash entrant -> when matched)
-- ARGV: match (JSON, with match_id), now, max_open (0: no bound), entrant... (in seat order)
-- Answers {'created'}, {'full'} (max_open matches are in progress) or {'refused', entrant}.
local entries, active, match_key, open, last = unpack(KEYS)
local match, now, max_open = ARGV[1], ARGV[2], tonumber(ARGV[3])
local entrants = {unpack(ARGV, 4)}
if max_open > 0 and redis.call('SCARD', open) >= max_open then return {'full'} end
for _, entrant in ipairs(entrants) do
  local entry = redis.call('HGET', entries, entrant)
  if not entry then return {'refused', entrant} end
  local limit = tonumber(cjson.decode(entry)['max_games'])
  if tonumber(redis.call('HGET', active, entrant) or '0') >= limit then return {'refused', entrant} end
end
for _, entrant in ipairs(entrants) do
  redis.call('HINCRBY', active, entrant, 1)
  redis.call('HSET', last, entrant, now)
end
redis.call('SET', match_key, match)
redis.call('SADD', open, cjson.decode(match)['match_id'])
return {'created'}
