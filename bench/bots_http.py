"""Decision latency of polling bots over HTTP: 4 bots in each of 4 games at once.

Each bot runs ``mayi_sdk.run_polling`` (the default ``Bot``, which waits for the stock
rather than take an upcard it does not want) in a process of its own, as bot programs
do (``--threads``: all in threads of this process, where they queue for its one
interpreter lock), against the API under gunicorn (``bench/api.py``'s server: 2 gevent
workers) and one ``mayi worker`` (the clock jobs) on a fresh Redis, on the default
settings: rate limits on, clock jobs on. Only the setup is allowed more than the
defaults: the bench registers 16 bots and creates 4 tables a run from one address, over
the per-address limits on registering bots and creating tables (``MAYI_RATE_LIMIT_BOTS``,
``MAYI_RATE_LIMIT_CREATE``, ``MAYI_MAX_OPEN_TABLES_PER_ADDRESS``), which no measured
request passes through. ``--relaxed``: rate limits and clock jobs off as well (no
job worker), a labelled extra line beside the defaults' figures. Every seat is a bot.
``--webhooks``: each bot is instead the SDK's webhook receiver (``make_webhook_server``)
on a loopback port in a process of its own, its decisions delivered by ``mayi worker``
processes (``--job-workers``, 2) through RQ, as a webhook bot is served; measured the
same way ("to the view" then ends when the delivery reaches the bot's ``decide``).

**Decision latency**, for every move a bot commits: the time from the commit after which
its seat could make that move (without a break) to the commit of its answer. Both are
the service's own commit times (each event is stamped with its commit's time, to the
millisecond). Which moves each seat may make after each commit is worked out afterwards:
the benchmark records every move the service accepted (its answer carries the game's
new version and last event), replays each game through the engine from the same seed,
and asks the engine's ``legal_moves`` for every seat after every commit — what the
decisions long-poll itself asks. So a claim answered late counts from the discard that
opened the window, a discard from the draw before it (the runner plays it at once
from the draw's answer), and a stock draw from the commit that made it legal (the last
answer to the upcard: the seat on turn waits for it). Printed beside it, the same from
the commit after which the seat had any decision (the measure before bots could wait,
which counts a stock draw from the discard).

**Where the time goes**, per committed move (medians): from the commit that made the
move possible to the bot's client holding the view it decided on (the poll's wake and
answer, or the previous move's answer), ``decide``, and from sending the move to its
commit; with the CPU seconds the bots (their processes, or threads), the API server (gunicorn,
all processes) and Redis spent per committed move, and how busy they kept the cores.

**Requests per decision**: decision polls and moves sent (accepted or not) ÷ the decisions
the bots were asked (each call of ``decide``: answered by a move, or by waiting), the
goal's measure: a decision costs the poll that brought it (none when it came in the
answer to the seat's previous move) and its move (none when the bot waits). Printed
beside it: the same ÷ the moves committed (a waited-on decision brings no move, so it
counts only the polls; and each bot's last poll, which learns that its game ended,
brings no decision).

    python bench/bots_http.py [--games 4] [--seats 4] [--round 7] [--runs 3] [--threads] [--workers 2]
                              [--webhooks [--job-workers 2]] [--relaxed]

Prints medians (with min-max over runs) and the ratios to the goals; never asserts a
timing.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import api as bench_api
import redis
from api import Server, _load, gunicorn, percentile, redis_cpu_seconds, redis_server
from api import _stop as stop_process

import mayi_sdk
from mayi_engine import get_rules, legal_moves, move_from_json, play, start_game
from mayi_sdk import Bot, Client, DecisionList, GameView, LegalMove, RunStats, run_polling
from mayi_sdk.webhooks import make_webhook_server

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
GOAL_MEDIAN_MS = 10.0
GOAL_P99_MS = 50.0
GOAL_REQUESTS = 2.0

#: The gaps between successive commit times of the games (this benchmark's first, looser
#: definition of decision latency: a claim answered late by one bot while others answered
#: before it shows as short gaps), printed beside the definition above for comparison.
GAPS: list[float] = []


@dataclass
class Played:
    """The moves the service accepted from one bot: (game, new version, last event, seat,
    move JSON, when the client got the view it decided on, when it sent the move)."""

    moves: list[tuple[str, int, int, int, dict[str, Any], float, float]] = field(default_factory=list)
    sent: int = 0


class RecordingClient(Client):
    """A bot's client that notes every move it sends and every one the service accepts,
    and when it got each view it may decide on (a poll's decisions, a move's answer)."""

    def __init__(self, *args: Any, played: Played, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.played = played
        self.got: dict[tuple[str, int | str], float] = {}  # (game, version or key) -> when this client got it
        #: (webhooks) when this thread's bot was asked: the delivery reached it then
        self.asked = threading.local()

    def get_decisions(self, *args: Any, **kwargs: Any) -> DecisionList:
        page = super().get_decisions(*args, **kwargs)
        now = time.time()
        for decision in page.decisions:
            self.got.setdefault((decision.game_id, getattr(decision, "key", "") or decision.version), now)
        return page

    def play(self, game_id: str, move: LegalMove, *, if_match: int | None = None, **kwargs: Any) -> GameView:
        self.played.sent += 1
        sent = time.time()
        precondition = kwargs.get("if_key") or if_match
        got = self.got.get((game_id, precondition if precondition is not None else -1)) or getattr(
            self.asked, "at", sent
        )
        view = super().play(game_id, move, if_match=if_match, **kwargs)
        self.got[(game_id, view.version)] = time.time()
        assert view.seat is not None
        move_json = {"type": move.type, **move.body}
        self.played.moves.append((game_id, view.version, view.last_event, view.seat, move_json, got, sent))
        return view


@dataclass
class Found:
    """Per committed move: the latency (from when the move became possible, and from when
    the seat had any decision), and its parts: to the view held, in decide, to the commit."""

    latency: list[float] = field(default_factory=list)
    any_decision: list[float] = field(default_factory=list)
    to_view: list[float] = field(default_factory=list)
    deciding: list[float] = field(default_factory=list)
    to_commit: list[float] = field(default_factory=list)
    #: move type -> (latency, to the view) of each move of that type
    by_type: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def latencies(
    client: Client,
    game_id: str,
    start_round: int,
    played: list[tuple[int, int, int, dict[str, Any], float, float]],
    found: Found,
) -> None:
    """Decision latencies (seconds) of one finished game, by replaying it through the engine."""
    replay = client.get_replay(game_id)
    time_of = {e.seq: e.time for e in replay.events}
    times = sorted(set(time_of.values()))
    GAPS.extend(b - a for a, b in itertools.pairwise(times))
    rules = get_rules(replay.variant, replay.options)
    names = [n or "" for n in replay.names]
    by_version = {p[0]: p[1:] for p in played}
    first = min(by_version) - 1  # the commit that started the game (its last seat taken)
    started_at = time_of[1]  # a table has no events before it starts: the deal's are the first
    state, _ = start_game(rules, names, bytes.fromhex(replay.seed), now=started_at, start_round=start_round)
    # since[seat][move]: the commit time from which the seat may make that move (without a
    # break); since_any[seat]: from which it has had a decision of any kind.
    since: dict[int, dict[Any, float]] = {}
    since_any: dict[int, float] = {}
    version, at = first, started_at
    while True:
        for seat in range(len(names)):
            legal = legal_moves(state, seat, at)
            if legal:
                since_any.setdefault(seat, at)
                before = since.get(seat, {})
                since[seat] = {m: before.get(m, at) for m in legal}
            else:
                since_any.pop(seat, None)
                since.pop(seat, None)
        version += 1
        if version not in by_version:
            break
        last, seat, move_json, got, sent = by_version[version]
        at = time_of[last]
        if seat not in since:
            raise RuntimeError(f"game {game_id}: seat {seat} moved at version {version} without a decision")
        move = move_from_json(move_json)
        possible = since.pop(seat)
        start = possible.get(move, min(possible.values()))
        found.latency.append(at - start)
        found.any_decision.append(at - since_any.pop(seat))
        found.to_view.append(got - start)
        found.deciding.append(sent - got)
        found.to_commit.append(at - sent)
        kind = move_json["type"] if move_json["type"] != "claim" else f"claim {str(move_json['claim']).lower()}"
        found.by_type.setdefault(kind, []).append((at - start, got - start))
        state, _ = play(state, seat, move, at)
    if version <= max(by_version) or list(state.totals) != list(replay.totals):
        raise RuntimeError(f"game {game_id}: the replay of the recorded moves does not match the game")


@dataclass(frozen=True)
class Processes:
    """The API server and the job workers, as one for the CPU figures."""

    parts: list[Any]

    @property
    def base(self) -> str:
        return str(self.parts[0].base)

    def cpu_seconds(self) -> float:
        return sum(part.cpu_seconds() for part in self.parts)


#: The setup's allowance: registering 16 bots and creating 4 tables a run from one address
#: is over the default per-address limits on both, which no measured request passes through.
SETUP = {
    "MAYI_RATE_LIMIT_BOTS": "10000 per minute",
    "MAYI_RATE_LIMIT_CREATE": "10000 per minute",
    "MAYI_MAX_OPEN_TABLES_PER_ADDRESS": "0",
}
#: What a ``--relaxed`` run turns off (a labelled extra line, never the headline).
RELAXED = {"MAYI_RATE_LIMITS_ENABLED": "false", "MAYI_SCHEDULE_CLOCK_JOBS": "false"}


@contextlib.contextmanager
def job_worker(env: dict[str, str], logs: Path, number: int) -> Iterator[Server]:
    """A ``mayi worker`` (RQ: the clock jobs and the webhook deliveries), stopped on exit."""
    mayi = str(Path(sys.executable).parent / "mayi")
    with open(logs / f"worker{number}.log", "wb") as log:
        process = subprocess.Popen([mayi, "worker", "--no-sweeper"], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield Server("", process.pid)
        finally:
            stop_process(process)


def _cpu_now(server: Any, store: redis.Redis) -> tuple[float, float, float]:
    """CPU seconds so far of the bots (this process and its bot processes, once ended), the
    API server and Redis."""
    bots = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    return bots, server.cpu_seconds(), redis_cpu_seconds(store)


def _bot_process(client: RecordingClient, out: Any) -> None:
    """One bot's process: play until its games end, then send back what it did."""
    ran = run_polling(Bot(), client, wait=30, until_idle=True)
    out.send((ran, client.played))
    out.close()


