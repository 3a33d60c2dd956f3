"""The bot ladder: entries, matchmaking, matches played by RQ workers, and ratings.

Bots enter a variant's ladder with a concurrency limit (games at once). The reference bots
of :mod:`mayi_bots` are house entrants (``house-<name>``), entered by the first matchmaking
of each variant, so a ladder always has opponents.

* **Matchmaking** (:meth:`Ladder.matchmake`, the RQ job :func:`~mayi_service.jobs.run_matchmaking_job`, queued
  every ``MAYI_LADDER_EVERY_SECONDS`` by the workers) forms tables of the variant's player
  counts: it starts from the entrant that played least recently, adds the entrants nearest
  to it in rating, and now and then (``EXPLORE``) picks at random instead. A match is
  created by one Lua script that checks every entrant's limit and counts the match against
  it, so no bot ever sits in more games than its limit, however many matchmakers run.
* **A match is an RQ job** (:func:`~mayi_service.jobs.run_match_job`). It takes the match's *lease* (a Redis
  key it renews while it plays), creates the table if it does not exist yet (its game id
  is the match id, so a second run finds it), and plays: house seats decide in the job,
  through :meth:`Games.play_for_seat` (the table's meta marks it as a ladder game, so the
  house-bot jobs leave it alone); external bots play through the API (decisions or
  webhooks) under the clocks, and the job plays their timeouts when the deadlines pass.
  The game is in Redis after every action, so a job killed at any point leaves a match
  that the next run resumes: the workers *sweep* the open matches every fifth of the
  lease (:func:`sweep_lapsed`, and every matchmaking too), and queue a new run of each
  whose lease has lapsed.
* **Ratings** (openskill's Plackett-Luce model, see docs/ladder.md) are applied by one Lua
  script together with the result: it refuses a match already finished and a rating
  table changed since it was read (the job then reads again), so a result is recorded
  once, ratings move once per match, in the order matches complete, with each bot's
  history.

Redis keys, all of one variant under one hash tag ``{ladder:<variant>}`` (one cluster slot):
``entries`` (hash entrant → JSON), ``left`` (hash entrant → its entry, once it left),
``active`` (hash entrant → matches in progress), ``ratings`` (hash entrant → JSON),
``last`` (hash entrant → when it was last matched), ``match:<id>`` (JSON), ``open`` (set
of unfinished match ids), ``done`` (sorted set of finished match ids by completion
number), ``seq``, ``rev`` (bumped by every rating change), ``history:<entrant>`` (list of
JSON), ``lease:<id>``, ``attempts`` and ``queued`` (hashes match → runs queued again by
the sweep, and when), ``tick`` and ``sweep-tick``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import random
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mayi_engine import GameStatus, move_from_json, standings, to_act
from mayi_engine.rules import COMMON_OPTIONS, VARIANTS, get_rules
from mayi_service.api.problems import Problem, ServiceError
from mayi_service.bots.house import house_answer
from mayi_service.bots.seats import Bots, seat_digest
from mayi_service.config import Settings
from mayi_service.play.games import Games
from mayi_service.play.tables import house_bot_name, new_id
from mayi_service.play.views import Viewer
from mayi_service.storage import codec
from mayi_service.storage.connections import UNREACHABLE, Outage
from mayi_service.storage.records import GameRecord, TableMeta

if TYPE_CHECKING:
    from rq import Queue

    from mayi_sdk import Bot

log = logging.getLogger(__name__)

#: The RQ jobs of the ladder (:mod:`mayi_service.jobs`): one match, one matchmaking.
MATCH_JOB = "mayi_service.jobs.run_match_job"
MATCHMAKING_JOB = "mayi_service.jobs.run_matchmaking_job"
#: House entrants' ids start with this; the rest is the reference bot's name (and a copy number).
HOUSE = "house-"
#: Games before a rating is no longer provisional.
PROVISIONAL_GAMES = 10
#: The share of tables whose opponents are picked at random rather than by rating.
EXPLORE = 0.2
#: History entries kept per bot and variant.
HISTORY_KEEP = 1000
#: Finished matches kept per variant (the oldest are dropped; their games expire on their own).
MATCHES_KEEP = 10_000
#: Plackett-Luce parameters (openskill's defaults; docs/ladder.md says why).
MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300
#: The conservative estimate the leaderboard orders by: mu minus this many sigmas.
Z = 3.0
#: The longest value the rules allow of each table option (the clocks of house-only tables).
LONGEST_CLOCKS = {option.name: option.high for option in COMMON_OPTIONS}
#: How often, as a share of the lease, the workers look for matches whose lease lapsed.
SWEEP_SHARE = 0.2

_CREATE = """
local n = tonumber(ARGV[3])
local max_open = tonumber(ARGV[4])
if max_open > 0 and redis.call('SCARD', KEYS[4]) >= max_open then return 0 end
for i = 1, n do
  local e = ARGV[4 + i]
  local entry = redis.call('HGET', KEYS[1], e)
  if not entry then return -i end
  local limit = tonumber(cjson.decode(entry)['max_games'])
  local busy = tonumber(redis.call('HGET', KEYS[2], e) or '0')
  if busy >= limit then return -i end
