"""All Redis access of the service lives here.

Keys of one game share the hash tag ``{<game id>}`` so that Redis Cluster keeps
them in one slot and the commit script may touch them together:

``<prefix>:{<id>}:game``
    a hash: ``version``, ``seq`` (last event number), ``status``, ``deadline``,
    ``meta`` (JSON: variant, options, seats, names, rated, test block) and
    ``state`` (the engine's JSON state, once every seat is taken).
``<prefix>:{<id>}:events``
    a stream, one entry per event, ID ``<seq>-0``, field ``e`` = event JSON.
``<prefix>:{<id>}:tokens``
    a hash from SHA-256(token) to seat number. Tokens are never stored in clear.
``<prefix>:{<id>}:archive``
    the events of the rounds that have ended, as one zlib-compressed JSON array
    (the stream keeps only the current round's; once the game is over it is
    dropped). The game hash's ``archived_to`` is the last archived event.
``<prefix>:{<id>}:idem:<digest>``
    the first response to an Idempotency-Key, with the digest of its body.

Cross-game indexes: ``games:<status>`` and ``games:<status>:<variant>`` (game ids
sorted by creation time), ``deadlines`` (game ids by their clock time) and ``house`` (games
where a house seat must decide, by when that decision is overdue). On a single
Redis they share the tag ``{index}``. On a Redis Cluster each is split into
:data:`INDEX_SHARDS` shards, tagged ``{index:<n>}`` (a game's entries go to shard
``crc32(id) % shards``), so that the writes of every game do not all land on one slot
and one node; a listing, a count or the sweeper's look for due clocks reads every shard
in one pipeline and merges. Per-client keys (open tables ``open:<client>``, the leases of
waiting slots ``leases:<client>``) and lookups (``bot-token:<hash>``) are
:meth:`GameRepository.lookup_key`: under ``{index}`` on a single Redis, under their own
tag on a cluster, where they then spread over every node. No command or transaction
ever names keys of two slots.

Retention: every key of a game expires together, by Redis TTLs set in the same
commit as its status changes. A table waiting for players expires ``waiting_ttl``
seconds after its last change; a finished game (replay included) ``finished_ttl``
seconds after its end; a game in play never (its clock plays it out). Index entries
of expired games are dropped by :meth:`GameRepository.prune_indexes` (the sweeper).

A request with a token reads the game hash and its token map in one call
(:data:`LOAD_SCRIPT`; on a single Redis, a bot token's lookup too). Every change to a game
goes through :data:`COMMIT_SCRIPT`, which checks the version read before the engine ran and
writes the new state, version, events, tokens and idempotency record in one atomic step
(optimistic concurrency: a caller that lost the race reloads and tries again); on a single
Redis it then wakes the bots the commit gives a decision (:class:`Wake`), in the same call.
"""

from __future__ import annotations

import hmac
import json
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, NamedTuple

import redis

from mayi_engine import GameStatus
from mayi_service.storage import codec
from mayi_service.storage.connections import Scripts, is_cluster
from mayi_service.storage.hub import EventHub

#: The zlib level of the event archive: 8 packs these logs as small as 9 (within 1%), at a
#: half to a third of its CPU on a long log (bench/README.md, the clocks section).
ARCHIVE_LEVEL = 8

COMMIT_SCRIPT = """
local game, events, tokens, idem, archive = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local v = redis.call('HGET', game, 'version')
if v == false then return {-3} end
if v ~= ARGV[1] then return {-1} end
local idem_value, idem_ttl = ARGV[2], ARGV[3]
local clock_want, now, grace, expire = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local wake_game, wake_keep, want_urls = ARGV[8], ARGV[9], ARGV[10]
local house, game_id = ARGV[11], ARGV[12]
local i = 13
if idem_value ~= '' and redis.call('EXISTS', idem) == 1 then return {-2} end
local nv = tonumber(v) + 1
local n = tonumber(ARGV[i]); i = i + 1
local fields = {'version', nv}
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
-- Retention: every key of the game expires together (a positive time), or never (0).
if expire ~= '' then
  for _, key in ipairs({game, events, tokens, archive}) do
    if tonumber(expire) > 0 then redis.call('EXPIRE', key, expire) else redis.call('PERSIST', key) end
  end
end
-- (-1, -2, -3 above: VersionConflict, IdempotencyRecorded, GameGone in GameRepository.commit.)
-- The clock: a job must run by the new deadline. Take the job over (return its time)
-- if there is none, if the pending one is later, or if it is overdue (lost).
local scheduled = 0
if clock_want ~= '' then
  local at = redis.call('HGET', game, 'clock_at')
  if (not at) or tonumber(at) > tonumber(clock_want) or tonumber(at) < tonumber(now) - tonumber(grace) then
    redis.call('HSET', game, 'clock_at', clock_want)
    scheduled = tonumber(clock_want)
  end
end
-- The house due-set (KEYS[6] when ARGV[11] is not ''): the game is due there at ARGV[11]
-- (a house seat must decide), or leaves it ('drop').
local first_wake = 6
if house ~= '' then
  first_wake = 7
  if house == 'drop' then redis.call('ZREM', KEYS[6], game_id) else redis.call('ZADD', KEYS[6], house, game_id) end
end
-- The wake of the bots the commit gives a decision (a single Redis; the keys from
-- first_wake on: per bot its wake number, wake stream and account hash): an entry naming
-- the game in each bot's stream,
-- numbered by its wake number; with ARGV[10], each bot's webhook_url is returned. (pcall: a
-- wake that fails never fails the commit written above.)
local urls = {}
for k = first_wake, #KEYS, 3 do
  local n = redis.pcall('INCR', KEYS[k])
  if type(n) == 'number' then
    redis.pcall('XADD', KEYS[k + 1], 'MAXLEN', '~', wake_keep, n .. '-0', 'g', wake_game)
  end
  local url = false
  if want_urls ~= '' then
    url = redis.pcall('HGET', KEYS[k + 2], 'webhook_url')
    if type(url) ~= 'string' then url = false end
  end
  urls[#urls + 1] = url
end
return {nv, scheduled, urls}
"""

