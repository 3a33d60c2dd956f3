"""Redis calls on kept connections: the adapter behind the request path's scripts and the
event hub's reads on a single Redis (``kept=True``, the default of :class:`.Scripts` and
:class:`.EventHub`).

A call is sent with redis-py's own ``Connection`` (``send_command``, ``read_response``)
on a connection kept between calls, without redis-py's per-command layers (the pool's
borrow, with its process checks and readiness poll, and its observability records): on
this service's request path they cost about as much CPU as the rest of a small command
(docs/decisions/0019-libraries-as-documented-server.md has the figures). Errors are
redis-py's. A kept connection is not polled before use, so one the server closed since
fails on use: such a call is sent once more, on a connection from the pool (a server
that closed the connection never ran the command). On a Redis Cluster, which routes each
call by its keys' slot, no call comes here.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from typing import Any

import redis
from redis.exceptions import ResponseError


class KeptConnections:
    """Connections of ``pool`` kept between calls (at most :attr:`KEEP`; more at once come
    from the pool and go back to it)."""

    KEEP = 32

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.idle: list[Any] = []
        _ALL.add(self)

    def call(self, *args: Any) -> Any:
        """The reply to the command ``args``; raises redis-py's errors (an error reply as
        its :class:`~redis.exceptions.ResponseError`)."""
        try:
            kept = self.idle.pop()  # (threads may share the list: it may empty under our feet)
        except IndexError:
            kept = None
        if kept is not None:
            with contextlib.suppress(redis.ConnectionError):  # closed by the server since its last use
                return self._send(kept, args)
        return self._send(self.pool.get_connection(), args)

    def _send(self, conn: Any, args: tuple[Any, ...]) -> Any:
        try:
            conn.send_command(*args)
            reply = conn.read_response()
        except ResponseError:  # an error reply: the connection is in step, keep it
            self._give_back(conn)
            raise
        except BaseException:
            conn.disconnect()
            self.pool.release(conn)
            raise
        self._give_back(conn)
        return reply

    def _give_back(self, conn: Any) -> None:
        if len(self.idle) < self.KEEP:
            self.idle.append(conn)
        else:
            self.pool.release(conn)

    def forget(self) -> None:
        """In a forked child: the parent's connections are not this process's to use."""
        self.idle = []


class HeldReads:
    """A reader's blocking ``XREAD`` of one stream, on one connection of ``pool`` held
    while it reads (as redis-py's ``PubSub`` holds one)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.conn: Any = None

    def xread(self, key: str, after: str, count: int, block_ms: int) -> list[tuple[Any, dict[Any, Any]]]:
        """The entries of stream ``key`` after ``after`` (at most ``count``, waiting up to
        ``block_ms``), each ``(id, fields)``."""
        if self.conn is None:
            self.conn = self.pool.get_connection()
        self.conn.send_command("XREAD", "COUNT", count, "BLOCK", block_ms, "STREAMS", key, after)
        found = self.conn.read_response()
        if not found:
            return []
        # [[key, entries]] (RESP2) or {key: entries} (RESP3); each entry [id, [field, value, ...]]
        entries = next(iter(found.values())) if isinstance(found, dict) else found[0][1]
        return [(entry_id, dict(zip(fields[::2], fields[1::2], strict=True))) for entry_id, fields in entries]

    def close(self, failed: bool) -> None:
        """Give the connection back (``failed``: closed first, it may be mid-reply)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            if failed:
                conn.disconnect()
            self.pool.release(conn)


#: Every :class:`KeptConnections`, so that a forked child forgets their connections.
_ALL: weakref.WeakSet[KeptConnections] = weakref.WeakSet()


def _forget_connections() -> None:
    for kept in list(_ALL):
        kept.forget()


os.register_at_fork(after_in_child=_forget_connections)
