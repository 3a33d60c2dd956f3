-- clock_moved: the clock job due at job_at has run (or the sweeper takes a lost clock over):
-- if it is still the game's clock, move the clock to the game's current deadline.
--
-- KEYS: game (hash: clock_at, deadline, status).
-- ARGV: job_at ('': the sweeper, which takes over whatever the clock is), at_least (the
--   earliest time the next job may be at: never the running job's own).
-- Answers {'other'} (another job is the game's clock: nothing to do), {'none'} (the game
-- needs no clock any more: clock_at is dropped), or {'at', time} (schedule a job then: the
-- deadline rounded up to a whole second, at least at_least).
local game = KEYS[1]
local job_at, at_least = ARGV[1], ARGV[2]
local at = redis.call('HGET', game, 'clock_at')
if job_at ~= '' and at ~= job_at then return {'other'} end
local deadline = redis.call('HGET', game, 'deadline')
if (not deadline) or deadline == '' or redis.call('HGET', game, 'status') ~= 'playing' then
  redis.call('HDEL', game, 'clock_at')
  return {'none'}
end
local next_at = string.format('%d', math.max(math.ceil(tonumber(deadline)), tonumber(at_least)))
redis.call('HSET', game, 'clock_at', next_at)
return {'at', next_at}