CLAIM_CLOCK_SCRIPT = """
-- The clock job due at ARGV[1] ('' for the sweeper, which takes over) has run: if it is
-- still the game's clock, move the clock to the game's current deadline (rounded up to
-- a whole second, and at least ARGV[2]) and return that time; 'none' if the game needs no
-- clock any more; '' if another job is the game's clock now.
local game = KEYS[1]
local at = redis.call('HGET', game, 'clock_at')
if ARGV[1] ~= '' and at ~= ARGV[1] then return '' end
local deadline = redis.call('HGET', game, 'deadline')
if (not deadline) or deadline == '' or redis.call('HGET', game, 'status') ~= 'playing' then
  redis.call('HDEL', game, 'clock_at')
  return 'none'
end
local want = math.max(math.ceil(tonumber(deadline)), tonumber(ARGV[2]))
redis.call('HSET', game, 'clock_at', string.format('%d', want))
return string.format('%d', want)
"""

TAKE_DUE_SCRIPT = """
-- The members of the due-set KEYS[1] due by ARGV[1] (at most ARGV[3]), each made due again at ARGV[2].
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], member) end
return due
"""

DROP_DUE_SCRIPT = """
-- Remove ARGV[1] from the due-set KEYS[1] if its score is still ARGV[2]: 1 if removed.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
return redis.call('ZREM', KEYS[1], ARGV[1])
"""

LOAD_SCRIPT = """
-- A game and its token map, in one call (what a request with a token reads first). With a
-- third key (a single Redis only): also that lookup's value (a bot token's bot id), its
-- expiry pushed back to ARGV[1] seconds when ARGV[1] is not ''.
local found = false
if KEYS[3] then
  if ARGV[1] ~= '' then
    found = redis.call('GETEX', KEYS[3], 'EX', ARGV[1])
  else
    found = redis.call('GET', KEYS[3])
  end
end
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), found}
"""

#: A clock job more than this many seconds late is taken to be lost.
CLOCK_GRACE_SECONDS = 5.0
#: Shards of each cross-game index on a Redis Cluster (see the module docstring).
INDEX_SHARDS = 16


class StoreError(Exception):
    """A commit the store refused (nothing was written)."""

    def __init__(self, game_id: str, message: str) -> None:
        super().__init__(message)
        self.game_id = game_id


class VersionConflict(StoreError):
    """The game moved on since it was read: reload it and try again."""

    def __init__(self, game_id: str, expected: int) -> None:
        super().__init__(game_id, f"Game {game_id} is no longer at version {expected}")
        self.expected = expected


class IdempotencyRecorded(VersionConflict):
    """The Idempotency-Key's first answer was recorded meanwhile: reload and replay it."""


class GameGone(StoreError):
    """There is no such game (never was, or it expired)."""

    def __init__(self, game_id: str) -> None:
        super().__init__(game_id, f"There is no game {game_id}")


#: Lua functions over a client's waiting slots, held as leases: a sorted set (one per client,
#: one key, so one slot on a cluster) of lease id -> expiry (milliseconds, Redis' own clock).
#: Taking one first drops the expired leases, then counts: a refused attempt adds nothing
#: and extends nothing. The key itself expires with its last lease. A holder renews its
#: lease while it waits and drops it when it ends; one that cannot (its process died,
#: Redis was down at its end) leaves a lease that expires on its own.
LEASE_LUA = """
local function lease_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function lease_keep(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, last[2]) end
end
local function take_lease(key, lease, limit, ms)
  local now = lease_now()
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= limit then return 0 end
  redis.call('ZADD', key, now + ms, lease)
  lease_keep(key)
  return 1
end
local function renew_lease(key, lease, ms)
  if not redis.call('ZSCORE', key, lease) then return 0 end
  redis.call('ZADD', key, lease_now() + ms, lease)
  lease_keep(key)
  return 1
end
"""
TAKE_LEASE_SCRIPT = LEASE_LUA + "return take_lease(KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))"
RENEW_LEASE_SCRIPT = LEASE_LUA + "return renew_lease(KEYS[1], ARGV[1], tonumber(ARGV[2]))"


class StreamSlotsFull(Exception):
    """A client holds as many event streams and waiting long-polls as it may."""

    def __init__(self, client: str, limit: int) -> None:
        super().__init__(f"{client} holds {limit} waiting requests already")
        self.client = client
        self.limit = limit


