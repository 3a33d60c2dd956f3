"""Idle connections under the serving model: 1,000 open event streams and 200
half-sent requests while a game is played over HTTP.

Run from the repository root with the project's virtual environment::

    python bench/streams.py                      # 3 runs, about a minute and a half
    python bench/streams.py --streams 2000 --half-sent 400 --runs 5 --json

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

Goals: the game's action p99 under load within 2x its p99 on the idle server;
memory per idle stream <= 50 KB. The report gives medians over ``--runs`` runs
(min-max beside them). Nothing here asserts a timing; the client, the server
and Redis share the machine's cores, so read the ratio, not the absolute figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
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
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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
        self.failed: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def open_streams(self, game_ids: list[str], count: int, batch: int = 100, timeout: float = 120.0) -> None:
        """Open ``count`` streams (round-robin over ``game_ids``); return once each has
        sent its status line and first line of data."""
        for start in range(0, count, batch):
            fds = []
            for i in range(start, min(count, start + batch)):
                # Four streams to an address (the default cap per client), as spectators come.
                source = (loopback(i // 4), 0)
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
                if not self.opened.get(sock.fileno(), True):
                    seen += data
                    if b"retry: 2000" in seen:
                        if not seen.startswith(b"HTTP/1.1 200"):
                            self.failed.append(seen[:200].decode(errors="replace"))
                        self.opened[sock.fileno()] = True
                        seen.clear()

    def close(self) -> None:
        self.stop.set()
        self.reader.join(10)
        for sock in self.sockets:
            with suppress(OSError):
                sock.close()
        self.selector.close()


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--streams", type=int, default=1000, help="idle event streams (default 1000)")
    parser.add_argument("--half-sent", type=int, default=200, help="half-sent requests (default 200)")
    parser.add_argument("--actions", type=int, default=600, help="timed actions per phase (default 600)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed actions first (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="runs; medians reported (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games' deals (default 1)")
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
        "settings": "RELAXED: rate limits and clock jobs off (an extra line, not the defaults)"
        if args.relaxed
        else "the defaults (rate limits on, clock jobs on, the job worker)",
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


if __name__ == "__main__":
    sys.exit(main())
