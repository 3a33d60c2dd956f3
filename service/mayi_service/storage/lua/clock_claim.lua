-- clock_claim: after a commit, make its deadline the game's clock when the clock must run
-- sooner: when the game has none, when the pending one is later, or when it is overdue (lost).
--
-- KEYS: game (hash; its field clock_at is the time of the one job that is the game's clock).
-- ARGV: want (the whole second the committed deadline needs), now (s), grace (s: a job this
--   late is taken to be lost).
-- Answers {'claimed', want, previous ('' for none)}: schedule a job at want (and drop the
-- previous one); or {'kept'}: the pending job runs in time.
local game = KEYS[1]
local want, now, grace = ARGV[1], ARGV[2], ARGV[3]
local at = redis.call('HGET', game, 'clock_at')
if at and tonumber(at) <= tonumber(want) and tonumber(at) >= tonumber(now) - tonumber(grace) then
  return {'kept'}
end
redis.call('HSET', game, 'clock_at', want)
return {'claimed', want, at or ''}
