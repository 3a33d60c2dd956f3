"""Shared waits for new events: one ``XREAD BLOCK`` per game and process, however many
clients wait on that game.

The first waiter on a game starts a reader (a greenlet under gevent, a thread otherwise)
that blocks in ``XREAD`` on the game's event stream and wakes every waiter of
that game when an event arrives, :data:`WAKE_GROUP` at a time (on a single Redis it holds a
connection for its reads: :mod:`.kept`); it stops once nobody has
waited through one more, shorter read (:data:`LINGER_SECONDS`). A reader keeps the last
:data:`WINDOW_EVENTS` events it read (:meth:`EventHub.recent`), each decoded once and
shared by every stream of the game in this process; a stream asking for events outside
the window reads them from Redis. (docs/decisions/0002-spectator-fanout.md)
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import redis

from mayi_service.storage import codec
from mayi_service.storage.connections import is_cluster
from mayi_service.storage.kept import HeldReads

log = logging.getLogger(__name__)

#: How long one blocking read of a reader lasts; a reader with no waiters left stops
#: within this time.
READ_BLOCK_SECONDS = 10.0
#: How long a reader whose waiters have all gone reads on for a new one before it stops.
LINGER_SECONDS = 1.0
#: The most events a reader keeps for its waiters to share (:meth:`EventHub.recent`): more
#: than a fast game makes within one spectator pacing interval.
WINDOW_EVENTS = 256
#: Waiters a reader wakes at once, and the pause between two such groups (each stream woken
#: writes to its client meanwhile).
WAKE_GROUP = 16
WAKE_PAUSE_SECONDS = 0.001


class SharedEvent:
    """One event as a reader read it, shared by every waiter of its game in this process:
    its number, its stored text, the event decoded (once, on first use; never to be
    changed), and :attr:`derived`, where readers keep what they make of it (their
    encodings), so that each is made once."""

    __slots__ = ("_event", "derived", "raw", "seq")

    def __init__(self, seq: int, raw: bytes) -> None:
        self.seq = seq
        self.raw = raw
        self._event: dict[str, Any] | None = None
        self.derived: dict[Any, Any] = {}

    @property
    def event(self) -> dict[str, Any]:
        if self._event is None:
            self._event = codec.load(self.raw)
        return self._event

    @classmethod
    def of(cls, event: dict[str, Any]) -> SharedEvent:
        """An event read from the game store as a dict (its ``seq`` its number), shared from
        now on: never to be changed."""
        shared = cls(int(event["seq"]), b"")
        shared._event = event
        return shared


def _entry_fields(fields: dict[Any, Any]) -> bytes:
    """The stored text of a stream entry as redis-py reads it: an event's field ``e``; a
    wake-up entry's only field (``g``, its game)."""
    value = fields.get(b"e", fields.get("e"))
    if value is None and fields:
        value = next(iter(fields.values()))
    return value if isinstance(value, bytes) else str(value or "").encode()


def _seq(entry_id: Any) -> int:
    return int((entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)).split("-")[0])