@dataclass(frozen=True)
class TableMeta:
    """A table's settings and players, as stored in the game hash's ``meta`` field (JSON
    with these keys, in this order; ``test`` only on a table that has a test block)."""

    variant: str
    #: The table options as sent (each checked by its OptionSpec in the engine).
    options: dict[str, Any]
    seats: int
    #: Per seat, the player's name, or ``None`` while the seat is open.
    names: tuple[str | None, ...]
    #: A table without a ``test`` block counts for ratings.
    rated: bool
    created_at: float
    #: The checked ``test`` block (``seed``, ``stacked_decks``, ``start_round``), if any.
    test: dict[str, Any] | None = None
    #: The seats a bot holds (stored only when there is one).
    bot_seats: tuple[int, ...] = ()
    #: The bot in each bot seat, as (seat, bot id) pairs (stored as ``bot_ids``, a seat → id
    #: object, only when there is one): a commit wakes the bots it gives a decision with no
    #: read of ``{<id>}:bots``. A meta stored before bot ids were kept lacks some (see
    #: :attr:`knows_bots`); its ``bot_seats`` are still read.
    bot_ids: tuple[tuple[int, str], ...] = ()
    #: The house bots seated, as (seat, bot name) pairs (stored only when there is one).
    house_bots: tuple[tuple[int, str], ...] = ()
    #: The ladder match this table is (stored only for one): its job plays the house seats.
    ladder: str | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "variant": self.variant,
            "options": self.options,
            "seats": self.seats,
            "names": list(self.names),
            "rated": self.rated,
            "created_at": self.created_at,
        }
        if self.test is not None:
            data["test"] = self.test
        if self.bot_seats:
            data["bot_seats"] = list(self.bot_seats)
        if self.bot_ids:
            data["bot_ids"] = {str(seat): bot_id for seat, bot_id in self.bot_ids}
        if self.house_bots:
            data["house_bots"] = {str(seat): name for seat, name in self.house_bots}
        if self.ladder:
            data["ladder"] = self.ladder
        return codec.dump(data)

    @classmethod
    def from_json(cls, raw: str | bytes) -> TableMeta:
        data = codec.load(raw)
        return cls(
            variant=data["variant"],
            options=data["options"],
            seats=data["seats"],
            names=tuple(data["names"]),
            rated=data["rated"],
            created_at=data["created_at"],
            test=data.get("test"),
            bot_seats=tuple(data.get("bot_seats", ())),
            bot_ids=tuple((int(seat), bot_id) for seat, bot_id in data.get("bot_ids", {}).items()),
            house_bots=tuple((int(seat), name) for seat, name in data.get("house_bots", {}).items()),
            ladder=data.get("ladder"),
        )

    def seated(
        self, seat: int, name: str, bot: bool = False, house_bot: str | None = None, bot_id: str | None = None
    ) -> TableMeta:
        """This table with ``name`` in ``seat`` (``bot``: a bot holds it; ``bot_id``: the bot
        of that id holds it; ``house_bot``: the house bot of that name, played by the job worker)."""
        names = tuple(name if i == seat else n for i, n in enumerate(self.names))
        return replace(
            self,
            names=names,
            bot_seats=(*self.bot_seats, seat) if bot or bot_id else self.bot_seats,
            bot_ids=(*self.bot_ids, (seat, bot_id)) if bot_id else self.bot_ids,
            house_bots=(*self.house_bots, (seat, house_bot)) if house_bot else self.house_bots,
        )

    @property
    def knows_bots(self) -> bool:
        """Does this meta name the bot of each of its bot seats (not one stored before bot ids were kept)?"""
        return len(self.bot_ids) == len(self.bot_seats)

    def house_bot(self, seat: int) -> str | None:
        """The name of the house bot in ``seat``, if one sits there."""
        return next((name for s, name in self.house_bots if s == seat), None)

    @property
    def full(self) -> bool:
        """Every seat is taken."""
        return all(self.names)


#: Tables' meta data read from their stored JSON, by that JSON (:func:`table_meta`).
_METAS: dict[bytes, TableMeta] = {}
#: Most entries of :data:`_METAS` (beyond: it starts again, empty).
METAS_KEPT = 1024


def table_meta(raw: bytes) -> TableMeta:
    """The :class:`TableMeta` stored as ``raw``, read once per text in this process: a table's
    meta data changes only while its seats fill, and every request reads it."""
    found = _METAS.get(raw)
    if found is None:
        if len(_METAS) >= METAS_KEPT:
            _METAS.clear()
        found = _METAS[raw] = TableMeta.from_json(raw)
    return found


@dataclass
class GameRecord:
    """One game as stored: its meta data, the engine state JSON, and counters."""

    id: str
    version: int
    seq: int
    status: GameStatus
    meta: TableMeta
    state: str | None
    deadline: float | None = None
    #: When the clock job of this game is due to run (see :mod:`mayi_service.play.clock`).
    clock_at: float | None = None


