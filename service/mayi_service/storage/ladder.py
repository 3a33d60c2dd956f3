"""The ladders' Redis keys: entries, ratings, matches, their leases and the workers' ticks.

Every key of one variant shares the hash tag ``{ladder:<variant>}`` (one cluster slot), so
each script below runs on one node: ``entries`` (hash entrant → JSON), ``left`` (hash entrant
→ its entry, once it left), ``active`` (hash entrant → matches in progress), ``ratings``
(hash entrant → JSON), ``last`` (hash entrant → when it was last matched), ``match:<id>``
(JSON), ``open`` (set of unfinished match ids), ``done`` (sorted set of finished match ids
by completion number), ``seq``, ``rev`` (bumped by every rating change),
``history:<entrant>`` (list of JSON), ``lease:<id>``, ``attempts`` and ``queued`` (hashes
match → runs queued again by the sweep, and when), ``tick`` and ``sweep-tick``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from mayi_service.storage import codec
from mayi_service.storage.lua import source

#: What :meth:`LadderStore.create` answers: made, refused for one entrant, or the variant is full.
Created = tuple[Literal["created", "refused", "full"], str | None]
#: What :meth:`LadderStore.finish` answers: recorded now, recorded before, ratings changed since read, no match.
Finished = Literal["recorded", "finished", "stale", "gone"]


@dataclass(frozen=True)
class RatingUpdate:
    """One player's part of a finished match: its new rating and its history entry."""

    entrant: str
    rating: dict[str, Any]
    history: dict[str, Any]