class AskedBot(Bot):
    """The default ``Bot``, noting (per thread) when it is asked: for a webhook bot, when
    the delivery reached it (its ``decide`` then runs at once, in the delivery's thread)."""

    def __init__(self, client: RecordingClient) -> None:
        super().__init__()
        self.client = client

    def decide(self, view: GameView) -> Any:
        self.client.asked.at = time.time()
        return super().decide(view)


def _webhook_bot_process(client: RecordingClient, secret: str, out: Any, stop: Any) -> None:
    """One webhook bot's process: the SDK's receiver on a loopback port (sent back), playing
    each delivery through ``client``, until told to stop; then send back what it did."""
    server = make_webhook_server(AskedBot(client), client, secret, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    out.send(server.server_port)
    stop.recv()
    server.shutdown()
    server.server_close()
    out.send((server.get_app().stats, client.played))
    out.close()


def _wait_finished(client: Client, games: list[str]) -> None:
    """Until every game of ``games`` has ended (one light read of each game, 5 times a second)."""
    left = list(games)
    while left:
        time.sleep(0.2)
        left = [g for g in left if client.get_game(g).status != "finished"]


def run_once(args: argparse.Namespace, server: Any, store: redis.Redis) -> dict[str, float]:
    base = server.base
    anon = Client(base, timeout=120)
    games: list[str] = []
    bots: list[RecordingClient] = []
    records: list[Played] = []
    secrets: list[str] = []
    seats: list[tuple[RecordingClient, str, str]] = []  # (bot, game, name): taken once the bots listen
    for g in range(args.games):
        test = {"seed": f"{g:02x}" * 16, "start_round": args.round}
        game_id = anon.create_game("may_i", args.seats, options=SLOW, test=test).game_id
        games.append(game_id)
        for s in range(args.seats):
            played = Played()
            account = anon.register_bot(f"bench{g}-{s}")
            client = RecordingClient(base, account.token, timeout=120, played=played)
            seats.append((client, game_id, f"bench{g}-{s}"))
            secrets.append(account.webhook_secret)
            bots.append(client)
            records.append(played)
    if not args.webhooks:
        for client, game_id, name in seats:
            client.take_seat(game_id, name)
    stats: list[RunStats] = []
    cpu_before = _cpu_now(server, store)
    started = time.monotonic()
    if args.webhooks:  # every bot a webhook receiver in a process of its own
        context = multiprocessing.get_context("fork")
        hooks = []
        for client, secret in zip(bots, secrets, strict=True):
            mine, theirs = context.Pipe(duplex=False)
            told, tell = context.Pipe(duplex=False)
            process = context.Process(target=_webhook_bot_process, args=(client, secret, theirs, told), daemon=True)
            process.start()
            hooks.append((process, mine, tell))
        for client, (_, mine, _) in zip(bots, hooks, strict=True):
            client.update_my_bot(f"http://127.0.0.1:{mine.recv()}/")
        cpu_before = _cpu_now(server, store)
        started = time.monotonic()
        for client, game_id, name in seats:  # the last seat taken starts the game
            client.take_seat(game_id, name)
        _wait_finished(anon, games)
        for i, (process, mine, tell) in enumerate(hooks):
            tell.send("stop")
            ran, played = mine.recv()
            process.join()
            stats.append(ran)
            records[i].moves[:] = played.moves
            records[i].sent = played.sent
    elif args.threads:  # every bot a thread of this process

        def run(client: Client) -> None:
            stats.append(run_polling(Bot(), client, wait=30, until_idle=True))

        threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in bots]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:  # every bot a process of its own, as bot programs are
        context = multiprocessing.get_context("fork")
        pipes = []
        for client in bots:
            mine, theirs = context.Pipe(duplex=False)
            process = context.Process(target=_bot_process, args=(client, theirs), daemon=True)
            process.start()
            pipes.append((process, mine))
        for i, (process, pipe) in enumerate(pipes):
            ran, played = pipe.recv()
            process.join()
            stats.append(ran)
            records[i].moves[:] = played.moves
            records[i].sent = played.sent
    seconds = time.monotonic() - started
    cpu = [b - a for a, b in zip(cpu_before, _cpu_now(server, store), strict=True)]
    found = Found()
    for game_id in games:
        moves = [
            (v, last, seat, move, got, sent)
            for r in records
            for g, v, last, seat, move, got, sent in r.moves
            if g == game_id
        ]
        latencies(anon, game_id, args.round, moves, found)
    gaps = sorted(GAPS)
    GAPS.clear()
    moves = sum(s.moves for s in stats)
    polls = sum(s.polls for s in stats)
    sent = sum(r.sent for r in records)

    def ms(values: list[float], q: float = 50) -> float:
        return percentile(sorted(values), q) * 1000

    for kind, pairs in sorted(found.by_type.items()):
        print(
            f"    {kind:<12} {len(pairs):5d} moves: latency median {ms([a for a, _ in pairs]):.1f} ms, "
            f"p99 {ms([a for a, _ in pairs], 99):.1f} ms; to the view median {ms([b for _, b in pairs]):.1f} ms",
            file=sys.stderr,
        )
    return {
        "seconds": seconds,
        "moves": moves,
        "polls": polls,
        "sent": sent,
        "waits": sum(getattr(s, "waits", 0) for s in stats),
        "rate_limited": sum(getattr(s, "rate_limited", 0) for s in stats),
        "refused": sum(getattr(s, "refused", 0) for s in stats),
        "too_late": sum(getattr(s, "too_late", 0) for s in stats),
        "median_ms": ms(found.latency),
        "p99_ms": ms(found.latency, 99),
        "any_median_ms": ms(found.any_decision),
        "any_p99_ms": ms(found.any_decision, 99),
        "to_view_ms": ms(found.to_view),
        "deciding_ms": ms(found.deciding),
        "to_commit_ms": ms(found.to_commit),
        "requests_per_decision": (polls + sent) / max(1, sent + sum(getattr(s, "waits", 0) for s in stats)),
        "requests_per_move": (polls + sent) / max(1, moves),
        "gap_median_ms": statistics.median(gaps) * 1000,
        "gap_p99_ms": percentile(gaps, 99) * 1000,
        "client_cpu_ms": cpu[0] / max(1, moves) * 1000,
        "server_cpu_ms": cpu[1] / max(1, moves) * 1000,
        "redis_cpu_ms": cpu[2] / max(1, moves) * 1000,
        "busy": sum(cpu) / (seconds * (os.cpu_count() or 1)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--round", type=int, default=7, help="the round to start at (1: whole games; 7: the last)")
    parser.add_argument("--runs", type=int, default=3, help="runs, each on fresh games (medians reported)")
    parser.add_argument(
        "--threads",
        action="store_true",
        help="run every bot as a thread of this process (default: each in a process of its own)",
    )
    parser.add_argument(
        "--workers", type=int, default=bench_api.SERVER_WORKERS, help="gunicorn worker processes of the API server"
    )
    parser.add_argument(
        "--webhooks",
        action="store_true",
        help="webhook bots: each bot the SDK's receiver in a process of its own, its decisions delivered by "
        "`mayi worker` processes (default: polling bots)",
    )
    parser.add_argument(
        "--job-workers", type=int, default=2, help="(--webhooks) `mayi worker` processes delivering the decisions"
    )
    parser.add_argument(
        "--relaxed",
        action="store_true",
        help="rate limits and clock jobs off: a labelled extra line beside the defaults' (not the headline)",
    )
    args = parser.parse_args(argv)
    bench_api.SERVER_WORKERS = args.workers
    load_before = _load()
    runs = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url, _ = stack.enter_context(redis_server(tmp))
        env = dict(os.environ, REDIS_URL=url, MAYI_KEY_PREFIX="bench-bots", **SETUP)
        if args.relaxed:
            env.update(RELAXED)
        if args.webhooks:
            env.update(MAYI_WEBHOOK_ALLOW_PRIVATE="true")  # the receivers listen on loopback
        api: Any = stack.enter_context(gunicorn("api", "mayi_service.wsgi:app", env, tmp))
        # The job workers: the webhook deliveries, and the clocks (one, as `mayi serve` runs).
        jobs = args.job_workers if args.webhooks else 0 if args.relaxed else 1
        if jobs:
            api = Processes([api, *(stack.enter_context(job_worker(env, tmp, i)) for i in range(jobs))])
        store = redis.Redis.from_url(url)
        for i in range(args.runs):
            found = run_once(args, api, store)
            runs.append(found)
            print(
                f"  run {i + 1}: {found['moves']} moves in {found['seconds']:.1f} s, "
                f"median {found['median_ms']:.1f} ms, "
                f"p99 {found['p99_ms']:.1f} ms, {found['requests_per_decision']:.3f} requests a decision, "
                f"cores {found['busy']:.0%} busy, load {_load()[0]}, {found['rate_limited']} answers 429 waited out, "
                f"{found['refused']} moves refused ({found['too_late']} late claims)",
                file=sys.stderr,
            )

    def summary(key: str) -> tuple[float, float, float]:
        values = [r[key] for r in runs]
        return statistics.median(values), min(values), max(values)

    if args.webhooks:
        who = (
            f"webhook bots (the SDK's webhook receiver, default Bot, a process each; {args.job_workers} "
            "`mayi worker` processes deliver the decisions; the goals are the polling bots')"
        )
    else:
        who = (
            f"polling bots (run_polling, default Bot, {'threads of one process' if args.threads else 'a process each'})"
        )
    print(
        "settings: RELAXED, rate limits and clock jobs off (an extra line, not the defaults)"
        if args.relaxed
        else "settings: the defaults (rate limits on, clock jobs on, a job worker); "
        "the setup's bot registrations and tables allowed beyond the per-address limits"
    )
    print(
        f"{args.games} games x {args.seats} {who}, {args.workers} gevent workers, "
        f"from round {args.round}, "
        f"{args.runs} runs; load average before {load_before}, after {_load()}; "
        f"code: {Path(mayi_sdk.__file__).resolve().parents[2]}"
    )
    for key, label, goal, unit, digits in (
        ("median_ms", "decision latency median", GOAL_MEDIAN_MS, " ms", 1),
        ("p99_ms", "decision latency p99", GOAL_P99_MS, " ms", 1),
        ("requests_per_decision", "requests per decision", GOAL_REQUESTS, "", 3),
    ):
        mid, low, high = summary(key)
        print(
            f"  {label:<24} {mid:8.{digits}f}{unit} ({low:.{digits}f}-{high:.{digits}f})   goal <= {goal:g}{unit}: "
            f"{mid / goal:.2f}x the goal, {'met' if round(mid, digits) <= goal else 'NOT met'}"
        )
    if args.webhooks:
        print(
            f"  requests per committed move: {summary('requests_per_move')[0]:.4f} (webhook bots send only their "
            "moves: each decision comes to them as one delivery, the service's request)"
        )
    else:
        print(
            f"  requests per committed move: {summary('requests_per_move')[0]:.4f} (a decision the bot waits on "
            "brings no move; each bot's last poll, which learns that its game ended, brings no decision)"
        )
    print(
        f"  from any decision of the seat (the measure before bots could wait): median "
        f"{summary('any_median_ms')[0]:.1f} ms, p99 {summary('any_p99_ms')[0]:.1f} ms"
    )
    print(
        f"  commit-to-commit gaps (the earlier, looser measure): median {summary('gap_median_ms')[0]:.1f} ms, "
        f"p99 {summary('gap_p99_ms')[0]:.1f} ms"
    )
    print(
        f"  where the time goes (medians): to the view decided on {summary('to_view_ms')[0]:.1f} ms, "
        f"decide {summary('deciding_ms')[0]:.2f} ms, move sent to its commit {summary('to_commit_ms')[0]:.1f} ms"
    )
    client, server, store_cpu = (summary(k)[0] for k in ("client_cpu_ms", "server_cpu_ms", "redis_cpu_ms"))
    busy = summary("busy")[0]
    print(
        f"  CPU per committed move: bots {client:.2f} ms, API server{' and job workers' if args.webhooks else ''} "
        f"{server:.2f} ms, Redis {store_cpu:.2f} ms "
        f"(total {client + server + store_cpu:.2f} ms); the {os.cpu_count()} cores {busy:.0%} busy"
    )
    cores = os.cpu_count() or 1
    load = max(load_before[0], _load()[0])
    if busy >= 0.8:
        bound = "CPU: the bots, the server and Redis share the cores, and each decision waits its turn for one"
    elif load >= 0.9 * cores:
        bound = (
            f"the cores, shared with other work (load average {load} on {cores} cores): each hop of a decision's "
            "chain (wake, poll, decide, move) waits in the run queue"
        )
    else:
        bound = "the chain of requests (wake, poll, decide, move), not the cores"
    print(
        f"  what bounds the latency: {bound} ({cores} cores; at {client + server + store_cpu:.2f} ms of CPU a move "
        f"they allow at most {1000 * cores / (client + server + store_cpu):.0f} moves a second)"
    )
    print(
        f"  a run (medians): {summary('moves')[0]:.0f} moves committed; "
        f"{summary('polls')[0]:.0f} polls, {summary('sent')[0]:.0f} moves sent, {summary('waits')[0]:.0f} waits"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
