"""Decision latency of polling bots over HTTP: 4 bots in each of 4 games at once.

Each bot runs ``mayi_sdk.run_polling`` (its own thread and connection) against the API
under gunicorn (``bench/api.py``'s server: 2 gevent workers) on a fresh Redis, with rate
limits and clock jobs off. Every seat is a bot.

**Decision latency**, for every move a bot commits: the time from the commit after which
its seat had that decision (without a break) to the commit of its answer. Both are
the service's own commit times (each event is stamped with its commit's time, to the
millisecond). Which seats have a decision after each commit is worked out afterwards:
the benchmark records every move the service accepted (its answer carries the game's
new version and last event), replays each game through the engine from the same seed,
and asks the engine's ``legal_moves`` for every seat after every commit — what the
decisions long-poll itself asks. So a claim answered late counts from the discard that
opened the window, and a discard from the draw before it (the runner plays it at once
from the draw's answer).

**Requests per decision**: decision polls and moves sent (accepted or not) ÷ moves
committed.

    python bench/bots_http.py [--games 4] [--seats 4] [--round 7] [--runs 3]

Prints medians (with min-max over runs) and the ratios to the goals; never asserts a
timing.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api import _load, gunicorn, percentile, redis_server

from mayi_engine import get_rules, legal_moves, move_from_json, play, start_game
from mayi_sdk import Bot, Client, GameView, LegalMove, RunStats, run_polling

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
    """The moves the service accepted from one bot: (game, new version, last event, seat, move JSON)."""

    moves: list[tuple[str, int, int, int, dict[str, Any]]] = field(default_factory=list)
    sent: int = 0


class RecordingClient(Client):
    """A bot's client that notes every move it sends and every one the service accepts."""

    def __init__(self, *args: Any, played: Played, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.played = played

    def play(self, game_id: str, move: LegalMove, *, if_match: int | None = None) -> GameView:
        self.played.sent += 1
        view = super().play(game_id, move, if_match=if_match)
        assert view.seat is not None
        self.played.moves.append((game_id, view.version, view.last_event, view.seat, {"type": move.type, **move.body}))
        return view


def latencies(
    client: Client, game_id: str, start_round: int, played: list[tuple[int, int, int, dict[str, Any]]]
) -> list[float]:
    """Decision latencies (seconds) of one finished game, by replaying it through the engine."""
    replay = client.get_replay(game_id)
    time_of = {e.seq: e.time for e in replay.events}
    times = sorted(set(time_of.values()))
    GAPS.extend(b - a for a, b in itertools.pairwise(times))
    rules = get_rules(replay.variant, replay.options)
    names = [n or "" for n in replay.names]
    by_version = {version: (last, seat, move) for version, last, seat, move in played}
    first = min(by_version) - 1  # the commit that started the game (its last seat taken)
    started_at = time_of[1]  # a table has no events before it starts: the deal's are the first
    state, _ = start_game(rules, names, bytes.fromhex(replay.seed), now=started_at, start_round=start_round)
    # since[seat]: the commit time from which the seat has had its current decision.
    since: dict[int, float] = {}
    out: list[float] = []
    version, at = first, started_at
    while True:
        for seat in range(len(names)):
            if legal_moves(state, seat, at):
                since.setdefault(seat, at)
            else:
                since.pop(seat, None)
        version += 1
        if version not in by_version:
            break
        last, seat, move = by_version[version]
        at = time_of[last]
        if seat not in since:
            raise RuntimeError(f"game {game_id}: seat {seat} moved at version {version} without a decision")
        out.append(at - since.pop(seat))
        state, _ = play(state, seat, move_from_json(move), at)
    if version <= max(by_version) or list(state.totals) != list(replay.totals):
        raise RuntimeError(f"game {game_id}: the replay of the recorded moves does not match the game")
    return out


def run_once(args: argparse.Namespace, base: str) -> dict[str, float]:
    anon = Client(base, timeout=120)
    games: list[str] = []
    bots: list[RecordingClient] = []
    records: list[Played] = []
    for g in range(args.games):
        test = {"seed": f"{g:02x}" * 16, "start_round": args.round}
        game_id = anon.create_game("may_i", args.seats, options=SLOW, test=test).game_id
        games.append(game_id)
        for s in range(args.seats):
            played = Played()
            client = RecordingClient(base, anon.register_bot(f"bench{g}-{s}").token, timeout=120, played=played)
            client.take_seat(game_id, f"bench{g}-{s}")
            bots.append(client)
            records.append(played)
    stats: list[RunStats] = []
    started = time.monotonic()

    def run(client: Client) -> None:
        stats.append(run_polling(Bot(), client, wait=30, until_idle=True))

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in bots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    found: list[float] = []
    for game_id in games:
        moves = [(v, last, seat, move) for r in records for g, v, last, seat, move in r.moves if g == game_id]
        found += latencies(anon, game_id, args.round, moves)
    found.sort()
    gaps = sorted(GAPS)
    GAPS.clear()
    moves = sum(s.moves for s in stats)
    polls = sum(s.polls for s in stats)
    sent = sum(r.sent for r in records)
    return {
        "seconds": seconds,
        "moves": moves,
        "polls": polls,
        "sent": sent,
        "median_ms": statistics.median(found) * 1000,
        "p99_ms": percentile(found, 99) * 1000,
        "requests_per_move": (polls + sent) / max(1, moves),
        "gap_median_ms": statistics.median(gaps) * 1000,
        "gap_p99_ms": percentile(gaps, 99) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--round", type=int, default=7, help="the round to start at (1: whole games; 7: the last)")
    parser.add_argument("--runs", type=int, default=3, help="runs, each on fresh games (medians reported)")
    args = parser.parse_args(argv)
    load_before = _load()
    runs = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url, _ = stack.enter_context(redis_server(tmp))
        env = dict(os.environ, REDIS_URL=url, MAYI_KEY_PREFIX="bench-bots")
        env.update(MAYI_RATE_LIMITS_ENABLED="false", MAYI_SCHEDULE_CLOCK_JOBS="false")
        api = stack.enter_context(gunicorn("api", "mayi_service.wsgi:app", env, tmp))
        for i in range(args.runs):
            found = run_once(args, api.base)
            runs.append(found)
            print(
                f"  run {i + 1}: {found['moves']} moves in {found['seconds']:.1f} s, "
                f"median {found['median_ms']:.1f} ms, "
                f"p99 {found['p99_ms']:.1f} ms, {found['requests_per_move']:.2f} requests a move, load {_load()[0]}",
                file=sys.stderr,
            )

    def summary(key: str) -> tuple[float, float, float]:
        values = [r[key] for r in runs]
        return statistics.median(values), min(values), max(values)

    print(
        f"{args.games} games x {args.seats} polling bots (run_polling, default Bot), from round {args.round}, "
        f"{args.runs} runs; load average before {load_before}, after {_load()}"
    )
    for key, label, goal, unit, digits in (
        ("median_ms", "decision latency median", GOAL_MEDIAN_MS, " ms", 1),
        ("p99_ms", "decision latency p99", GOAL_P99_MS, " ms", 1),
        ("requests_per_move", "requests per decision", GOAL_REQUESTS, "", 2),
    ):
        mid, low, high = summary(key)
        print(
            f"  {label:<24} {mid:8.{digits}f}{unit} ({low:.{digits}f}-{high:.{digits}f})   goal <= {goal:g}{unit}: "
            f"{mid / goal:.2f}x the goal, {'met' if mid <= goal else 'NOT met'}"
        )
    print(
        f"  commit-to-commit gaps (the earlier, looser measure): median {summary('gap_median_ms')[0]:.1f} ms, "
        f"p99 {summary('gap_p99_ms')[0]:.1f} ms"
    )
    print(
        f"  a run (medians): {summary('moves')[0]:.0f} moves committed; "
        f"{summary('polls')[0]:.0f} polls, {summary('sent')[0]:.0f} moves sent"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
