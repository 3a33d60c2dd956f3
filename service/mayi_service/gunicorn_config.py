"""gunicorn settings for the API: ``gunicorn -c python:mayi_service.gunicorn_config mayi_service.wsgi:app``.

Threaded workers (long-polls and SSE hold a thread while they wait), and
Prometheus multiprocess mode so that ``/metrics`` sums every worker.
Override anything on the command line or with ``GUNICORN_CMD_ARGS``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

bind = os.environ.get("MAYI_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("MAYI_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("MAYI_THREADS", "32"))
timeout = 120
graceful_timeout = 10
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
