"""The cross-game indexes: listings by status and variant, the clocks' ``deadlines`` and the
house due-set, each sharded on a Redis Cluster (see :mod:`mayi_service.storage.repository`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

from mayi_engine import GameStatus
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.keys import Keys
from mayi_service.storage.lua import source
from mayi_service.storage.records import GameRecord, table_meta


class Indexes(Keys):
    """The index operations of :class:`~mayi_service.storage.repository.GameRepository`."""

    def register_indexes(self) -> None:
        self._take_due = self.r.register_script(source("take_due"))

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
        """The house due-set holding ``game_id``: the game versions where a house seat must
        decide (members ``<game id>:<version>``), by the time (s) that decision is overdue
        (an index, sharded as ``deadlines`` is)."""
        return self.index_key("house", self.shard(game_id))

    def set_house_due(self, game_id: str, version: int, at: float) -> None:
        """Make ``game_id`` at ``version`` due in the house due-set at ``at``."""
        self.r.zadd(self.house_due_key(game_id), {_member(game_id, version): at})

    def take_house_due(self, now: float, lease: float, limit: int = 500) -> list[tuple[str, int]]:
        """The game versions of the house due-set overdue at ``now`` (at most ``limit`` a shard),
        each made due again at ``lease``: several workers' sweepers share them, each taken by
        one."""
        taken: list[tuple[str, int]] = []
        for key in self.index_keys("house"):
            for member in self._take_due(keys=[key], args=[now, lease, limit]):
                game_id, _, version = member.decode().rpartition(":")
                taken.append((game_id, int(version)))
        return taken

    def drop_house_due(self, game_id: str, version: int, batch: FollowUps | None = None) -> None:
        """Drop ``game_id`` at ``version`` from the house due-set (that version needs no house
        decision, or it is past; in ``batch``, if given). Another version's entry stays."""
        command = ("ZREM", self.house_due_key(game_id), _member(game_id, version))
        if batch is None:
            self.r.execute_command(*command)
        else:
            batch.command(*command)

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


def _member(game_id: str, version: int) -> str:
    """A game version's member in the house due-set."""
    return f"{game_id}:{version}"
