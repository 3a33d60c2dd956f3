"""The webhook deliveries' Redis keys: the due-set of the attempts not done, the marks that
enqueue a decision once, and each bot's delivery log.

The due-set (a sorted set on the jobs Redis, never a cluster) scores each attempt with the
time (ms) it falls due or its lease ends; a lease is held while the score is its token.
The marks and the logs live beside the bot's account, under its hash tag
(``<prefix>:{bot:<id>}:delivery:<game>:<seat>:<key>`` and ``<prefix>:{bot:<id>}:deliveries``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mayi_service.storage import codec
from mayi_service.storage.bots import bot_key, log_key
from mayi_service.storage.lua import source


class DeliveryStore:
    """The deliveries of one queue: marks and logs on the game Redis ``r`` under ``prefix``,
    the due-set ``due_key`` on the jobs Redis ``jobs`` (``None``: no queue, no due-set)."""

    def __init__(self, r: Any, prefix: str, jobs: Any | None, due_key: str) -> None:
        self.r = r
        self.prefix = prefix
        self.jobs = jobs
        self.due_key = due_key
        if jobs is not None:
            self._take = jobs.register_script(source("deliveries_take"))
            self._claim = jobs.register_script(source("deliveries_claim"))
            self._finish = jobs.register_script(source("deliveries_finish"))

    def log_key(self, bot_id: str) -> str:
        return log_key(self.prefix, bot_id)

    def mark_key(self, bot_id: str, game_id: str, seat: int, key: str) -> str:
        return f"{self.prefix}:{{bot:{bot_id}}}:delivery:{game_id}:{seat}:{key}"

    # -- the bots -------------------------------------------------------------------
    def webhook_urls(self, bot_ids: Iterable[str]) -> dict[str, str | None]:
        """Each bot's ``webhook_url`` now (``None``: none), one pipeline."""
        bots = sorted(set(bot_ids))
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bots:
            pipe.hget(bot_key(self.prefix, bot_id), "webhook_url")
        return {
            bot_id: None if url is None else codec.text(url) for bot_id, url in zip(bots, pipe.execute(), strict=True)
        }

    def mark(self, bot_id: str, game_id: str, seat: int, key: str, seconds: int) -> bool:
        """Mark the decision enqueued for ``seconds`` (``False``: it was marked already)."""
        return bool(self.r.set(self.mark_key(bot_id, game_id, seat, key), "1", nx=True, ex=seconds))

    # -- the due-set ------------------------------------------------------------------
    def lease(self, member: str, until: int) -> None:
        """Lease ``member`` until ``until`` (ms): if its job is lost, the dispatcher enqueues it again."""
        assert self.jobs is not None
        self.jobs.zadd(self.due_key, {member: until})

    def take(self, now: int, until: int, most: int) -> tuple[list[str], float | None]:
        """Lease to the caller, until ``until`` (ms), at most ``most`` members due at ``now``
        (ms); with the first score left (``None``: the set is empty)."""
        assert self.jobs is not None
        _, members, first = self._take(keys=[self.due_key], args=[now, until, most])
        return [codec.text(m) for m in members], None if first is None else float(first)

    def claim(self, member: str, lease: int, until: int) -> int | None:
        """Renew ``member``'s lease ``lease`` until ``until`` (ms): the lease now held
        (``None``: ``lease`` is no longer held)."""
        assert self.jobs is not None
        answer = self._claim(keys=[self.due_key], args=[member, lease, until])
        return int(answer[1]) if codec.text(answer[0]) == "claimed" else None

    def finish(self, member: str, lease: int, then: tuple[str, int] | None = None) -> bool:
        """End ``member``'s lease ``lease``, making ``then`` (a member, and when it is due, ms)
        due; ``False``: the lease was no longer held."""
        assert self.jobs is not None
        args: Sequence[Any] = [member, lease, *(then or ())]
        return codec.text(self._finish(keys=[self.due_key], args=args)[0]) == "finished"

    def due(self) -> int:
        """How many deliveries are not done (due, leased or waiting for their next attempt)."""
        return int(self.jobs.zcard(self.due_key)) if self.jobs is not None else 0

    # -- the log --------------------------------------------------------------------
    def record(self, bot_id: str, entry: dict[str, Any], keep: int) -> None:
        """Add ``entry`` to the bot's log (newest first, ``keep`` entries), expiring with its account."""
        key = self.log_key(bot_id)
        pipe = self.r.pipeline()
        pipe.lpush(key, codec.dump(entry))
        pipe.ltrim(key, 0, max(0, keep - 1))
        ttl = self.r.ttl(bot_key(self.prefix, bot_id))
        if ttl and ttl > 0:
            pipe.expire(key, ttl)
        pipe.execute()

    def recent(self, bot_id: str) -> list[dict[str, Any]]:
        """The bot's log, newest first."""
        return [dict(codec.load(raw)) for raw in self.r.lrange(self.log_key(bot_id), 0, -1)]