@dataclass(frozen=True)
class Wake:
    """The bots a commit wakes itself, on a single Redis (:meth:`GameRepository.commit`):
    once the commit is written, and only then, each bot's wake number is increased and its
    wake stream gets an entry naming the game, in the commit's own script.

    ``keys``: per bot in ``bots``, its wake number key, wake stream key and account hash
    key (:class:`mayi_service.bots.seats.Bots` names them). ``keep``: the entries each wake
    stream keeps. ``urls``: also read each bot's ``webhook_url`` (the commit answers them).
    """

    game_id: str
    bots: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    keep: int = 100
    urls: bool = False
    #: The game's entry in the house due-set (:meth:`GameRepository.house_due_key`), written by
    #: the commit: due at this time (s) when a house seat must decide, 0 to drop it; ``None``:
    #: untouched (:class:`mayi_service.bots.house.HouseBots` plans it).
    house: float | None = None


class Committed(NamedTuple):
    """What a commit made: the new version; the time at which the caller must schedule the
    game's clock job (0: none to schedule), decided atomically with the commit; and, when
    the change carried a :class:`Wake`, the bots the commit woke, each with its
    ``webhook_url`` (``None``: it has none, or the URLs were not asked for), by bot id (empty:
    the wake named no bot). ``woken`` is ``None`` when the change carried no wake: the
    caller wakes the bots, if any."""

    version: int
    clock_at: int = 0
    woken: dict[str, str | None] | None = None