end
for i = 1, n do
  redis.call('HINCRBY', KEYS[2], ARGV[4 + i], 1)
  redis.call('HSET', KEYS[5], ARGV[4 + i], ARGV[2])
end
redis.call('SET', KEYS[3], ARGV[1])
redis.call('SADD', KEYS[4], cjson.decode(ARGV[1])['match_id'])
return 1
"""

_APPLY = """
local match = redis.call('GET', KEYS[1])
if not match then return -2 end
if cjson.decode(match)['status'] == 'finished' then return 0 end
if (redis.call('GET', KEYS[7]) or '0') ~= ARGV[1] then return -1 end
local id = cjson.decode(ARGV[2])['match_id']
local n = tonumber(ARGV[3])
for i = 1, n do
  local e = ARGV[3 + 3 * (i - 1) + 1]
  redis.call('HSET', KEYS[2], e, ARGV[3 + 3 * (i - 1) + 2])
  if tonumber(redis.call('HINCRBY', KEYS[3], e, -1)) <= 0 then redis.call('HDEL', KEYS[3], e) end
  redis.call('RPUSH', KEYS[7 + i], ARGV[3 + 3 * (i - 1) + 3])
  redis.call('LTRIM', KEYS[7 + i], -tonumber(ARGV[4 + 3 * n]), -1)
end
local seq = redis.call('INCR', KEYS[6])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SREM', KEYS[4], id)
redis.call('ZADD', KEYS[5], seq, id)
redis.call('INCR', KEYS[7])
return seq
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class LeaseLost(Exception):
    """Another run of the match holds its lease now (this one was too slow to renew it)."""


@dataclass
class Entry:
    """A bot entered in a variant's ladder."""

    entrant: str
    name: str
    max_games: int
    entered_at: float
    #: The reference bot's name, for a house entrant.
    house: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entrant": self.entrant,
            "name": self.name,
            "max_games": self.max_games,
            "entered_at": self.entered_at,
            "house": self.house,
        }


def model() -> Any:
    """The rating model (openskill's Plackett-Luce with this module's parameters)."""
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU)


def ordinal(mu: float, sigma: float) -> float:
    """The conservative estimate of a rating: ``mu - 3 sigma`` (a bot is this good or better,
    with about 99.9 % confidence)."""
    return mu - Z * sigma


def house_id(name: str, copy: int = 1) -> str:
    """The entrant id of a house bot (``copy`` > 1: another entrant playing the same bot)."""
    return f"{HOUSE}{name}" if copy == 1 else f"{HOUSE}{name}-{copy}"


