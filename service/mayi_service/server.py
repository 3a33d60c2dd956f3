"""Running the API under gunicorn (threaded workers, for long-polls and SSE)."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from .app import create_app

        return create_app()


def run_api(host: str, port: int, workers: int, threads: int) -> None:
    """Serve the API on ``host:port`` until interrupted (settings of :mod:`.gunicorn_config`)."""
    from . import gunicorn_config as conf

    _Gunicorn(
        {
            "bind": f"{host}:{port}",
            "workers": workers,
            "threads": threads,
            "worker_class": conf.worker_class,
            "timeout": conf.timeout,
            "graceful_timeout": conf.graceful_timeout,
            "keepalive": conf.keepalive,
            "on_starting": conf.on_starting,
            "child_exit": conf.child_exit,
            "accesslog": None,
            "loglevel": "warning",
        }
    ).run()
