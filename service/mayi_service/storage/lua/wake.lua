-- wake: wake one bot for a game (its waiting polls look again), after a commit.
--
-- KEYS: seq (the bot's wake number), stream (its wake stream), account (its hash).
-- ARGV: game (the game id the entry names), keep (entries the stream keeps about),
--   want_url ('1': also answer the bot's webhook_url).
-- Answers {wake number, webhook_url or false}.
local seq, stream, account = KEYS[1], KEYS[2], KEYS[3]
local game, keep, want_url = ARGV[1], ARGV[2], ARGV[3]
local n = redis.call('INCR', seq)
redis.call('XADD', stream, 'MAXLEN', '~', keep, n .. '-0', 'g', game)
local url = false
if want_url == '1' then url = redis.call('HGET', account, 'webhook_url') end
return {n, url}
