"""gunicorn settings for the API: ``gunicorn -c python:mayi_service.gunicorn_config mayi_service.wsgi:app``.

gevent workers (:class:`mayi_service.server.worker.GeventWorker`): every connection is a
greenlet, so a waiting long-poll, an open event stream or a slow upload costs a
socket and a little memory, not a thread. Prometheus multiprocess mode so that
``/metrics`` sums every worker.
Override anything on the command line or with ``GUNICORN_CMD_ARGS``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

bind = os.environ.get("MAYI_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("MAYI_WORKERS", "2"))
worker_class = "mayi_service.server.worker.GeventWorker"
#: Connections one worker process serves at once (streams, long-polls, uploads and the rest).
worker_connections = int(os.environ.get("MAYI_WORKER_CONNECTIONS", "4000"))
timeout = 120
#: Seconds a stopping worker gives its open requests (a long-poll or an event stream
#: is cut: its client reconnects); the service stops within a few seconds (docs/operations.md).
graceful_timeout = 3
keepalive = 5


def on_starting(server: Any) -> None:
    """In the master, before any worker starts: an empty metrics directory for the
    workers to share (stale files would add old counts)."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.path.join(
        tempfile.gettempdir(), f"mayi-metrics-{os.getpid()}"
    )
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = path
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
