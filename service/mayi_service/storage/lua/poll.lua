-- poll (after lease.lua): what a bot's decisions poll reads, in one call on a single Redis
-- (the game keys are built here from the bot's games hash: a single Redis lets a script
-- name them).
--
-- KEYS: lookup (the token's bot id), and leases (the client's lease set) with op.
-- ARGV: bot (the bot id; '': look the token up), ttl (s: push the lookup's expiry back; 0:
--   not), op ('take' a lease, 'give' it back, or ''), limit (leases the client may hold),
--   ms (a lease lasts), bot_head, seq_tail, games_tail (the bot's keys, cut where its id
--   goes), game_head, game_tail (a game's hash key, cut where its id goes), lease (its id).
-- Answers false for an unknown token, else {bot id, wake number, games hash (flat), each
-- of those games' hashes (flat), 1 if it took a lease}.
local lookup, leases = KEYS[1], KEYS[2]
local bot, ttl, op, limit, ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local bot_head, seq_tail, games_tail, game_head, game_tail = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local lease = ARGV[11]
if bot == '' then
  if ttl == '0' then
    bot = redis.call('GET', lookup)
  else
    bot = redis.call('GETEX', lookup, 'EX', ttl)
  end
  if not bot then return false end
end
local took = 0
if op == 'take' then
  took = take_lease(leases, lease, tonumber(limit), tonumber(ms))
elseif op == 'give' then
  redis.call('ZREM', leases, lease)
end
local head = bot_head .. bot
local seq = redis.call('GET', head .. seq_tail) or '0'
local games = redis.call('HGETALL', head .. games_tail)
local hashes = {}
for i = 1, #games, 2 do
  hashes[#hashes + 1] = redis.call('HGETALL', game_head .. games[i] .. game_tail)
end
return {bot, seq, games, hashes, took}