@dataclass
class Change:
    """What one commit writes."""

    fields: dict[str, str] = field(default_factory=dict)
    events: list[tuple[int, str]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    idempotency: tuple[str, str] | None = None  # (key digest, record JSON)
    #: The clock time the game's new deadline needs (a whole second), or None.
    clock: int | None = None
    #: A round ended: its events move to the archive after the commit.
    round_ended: bool = False
    #: Retention: expire every key of the game in this many seconds (0: never; None: as it was).
    expire: int | None = None
    #: The bots the commit wakes itself (a single Redis only; ``None``: none, or the caller does).
    wake: Wake | None = None


class GameRepository:
    def __init__(
        self,
        client: redis.Redis,
        prefix: str = "mayi",
        idempotency_ttl: int = 86400,
        *,
        waiting_ttl: int = 0,
        finished_ttl: int = 0,
        index_shards: int | None = None,
    ) -> None:
        self.r = client
        #: Shards of each cross-game index (1: the ``{index}`` keys of a single Redis); by
        #: default :data:`INDEX_SHARDS` on a Redis Cluster, else 1.
        self.index_shards = index_shards or (INDEX_SHARDS if is_cluster(client) else 1)
        #: One Redis, not a cluster: a script may name keys of any hash tag (the commit wakes
        #: bots and the load looks a bot token up in the same call).
        self.single = not is_cluster(client)
        self.prefix = prefix
        self.idempotency_ttl = idempotency_ttl
        #: Retention, in seconds (0: kept for ever): a table waiting for players, a finished game.
        self.waiting_ttl = waiting_ttl
        self.finished_ttl = finished_ttl
        self._commit = client.register_script(COMMIT_SCRIPT)
        self._claim_clock = client.register_script(CLAIM_CLOCK_SCRIPT)
        self._load = client.register_script(LOAD_SCRIPT)
        self._take_lease = client.register_script(TAKE_LEASE_SCRIPT)
        self._renew_lease = client.register_script(RENEW_LEASE_SCRIPT)
        self._take_due = client.register_script(TAKE_DUE_SCRIPT)
        self._drop_due = client.register_script(DROP_DUE_SCRIPT)
        #: Runs the scripts of the request path (lean calls on a single Redis).
        self.run = Scripts(client)
        #: Waits for new events, one blocking read per game shared by its waiters.
        self.hub = EventHub(client)

    # -- keys ---------------------------------------------------------------
    def game_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:game"

    def events_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:events"

    def tokens_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:tokens"

    def archive_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:archive"

    def idem_key(self, game_id: str, digest: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:idem:{digest}"

    def index_key(self, name: str, shard: int = 0) -> str:
        """The key of shard ``shard`` of the cross-game index ``name``."""
        if self.index_shards == 1:
            return f"{self.prefix}:{{index}}:{name}"
        return f"{self.prefix}:{{index:{shard}}}:{name}"

    def shard(self, game_id: str) -> int:
        """The index shard that holds ``game_id``'s entries."""
        return 0 if self.index_shards == 1 else zlib.crc32(game_id.encode()) % self.index_shards

    def index_keys(self, name: str) -> list[str]:
        """Every shard of the index ``name``."""
        return [self.index_key(name, n) for n in range(self.index_shards)]

    def lookup_key(self, kind: str, item: str) -> str:
        """The key of one client's or token's ``kind`` of entry: under the ``{index}`` tag on a
        single Redis; under its own tag on a cluster, so that these keys spread over the nodes."""
        if self.index_shards == 1:
            return f"{self.prefix}:{{index}}:{kind}:{item}"
        return f"{self.prefix}:{{{kind}:{item}}}"

    def ttl_for(self, status: str) -> int:
        """How long the keys of a game in ``status`` are kept after its last change (0: for ever).
        A game in play is kept until it ends: its clock plays it out."""
        return {GameStatus.WAITING: self.waiting_ttl, GameStatus.FINISHED: self.finished_ttl}.get(status, 0)

    # -- games --------------------------------------------------------------
    def create(
        self, record: GameRecord, tokens: dict[str, int], events: Sequence[tuple[int, str]], created: float
    ) -> None:
        """Store a new game (its id is fresh and random, so nothing else holds it)."""
        pipe = self.r.pipeline(transaction=True)
        mapping: dict[str, Any] = {
            "version": record.version,
            "seq": record.seq,
            "status": record.status,
            "meta": record.meta.to_json(),
            "deadline": "" if record.deadline is None else repr(record.deadline),
        }
        if record.state is not None:
            mapping["state"] = record.state
        pipe.hset(self.game_key(record.id), mapping=mapping)
        if tokens:
            pipe.hset(self.tokens_key(record.id), mapping=tokens)
        for seq, event in events:
            pipe.xadd(self.events_key(record.id), {"e": event}, id=f"{seq}-0")
        ttl = self.ttl_for(record.status)
        if ttl:
            for key in (self.game_key(record.id), self.tokens_key(record.id), self.events_key(record.id)):
                pipe.expire(key, ttl)
        pipe.execute()
        self.index(record, None)

    def load(self, game_id: str) -> GameRecord | None:
        return self.record_of(game_id, self.r.hgetall(self.game_key(game_id)))

    def load_with_seat(self, game_id: str, token_hash: str) -> tuple[GameRecord | None, int | None]:
        """The game and the seat whose token hashes to ``token_hash``, in one round trip.

        Every stored hash of the game (a few) is compared in constant time, so how long
        the check takes says nothing about the token.
        """
        game, tokens, _ = self.run(self._load, [self.game_key(game_id), self.tokens_key(game_id)], ())
        return self.record_of(game_id, dict(zip(game[::2], game[1::2], strict=True))), self.seat_of(tokens, token_hash)

    def load_with_lookup(
        self, game_id: str, lookup: str, ttl: int = 0
    ) -> tuple[GameRecord | None, list[bytes], str | None]:
        """The game, its token map (digest, seat, digest, seat...: see :meth:`seat_of`) and the
        value of the key ``lookup`` (a bot token's bot id), in one round trip; with ``ttl``,
        the lookup's expiry is pushed back to ``ttl`` seconds (``GETEX``). A single Redis only
        (:attr:`single`): on a cluster the lookup key lives in another slot."""
        game, tokens, found = self.run(
            self._load, [self.game_key(game_id), self.tokens_key(game_id), lookup], (str(ttl) if ttl else "",)
        )
        record = self.record_of(game_id, dict(zip(game[::2], game[1::2], strict=True)))
        return record, tokens, None if found is None else found.decode()

    @staticmethod
    def seat_of(tokens: list[bytes], digest: str) -> int | None:
        """The seat whose token digest is ``digest`` in a token map read flat (digest, seat...).

        Every stored digest of the game (a few) is compared in constant time, so how long
        the check takes says nothing about the token."""
        wanted = digest.encode()
        seat = None
        for i in range(0, len(tokens), 2):
            if hmac.compare_digest(tokens[i], wanted):
                seat = int(tokens[i + 1])
        return seat

    @staticmethod
    def record_of(game_id: str, data: dict[bytes, bytes]) -> GameRecord | None:
        """The record of ``game_id`` read from its hash's fields ``data`` (``None``: no such game)."""
        if not data:
            return None
        deadline = data.get(b"deadline", b"")
        clock_at = data.get(b"clock_at", b"")
        return GameRecord(
            id=game_id,
            version=int(data[b"version"]),
            seq=int(data[b"seq"]),
            status=GameStatus(data[b"status"].decode()),
            meta=table_meta(data[b"meta"]),
            state=data[b"state"].decode() if b"state" in data else None,
            deadline=float(deadline) if deadline else None,
            clock_at=float(clock_at) if clock_at else None,
        )

    def commit(self, game_id: str, expected_version: int, change: Change, now: float = 0.0) -> Committed:
        """Apply ``change`` if the game is still at ``expected_version``, in one script.

        Returns what it made (:class:`Committed`): the new version, the time at which the
        caller must schedule the game's clock job, decided atomically with the commit from
        ``change.clock``, and the bots it woke (``change.wake``, a single Redis only: their
        keys join the script's only when there are bots to wake). Raises
        :class:`VersionConflict` (the game moved on), :class:`IdempotencyRecorded` (the
        idempotency record exists already) or :class:`GameGone`; nothing is written then,
        and no bot is woken.
        """
        wake = change.wake if change.wake is not None and (change.wake.bots or change.wake.house is not None) else None
        if wake is not None and not self.single:
            raise ValueError("a commit wakes bots itself only on a single Redis: wake them after it")
        args: list[Any] = [str(expected_version)]
        if change.idempotency is not None:
            args += [change.idempotency[1], str(self.idempotency_ttl)]
        else:
            args += ["", "0"]
        args += ["" if change.clock is None else str(change.clock), repr(now), repr(CLOCK_GRACE_SECONDS)]
        args.append("" if change.expire is None else str(change.expire))
        if wake is None:
            args += ["", "0", ""]
        else:
            args += [wake.game_id, str(wake.keep), "1" if wake.urls else ""]
        if wake is None or wake.house is None:
            args += ["", ""]
        else:
            args += ["drop" if not wake.house else repr(wake.house), game_id]
        args.append(len(change.fields))
        for k, v in change.fields.items():
            args += [k, v]
        args.append(len(change.events))
        for seq, event in change.events:
            args += [f"{seq}-0", event]
        args.append(len(change.tokens))
        for k, seat in change.tokens.items():
            args += [k, seat]
        idem = self.idem_key(game_id, change.idempotency[0]) if change.idempotency else self.game_key(game_id)
        keys = [self.game_key(game_id), self.events_key(game_id), self.tokens_key(game_id), idem]
        keys.append(self.archive_key(game_id))
        if wake is not None:
            if wake.house is not None:
                keys.append(self.house_due_key(game_id))
            keys += wake.keys
        result = self.run(self._commit, keys, args)
        version = int(result[0])
        if version == -1:
            raise VersionConflict(game_id, expected_version)
        if version == -2:
            raise IdempotencyRecorded(game_id, expected_version)
        if version == -3:
            raise GameGone(game_id)
        woken = None
        if change.wake is not None:
            urls = [None if url is None else url.decode() for url in result[2]] if wake is not None else []
            woken = dict(zip(change.wake.bots, urls, strict=True))
        return Committed(version, int(result[1]), woken)

    def claim_clock(self, game_id: str, job_at: int | None, at_least: int = 0) -> tuple[bool, int | None]:
        """After the clock job due at ``job_at`` ran (``None``: the sweeper taking over),
        move the game's clock to its current deadline.

        Returns ``(False, None)`` if another job is the game's clock (nothing to do), else
        ``(True, at)``: the new clock time to schedule a job at, or ``None`` if the game
        needs no clock any more.
        """
        job = "" if job_at is None else str(job_at)
        found = self._claim_clock(keys=[self.game_key(game_id)], args=[job, at_least])
        text = found.decode() if isinstance(found, bytes) else str(found)
        if text == "":
            return False, None
        return True, None if text == "none" else int(text)

    def index(self, record: GameRecord, old_status: str | None) -> None:
        """Keep the listing indexes (by status, and by status and variant) in step with a
        game (idempotent: safe to repeat)."""
        variant = record.meta.variant
        shard = self.shard(record.id)
        pipe = self.r.pipeline(transaction=False)
        if old_status and old_status != record.status:
            pipe.zrem(self.index_key(f"games:{old_status}", shard), record.id)
            pipe.zrem(self.index_key(f"games:{old_status}:{variant}", shard), record.id)
        created = record.meta.created_at
        pipe.zadd(self.index_key(f"games:{record.status}", shard), {record.id: created})
        pipe.zadd(self.index_key(f"games:{record.status}:{variant}", shard), {record.id: created})
        pipe.execute()

    def index_clock(self, game_id: str, at: int | None) -> None:
        """Keep the ``deadlines`` index (read by the sweeper) in step with a game's clock."""
        key = self.index_key("deadlines", self.shard(game_id))
        if at is None:
            self.r.zrem(key, game_id)
        else:
            self.r.zadd(key, {game_id: at})

    # -- the house due-set (mayi_service.bots.house) ------------------------------
    def house_due_key(self, game_id: str) -> str:
        """The house due-set holding ``game_id``: games where a house seat must decide, by the
        time (s) its decision is overdue (an index, sharded as ``deadlines`` is)."""
        return self.index_key("house", self.shard(game_id))

    def set_house_due(self, game_id: str, at: float) -> None:
        """Make ``game_id`` due in the house due-set at ``at`` (a commit that could not write it)."""
        self.r.zadd(self.house_due_key(game_id), {game_id: at})

    def take_house_due(self, now: float, lease: float, limit: int = 500) -> list[str]:
        """The games of the house due-set overdue at ``now`` (at most ``limit`` a shard), each
        made due again at ``lease``: several workers' sweepers share them, each taken by one."""
        taken: list[str] = []
        for key in self.index_keys("house"):
            taken += [g.decode() for g in self._take_due(keys=[key], args=[now, lease, limit])]
        return taken

    def drop_house_due(self, game_id: str, version: int | None) -> bool:
        """Drop ``game_id`` from the house due-set if it is still at ``version`` (``None``: the
        game is gone) and no commit
        made it due again meanwhile: the entry's score is read before the version, and it is
        dropped only while unchanged). True if dropped."""
        key = self.house_due_key(game_id)
        score = self.r.zscore(key, game_id)
        if score is None:
            return False
        stored = self.r.hget(self.game_key(game_id), "version")
        if stored is not None and (version is None or int(stored) != version):
            return False
        return bool(self._drop_due(keys=[key], args=[game_id, repr(score)]))

    def list_ids(self, statuses: Iterable[str], variant: str | None, offset: int, limit: int) -> tuple[list[str], int]:
        """Game ids with one of ``statuses`` (and of ``variant``), newest first: one page and the total."""
        suffix = "" if variant is None else f":{variant}"
        keys = [key for s in statuses for key in self.index_keys(f"games:{s}{suffix}")]
        if len(keys) == 1:
            key = keys[0]
            total = self.r.zcard(key)
            ids = self.r.zrevrange(key, offset, offset + limit - 1)
            return [i.decode() for i in ids], int(total)
        # Several indexes (statuses, shards): the first offset + limit of each, merged here,
        # newest first (as one sorted set would order them: by time, then id, descending).
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.zcard(key)
        for key in keys:
            pipe.zrevrange(key, 0, offset + limit - 1, withscores=True)
        found = pipe.execute()
        total = sum(int(n) for n in found[: len(keys)])
        newest: dict[bytes, float] = {}
        for member, score in chain.from_iterable(found[len(keys) :]):
            newest[member] = max(score, newest.get(member, score))
        ordered = sorted(newest.items(), key=lambda item: (item[1], item[0]), reverse=True)
        return [member.decode() for member, _ in ordered[offset : offset + limit]], total

    def load_many(self, game_ids: Sequence[str]) -> list[GameRecord]:
        pipe = self.r.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hmget(self.game_key(gid), ["version", "seq", "status", "meta"])
        out = []
        for gid, row in zip(game_ids, pipe.execute(), strict=True):
            if row[0] is None:
                continue
            out.append(GameRecord(gid, int(row[0]), int(row[1]), GameStatus(row[2].decode()), table_meta(row[3]), None))
        return out

    def deadlines(self, game_ids: Sequence[str]) -> list[tuple[float | None, bool]]:
        """The current deadline of each game (``None``: none, or no such game), and whether it
        was due already when committed (``at_once``: the clock plays on at once for absent
        seats, a step of a play-out)."""
        pipe = self.r.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hmget(self.game_key(gid), ["deadline", "at_once"])
        rows = pipe.execute() if game_ids else []
        return [(float(deadline) if deadline else None, bool(at_once)) for deadline, at_once in rows]

    def claim_deadline(self, game_id: str, deadline: float, seconds: float = 30.0) -> bool:
        """True for the first caller only, for ``seconds``, per game and deadline: the clock
        timers of several workers share the deadlines that fall due, each played by one."""
        key = f"{self.game_key(game_id)}:timer:{deadline!r}"
        return bool(self.r.set(key, "1", nx=True, px=int(seconds * 1000)))

    def due_games(self, now: float, limit: int = 100) -> list[str]:
        """Games whose clock job should have run by ``now`` (the most overdue first)."""
        keys = self.index_keys("deadlines")
        if len(keys) == 1:
            return [g.decode() for g in self.r.zrangebyscore(keys[0], "-inf", now, start=0, num=limit)]
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.zrangebyscore(key, "-inf", now, start=0, num=limit, withscores=True)
        due = sorted(chain.from_iterable(pipe.execute()), key=lambda item: item[1])
        return [g.decode() for g, _ in due[:limit]]

    def prune_indexes(self, now: float, variants: Iterable[str], batch: int = 500, most: int = 20_000) -> int:
        """Drop from the indexes the games whose keys have expired (see :meth:`ttl_for`);
        return how many. Only games created long enough ago to have expired are looked
        at (at most ``most`` per status and call, ``batch`` per round trip)."""
        variants = list(variants)
        pruned = 0
        for shard in range(self.index_shards):
            pruned += self._prune_shard(shard, now, variants, batch, most)
        return pruned

    def _prune_shard(self, shard: int, now: float, variants: list[str], batch: int, most: int) -> int:
        pruned = 0
        for status in (GameStatus.WAITING, GameStatus.FINISHED):
            ttl = self.ttl_for(status)
            if not ttl:
                continue
            key = self.index_key(f"games:{status}", shard)
            kept = 0  # candidates still alive (a finished game's TTL runs from its end) are skipped
            while kept < most:
                old = [g.decode() for g in self.r.zrangebyscore(key, "-inf", now - ttl, start=kept, num=batch)]
                if not old:
                    break
                pipe = self.r.pipeline(transaction=False)
                for game_id in old:
                    pipe.exists(self.game_key(game_id))
                gone = [g for g, found in zip(old, pipe.execute(), strict=True) if not found]
                kept += len(old) - len(gone)
                if gone:
                    pipe = self.r.pipeline(transaction=False)
                    pipe.zrem(key, *gone)
                    for variant in variants:
                        pipe.zrem(self.index_key(f"games:{status}:{variant}", shard), *gone)
                    pipe.zrem(self.index_key("deadlines", shard), *gone)
                    pipe.execute()
                    pruned += len(gone)
                if len(old) < batch:
                    break
        return pruned

    def add_open_table(self, owner: str, game_id: str, limit: int, now: float) -> bool:
        """Count ``game_id`` as one more open table of ``owner``; ``False`` (and nothing
        counted) if ``owner`` has ``limit`` open tables already. Tables that have finished
        or expired stop counting (they are dropped here)."""
        key = self.lookup_key("open", owner)
        held = [g.decode() for g in self.r.zrange(key, 0, -1)]
        if len(held) >= limit:
            pipe = self.r.pipeline(transaction=False)
            for gid in held:
                pipe.hget(self.game_key(gid), "status")
            closed = [
                g
                for g, st in zip(held, pipe.execute(), strict=True)
                if st is None or GameStatus(st.decode()) is GameStatus.FINISHED
            ]
            if closed:
                self.r.zrem(key, *closed)
        # Add, then count: of racing creators, none passes the limit (one may be refused needlessly).
        pipe = self.r.pipeline(transaction=True)
        pipe.zadd(key, {game_id: now})
        pipe.zcard(key)
        pipe.expire(key, 30 * 24 * 3600)
        _, count, _ = pipe.execute()
        if int(count) > limit:
            self.r.zrem(key, game_id)
            return False
        return True

    def count(self, status: str) -> int:
        pipe = self.r.pipeline(transaction=False)
        for key in self.index_keys(f"games:{status}"):
            pipe.zcard(key)
        return sum(int(n) for n in pipe.execute())

    # -- tokens and idempotency -------------------------------------------
    def idempotency_record(self, game_id: str, digest: str) -> dict[str, Any] | None:
        raw = self.r.get(self.idem_key(game_id, digest))
        return None if raw is None else json.loads(raw)

    # -- events -------------------------------------------------------------
    def events_after(self, game_id: str, after: int, count: int = 1000) -> list[dict[str, Any]]:
        """Up to ``count`` events numbered above ``after``, from the archive and the stream.

        Events move from the stream to the compressed archive at the end of each round;
        the archive is read only when the events asked for are there.
        """
        pipe = self.r.pipeline(transaction=False)
        pipe.xrange(self.events_key(game_id), min=f"{after + 1}-0", max="+", count=count)
        pipe.hget(self.game_key(game_id), "archived_to")
        rows, archived_to = pipe.execute()
        first = int(rows[0][0].split(b"-")[0]) if rows else None
        if first == after + 1 or int(archived_to or 0) <= after:
            return [codec.load(fields[b"e"]) for _, fields in rows]
        # Some are archived: read the archive and the stream together, as of one moment.
        pipe = self.r.pipeline(transaction=True)
        pipe.get(self.archive_key(game_id))
        pipe.xrange(self.events_key(game_id), min=f"{after + 1}-0", max="+", count=count)
        raw, rows = pipe.execute()
        archived = [] if raw is None else [e for e in json.loads(zlib.decompress(raw)) if e["seq"] > after]
        return (archived + [codec.load(fields[b"e"]) for _, fields in rows])[:count]

    def archive_events(self, game_id: str, final: bool = True) -> int:
        """Move the events in the stream into the compressed archive (at the end of a round,
        and ``final``ly at the end of the game, when the stream is dropped).

        The log of a game in play then holds only its current round's events in the
        stream, and a finished 4-player game's log shrinks about tenfold. Returns the
        archive's size in bytes (0: nothing to do). Safe to repeat: the clock worker
        redoes it for a game whose archiving was cut short.
        """
        key, archive = self.events_key(game_id), self.archive_key(game_id)
        for _ in range(10):
            with self.r.pipeline(transaction=True) as pipe:
                pipe.watch(key, archive)
                rows = pipe.xrange(key)
                if not rows:
                    return 0
                old = pipe.get(archive)
                # The archive is a JSON array of the events' own texts: the new ones are appended
                # to its text (never parsed and written again: a long log costs a compression only).
                head = b"[" if old is None else zlib.decompress(old)[:-1]
                head += b"," if len(head) > 1 else b""
                body = head + b",".join(fields[b"e"] for _, fields in rows) + b"]"
                blob = zlib.compress(body, ARCHIVE_LEVEL)
                last = int(rows[-1][0].split(b"-")[0])
                pipe.multi()
                pipe.set(archive, blob)
                if final and self.finished_ttl:
                    pipe.expire(archive, self.finished_ttl)
                pipe.hset(self.game_key(game_id), "archived_to", last)
                if final:
                    pipe.delete(key)
                else:
                    pipe.xtrim(key, minid=f"{last + 1}-0")
                try:
                    pipe.execute()
                except redis.WatchError:
                    continue  # an event was added meanwhile: archive again with it
            return len(blob)
        return 0

    def wait_events(
        self, game_id: str, after: int, timeout_ms: int, count: int = 1000, gone: Callable[[], bool] | None = None
    ) -> list[dict[str, Any]]:
        """Events after ``after``, waiting up to ``timeout_ms`` for the first one (or until
        ``gone`` is true: :meth:`EventHub.wait`).

        The wait is shared (:mod:`.hub`): every waiter on a game in this process
        shares one ``XREAD BLOCK``, so a waiting client holds no Redis connection.
        """
        if not self.hub.wait(self.events_key(game_id), after, max(1, timeout_ms) / 1000, gone):
            return []
        return self.events_after(game_id, after, count)

    # -- waiting slots: leases ----------------------------------------------
    def take_lease(self, key: str, lease: str, limit: int, ms: int) -> bool:
        """Take ``lease`` in the client's lease set ``key`` for ``ms`` milliseconds, unless
        the client holds ``limit`` leases that have not expired (:data:`LEASE_LUA`)."""
        return bool(self.run(self._take_lease, [key], [lease, limit, ms]))

    def renew_lease(self, key: str, lease: str, ms: int) -> bool:
        """Extend ``lease`` to ``ms`` milliseconds from now; ``False`` if it is gone (it expired)."""
        return bool(self.run(self._renew_lease, [key], [lease, ms]))

    def drop_lease(self, key: str, lease: str) -> None:
        self.r.zrem(key, lease)

    def ping(self) -> bool:
        return bool(self.r.ping())
