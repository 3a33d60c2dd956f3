"""The rate limits' storage (flask-limiter's ``limits``) on the service's Redis: its URI,
its options, and the storages that read a sliding window once a request."""

from __future__ import annotations

from typing import Any

import redis
from flask import has_request_context, request
from limits.storage import RedisClusterStorage, RedisStorage

from mayi_service.storage.connections import COMMAND_TIMEOUT, MAX_CONNECTIONS, is_cluster_url

#: Where a request keeps the sliding windows it has read (a key of its WSGI environ).
_WINDOWS = "mayi.limit_windows"


def _windows() -> dict[tuple[str, int], tuple[int, float, int, float]] | None:
    """The sliding windows read in this request, or None outside a request."""
    if not has_request_context():
        return None
    return request.environ.setdefault(_WINDOWS, {})  # type: ignore[no-any-return]


class _OncePerRequest:
    """A limits Redis storage that reads each sliding window once a request: flask-limiter
    reads a limit's window to test the request, and again for its state (the ``RateLimit``
    field); the second read is answered from the first unless the request has been
    counted against that window since (which reads it afresh)."""

    def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        windows = _windows()
        if windows is None:
            return super().get_sliding_window(key, expiry)  # type: ignore[misc, no-any-return]
        window = windows.get((key, expiry))
        if window is None:
            window = windows[key, expiry] = super().get_sliding_window(key, expiry)  # type: ignore[misc]
        return window

    def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        windows = _windows()
        if windows is not None:
            windows.pop((key, expiry), None)
        return super().acquire_sliding_window_entry(key, limit, expiry, amount)  # type: ignore[misc, no-any-return]

    def clear_sliding_window(self, key: str, expiry: int) -> None:
        windows = _windows()
        if windows is not None:
            windows.pop((key, expiry), None)
        super().clear_sliding_window(key, expiry)  # type: ignore[misc]


class OncePerRequestRedis(_OncePerRequest, RedisStorage):
    """limits' Redis storage (``mayi+redis://``, ``mayi+rediss://``, ``mayi+redis+unix://``),
    each sliding window read once a request."""

    STORAGE_SCHEME = ["mayi+redis", "mayi+rediss", "mayi+redis+unix"]  # noqa: RUF012 (limits declares a list)


class OncePerRequestRedisCluster(_OncePerRequest, RedisClusterStorage):
    """limits' Redis Cluster storage (``mayi+redis+cluster://``), each sliding window read
    once a request."""

    STORAGE_SCHEME = ["mayi+redis+cluster"]  # noqa: RUF012 (limits declares a list)


def limiter_uri(url: str) -> str:
    """The limits storage URI of the Redis at ``url``: :class:`OncePerRequestRedis`, on a
    cluster :class:`OncePerRequestRedisCluster` (TLS through :func:`limiter_options`);
    other schemes (Sentinels) limits' own storage."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() == "unix":
        return "mayi+redis+unix://" + rest
    if is_cluster_url(url):
        return "mayi+redis+cluster://" + rest
    if scheme.lower() in ("redis", "rediss"):
        return f"mayi+{scheme.lower()}://{rest}"
    return url


#: Connections the rate limits' storage may hold at once, per process: each request holds
#: one for a moment, in turn, for each of its limit calls, and a gevent worker serves at
#: most ``MAYI_WORKER_CONNECTIONS`` requests at once (4,000 by default).
LIMITER_CONNECTIONS = MAX_CONNECTIONS


def limiter_options(url: str) -> dict[str, Any]:
    """Options of the limits storage: on a single Redis, a pool of its own as large as the
    service's (redis-py's default pool refuses a 101st connection at once, and a gevent
    worker may have more requests than that in their limit calls together: each was a
    500); on a cluster,
    the service's own timeouts (redis-py's cluster client has none by default) and TLS for
    ``rediss+cluster://``."""
    if not is_cluster_url(url):
        if url.split(":", 1)[0].lower() not in ("redis", "rediss", "unix"):
            return {}  # (Sentinels: limits' own client)
        pool = redis.ConnectionPool.from_url(
            url,
            max_connections=LIMITER_CONNECTIONS,
            socket_timeout=COMMAND_TIMEOUT,
            socket_connect_timeout=5,
        )
        return {"connection_pool": pool}
    options: dict[str, Any] = {"socket_timeout": COMMAND_TIMEOUT, "socket_connect_timeout": 5}
    if url.lower().startswith("rediss+"):
        options["ssl"] = True
    return options
