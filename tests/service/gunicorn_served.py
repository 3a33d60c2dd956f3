"""The real serving model in tests: ``mayi serve`` (gunicorn with gevent workers) on a
free loopback port, on an embedded Redis in a temporary folder.

The server runs in its own process group, so that ``stop()`` can always end it and
everything it started (the embedded ``redis-server`` stops with it), also when a
test fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import requests

MAYI = shutil.which("mayi", path=str(Path(sys.executable).parent)) or shutil.which("mayi")
#: Generous: CI runs on a loaded 2-core machine.
READY_SECONDS = 90.0
STOP_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class GeventServer:
    """One ``mayi serve`` process and its URL."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        end = time.monotonic() + READY_SECONDS
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"mayi serve exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if requests.get(self.url + "/healthz", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise AssertionError(f"mayi serve was not ready in {READY_SECONDS} s:\n{self.output()}")

    def stop(self) -> None:
        """SIGINT (as Ctrl+C), then SIGKILL to the whole process group if it lingers."""
        if self.proc.poll() is None:
            with suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)
            with suppress(subprocess.TimeoutExpired):
                self.proc.wait(STOP_SECONDS)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # anything of it still running
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)


@contextmanager
def gevent_server(tmp: Path, env_changes: dict[str, str] | None = None, workers: int = 1) -> Iterator[GeventServer]:
    """``mayi serve --no-worker`` with the environment's ``MAYI_*`` settings replaced by
    ``env_changes``; stopped however the block ends."""
    assert MAYI is not None, "the mayi command is not installed"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    env.update(
        {
            "MAYI_DATA_DIR": str(tmp / "data"),
            "MAYI_SCHEDULE_CLOCK_JOBS": "false",
            "MAYI_QUEUE_NAME": f"q{uuid.uuid4().hex[:10]}",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(env_changes or {})
    log = tmp / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [MAYI, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), "--no-worker"],
            env=env,
            cwd=tmp,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = GeventServer(proc, port, log)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def new_game(url: str, seats: int = 3) -> tuple[str, list[str], int]:
    """A full May I table with slow clocks: its id, its seat tokens, and the number of
    its last event. Seat 0 is offered the first upcard (it may pass at once)."""
    created = requests.post(
        url + "/v1/games",
        json={
            "variant": "may_i",
            "seats": seats,
            "options": {"claim_seconds": 600, "turn_seconds": 600},
            "players": [{"name": f"P{i}"} for i in range(seats)],
        },
        timeout=30,
    )
    assert created.status_code == 201, created.text
    body = created.json()
    game_id = body["game_id"]
    last = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()["last"]
    return game_id, [s["token"] for s in body["seats"]], int(last)


def pass_first_upcard(url: str, game_id: str, token: str) -> None:
    moved = requests.post(
        f"{url}/v1/games/{game_id}/claims",
        json={"claim": False},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert moved.status_code == 200, moved.text
