-- Record a finished ladder match and its players' new ratings, once.
-- KEYS: match, ratings (hash entrant -> JSON), active, open, done (sorted set by completion),
--       seq (completion counter), rev (bumped by every rating change), history... (one list per player, in ARGV's order)
-- ARGV: rev (the rev the ratings were read at), finished (the match's JSON), keep (history entries kept),
--       then per player: entrant, rating (JSON), history entry (JSON)
-- Answers {'recorded', seq}, {'finished'} (recorded already), {'stale'} (ratings changed since rev: read again)
-- or {'gone'} (no such match).
local match_key, ratings, active, open, done, seq_key, rev_key = unpack(KEYS, 1, 7)
local rev, finished, keep = ARGV[1], ARGV[2], tonumber(ARGV[3])
local match = redis.call('GET', match_key)
if not match then return {'gone'} end
if cjson.decode(match)['status'] == 'finished' then return {'finished'} end
if (redis.call('GET', rev_key) or '0') ~= rev then return {'stale'} end
local players = (#ARGV - 3) / 3
for i = 1, players do
  local entrant, rating, history = ARGV[3 * i + 1], ARGV[3 * i + 2], ARGV[3 * i + 3]
  redis.call('HSET', ratings, entrant, rating)
  if tonumber(redis.call('HINCRBY', active, entrant, -1)) <= 0 then redis.call('HDEL', active, entrant) end
  redis.call('RPUSH', KEYS[7 + i], history)
  redis.call('LTRIM', KEYS[7 + i], -keep, -1)
end
local id = cjson.decode(finished)['match_id']
local seq = redis.call('INCR', seq_key)
redis.call('SET', match_key, finished)
redis.call('SREM', open, id)
redis.call('ZADD', done, seq, id)
redis.call('INCR', rev_key)
return {'recorded', seq}
