"""Idle connections under the serving model: 1,000 open event streams and 200
half-sent requests while a game is played over HTTP.

Run from the repository root with the project's virtual environment::

    python bench/streams.py                      # 3 runs, about a minute and a half
    python bench/streams.py --streams 2000 --half-sent 400 --runs 5 --json
    python bench/streams.py --live 600             # 600 of 1,000 streams on the game in play

What it does, in each run:

* **Server**: ``mayi serve`` (gunicorn, one gevent worker process, and its job
  worker, as ``mayi serve`` runs by default) on a free loopback port, with its
  embedded Redis in a temporary folder, on the default settings: rate limits on,
  clock jobs on, 4 streams per client. The load comes as 1,000 spectators would,
  from many addresses: each stream from its own loopback address (127.0.x.y, four
  to an address, the default ``MAYI_MAX_STREAMS_PER_CLIENT``), so no per-client
  limit is raised. The half-sent requests come 20 to an address (of another block of
  loopback addresses), within ``MAYI_MAX_CONNECTIONS_PER_ADDRESS`` (128); one
  answered 408 at its body's deadline (``MAYI_BODY_TIMEOUT_SECONDS``, 15 s) is sent
  again at once, so that as many are held all along. The bench changes only what
  its load needs beyond the defaults, through the environment:
  ``MAYI_MAX_WAITING_PER_PROCESS`` and ``MAYI_WORKER_CONNECTIONS`` when the streams
  are more than they allow (not at 1,000). ``--relaxed``: rate limits and clock jobs
  off as well, a labelled extra line beside the defaults' (the report's first line
  says so). Stopped at the end of the run, also on errors.
* **Game**: one client thread plays 4-player May I games (``bench/api.py``'s
  client: each action is one POST, its answer the next view), one action after
  another; the latency of each action is timed on the client (``perf_counter``).
  After ``--warmup`` actions, ``--actions`` actions are timed on the **idle**
  server; then the load is opened, and ``--actions`` more are timed **under load**.
* **Load**: ``--streams`` event streams (``GET /v1/games/{id}/events/stream`` as
  spectators) spread over 10 tables that nobody plays, so they stay idle (a
  keep-alive comment every 15 s), and ``--half-sent`` requests
  (``POST /v1/games`` with ``Content-Length: 100`` and one byte of body, never
  finished). The client is one thread with non-blocking sockets (``selectors``),
  not a thread per connection.
* **Memory per idle stream**: the resident memory (``VmRSS``) of the gunicorn
  worker process (not the job worker's) just before the streams open and once they are all open and
  idle, divided by the number of streams. It includes everything a stream holds in
  the API process: its greenlet, its client socket's buffers, its Redis connection
  and the request's objects (the Redis server's own memory is not counted).

**Live scenario** (``--live N``, e.g. ``--live 600``): N of the ``--streams`` follow
the game being played, the rest sit on the idle tables, and no half-sent requests
are sent. The game's client plays as above, in a loop of its own that creates each
game and, in the live phase, opens the N streams on it (from 127.4.x.y and 127.5.x.y
in turn, four to an address) before its first move; the server ends them when the
game ends, and the next game gets N new ones. A probe sends ``GET /healthz`` ten times
a second from an address of its own. After ``--warmup`` actions, ``--actions``
actions (and the probes meanwhile) are timed **without** streams; then the idle
tables' streams open and the next game's live ones, and ``--actions`` more are timed
**with** them. It prints the medians and p99 of both latencies without and with,
their ratios, the memory per stream (the worker's ``VmRSS`` growth halfway through,
over all the streams; and apart, idle and live), and the worker's CPU per action
(its user and system time over the phase, divided by its actions: the figure the
machine's load disturbs least). The streams are read in a process of their own: read
by a thread beside the game's client, their hundreds of reads per event would hold
that client's interpreter lock, timed as the server's latency. Each live stream of a
game played to its end must have got exactly the events a spectator sees of it
(``GET .../events``), or the run fails.

Goals: the game's action p99 under load within 2x its p99 on the idle server;
memory per idle stream <= 50 KB; live, the action and ``/healthz`` p99 with the streams
within 2x their p99 without. The report gives medians over ``--runs`` runs
(min-max beside them). Nothing here asserts a timing; the client, the server
and Redis share the machine's cores, so read the ratio, not the absolute figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import resource
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import requests

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import api as game_client  # noqa: E402  (bench/api.py: the game-playing client)

GOAL_P99_RATIO = 2.0
GOAL_STREAM_BYTES = 50 * 1024
IDLE_TABLES = 10
READY_SECONDS = 120.0
MAYI = shutil.which("mayi", path=str(Path(sys.executable).parent)) or shutil.which("mayi")


# ---------------------------------------------------------------------------
# The server


class Served:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log

    def worker_pids(self) -> list[int]:
        """The gunicorn worker processes (children of ``mayi serve``; not its Redis, nor
        its job worker, ``mayi_service.cli worker``)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with suppress(OSError):
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes().split(b"\0")
                child = int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid
                if child and "redis" not in stat and b"worker" not in command:
                    found.append(int(entry.name))
        return found

    def worker_cpu(self) -> float:
        """CPU seconds (user and system) the worker processes have used."""
        total = 0
        for pid in self.worker_pids():
            with suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def worker_rss(self) -> int:
        """Resident bytes of the worker processes together."""
        total = 0
        for pid in self.worker_pids():
            with suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        return total


