"""A game's event log: the current round's events in a stream, the rounds that ended in a
compressed archive, and the shared wait for new ones (:mod:`mayi_service.storage.hub`)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

import redis

from mayi_service.storage import codec
from mayi_service.storage.hub import EventHub
from mayi_service.storage.keys import Keys

#: The zlib level of the event archive (docs/decisions/0008-clock-play-outs.md).
ARCHIVE_LEVEL = 8


class EventLog(Keys):
    """The event operations of :class:`~mayi_service.storage.repository.GameRepository`."""

    hub: EventHub
    finished_ttl: int

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
