"""All Redis access of a game: its records, the commit, and (through the mixins of
:mod:`.keys`, :mod:`.indexes`, :mod:`.events` and :mod:`.leases`) its indexes, event log and
waiting slots.

Keys of one game share the hash tag ``{<game id>}`` so that Redis Cluster keeps
them in one slot and the commit script may touch them together:

``<prefix>:{<id>}:game``
    a hash: ``version``, ``seq`` (last event number), ``status``, ``deadline``,
    ``clock_at`` (the time of the game's clock job), ``meta`` (JSON, :class:`TableMeta`)
    and ``state`` (the engine's JSON state, once every seat is taken).
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
``crc32(id) % shards``); a listing, a count or the sweeper's look for due clocks reads every
shard in one pipeline and merges. Per-client keys (open tables ``open:<client>``, the leases
of waiting slots ``leases:<client>``) and lookups (``bot-token:<hash>``) are
:meth:`GameRepository.lookup_key`. No command or transaction ever names keys of two slots.

Retention: every key of a game expires together, by Redis TTLs set in the same
commit as its status changes. A table waiting for players expires ``waiting_ttl``
seconds after its last change; a finished game (replay included) ``finished_ttl``
seconds after its end; a game in play never (its clock plays it out). Index entries
of expired games are dropped by :meth:`GameRepository.prune_indexes` (the sweeper).

Every change to a game goes through ``commit.lua`` (:meth:`GameRepository.commit`): it checks
the version read before the engine ran and writes the new fields, events, tokens,
idempotency record and retention in one atomic step (optimistic concurrency: a caller that
lost the race reloads and tries again). It does nothing else: what follows a commit (the
clock, the bots' wakes, the house bots) is its listeners' work (:meth:`GameRepository.follow_ups`).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from typing import Any

import redis

from mayi_engine import GameStatus
from mayi_service.storage.connections import Scripts, is_cluster
from mayi_service.storage.events import EventLog
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.hub import EventHub
from mayi_service.storage.indexes import Indexes
from mayi_service.storage.keys import INDEX_SHARDS
from mayi_service.storage.leases import Leases
from mayi_service.storage.lua import outcome, source
from mayi_service.storage.records import Change, GameRecord, table_meta

#: A clock job more than this many seconds late is taken to be lost.
CLOCK_GRACE_SECONDS = 5.0


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


#: The commit's refusals (``commit.lua``'s tags), nothing written.
REFUSALS: dict[str, type[StoreError]] = {
    "conflict": VersionConflict,
    "duplicate": IdempotencyRecorded,
}


class GameRepository(Indexes, EventLog, Leases):
    """The games of one Redis (or Redis Cluster) under one key prefix."""

    def __init__(
        self,
        client: redis.Redis,
        prefix: str = "mayi",
        idempotency_ttl: int = 86400,
        *,
        waiting_ttl: int = 0,
        finished_ttl: int = 0,
        index_shards: int | None = None,
        kept: bool = True,
    ) -> None:
        self.r = client
        #: Shards of each cross-game index (1: the ``{index}`` keys of a single Redis); by
        #: default :data:`INDEX_SHARDS` on a Redis Cluster, else 1.
        self.index_shards = index_shards or (INDEX_SHARDS if is_cluster(client) else 1)
        #: One Redis, not a cluster: a script may name keys of any hash tag (the load looks a
        #: bot token up in the same call).
        self.single = not is_cluster(client)
        self.prefix = prefix
        self.idempotency_ttl = idempotency_ttl
        #: Retention, in seconds (0: kept for ever): a table waiting for players, a finished game.
        self.waiting_ttl = waiting_ttl
        self.finished_ttl = finished_ttl
        self._commit = client.register_script(source("commit"))
        self._clock_moved = client.register_script(source("clock_moved"))
        self._load = client.register_script(source("load"))
        self._follow_scripts = {name: client.register_script(source(name)) for name in ("clock_claim", "wake")}
        self.register_leases()
        self.register_indexes()
        #: Runs the scripts of the request path (on kept connections of a single Redis, with ``kept``).
        self.run = Scripts(client, kept)
        #: Waits for new events, one blocking read per game shared by its waiters.
        self.hub = EventHub(client, kept=kept)

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

    def commit(self, game_id: str, expected_version: int, change: Change) -> int:
        """Apply ``change`` if the game is still at ``expected_version``, in one script
        (``commit.lua``); return the new version. Raises :class:`VersionConflict` (the game
        moved on), :class:`IdempotencyRecorded` (the idempotency record exists already) or
        :class:`GameGone`; nothing is written then."""
        args: list[Any] = [str(expected_version)]
        if change.idempotency is not None:
            args += [change.idempotency[1], str(self.idempotency_ttl)]
        else:
            args += ["", "0"]
        args.append("" if change.expire is None else str(change.expire))
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
        tag, rest = outcome(self.run(self._commit, keys, args))
        if tag == "ok":
            return int(rest[0])
        if tag == "gone":
            raise GameGone(game_id)
        raise REFUSALS[tag](game_id, expected_version)

    def follow_ups(self) -> FollowUps:
        """A batch of the scripts that follow a commit (its listeners'), sent in one round trip."""
        return FollowUps(self.r, self.run, self._follow_scripts)

    def claim_clock(self, game_id: str, job_at: int | None, at_least: int = 0) -> tuple[bool, int | None]:
        """After the clock job due at ``job_at`` ran (``None``: the sweeper taking over),
        move the game's clock to its current deadline (``clock_moved.lua``).

        Returns ``(False, None)`` if another job is the game's clock (nothing to do), else
        ``(True, at)``: the new clock time to schedule a job at, or ``None`` if the game
        needs no clock any more.
        """
        job = "" if job_at is None else str(job_at)
        tag, rest = outcome(self._clock_moved(keys=[self.game_key(game_id)], args=[job, at_least]))
        if tag == "other":
            return False, None
        return True, None if tag == "none" else int(rest[0])

    def idempotency_record(self, game_id: str, digest: str) -> dict[str, Any] | None:
        raw = self.r.get(self.idem_key(game_id, digest))
        return None if raw is None else json.loads(raw)

    def ping(self) -> bool:
        return bool(self.r.ping())