class _Watch:
    """The reader of one event stream and what it has seen."""

    def __init__(self, hub: EventHub, key: str, after: int) -> None:
        self.hub = hub
        self.key = key
        #: The highest event number seen in the stream (or the first waiter's ``after``).
        self.latest = after
        #: The events numbered above ``base`` up to ``latest``, every one (the window).
        self.base = after
        self.window: deque[SharedEvent] = deque()
        self.waiters = 0
        #: Streams pausing in :meth:`EventHub.hold`: no waiters, but they keep the reader reading.
        self.holders = 0
        self.error: Exception | None = None
        #: Guards ``latest``, the window and ``error``.
        self.guard = threading.Lock()
        #: The waiters' bells, a group of about :data:`WAKE_GROUP` waiters to each: a bell is
        #: set, and replaced by a new one, when the reader read more (one group after another),
        #: failed, or was interrupted (every group at once).
        self.bells = [threading.Event()]
        #: Bells handed out (each waiter takes the next in turn).
        self.turn = 0
        self.thread = threading.Thread(target=self._read, name=f"events {key}", daemon=True)

    def _read(self) -> None:
        hub = self.hub
        idle = False  # the last read had nobody waiting
        held = HeldReads(hub.pool) if hub.pool is not None else None
        failed = False
        try:
            while True:
                with hub.lock:
                    if self.waiters == 0 and self.holders == 0 and idle:
                        del hub.watches[self.key]
                        return
                    idle = self.waiters == 0 and self.holders == 0
                block = min(hub.linger_ms, hub.block_ms) if idle else hub.block_ms
                after = f"{self.latest}-0"
                if held is not None:
                    entries = held.xread(self.key, after, 100, block)
                else:
                    found = hub.r.xread({self.key: after}, count=100, block=block) or [[None, []]]
                    # [[key, entries]] (RESP2), or {key: [entries]} (RESP3)
                    entries = next(iter(found.values()))[0] if isinstance(found, dict) else found[0][1]
                if entries:
                    read = [SharedEvent(_seq(entry_id), _entry_fields(fields)) for entry_id, fields in entries]
                    with self.guard:
                        self._keep(read)
                        groups = len(self.bells)
                    for group in range(groups):
                        if group:
                            # Let the event loop serve other requests between two groups (see above).
                            time.sleep(WAKE_PAUSE_SECONDS)
                        with self.guard:
                            self.ring(group)
                    # Let the woken waiters run before this reader blocks again: under gevent
                    # they are only scheduled, and the next XREAD would run first, on their
                    # path to the answer. (Threads: a no-op.)
                    time.sleep(0)
        except Exception as exc:  # Redis went away: every waiter gets the error
            failed = True
            log.warning("reading events of %s: %s", self.key, exc)
            with hub.lock:
                if hub.watches.get(self.key) is self:
                    del hub.watches[self.key]
            with self.guard:
                self.error = exc
                self.wake()
        finally:
            if held is not None:
                held.close(failed)

    def wake(self) -> None:
        """Wake every waiter (under :attr:`guard`)."""
        for group in range(len(self.bells)):
            self.ring(group)

    def ring(self, group: int) -> None:
        """Wake the waiters of ``group`` (under :attr:`guard`)."""
        if group < len(self.bells):
            bell, self.bells[group] = self.bells[group], threading.Event()
            bell.set()

    def bell(self, ticket: int) -> threading.Event:
        """The bell of the waiter holding ``ticket`` (under :attr:`guard`), in as many groups as
        the waiters now make (the waiters of a group dropped are woken to take another)."""
        groups = max(1, -(-self.waiters // WAKE_GROUP))
        while len(self.bells) < groups:
            self.bells.append(threading.Event())
        while len(self.bells) > groups:
            self.bells.pop().set()
        return self.bells[ticket % len(self.bells)]

    def _keep(self, read: list[SharedEvent]) -> None:
        """Add the events just read to the window (under :attr:`guard`): after the last
        one it holds, or in place of them all after a gap (events archived unread)."""
        for shared in read:
            if shared.seq <= self.latest:
                continue  # (never: a read starts after the latest)
            if shared.seq != self.latest + 1:
                self.window.clear()
                self.base = shared.seq - 1
            self.window.append(shared)
            self.latest = shared.seq
        while len(self.window) > WINDOW_EVENTS:
            self.base = self.window.popleft().seq

    def fill(self, events: list[SharedEvent]) -> None:
        """Put back in front of the window the events just before it (read from the store by
        a stream behind it, after a gap), so that the other streams behind it take them from
        here; the events that do not end just before the window, or are not contiguous, are
        ignored."""
        with self.guard:
            before = [e for e in events if e.seq <= self.base]
            if not before or before[-1].seq != self.base or self.error is not None:
                return
            if any(b.seq != a.seq + 1 for a, b in itertools.pairwise(before)):
                return
            self.window.extendleft(reversed(before))
            self.base = before[0].seq - 1
            while len(self.window) > WINDOW_EVENTS:
                self.base = self.window.popleft().seq

    def recent(self, after: int) -> list[SharedEvent] | None:
        """Every event read numbered above ``after`` (``[]``: none yet); ``None`` if the
        window does not reach back to ``after``."""
        with self.guard:
            if after < self.base or self.error is not None:
                return None
            if after >= self.latest:
                return []
            return list(itertools.islice(self.window, after - self.base, None))


class EventHub:
    """Waits for events above a number, shared per stream key (see the module docstring)."""

    def __init__(self, client: redis.Redis, block_seconds: float = READ_BLOCK_SECONDS, kept: bool = True) -> None:
        self.r = client
        pool = getattr(client, "connection_pool", None)
        #: With ``kept`` on a single Redis, each reader holds a connection of this pool for its
        #: reads (:class:`~.kept.HeldReads`); ``None``: reads through redis-py's ``xread``.
        self.pool = pool if kept and pool is not None and not is_cluster(client) else None
        self.block_ms = max(1, int(block_seconds * 1000))
        self.linger_ms = max(1, int(LINGER_SECONDS * 1000))
        self.lock = threading.Lock()
        self.watches: dict[str, _Watch] = {}

    def wait(self, key: str, after: int, timeout: float, gone: Callable[[], bool] | None = None) -> bool:
        """Wait up to ``timeout`` seconds for an entry numbered above ``after`` in the
        stream ``key``; ``True`` if there is one. Raises the reader's Redis error. ``gone``:
        the wait ends early (``False``) once it is true, looked at whenever the waiters of
        ``key`` are woken (:meth:`interrupt` wakes them)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            watch = self.watches.get(key)
            start = watch is None
            if watch is None:
                watch = self.watches[key] = _Watch(self, key, after)
            watch.waiters += 1
            watch.turn += 1
            ticket = watch.turn
        if start:
            watch.thread.start()
        try:
            while True:
                with watch.guard:
                    if watch.latest > after:
                        return True
                    error, arrived = watch.error, watch.bell(ticket)
                if gone is not None and gone():
                    return False
                if error is not None:
                    raise error
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                arrived.wait(left)
        finally:
            with self.lock:
                watch.waiters -= 1

    def hold(self, key: str, seconds: float) -> None:
        """Pause ``seconds`` while the events of ``key`` gather, keeping its reader (if there is
        one) reading and keeping them meanwhile, as a waiter would, without being woken by them."""
        with self.lock:
            watch = self.watches.get(key)
            if watch is not None:
                watch.holders += 1
        try:
            time.sleep(max(0.0, seconds))
        finally:
            if watch is not None:
                with self.lock:
                    watch.holders -= 1

    def recent(self, key: str, after: int) -> list[SharedEvent] | None:
        """The events of stream ``key`` numbered above ``after`` that its reader read and
        keeps (``[]``: none since; the reader's next are worth a :meth:`wait`), shared and
        read-only; ``None`` if there is no reader, or it keeps none that far back: read
        them from Redis."""
        with self.lock:
            watch = self.watches.get(key)
        return None if watch is None else watch.recent(after)

    def start(self, key: str) -> int | None:
        """The number of the event just before the window of ``key``'s reader (``None``: no
        reader): a stream further behind reads from the store (and may :meth:`fill` it)."""
        with self.lock:
            watch = self.watches.get(key)
        if watch is None:
            return None
        with watch.guard:
            return watch.base

    def fill(self, key: str, events: list[SharedEvent]) -> None:
        """Give ``key``'s reader (if any) the events just before its window (see
        :meth:`_Watch.fill`)."""
        with self.lock:
            watch = self.watches.get(key)
        if watch is not None:
            watch.fill(events)

    def interrupt(self, key: str) -> None:
        """Wake the waiters of ``key`` to look at their ``gone`` (see :meth:`wait`)."""
        with self.lock:
            watch = self.watches.get(key)
        if watch is not None:
            with watch.guard:
                watch.wake()

    def readers(self) -> int:
        """Streams being read now (one Redis connection each)."""
        with self.lock:
            return len(self.watches)