def decision_seed(seed: str, seat: int, version: int) -> int:
    """The seed of a house bot's decision at ``version`` of a match dealt from ``seed``: the
    same decision gets the same seed, so a resumed match plays the same moves."""
    digest = hashlib.blake2b(f"{seed}:{seat}:{version}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def make_bot(name: str, seed: int, budget: float | None = None) -> Bot:
    """The reference bot ``name`` seeded with ``seed``, a searching bot given ``budget`` CPU
    seconds a decision (a registry without seeds: the bot's own)."""
    import mayi_bots

    try:
        return mayi_bots.make(name, seed=seed, budget=budget)  # type: ignore[call-arg,unused-ignore]
    except TypeError:
        factory: Any = mayi_bots.BOTS[name]
        try:
            return factory(seed=seed)  # type: ignore[no-any-return]
        except TypeError:
            return mayi_bots.make(name)


def deciding_seat(state: Any, seats: set[int], now: float) -> int | None:
    """The first of ``seats`` that must decide now (in the engine's order, :func:`~mayi_engine.to_act`)."""
    return next((seat for seat in to_act(state, now) if seat in seats), None)


class Ladder:
    """The ladders of every variant, over the games of one :class:`Games` (and its Redis) and
    the bot accounts of ``bots``; its jobs go to ``queue``."""

    def __init__(self, games: Games, bots: Bots, settings: Settings, queue: Queue | None = None) -> None:
        self.games = games
        self.bots = bots
        self.repo = games.repo
        self.r = games.repo.r
        self.prefix = games.repo.prefix
        self.settings = settings
        self.queue = queue
        self.clock = games.clock
        self._create = self.r.register_script(_CREATE)
        self._apply = self.r.register_script(_APPLY)
        self._renew = self.r.register_script(_RENEW)
        self._release = self.r.register_script(_RELEASE)

    # -- keys -----------------------------------------------------------------
    def key(self, variant: str, name: str) -> str:
        return f"{self.prefix}:{{ladder:{variant}}}:{name}"

    # -- entries --------------------------------------------------------------
    def enter(self, variant: str, entry: Entry) -> Entry:
        """Enter (or update the limit of) ``entry``; a bot keeps its rating and history."""
        _variant(variant)
        pipe = self.r.pipeline()
        pipe.hset(self.key(variant, "entries"), entry.entrant, codec.dump(entry.to_json()))
        pipe.hdel(self.key(variant, "left"), entry.entrant)
        pipe.execute()
        return entry

    def enter_bot(self, variant: str, bot_id: str, max_games: int) -> Entry:
        """Enter the registered bot ``bot_id`` (its name comes from its account)."""
        name = self.bots.load(bot_id).name
        found = self.entry(variant, bot_id)
        entered_at = found.entered_at if found else self.clock()
        return self.enter(variant, Entry(bot_id, name, max_games, entered_at))

    def enter_house(self, variant: str, copies: int = 1) -> list[Entry]:
        """Enter every reference bot (``copies`` entrants of each) that is not entered yet."""
        import mayi_bots

        made = []
        for name in mayi_bots.NAMES:
            for copy in range(1, copies + 1):
                entrant = house_id(name, copy)
                label = house_bot_name(name, copy)
                entry = Entry(entrant, label, self.settings.ladder_house_games, self.clock(), house=name)
                if self.r.hsetnx(self.key(variant, "entries"), entrant, codec.dump(entry.to_json())):
                    made.append(entry)
        return made

    def leave(self, variant: str, entrant: str) -> bool:
        """Leave the ladder (matches in progress are played out). False if not entered.
        The bot's rating and history stay (:meth:`standing`), and so does its entry, under
        ``left``: entering again resumes them."""
        _variant(variant)
        raw = self.r.hget(self.key(variant, "entries"), entrant)
        if raw is None:
            return False
        pipe = self.r.pipeline()
        pipe.hdel(self.key(variant, "entries"), entrant)
        pipe.hset(self.key(variant, "left"), entrant, raw)
        return bool(pipe.execute()[0])

    def entry(self, variant: str, entrant: str) -> Entry | None:
        raw = self.r.hget(self.key(variant, "entries"), entrant)
        return None if raw is None else Entry(**codec.load(raw))

    def entries(self, variant: str) -> list[Entry]:
        raw = self.r.hgetall(self.key(variant, "entries"))
        return sorted((Entry(**codec.load(v)) for v in raw.values()), key=lambda e: e.entrant)

    def active(self, variant: str) -> dict[str, int]:
        """Matches in progress per entrant."""
        return {k.decode(): int(v) for k, v in self.r.hgetall(self.key(variant, "active")).items()}

    # -- matchmaking ------------------------------------------------------------
    def table_sizes(self, variant: str) -> list[int]:
        rules = get_rules(variant)
        sizes = [int(n) for n in self.settings.ladder_players if n.strip()]
        allowed = [n for n in sizes if rules.min_players <= n <= rules.max_players]
        return allowed or list(range(rules.min_players, rules.max_players + 1))

    def matchmake(self, variant: str, rng: random.Random | None = None, most: int | None = None) -> list[str]:
        """Form the tables that the entrants' free capacity allows (at most
        ``MAYI_LADDER_MAX_MATCHES`` matches of the variant in progress, and at most ``most``
        new ones); queue their jobs. Returns the new match ids."""
        rng = rng or random.Random()
        self.enter_house(variant)
        entries = {e.entrant: e for e in self.entries(variant)}
        active = self.active(variant)
        ratings = self.ratings(variant)
        last = {k.decode(): float(v) for k, v in self.r.hgetall(self.key(variant, "last")).items()}
        room = {e: entry.max_games - active.get(e, 0) for e, entry in entries.items()}
        sizes = self.table_sizes(variant)
        made: list[str] = []
        while most is None or len(made) < most:
            free = [e for e, left in room.items() if left > 0]
            if not self.settings.ladder_house_matches and not any(not entries[e].house for e in free):
                break  # tables of house bots only are for local runs
            fitting = [n for n in sizes if n <= len(free)]
            if not fitting:
                break
            anchors = free if self.settings.ladder_house_matches else [e for e in free if not entries[e].house]
            anchor = min(anchors, key=lambda e: (last.get(e, 0.0), rng.random()))
            size = rng.choice(fitting)
            others = [e for e in free if e != anchor]
            if rng.random() < EXPLORE:
                rng.shuffle(others)
            else:
                mine = _ordinal_of(ratings.get(anchor))
                others.sort(key=lambda e: (abs(_ordinal_of(ratings.get(e)) - mine), last.get(e, 0.0), rng.random()))
            table = [anchor, *others[: size - 1]]
            rng.shuffle(table)  # seats in random order
            match_id, refused = self._create_match(variant, table, secrets.token_hex(16))
            if match_id is None:
                if refused is None:
                    break  # the variant has its most matches in progress
                room[refused] = 0  # at its limit (another matchmaker seated it meanwhile) or gone
                continue
            made.append(match_id)
            now = self.clock()
            for e in table:
                room[e] -= 1
                last[e] = now
        return made

    def create_match(self, variant: str, entrants: Sequence[str], seed: str) -> str | None:
        """Create a match of ``entrants`` (in seat order) dealt from ``seed`` (hex) and queue its
        job; ``None`` if one of them is at its limit or has left, or the variant has
        ``MAYI_LADDER_MAX_MATCHES`` in progress."""
        return self._create_match(variant, entrants, seed)[0]

    def _create_match(self, variant: str, entrants: Sequence[str], seed: str) -> tuple[str | None, str | None]:
        """The new match's id, or ``None`` and the entrant that was refused (``None``: the
        variant has its most matches in progress)."""
        entries = {e.entrant: e for e in self.entries(variant)}
        match_id = new_id()
        match = {
            "match_id": match_id,
            "variant": variant,
            "game_id": match_id,
            "seed": seed,
            "status": "playing",
            "created_at": self.clock(),
            "finished_at": None,
            "seats": [
                {
                    "seat": seat,
                    "bot_id": e,
                    "name": entries[e].name if e in entries else e,
                    "house": entries[e].house if e in entries else None,
                }
                for seat, e in enumerate(entrants)
            ],
            "standings": None,
        }
        keys = [self.key(variant, k) for k in ("entries", "active", f"match:{match_id}", "open", "last")]
        args = [codec.dump(match), repr(self.clock()), len(entrants), self.settings.ladder_max_matches, *entrants]
        created = int(self._create(keys=keys, args=args))
        if created != 1:
            return None, (entrants[-created - 1] if created < 0 else None)
        self._enqueue(variant, match_id, 1)
        return match_id, None

    def _enqueue(self, variant: str, match_id: str, attempt: int) -> None:
        if self.queue is None:
            return
        self.queue.enqueue(
            MATCH_JOB,
            variant,
            match_id,
            job_id=f"match-{match_id}-{attempt}",
            job_timeout=self.settings.ladder_match_timeout,
            result_ttl=0,
            failure_ttl=24 * 3600,
        )

    def sweep(self, variant: str) -> list[str]:
        """Queue a new run of every open match whose lease has lapsed (its worker died) and
        whose last run is not waiting in the queue. Returns their ids."""
        from rq.exceptions import NoSuchJobError
        from rq.job import Job

        found = []
        grace = self.settings.ladder_lease_seconds
        for raw in self.r.smembers(self.key(variant, "open")):
            match_id = raw.decode()
            if self.r.exists(self.key(variant, f"lease:{match_id}")):
                continue
            match = self.match(variant, match_id)
            if match is None or match["status"] == "finished":
                self.r.srem(self.key(variant, "open"), match_id)
                continue
            queued = self.r.hget(self.key(variant, "queued"), match_id)
            if self.clock() - float(queued or match["created_at"]) < grace:
                continue  # its job may not have started yet
            if self.queue is not None:
                try:
                    job = Job.fetch(
                        f"match-{match_id}-{self.attempts(variant, match_id)}", connection=self.queue.connection
                    )
                    if job.get_status(refresh=False) in ("queued", "scheduled", "deferred"):
                        continue  # waiting for a free worker
                except NoSuchJobError:
                    pass
            # Counted apart from the match record, which only its creation and its result write.
            attempt = 1 + int(self.r.hincrby(self.key(variant, "attempts"), match_id, 1))
            self.r.hset(self.key(variant, "queued"), match_id, repr(self.clock()))
            self._enqueue(variant, match_id, attempt)
            found.append(match_id)
        return found

    def attempts(self, variant: str, match_id: str) -> int:
        """How many runs of the match were queued (1: only the first)."""
        return 1 + int(self.r.hget(self.key(variant, "attempts"), match_id) or 0)

    # -- a match ----------------------------------------------------------------
    def match(self, variant: str, match_id: str) -> dict[str, Any] | None:
        raw = self.r.get(self.key(variant, f"match:{match_id}"))
        return None if raw is None else dict(codec.load(raw))

    def run_match(self, variant: str, match_id: str) -> str:
        """Play match ``match_id`` to its end and record its result (the match job).

        Returns what happened: ``"finished"`` (this run recorded the result), ``"done"``
        (it was recorded already), ``"leased"`` (another run holds the match), ``"lost"``
        (another run took the lease over meanwhile) or ``"gone"``."""
        token = secrets.token_hex(8)
        lease = self.key(variant, f"lease:{match_id}")
        ms = int(self.settings.ladder_lease_seconds * 1000)
        if not self.r.set(lease, token, nx=True, px=ms):
            return "leased"
        try:
            match = self.match(variant, match_id)
            if match is None:
                return "gone"
            if match["status"] == "finished":
                return "done"
            record = self._table(match)
            started = time.perf_counter()
            record = self._play(match, record, lambda: self._keep(lease, token, ms))
            played = time.perf_counter() - started
            self._keep(lease, token, ms)
            return "finished" if self.record_result(variant, match_id, record, played) else "done"
        except LeaseLost:
            return "lost"
        finally:
            self._release(keys=[lease], args=[token])

    def _keep(self, lease: str, token: str, ms: int) -> None:
        if not int(self._renew(keys=[lease], args=[token, ms])):
            raise LeaseLost(lease)

    def _table(self, match: dict[str, Any]) -> GameRecord:
        """The match's game: created here on the first run (the game id is the match id)."""
        game_id = match["game_id"]
        found = self.repo.load(game_id)
        if found is not None:
            return found
        variant = match["variant"]
        names = tuple(s["name"] for s in match["seats"])
        meta = TableMeta(
            variant=variant,
            options=self._options(variant, all(s["house"] for s in match["seats"])),
            seats=len(names),
            names=names,
            rated=True,
            created_at=self.clock(),
            test={"seed": match["seed"], "start_round": self._start_round(variant)},
            bot_seats=tuple(s["seat"] for s in match["seats"] if not s["house"]),
            bot_ids=tuple((s["seat"], s["bot_id"]) for s in match["seats"] if not s["house"]),
            house_bots=tuple((s["seat"], s["house"]) for s in match["seats"] if s["house"]),
            ladder=match["match_id"],
        )
        tokens = {seat_digest(s["bot_id"]): s["seat"] for s in match["seats"] if not s["house"]}
        record = self.games.open_table(meta, tokens, game_id=game_id)
        for s in match["seats"]:
            if not s["house"]:
                self.bots.took_seat(s["bot_id"], game_id, s["seat"])
        return record

    def _start_round(self, variant: str) -> int:
        return max(1, min(self.settings.ladder_start_round, len(get_rules(variant).rounds)))

    def _options(self, variant: str, house_only: bool = False) -> dict[str, Any]:
        """The ladder's clocks (the same for every variant). A table of house bots only has
        the longest clocks the rules allow: its seats are all played by the match job, so
        no seat can leave a decision unanswered, and a job that dies must leave its match
        to the next run (which plays the moves this one would have), not to the clocks."""
        if house_only:
            return {name: LONGEST_CLOCKS[name] for name in ("claim_seconds", "turn_seconds")}
        return {"claim_seconds": self.settings.ladder_claim_seconds, "turn_seconds": self.settings.ladder_turn_seconds}

    def _play(self, match: dict[str, Any], record: GameRecord, keep: Any) -> GameRecord:
        """Play the house seats (and the timeouts that fall due) until the game ends."""
        game_id = match["game_id"]
        house = {s["seat"]: s["house"] for s in match["seats"] if s["house"]}
        renew_every = self.settings.ladder_lease_seconds / 3
        renewed = time.monotonic()
        while True:
            if time.monotonic() - renewed >= renew_every:
                keep()
                renewed = time.monotonic()
            if record.status == GameStatus.FINISHED or record.state is None:
                return record
            state = codec.load_state(record.state)
            now = self.clock()
            due = record.deadline
            if due is not None and due <= now:
                self.games.run_clock(game_id)
                record = self.games.load(game_id)
                continue
            seat = deciding_seat(state, set(house), now)
            if seat is not None:
                view = self.games.view(record, Viewer(seat), now, state)
                bot = make_bot(
                    house[seat], decision_seed(match["seed"], seat, record.version), self.settings.house_bot_seconds
                )
                try:
                    answer = house_answer(bot, view, state, seat)
                    move = None if answer is None else move_from_json(answer)
                except Exception:  # a reference bot's bug must not stop the match: the clock plays
                    log.exception("house bot %s in match %s seat %d", house[seat], match["match_id"], seat)
                    self._wait(record, due, renew_every)
                else:
                    if move is None:  # it waits for the claim window: the claimants' answers or its clock
                        self._wait(record, due, renew_every)
                        record = self.games.load(game_id)
                        continue
                    played = self._play_move(record, seat, move)
                    if played is not None:
                        record = played
                        continue
                    latest = self.games.load(game_id)
                    if latest.version == record.version:  # refused (a bot's bug): the clock plays
                        log.warning("house bot %s in match %s: move refused", house[seat], match["match_id"])
                        self._wait(record, due, renew_every)
                    record = latest
                    continue
            else:  # an external bot's decision: wait for its move, or for the deadline
                self._wait(record, due, renew_every)
            record = self.games.load(game_id)

    def _play_move(self, record: GameRecord, seat: int, move: Any) -> GameRecord | None:
        """Commit ``move`` for ``seat`` if the game is still at ``record``'s version
        (:meth:`Games.play_for_seat`) and return the record it made (no reload: one round trip
        per move). ``None``: the game moved on, a deadline passed, or the move was refused."""
        return self.games.play_for_seat(record, seat, move)

    def _wait(self, record: GameRecord, due: float | None, most: float) -> None:
        left = most if due is None else min(most, max(0.0, due - self.clock()) + 0.05)
        self.repo.wait_events(record.id, record.seq, int(left * 1000))

    # -- results and ratings ------------------------------------------------------
    def record_result(self, variant: str, match_id: str, record: GameRecord, played: float = 0.0) -> bool:
        """Record the finished game's standings and apply the ratings, once. False if the
        match was recorded already. ``played``: the seconds the finishing run spent playing."""
        state = codec.load_state(record.state or "")
        places = standings(state)
        rating_model = model()
        while True:
            match = self.match(variant, match_id)
            if match is None or match["status"] == "finished":
                return False
            rev_raw = self.r.get(self.key(variant, "rev"))
            rev = rev_raw.decode() if rev_raw else "0"
            seats = match["seats"]
            entrants = [s["bot_id"] for s in seats]
            current = self.ratings(variant)
            before = [current.get(e) or _fresh() for e in entrants]
            rated = rating_model.rate(
                [[rating_model.rating(mu=b["mu"], sigma=b["sigma"])] for b in before], ranks=list(places)
            )
            now = self.clock()
            standing = []
            updates: list[str] = []
            for s, b, team, place in zip(seats, before, rated, places, strict=True):
                after = team[0]
                score = int(state.totals[s["seat"]])
                new = {
                    "mu": after.mu,
                    "sigma": after.sigma,
                    "games": b["games"] + 1,
                    "wins": b["wins"] + (place == 1),
                    "score_sum": b["score_sum"] + score,
                    "last_at": now,
                }
                standing.append(
                    {
                        **s,
                        "score": score,
                        "place": place,
                        "rating_before": round(ordinal(b["mu"], b["sigma"]), 3),
                        "rating_after": round(ordinal(after.mu, after.sigma), 3),
                    }
                )
                history = {
                    "match_id": match_id,
                    "game_id": match["game_id"],
                    "at": now,
                    "place": place,
                    "players": len(seats),
                    "score": score,
                    "mu": after.mu,
                    "sigma": after.sigma,
                    "rating": ordinal(after.mu, after.sigma),
                }
                updates += [s["bot_id"], codec.dump(new), codec.dump(history)]
            finished = {
                **match,
                "status": "finished",
                "finished_at": now,
                "standings": standing,
                "play_seconds": round(played, 6),
            }
            keys = [
                self.key(variant, k) for k in (f"match:{match_id}", "ratings", "active", "open", "done", "seq", "rev")
            ] + [self.key(variant, f"history:{e}") for e in entrants]
            result = int(self._apply(keys=keys, args=[rev, codec.dump(finished), len(seats), *updates, HISTORY_KEEP]))
            if result == -1:
                continue  # another match's ratings were applied meanwhile: read again
            if result > MATCHES_KEEP:
                self._forget_old(variant)
            return result > 0

    def _forget_old(self, variant: str) -> None:
        """Drop the finished matches beyond the newest :data:`MATCHES_KEEP`."""
        done = self.key(variant, "done")
        old = [i.decode() for i in self.r.zrange(done, 0, -MATCHES_KEEP - 1)]
        if old:
            self.r.delete(*[self.key(variant, f"match:{i}") for i in old])
            self.r.hdel(self.key(variant, "attempts"), *old)
            self.r.hdel(self.key(variant, "queued"), *old)
            self.r.zrem(done, *old)

    # -- reading ----------------------------------------------------------------
    def ratings(self, variant: str) -> dict[str, dict[str, Any]]:
        raw = self.r.hgetall(self.key(variant, "ratings"))
        return {k.decode(): dict(codec.load(v)) for k, v in raw.items()}

    def leaderboard(self, variant: str) -> list[dict[str, Any]]:
        """The bots entered now, by their conservative rating, best first (a bot that left
        is not on it; its rating and history stay: :meth:`standing`, :meth:`history`)."""
        _variant(variant)
        ratings = self.ratings(variant)
        rows = [_row(entry, ratings.get(entry.entrant)) for entry in self.entries(variant)]
        rows.sort(key=lambda row: (-row["rating"], row["bot_id"]))
        for rank, row in enumerate(rows, start=1):
            row["rank"] = rank
        return rows

    def standing(self, variant: str, entrant: str) -> dict[str, Any] | None:
        """The bot's rating now, entered or not: its leaderboard row (``rank`` and
        ``max_games``: ``None`` once it left) and ``entered``. ``None``: it never entered."""
        _variant(variant)
        entry = self.entry(variant, entrant)
        if entry is not None:
            row = next(r for r in self.leaderboard(variant) if r["bot_id"] == entrant)
            return {**row, "entered": True}
        raw = self.r.hget(self.key(variant, "left"), entrant)
        rating = self.r.hget(self.key(variant, "ratings"), entrant)
        if raw is None and rating is None:
            return None
        left = Entry(**codec.load(raw)) if raw is not None else Entry(entrant, entrant, 0, 0.0)
        row = _row(left, None if rating is None else dict(codec.load(rating)))
        return {**row, "rank": None, "max_games": None, "entered": False}

    def matches(self, variant: str, limit: int = 20, status: str = "finished") -> list[dict[str, Any]]:
        """Recent matches, newest first: finished ones by completion, or those in progress."""
        _variant(variant)
        if status == "finished":
            ids = [i.decode() for i in self.r.zrevrange(self.key(variant, "done"), 0, limit - 1)]
        else:
            ids = [i.decode() for i in self.r.smembers(self.key(variant, "open"))]
        if not ids:
            return []
        raw = self.r.mget([self.key(variant, f"match:{i}") for i in ids])
        found = [_public(codec.load(m)) for m in raw if m is not None]
        if status != "finished":
            found.sort(key=lambda m: -m["created_at"])
        return found[:limit]

    def history(self, variant: str, entrant: str, limit: int = 100) -> list[dict[str, Any]]:
        """The bot's rating after each of its last ``limit`` matches, oldest first."""
        _variant(variant)
        raw = self.r.lrange(self.key(variant, f"history:{entrant}"), -limit, -1)
        return [dict(codec.load(h)) for h in raw]

    def tick(self, variant: str, every: float) -> bool:
        """True once per ``every`` seconds for all workers together (who queues the matchmaking)."""
        return bool(self.r.set(self.key(variant, "tick"), "1", nx=True, px=max(1, int(every * 1000))))


def _row(entry: Entry, rating: dict[str, Any] | None) -> dict[str, Any]:
    """A leaderboard row (without its rank) of ``entry`` rated ``rating``."""
    r = rating or _fresh()
    return {
        "bot_id": entry.entrant,
        "name": entry.name,
        "house": entry.house is not None,
        "rating": round(ordinal(r["mu"], r["sigma"]), 3),
        "mu": round(r["mu"], 3),
        "sigma": round(r["sigma"], 3),
        "games": r["games"],
        "wins": r["wins"],
        "mean_score": round(r["score_sum"] / r["games"], 2) if r["games"] else None,
        "provisional": r["games"] < PROVISIONAL_GAMES,
        "max_games": entry.max_games,
    }


def _fresh() -> dict[str, Any]:
    return {"mu": MU, "sigma": SIGMA, "games": 0, "wins": 0, "score_sum": 0, "last_at": None}


def _ordinal_of(rating: dict[str, Any] | None) -> float:
    r = rating or _fresh()
    return ordinal(r["mu"], r["sigma"])


def _public(match: dict[str, Any]) -> dict[str, Any]:
    return {
        k: match.get(k)
        for k in ("match_id", "variant", "game_id", "status", "created_at", "finished_at", "seats", "standings")
    }


def _variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ServiceError(
            Problem.VALIDATION_ERROR, f"variant: unknown variant {variant!r} (known: {', '.join(VARIANTS)})"
        )


# -- the worker's side -------------------------------------------------------------
def ladder_queue_name(settings: Settings) -> str:
    """The RQ queue of the matchmaking and match jobs (the clocks' queue name + ``-ladder``)."""
    return f"{settings.queue_name}-ladder"


def schedule_matchmaking(ladder: Ladder, variants: Sequence[str] | None = None) -> int:
    """Queue one matchmaking job per variant whose period has come (for all workers together)."""
    if ladder.queue is None:
        return 0
    count = 0
    every = ladder.settings.ladder_every_seconds
    for variant in variants or ladder.settings.ladder_variants or VARIANTS:
        if ladder.tick(variant, every):
            ladder.queue.enqueue(
                MATCHMAKING_JOB,
                variant,
                job_id=f"matchmaking-{variant}-{math.floor(time.time() / every)}",
                job_timeout=60,
                result_ttl=0,
                failure_ttl=3600,
            )
            count += 1
    return count


def sweep_lapsed(ladder: Ladder, variants: Sequence[str] | None = None) -> list[str]:
    """Queue a new run of every match whose lease lapsed (:meth:`Ladder.sweep`), once per
    :data:`SWEEP_SHARE` of the lease for all workers together, so that a match whose worker
    died resumes about a lease after its last renewal, not at the next matchmaking."""
    if ladder.queue is None:
        return []
    found: list[str] = []
    every = max(0.1, ladder.settings.ladder_lease_seconds * SWEEP_SHARE)
    for variant in variants or ladder.settings.ladder_variants or VARIANTS:
        if bool(ladder.r.set(ladder.key(variant, "sweep-tick"), "1", nx=True, px=max(1, int(every * 1000)))):
            found += ladder.sweep(variant)
    return found


def start_ticker(ladder: Ladder, stop: threading.Event) -> threading.Thread:
    """A daemon thread that queues the matchmaking jobs (:func:`schedule_matchmaking`) and
    the new runs of the matches whose worker died (:func:`sweep_lapsed`) until ``stop``."""

    def loop() -> None:
        settings = ladder.settings
        every = max(0.1, min(settings.ladder_every_seconds, settings.ladder_lease_seconds * SWEEP_SHARE) / 2)
        outage = Outage("ladder", log)
        while not stop.wait(every):
            try:
                schedule_matchmaking(ladder)
                for match_id in sweep_lapsed(ladder):
                    log.warning(
                        "ladder: match %s: its lease lapsed (its worker died or stalled); queued again", match_id
                    )
                outage.answered()
            except UNREACHABLE as exc:  # the next tick tries again
                outage.failed(exc)
            except Exception:  # a bug: its traceback, and the next tick tries again
                log.exception("ladder: could not queue the matchmaking")

    thread = threading.Thread(target=loop, name="mayi-ladder", daemon=True)
    thread.start()
    return thread


__all__ = [
    "MATCHMAKING_JOB",
    "MATCH_JOB",
    "Entry",
    "Ladder",
    "LeaseLost",
    "ladder_queue_name",
    "schedule_matchmaking",
    "start_ticker",
    "sweep_lapsed",
]
