"""The rate limits' storage (flask-limiter's ``limits``) on the service's Redis: its URI and
its options."""

from __future__ import annotations

from typing import Any

import redis

from mayi_service.storage.connections import COMMAND_TIMEOUT, MAX_CONNECTIONS, is_cluster_url


def limiter_uri(url: str) -> str:
    """The limits storage URI of the Redis at ``url``: on a cluster, limits' own cluster
    storage (``redis+cluster://``, TLS through :func:`limiter_options`)."""
    if url.startswith("unix://"):
        return "redis+unix://" + url[len("unix://") :]
    if is_cluster_url(url):
        return "redis+cluster://" + url.split("://", 1)[1]
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