#: The settings a ``--relaxed`` run turns off (a labelled extra line, never the headline).
RELAXED = {"MAYI_SCHEDULE_CLOCK_JOBS": "false", "MAYI_RATE_LIMITS_ENABLED": "false"}
#: What the report's first line says of the settings, by ``--relaxed``.
SETTINGS = {
    True: "RELAXED: rate limits and clock jobs off (an extra line, not the defaults)",
    False: "the defaults (rate limits on, clock jobs on, the job worker)",
}
#: The default cap on the event streams and waiting long-polls of one server process.
DEFAULT_WAITING = 2000


def loopback(number: int, block: int = 1) -> str:
    """The ``number``-th loopback address of ``block`` (127.<block>.x.y): a client address of its own."""
    return f"127.{block}.{number // 250}.{number % 250 + 1}"


#: Half-sent requests held from one address (well within MAYI_MAX_CONNECTIONS_PER_ADDRESS).
HALF_SENT_PER_ADDRESS = 20
#: The block of loopback addresses the half-sent requests come from (streams: 1, tables: 2).
HALF_SENT_BLOCK = 3


@contextmanager
def mayi_serve(streams: int, relaxed: bool = False) -> Iterator[Served]:
    if MAYI is None:
        raise SystemExit("the mayi command is not installed: pip install -e . first")
    folder = Path(tempfile.mkdtemp(prefix="mayi-bench-streams-"))
    port = game_client.free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    env["MAYI_DATA_DIR"] = str(folder / "data")
    if streams + 500 > DEFAULT_WAITING:  # more than one process holds by default
        env["MAYI_MAX_WAITING_PER_PROCESS"] = str(streams + 500)
        env["MAYI_WORKER_CONNECTIONS"] = str(max(4000, 2 * streams + 1000))
    if relaxed:
        env.update(RELAXED)
    log = folder / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [MAYI, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = Served(proc, port, log)
    try:
        end = time.monotonic() + READY_SECONDS
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"mayi serve exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            with suppress(requests.RequestException):
                if requests.get(served.url + "/healthz", timeout=5).status_code == 200:
                    break
            if time.monotonic() > end:
                raise RuntimeError(f"mayi serve was not ready in {READY_SECONDS} s")
            time.sleep(0.2)
        yield served
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            with suppress(subprocess.TimeoutExpired):
                proc.wait(30)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------
# Idle connections, from one thread


class IdleConnections:
    """Event streams and half-sent requests on non-blocking sockets, read by one
    background thread so that the server's keep-alives never fill a buffer; a half-sent
    request the server closes (408, at its body's deadline) is sent again at once."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.selector = selectors.DefaultSelector()
        self.sockets: list[socket.socket] = []
        self.opened: dict[int, bool] = {}
        #: The source address of each half-sent request's socket, by its file descriptor.
        self.half: dict[int, str] = {}
        #: Half-sent requests sent again after the server closed them.
        self.resent = 0
        #: Events received on each open stream (after its first line), by file descriptor,
        #: and the last bytes received (an event's ``\nevent: `` may straddle two reads).
        self.events: dict[int, int] = {}
        #: The reads that brought events to each stream after it opened (no more than the
        #: server's writes: a read may take in several).
        self.reads: dict[int, int] = {}
        self.tails: dict[int, bytes] = {}
        #: Streams the server ended (the game is over), by file descriptor.
        self.ended: set[int] = set()
        self.failed: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def open_streams(
        self, game_ids: list[str], count: int, batch: int = 100, timeout: float = 120.0, block: int = 1
    ) -> list[int]:
        """Open ``count`` streams (round-robin over ``game_ids``) from the addresses of
        ``block``; return their file descriptors once each has sent its status line and
        first line of data."""
        opened = []
        for start in range(0, count, batch):
            fds = []
            for i in range(start, min(count, start + batch)):
                # Four streams to an address (the default cap per client), as spectators come.
                source = (loopback(i // 4, block), 0)
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=30, source_address=source)
                sock.sendall(
                    f"GET /v1/games/{game_ids[i % len(game_ids)]}/events/stream HTTP/1.1\r\n"
                    "Host: 127.0.0.1\r\n\r\n".encode()
                )
                sock.setblocking(False)
                with self.lock:
                    self.opened[sock.fileno()] = False
                    self.sockets.append(sock)
                    self.selector.register(sock, selectors.EVENT_READ, bytearray())
                fds.append(sock.fileno())
            end = time.monotonic() + timeout
            while not all(self.opened[fd] for fd in fds):
                if self.failed:
                    raise RuntimeError(f"a stream failed: {self.failed[0]}")
                if time.monotonic() > end:
                    raise RuntimeError(f"streams not open after {timeout} s")
                time.sleep(0.01)
            opened += fds
        return opened

    def half_send(self, count: int) -> None:
        for i in range(count):
            self._half_send(loopback(i // HALF_SENT_PER_ADDRESS, block=HALF_SENT_BLOCK))

    def _half_send(self, source: str) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30, source_address=(source, 0))
        sock.sendall(
            b"POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        sock.setblocking(False)
        with self.lock:
            self.half[sock.fileno()] = source
            self.sockets.append(sock)
            self.selector.register(sock, selectors.EVENT_READ, bytearray())

    def _read(self) -> None:
        while not self.stop.is_set():
            with self.lock:
                registered = bool(self.selector.get_map())
            if not registered:
                time.sleep(0.01)
                continue
            for key, _ in self.selector.select(0.05):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    data = b""
                    self.failed.append(str(exc))
                if not data:
                    fd = sock.fileno()
                    with self.lock:
                        self.selector.unregister(sock)
                        source = self.half.pop(fd, None)
                        if fd in self.events:
                            self.ended.add(fd)
                    if not self.opened.get(fd, True):
                        self.failed.append(f"closed before it opened: {bytes(key.data)[:300]!r}")
                    if source is not None:  # its body's deadline: send another
                        with self.lock:
                            self.sockets.remove(sock)
                        sock.close()
                        try:
                            self._half_send(source)
                            self.resent += 1
                        except OSError as exc:
                            self.failed.append(f"a half-sent request could not be sent again: {exc}")
                    continue
                seen: bytearray = key.data
                fd = sock.fileno()
                if not self.opened.get(fd, True):
                    seen += data
                    if b"retry: 2000" in seen:
                        if not seen.startswith(b"HTTP/1.1 200"):
                            self.failed.append(seen[:200].decode(errors="replace"))
                        rest = bytes(seen[seen.index(b"retry: 2000") :])
                        self.events[fd] = rest.count(b"\nevent: ")
                        self.tails[fd] = rest[-7:]
                        self.opened[fd] = True
                        seen.clear()
                elif fd in self.events:
                    joined = self.tails[fd] + data
                    self.events[fd] += joined.count(b"\nevent: ")
                    self.reads[fd] = self.reads.get(fd, 0) + (b"\nevent: " in joined)
                    self.tails[fd] = joined[-7:]

    def report(self, fds: list[int]) -> dict[str, Any]:
        """The events each of the streams ``fds`` received, those the server ended, and
        the failures seen."""
        with self.lock:
            return {
                "events": {fd: self.events.get(fd, 0) for fd in fds},
                "reads": {fd: self.reads.get(fd, 0) for fd in fds},
                "ended": [fd for fd in fds if fd in self.ended],
                "failed": list(self.failed[:5]),
            }

    def close(self) -> None:
        self.stop.set()
        self.reader.join(10)
        for sock in self.sockets:
            with suppress(OSError):
                sock.close()
        self.selector.close()


def _spectators(port: int, pipe: Connection) -> None:
    """The streams' own process (:class:`SpectatorProcess`): runs the commands sent."""
    connections = IdleConnections(port)
    try:
        while True:
            command, args = pipe.recv()
            if command == "close":
                return
            try:
                pipe.send(("ok", getattr(connections, command)(*args)))
            except Exception as exc:
                pipe.send(("error", repr(exc)))
    finally:
        connections.close()


class SpectatorProcess:
    """:class:`IdleConnections` in a process of its own (the live scenario): reading
    hundreds of streams that all receive each event would hold the interpreter lock of
    the game's client, and its wait for the lock would be timed as the server's latency."""

    def __init__(self, port: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipe, child = context.Pipe()
        self.process = context.Process(target=_spectators, args=(port, child), daemon=True)
        self.process.start()
        self.lock = threading.Lock()

    def _call(self, command: str, *args: Any) -> Any:
        with self.lock:
            self.pipe.send((command, args))
            status, value = self.pipe.recv()
        if status != "ok":
            raise RuntimeError(f"the spectators' process: {value}")
        return value

    def open_streams(self, game_ids: list[str], count: int, block: int = 1) -> list[int]:
        fds: list[int] = self._call("open_streams", game_ids, count, 100, 120.0, block)
        return fds

    def report(self, fds: list[int]) -> dict[str, Any]:
        answer: dict[str, Any] = self._call("report", fds)
        return answer

    def close(self) -> None:
        with suppress(OSError, BrokenPipeError), self.lock:
            self.pipe.send(("close", ()))
        self.process.join(30)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(10)


# ---------------------------------------------------------------------------
# The game


class GamePlayer:
    """One client thread playing games over HTTP; ``timed(n)`` returns the latencies of
    its next ``n`` actions."""

    def __init__(self, url: str, seed: int) -> None:
        self.log = game_client.WorkerLog()
        self.stop = threading.Event()
        self.session = requests.Session()
        work = game_client.play_games(url, seed)
        self.error: BaseException | None = None

        def run() -> None:
            try:
                work(0, self.session, self.stop, self.log)
            except BaseException as exc:
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def timed(self, actions: int) -> list[float]:
        start = len(self.log.latencies)
        while len(self.log.latencies) < start + actions:
            if self.error is not None or not self.thread.is_alive():
                raise RuntimeError(f"the game client stopped: {self.error!r}")
            time.sleep(0.005)
        return self.log.latencies[start : start + actions]

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)
        self.session.close()


def summary(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "p50_ms": game_client.percentile(ordered, 50) * 1000,
        "p99_ms": game_client.percentile(ordered, 99) * 1000,
        "actions": len(ordered),
    }


def _create_from(port: int, address: str, body: dict[str, Any]) -> str:
    """Create a table by ``POST /v1/games`` from the client address ``address``; its id."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(address, 0))
    try:
        connection.request("POST", "/v1/games", json.dumps(body), {"Content-Type": "application/json"})
        answer = connection.getresponse()
        data = answer.read()
        if answer.status != 201:
            raise RuntimeError(f"POST /v1/games from {address}: HTTP {answer.status} {data[:300]!r}")
        return str(json.loads(data)["game_id"])
    finally:
        connection.close()


def one_run(args: argparse.Namespace, run: int) -> dict[str, Any]:
    with mayi_serve(args.streams, args.relaxed) as server:
        idle_tables = []
        for i in range(IDLE_TABLES):  # each by a client of its own (one address may create 10 a minute)
            body = game_client.create_body(game_client.game_seed(args.seed, 1000 + run, i))
            idle_tables.append(_create_from(server.port, loopback(i, block=2), body))
        player = GamePlayer(server.url, args.seed + run)
        connections = IdleConnections(server.port)
        try:
            player.timed(args.warmup)
            idle = summary(player.timed(args.actions))
            time.sleep(1.0)
            rss_before = server.worker_rss()
            opening = time.perf_counter()
            connections.open_streams(idle_tables, args.streams)
            opened_in = time.perf_counter() - opening
            time.sleep(2.0)  # let them settle: every stream now waits in XREAD BLOCK
            rss_streams = server.worker_rss()
            connections.half_send(args.half_sent)
            time.sleep(1.0)
            rss_all = server.worker_rss()
            loaded = summary(player.timed(args.actions))
            health = requests.get(server.url + "/healthz", timeout=60).status_code
            resent = connections.resent
            if connections.failed:
                raise RuntimeError(f"{len(connections.failed)} idle connections failed: {connections.failed[0]}")
        finally:
            player.close()
            connections.close()
    return {
        "idle": idle,
        "load": loaded,
        "p99_ratio": loaded["p99_ms"] / idle["p99_ms"],
        "p50_ratio": loaded["p50_ms"] / idle["p50_ms"],
        "bytes_per_stream": (rss_streams - rss_before) / args.streams,
        "bytes_per_half_sent": (rss_all - rss_streams) / max(1, args.half_sent),
        "worker_rss_mb": rss_all / 2**20,
        "streams_opened_in_s": opened_in,
        "healthz_under_load": health,
        "half_sent_resent": resent,
    }


# ---------------------------------------------------------------------------
# Spectators of the game being played

#: The address blocks of the live streams, one game on each in turn (a game's streams
#: may still be closing as the next game's open), and the health probe's address.
LIVE_BLOCKS = (4, 5)
PROBE_ADDRESS = "127.6.0.1"
#: Seconds between two health probes (10 a second: within the address's rate limit).
PROBE_INTERVAL = 0.1


class LivePlayer:
    """One client thread playing 4-player games over HTTP, one after another (the policy
    of ``bench/api.py``). Before the first move of each game it asks ``on_game(game_id)``
    whether spectators follow it (they are open when it answers); the latencies of its
    actions are kept apart, watched and not."""

    def __init__(self, url: str, seed: int, warmup: int, on_game: Callable[[str], bool]) -> None:
        self.url = url
        self.seed = seed
        self.warmup = warmup
        self.on_game = on_game
        self.latencies: dict[bool, list[float]] = {False: [], True: []}
        #: Games played to their end with spectators following them.
        self.finished: list[str] = []
        self.watched: bool | None = None  # the game in play is followed (None: between games)
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def phase(self) -> str | None:
        """What a probe sent now measures: ``"baseline"`` (no streams, after the warm-up),
        ``"live"`` (spectators following the game in play), or ``None``."""
        if self.stop.is_set() or self.watched is None:
            return None
        if self.watched:
            return "live"
        return "baseline" if len(self.latencies[False]) >= self.warmup else None

    def _run(self) -> None:
        try:
            self._play()
        except BaseException as exc:
            self.error = exc

    def _play(self) -> None:
        log = game_client.WorkerLog()
        game = 0
        with requests.Session() as session:
            while not self.stop.is_set():
                self.watched = None
                body = game_client.create_body(game_client.game_seed(self.seed, 0, game))
                created = session.post(f"{self.url}/v1/games", json=body, timeout=60)
                game += 1
                if created.status_code != 201:
                    log.failed("create", created)
                    continue
                data = created.json()
                url = f"{self.url}/v1/games/{data['game_id']}"
                auth = {s["seat"]: {"Authorization": f"Bearer {s['token']}"} for s in data["seats"]}
                view: dict[str, Any] = data["game"]
                watched = self.on_game(data["game_id"])
                self.watched = watched
                timed = self.latencies[watched]
                while view["status"] != "finished" and not self.stop.is_set():
                    seat = game_client.next_seat(view)
                    legal = game_client.legal_for(view, seat)
                    if legal is None:
                        view = game_client._fetch(session, url, auth[seat], log)
                        continue
                    path, move = game_client.request_for(game_client.choose(legal))
                    started = time.perf_counter()
                    response = session.post(url + path, json=move, headers=auth[seat], timeout=60)
                    ended = time.perf_counter()
                    if response.status_code != 200:
                        log.failed(path, response)
                        view = game_client._fetch(session, url, auth[seat], log)
                        continue
                    timed.append(ended - started)
                    view = response.json()
                if watched and view["status"] == "finished":
                    self.finished.append(data["game_id"])

    def wait_for(self, watched: bool, count: int, timeout: float = 600.0) -> None:
        """Return once ``count`` actions have been timed, watched or not."""
        end = time.monotonic() + timeout
        while len(self.latencies[watched]) < count:
            if self.error is not None or not self.thread.is_alive():
                raise RuntimeError(f"the game client stopped: {self.error!r}")
            if time.monotonic() > end:
                raise RuntimeError(f"{count} actions not played in {timeout} s")
            time.sleep(0.01)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)


class HealthProbe:
    """``GET /healthz`` every :data:`PROBE_INTERVAL` from an address of its own (one
    kept-alive connection), each latency kept under the phase it was sent in."""

    def __init__(self, port: int, phase: Callable[[], str | None]) -> None:
        self.port = port
        self.phase = phase
        self.latencies: dict[str, list[float]] = {"baseline": [], "live": []}
        self.failed: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60, source_address=(PROBE_ADDRESS, 0))
        try:
            while not self.stop.wait(PROBE_INTERVAL):
                phase = self.phase()
                started = time.perf_counter()
                try:
                    connection.request("GET", "/healthz")
                    answer = connection.getresponse()
                    answer.read()
                except (OSError, http.client.HTTPException) as exc:
                    self.failed.append(str(exc))
                    connection.close()
                    continue
                ended = time.perf_counter()
                if answer.status != 200:
                    self.failed.append(f"HTTP {answer.status}")
                elif phase is not None and phase == self.phase():
                    self.latencies[phase].append(ended - started)
        finally:
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)


def public_events(url: str, game_id: str) -> int:
    """How many events of ``game_id`` a spectator may see (read page by page, without waiting)."""
    count, after = 0, 0
    while True:
        answer = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": after, "wait": 0}, timeout=60)
        answer.raise_for_status()
        page = answer.json()
        if not page["events"]:
            return count
        count += len(page["events"])
        after = page["last"]


def live_run(args: argparse.Namespace, run: int) -> dict[str, Any]:
    """One run of the live scenario: see the module docstring."""
    with mayi_serve(args.streams, args.relaxed) as server:
        idle_tables = []
        for i in range(IDLE_TABLES):
            body = game_client.create_body(game_client.game_seed(args.seed, 1000 + run, i))
            idle_tables.append(_create_from(server.port, loopback(i, block=2), body))
        connections = SpectatorProcess(server.port)
        watch = threading.Event()
        followed: dict[str, list[int]] = {}

        def on_game(game_id: str) -> bool:
            if not watch.is_set():
                return False
            block = LIVE_BLOCKS[len(followed) % len(LIVE_BLOCKS)]
            followed[game_id] = connections.open_streams([game_id], args.live, block=block)
            return True

        player = LivePlayer(server.url, args.seed + run, args.warmup, on_game)
        probe = HealthProbe(server.port, player.phase)
        try:
            player.wait_for(False, args.warmup)
            cpu = server.worker_cpu()
            player.wait_for(False, args.warmup + args.actions)
            cpu_baseline = server.worker_cpu() - cpu
            baseline = player.latencies[False][args.warmup : args.warmup + args.actions]
            time.sleep(1.0)
            rss_before = server.worker_rss()
            connections.open_streams(idle_tables, args.streams - args.live)
            time.sleep(1.0)
            rss_idle = server.worker_rss()
            watch.set()
            player.wait_for(True, 1)
            cpu = server.worker_cpu()
            player.wait_for(True, args.actions // 2)
            rss_live = server.worker_rss()
            player.wait_for(True, args.actions + 1)
            cpu_live = server.worker_cpu() - cpu
            live = player.latencies[True][1 : args.actions + 1]
            player.close()
            probe.close()
            # Every live stream got every event a spectator may see of its game, no more (the
            # game in play when the player stopped too: its streams are still open).
            wanted = [fd for fds in followed.values() for fd in fds]

            def short() -> list[int]:
                counts = {game_id: public_events(server.url, game_id) for game_id in followed}
                seen = connections.report(wanted)
                return [fd for g, fds in followed.items() for fd in fds if seen["events"][fd] != counts[g]]

            end = time.monotonic() + 60
            while short() and time.monotonic() < end:
                time.sleep(0.5)
            seen = connections.report(wanted)
            if short():
                raise RuntimeError(f"{len(short())} of {len(wanted)} live streams did not get the events of their game")
            if seen["failed"] or probe.failed:
                raise RuntimeError(f"failures: {(seen['failed'] + probe.failed)[:3]}")
        finally:
            player.close()
            probe.close()
            connections.close()
    result = {"baseline": summary(baseline), "live": summary(live)}
    result["health_baseline"] = summary(probe.latencies["baseline"])
    result["health_live"] = summary(probe.latencies["live"])
    for what in ("", "health_"):
        before, under = result[f"{what}baseline" if what else "baseline"], result[f"{what}live" if what else "live"]
        result[f"{what}p99_ratio"] = under["p99_ms"] / before["p99_ms"]
        result[f"{what}p50_ratio"] = under["p50_ms"] / before["p50_ms"]
    idle_streams = max(1, args.streams - args.live)
    result["bytes_per_stream"] = (rss_live - rss_before) / args.streams
    result["bytes_per_idle_stream"] = (rss_idle - rss_before) / idle_streams
    result["bytes_per_live_stream"] = (rss_live - rss_idle) / max(1, args.live)
    result["worker_rss_mb"] = rss_live / 2**20
    # (the live phase's time includes the opening of the next game's streams, when a game ends)
    result["cpu_ms_baseline"] = cpu_baseline / args.actions * 1000
    result["cpu_ms_live"] = cpu_live / args.actions * 1000
    result["reads_per_event"] = sum(seen["reads"].values()) / max(1, sum(seen["events"].values()))
    result["games_followed"] = len(followed)
    result["games_finished"] = len(player.finished)
    return result


def median_of(runs: list[dict[str, Any]], *path: str) -> dict[str, float]:
    values = []
    for r in runs:
        value: Any = r
        for p in path:
            value = value[p]
        values.append(float(value))
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def print_report(result: dict[str, Any]) -> None:
    def fmt(s: dict[str, float], digits: int = 1, scale: float = 1.0) -> str:
        return f"{s['median'] / scale:,.{digits}f} ({s['min'] / scale:,.{digits}f}-{s['max'] / scale:,.{digits}f})"

    m = result["medians"]
    print(f"settings: {result['settings']}")
    print(
        f"{result['streams']:,} idle event streams + {result['half_sent']} half-sent requests, "
        f"{result['actions']} timed actions per phase, {result['runs']} runs (median, min-max); "
        f"Python {result['python']}, {result['cpus']} CPUs, load {result['load']}"
    )
    print(f"  action p50 idle / under load   {fmt(m['idle_p50_ms'], 2)} ms / {fmt(m['load_p50_ms'], 2)} ms")
    print(f"  action p99 idle / under load   {fmt(m['idle_p99_ms'], 2)} ms / {fmt(m['load_p99_ms'], 2)} ms")
    print(f"  p99 ratio (load / idle)        {fmt(m['p99_ratio'], 2)}x   goal <= {GOAL_P99_RATIO}x")
    print(f"  p50 ratio (load / idle)        {fmt(m['p50_ratio'], 2)}x")
    goal_kb = GOAL_STREAM_BYTES // 1024
    print(f"  memory per idle stream         {fmt(m['bytes_per_stream'], 1, 1024)} KB   goal <= {goal_kb} KB")
    print(f"  memory per half-sent request   {fmt(m['bytes_per_half_sent'], 1, 1024)} KB")
    print(f"  worker RSS under load          {fmt(m['worker_rss_mb'], 0)} MB")
    print(f"  {result['streams']:,} streams opened in     {fmt(m['streams_opened_in_s'], 1)} s")
    print(f"  half-sent requests sent again  {fmt(m['half_sent_resent'], 0)} (after their 408, to hold as many)")


def print_live_report(result: dict[str, Any]) -> None:
    def fmt(s: dict[str, float], digits: int = 1, scale: float = 1.0) -> str:
        return f"{s['median'] / scale:,.{digits}f} ({s['min'] / scale:,.{digits}f}-{s['max'] / scale:,.{digits}f})"

    m = result["medians"]
    print(f"settings: {result['settings']}")
    print(
        f"{result['live']:,} of {result['streams']:,} event streams following the game being played "
        f"(the rest on idle tables), {result['actions']} timed actions per phase, {result['runs']} runs "
        f"(median, min-max); Python {result['python']}, {result['cpus']} CPUs, load {result['load']}"
    )

    def pair(name: str, without: str, with_: str, digits: int = 2, unit: str = "ms", scale: float = 1.0) -> None:
        print(f"  {name:<32}{fmt(m[without], digits, scale)} {unit} / {fmt(m[with_], digits, scale)} {unit}")

    pair("action p50 without / with", "baseline_p50_ms", "live_p50_ms")
    pair("action p99 without / with", "baseline_p99_ms", "live_p99_ms")
    print(f"  {'action p99 ratio (with/without)':<32}{fmt(m['p99_ratio'], 2)}x   goal <= {GOAL_P99_RATIO}x")
    print(f"  {'action p50 ratio':<32}{fmt(m['p50_ratio'], 2)}x")
    pair("/healthz p50 without / with", "health_baseline_p50_ms", "health_live_p50_ms")
    pair("/healthz p99 without / with", "health_baseline_p99_ms", "health_live_p99_ms")
    print(f"  {'/healthz p99 ratio':<32}{fmt(m['health_p99_ratio'], 2)}x   goal <= {GOAL_P99_RATIO}x")
    print(f"  {'memory per stream (all)':<32}{fmt(m['bytes_per_stream'], 1, 1024)} KB")
    pair("memory per idle / live stream", "bytes_per_idle_stream", "bytes_per_live_stream", 1, "KB", 1024)
    pair("worker CPU/action without / with", "cpu_ms_baseline", "cpu_ms_live")
    print(f"  {'worker RSS with the streams':<32}{fmt(m['worker_rss_mb'], 0)} MB")
    print(f"  {'reads per event, a live stream':<32}{fmt(m['reads_per_event'], 3)} (writes gathered)")
    print(
        f"  {'games followed / finished':<32}{fmt(m['games_followed'], 0)} / {fmt(m['games_finished'], 0)}"
        " (every live stream got every public event of its game)"
    )


LIVE_KEYS = {
    "baseline_p50_ms": ("baseline", "p50_ms"),
    "baseline_p99_ms": ("baseline", "p99_ms"),
    "live_p50_ms": ("live", "p50_ms"),
    "live_p99_ms": ("live", "p99_ms"),
    "p99_ratio": ("p99_ratio",),
    "p50_ratio": ("p50_ratio",),
    "health_baseline_p50_ms": ("health_baseline", "p50_ms"),
    "health_baseline_p99_ms": ("health_baseline", "p99_ms"),
    "health_live_p50_ms": ("health_live", "p50_ms"),
    "health_live_p99_ms": ("health_live", "p99_ms"),
    "health_p99_ratio": ("health_p99_ratio",),
    "bytes_per_stream": ("bytes_per_stream",),
    "bytes_per_idle_stream": ("bytes_per_idle_stream",),
    "bytes_per_live_stream": ("bytes_per_live_stream",),
    "worker_rss_mb": ("worker_rss_mb",),
    "cpu_ms_baseline": ("cpu_ms_baseline",),
    "cpu_ms_live": ("cpu_ms_live",),
    "reads_per_event": ("reads_per_event",),
    "games_followed": ("games_followed",),
    "games_finished": ("games_finished",),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--streams", type=int, default=1000, help="idle event streams (default 1000)")
    parser.add_argument("--half-sent", type=int, default=200, help="half-sent requests (default 200)")
    parser.add_argument("--actions", type=int, default=600, help="timed actions per phase (default 600)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed actions first (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="runs; medians reported (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games' deals (default 1)")
    parser.add_argument(
        "--live",
        type=int,
        default=0,
        help="the live scenario: this many of the --streams follow the game being played (e.g. 600); "
        "the game's action and /healthz latencies with them and without, no half-sent requests",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")
    parser.add_argument(
        "--relaxed",
        action="store_true",
        help="rate limits and clock jobs off: a labelled extra line beside the defaults' (not the headline)",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, game_client._terminate)
    # The client holds streams + half-sent sockets at once.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.streams + args.half_sent + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    if not 0 <= args.live <= args.streams:
        parser.error("--live: give at most --streams streams")
    if args.live:
        return live_main(args)
    runs = [one_run(args, run) for run in range(args.runs)]
    keys = {
        "idle_p50_ms": ("idle", "p50_ms"),
        "idle_p99_ms": ("idle", "p99_ms"),
        "load_p50_ms": ("load", "p50_ms"),
        "load_p99_ms": ("load", "p99_ms"),
        "p99_ratio": ("p99_ratio",),
        "p50_ratio": ("p50_ratio",),
        "bytes_per_stream": ("bytes_per_stream",),
        "bytes_per_half_sent": ("bytes_per_half_sent",),
        "worker_rss_mb": ("worker_rss_mb",),
        "streams_opened_in_s": ("streams_opened_in_s",),
        "half_sent_resent": ("half_sent_resent",),
    }
    result = {
        "settings": SETTINGS[args.relaxed],
        "streams": args.streams,
        "half_sent": args.half_sent,
        "actions": args.actions,
        "runs": args.runs,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "medians": {name: median_of(runs, *path) for name, path in keys.items()},
        "each_run": runs,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)
    return 0


def live_main(args: argparse.Namespace) -> int:
    runs = [live_run(args, run) for run in range(args.runs)]
    result = {
        "settings": SETTINGS[args.relaxed],
        "streams": args.streams,
        "live": args.live,
        "actions": args.actions,
        "runs": args.runs,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "medians": {name: median_of(runs, *path) for name, path in LIVE_KEYS.items()},
        "each_run": runs,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_live_report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