class LadderStore:
    """The ladders of every variant on the Redis client ``r`` under the key prefix ``prefix``."""

    def __init__(self, r: Any, prefix: str) -> None:
        self.r = r
        self.prefix = prefix
        self._create = r.register_script(source("ladder_create"))
        self._finish = r.register_script(source("ladder_finish"))
        self._renew = r.register_script(source("ladder_lease_renew"))
        self._release = r.register_script(source("ladder_lease_release"))

    def key(self, variant: str, name: str) -> str:
        return f"{self.prefix}:{{ladder:{variant}}}:{name}"

    # -- entries ------------------------------------------------------------------
    def enter(self, variant: str, entrant: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (entered again: no longer under ``left``)."""
        pipe = self.r.pipeline()
        pipe.hset(self.key(variant, "entries"), entrant, codec.dump(entry))
        pipe.hdel(self.key(variant, "left"), entrant)
        pipe.execute()

    def add(self, variant: str, entrant: str, entry: dict[str, Any]) -> bool:
        """Store ``entry`` unless the entrant is entered (``False``: it was)."""
        return bool(self.r.hsetnx(self.key(variant, "entries"), entrant, codec.dump(entry)))

    def leave(self, variant: str, entrant: str) -> bool:
        """Move the entry under ``left`` (``False``: not entered)."""
        raw = self.r.hget(self.key(variant, "entries"), entrant)
        if raw is None:
            return False
        pipe = self.r.pipeline()
        pipe.hdel(self.key(variant, "entries"), entrant)
        pipe.hset(self.key(variant, "left"), entrant, raw)
        return bool(pipe.execute()[0])

    def entry(self, variant: str, entrant: str, *, left: bool = False) -> dict[str, Any] | None:
        """The entrant's entry (``left``: the one it left with)."""
        raw = self.r.hget(self.key(variant, "left" if left else "entries"), entrant)
        return None if raw is None else dict(codec.load(raw))

    def entries(self, variant: str) -> list[dict[str, Any]]:
        return [dict(codec.load(v)) for v in self.r.hgetall(self.key(variant, "entries")).values()]

    def active(self, variant: str) -> dict[str, int]:
        """Matches in progress per entrant."""
        return {codec.text(k): int(v) for k, v in self.r.hgetall(self.key(variant, "active")).items()}

    def last_matched(self, variant: str) -> dict[str, float]:
        """When each entrant was last seated at a match."""
        return {codec.text(k): float(v) for k, v in self.r.hgetall(self.key(variant, "last")).items()}

    # -- ratings ------------------------------------------------------------------
    def ratings(self, variant: str) -> tuple[str, dict[str, dict[str, Any]]]:
        """The ratings and the ``rev`` they were read at (:meth:`finish` checks it)."""
        pipe = self.r.pipeline()
        pipe.get(self.key(variant, "rev"))
        pipe.hgetall(self.key(variant, "ratings"))
        rev, raw = pipe.execute()
        return (codec.text(rev) if rev else "0"), {codec.text(k): dict(codec.load(v)) for k, v in raw.items()}

    def rating(self, variant: str, entrant: str) -> dict[str, Any] | None:
        raw = self.r.hget(self.key(variant, "ratings"), entrant)
        return None if raw is None else dict(codec.load(raw))

    def history(self, variant: str, entrant: str, limit: int) -> list[dict[str, Any]]:
        """The entrant's last ``limit`` history entries, oldest first."""
        return [dict(codec.load(h)) for h in self.r.lrange(self.key(variant, f"history:{entrant}"), -limit, -1)]

    # -- matches ------------------------------------------------------------------
    def create(self, variant: str, match: dict[str, Any], entrants: Sequence[str], now: float, most: int) -> Created:
        """Store ``match`` of ``entrants`` and count it against each one's limit, unless one
        is gone or at its limit, or ``most`` matches (0: no bound) are in progress."""
        keys = [self.key(variant, k) for k in ("entries", "active", f"match:{match['match_id']}", "open", "last")]
        answer = self._create(keys=keys, args=[codec.dump(match), repr(now), most, *entrants])
        outcome = codec.text(answer[0])
        if outcome == "refused":
            return "refused", codec.text(answer[1])
        return ("created" if outcome == "created" else "full"), None

    def finish(
        self, variant: str, rev: str, finished: dict[str, Any], updates: Sequence[RatingUpdate], keep: int
    ) -> tuple[Finished, int]:
        """Store the ``finished`` match and its players' ratings and history (``keep``
        entries each) if the ratings are still at ``rev``; the outcome, and the match's
        completion number when ``"recorded"``."""
        match_id = finished["match_id"]
        names = (f"match:{match_id}", "ratings", "active", "open", "done", "seq", "rev")
        keys = [self.key(variant, k) for k in names] + [self.key(variant, f"history:{u.entrant}") for u in updates]
        args: list[Any] = [rev, codec.dump(finished), keep]
        for update in updates:
            args += [update.entrant, codec.dump(update.rating), codec.dump(update.history)]
        answer = self._finish(keys=keys, args=args)
        outcome = cast(Finished, codec.text(answer[0]))
        return outcome, int(answer[1]) if outcome == "recorded" else 0

    def forget_finished(self, variant: str, keep: int) -> None:
        """Drop the finished matches beyond the newest ``keep``."""
        done = self.key(variant, "done")
        old = [codec.text(i) for i in self.r.zrange(done, 0, -keep - 1)]
        if old:
            self.r.delete(*[self.key(variant, f"match:{i}") for i in old])
            self.r.hdel(self.key(variant, "attempts"), *old)
            self.r.hdel(self.key(variant, "queued"), *old)
            self.r.zrem(done, *old)

    def match(self, variant: str, match_id: str) -> dict[str, Any] | None:
        raw = self.r.get(self.key(variant, f"match:{match_id}"))
        return None if raw is None else dict(codec.load(raw))

    def matches(self, variant: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The matches of ``ids`` that are still kept, in that order."""
        if not ids:
            return []
        raw = self.r.mget([self.key(variant, f"match:{i}") for i in ids])
        return [dict(codec.load(m)) for m in raw if m is not None]

    def finished_ids(self, variant: str, limit: int) -> list[str]:
        """The last ``limit`` finished matches, newest first."""
        return [codec.text(i) for i in self.r.zrevrange(self.key(variant, "done"), 0, limit - 1)]

    def open_ids(self, variant: str) -> list[str]:
        """The matches not finished."""
        return [codec.text(i) for i in self.r.smembers(self.key(variant, "open"))]

    def close(self, variant: str, match_id: str) -> None:
        """No longer count ``match_id`` among the open ones."""
        self.r.srem(self.key(variant, "open"), match_id)

    # -- runs of a match ------------------------------------------------------------
    def take_lease(self, variant: str, match_id: str, token: str, ms: int) -> bool:
        """Lease the match to the run ``token`` for ``ms`` (``False``: another run holds it)."""
        return bool(self.r.set(self.key(variant, f"lease:{match_id}"), token, nx=True, px=ms))

    def renew_lease(self, variant: str, match_id: str, token: str, ms: int) -> bool:
        """``False``: the run ``token`` no longer holds the lease."""
        answer = self._renew(keys=[self.key(variant, f"lease:{match_id}")], args=[token, ms])
        return codec.text(answer[0]) == "renewed"

    def release_lease(self, variant: str, match_id: str, token: str) -> None:
        self._release(keys=[self.key(variant, f"lease:{match_id}")], args=[token])

    def leased(self, variant: str, match_id: str) -> bool:
        return bool(self.r.exists(self.key(variant, f"lease:{match_id}")))

    def leases(self, variant: str) -> list[str]:
        """The matches leased to a run now."""
        pattern = self.key(variant, "lease:*")
        return [codec.text(k).rpartition(":")[2] for k in self.r.scan_iter(match=pattern)]

    def queued_at(self, variant: str, match_id: str) -> float | None:
        """When the sweep last queued a run of the match (``None``: never)."""
        raw = self.r.hget(self.key(variant, "queued"), match_id)
        return None if raw is None else float(raw)

    def count_run(self, variant: str, match_id: str, now: float) -> int:
        """Count one more run of the match, queued at ``now``; the runs queued (1: only the first)."""
        attempt = 1 + int(self.r.hincrby(self.key(variant, "attempts"), match_id, 1))
        self.r.hset(self.key(variant, "queued"), match_id, repr(now))
        return attempt

    def runs(self, variant: str, match_id: str) -> int:
        """How many runs of the match were queued (1: only the first)."""
        return 1 + int(self.r.hget(self.key(variant, "attempts"), match_id) or 0)

    def completed(self, variant: str) -> int:
        """How many matches of the variant were recorded."""
        return int(self.r.get(self.key(variant, "seq")) or 0)

    # -- the workers' periods ---------------------------------------------------------
    def tick(self, variant: str, name: str, seconds: float) -> bool:
        """True once per ``seconds`` for every worker together (``name``: which period)."""
        return bool(self.r.set(self.key(variant, name), "1", nx=True, px=max(1, int(seconds * 1000))))
