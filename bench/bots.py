"""Strength of the reference bots: seeded tournaments, in-process, across processes.

Run from the repository root (the project installed with ``pip install -e .``)::

    python bench/bots.py                 # 400 games a variant a match-up, 2 processes
    python bench/bots.py --quick         # 60 games a variant a match-up: a quick look while tuning
    python bench/bots.py --matchup strong-greedy --matchup greedy-random   # the cheap ones (under 10 min)
    python bench/bots.py --games 800 --workers 4 --json

Each match-up puts one bot (the *hero*) at a 4-player table with three copies of
another (``expert`` vs 3 ``strong``, ``strong`` vs 3 ``greedy``, ``greedy`` vs 3
``random``), in May I and in Shanghai. Game ``g`` of a match-up is dealt from a seed derived from ``--seed``, the
variant and ``g``, and the hero sits in seat ``g % 4``: the seats rotate, so no seat
position favours a bot. Every bot gets its seat's view (``mayi_sdk``'s ``GameView``,
built by the engine's ``player_view`` as the service builds it) and answers through
``decide``; an answer that is not a legal move is counted and the clock plays it.

Printed for each hero: its **win rate** (the lowest total wins; a lowest total shared
by k seats counts 1/k to each) and its **mean total score**, each with its 95%
confidence interval (Wilson's for the rate, the normal one for the mean), and the
**decision time** of ``decide`` (median and p99 over every decision the hero made,
the view's parsing excluded), by the wall clock (what a deadline sees; a busy machine
stretches it) and in CPU time (the bot's own cost). Goals (:data:`GOALS`): ``strong`` and
``greedy`` win >= 40% of their games (a fair share is 25%), the interval clear of 40%;
``expert`` wins >= 40% of its May I games and >= 35% of its Shanghai games, the interval
clear of 25%; strong's decisions take median <= 50 ms and p99 <= 500 ms, expert's median
<= 100 ms and p99 <= 1 s of CPU.

Then, for every bot at the tables (heroes and opponents alike), a second table: the
largest hand it ever held, and its points in the last round (May I's round 7, where
only a hand that goes out whole scores nothing): a reference bot must not play absurdly
(hoard cards, say). Nothing here asserts: the numbers are for people to read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import os
import platform
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from mayi_bots import make, seat_seed
from mayi_engine import Phase, Timeout, deadline, move_from_json, new_game, play
from mayi_engine.rules import get_rules
from mayi_engine.simulate import next_seat
from mayi_sdk.bot import as_legal_move
from mayi_sdk.local import seat_view

PLAYERS = 4
VARIANTS = ("may_i", "shanghai")
MATCHUPS = (("expert", "strong"), ("strong", "greedy"), ("greedy", "random"))
#: Win-rate goals by match-up and variant: (the rate to reach, the value the 95% interval
#: must clear); a fair share at 4 players is 25%. Any other match-up: 40%, clear of 40%.
GOALS: dict[tuple[str, str], dict[str, tuple[float, float]]] = {
    ("expert", "strong"): {"may_i": (0.40, 0.25), "shanghai": (0.35, 0.25)},
}
GOAL = (0.40, 0.40)
#: A bound on the decisions of one game (real games take a few thousand at most).
MAX_DECISIONS = 40_000


@dataclass
class GameResult:
    hero: str
    villain: str
    variant: str
    game: int
    hero_seat: int
    totals: list[int]
    illegal: int
    times: list[float]  # seconds per hero decision (wall clock)
    cpu: list[float]  # the same decisions' CPU time (the process's thread only)
    names: list[str]  # the bot of each seat
    max_hand: list[int]  # the largest hand each seat held
    last_round: list[int]  # each seat's points in the game's last round


def game_seed(seed: int, variant: str, game: int) -> bytes:
    return hashlib.blake2b(f"bench-bots/{seed}/{variant}/{game}".encode(), digest_size=32).digest()


def play_one(spec: tuple[str, str, str, int, int]) -> GameResult:
    """One game of ``hero`` against three ``villain`` bots; the hero sits in seat ``game % 4``."""
    hero, villain, variant, game, seed = spec
    key = game_seed(seed, variant, game)
    hero_seat = game % PLAYERS
    names = [hero if s == hero_seat else villain for s in range(PLAYERS)]
    bots = [make(n, seed=seat_seed(key, s)) for s, n in enumerate(names)]
    state = new_game(get_rules(variant), [f"{n}{s}" for s, n in enumerate(names)], key)
    illegal = 0
    times: list[float] = []
    cpu: list[float] = []
    clock, thread_clock = time.perf_counter, time.thread_time
    max_hand = [0] * PLAYERS
    for _ in range(MAX_DECISIONS):
        if state.phase is Phase.FINISHED:
            break
        for s, hand in enumerate(state.hands):
            max_hand[s] = max(max_hand[s], len(hand))
        seat = next_seat(state)
        view = seat_view(state, seat)
        start, start_cpu = clock(), thread_clock()
        answer = bots[seat].decide(view)
        if seat == hero_seat:
            times.append(clock() - start)
            cpu.append(thread_clock() - start_cpu)
        try:
            move = as_legal_move(answer)
            state, _ = play(state, seat, move_from_json({"type": move.type, **move.body}))
        except Exception:  # an illegal answer: the clock plays it, as on the server
            illegal += 1
            state, _ = play(state, None, Timeout(), deadline(state) or 0.0)
    else:
        raise RuntimeError(f"{variant} game {game} did not end in {MAX_DECISIONS} decisions")
    last = list(state.results[-1].scores)
    totals = list(state.totals)
    return GameResult(hero, villain, variant, game, hero_seat, totals, illegal, times, cpu, names, max_hand, last)


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% interval of a proportion."""
    if n == 0:
        return 0.0, 0.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(results: list[GameResult]) -> dict[str, Any]:
    """Per match-up and variant: the hero's win rate and mean total with 95% intervals, decision times."""
    out: dict[str, Any] = {}
    keys = sorted({(r.hero, r.villain, r.variant) for r in results}, key=lambda k: (MATCHUPS.index(k[:2]), k[2]))
    for hero, villain, variant in keys:
        games = [r for r in results if (r.hero, r.villain, r.variant) == (hero, villain, variant)]
        n = len(games)
        wins = 0.0
        hero_totals: list[int] = []
        villain_totals: list[int] = []
        for r in games:
            best = min(r.totals)
            winners = [s for s, t in enumerate(r.totals) if t == best]
            if r.hero_seat in winners:
                wins += 1 / len(winners)
            hero_totals.append(r.totals[r.hero_seat])
            villain_totals.extend(t for s, t in enumerate(r.totals) if s != r.hero_seat)
        low, high = wilson(wins, n)
        target, floor = GOALS.get((hero, villain), {}).get(variant, GOAL)
        mean = statistics.fmean(hero_totals)
        half = 1.96 * statistics.stdev(hero_totals) / math.sqrt(n) if n > 1 else 0.0
        times = [t for r in games for t in r.times]
        cpu = [t for r in games for t in r.cpu]
        seats = [0] * PLAYERS
        for r in games:
            seats[r.hero_seat] += 1
        out[f"{hero} vs 3 {villain}, {variant}"] = {
            "hero": hero,
            "villain": villain,
            "variant": variant,
            "games": n,
            "hero_seats": seats,
            "win_rate": wins / n,
            "win_rate_ci95": [low, high],
            "goal": {"win_rate": target, "ci95_clear_of": floor},
            "goal_met": wins / n >= target and low > floor,
            "mean_total": mean,
            "mean_total_ci95": [mean - half, mean + half],
            "villain_mean_total": statistics.fmean(villain_totals),
            "decisions": len(times),
            "decision_ms_median": 1000 * statistics.median(times) if times else 0.0,
            "decision_ms_p99": 1000 * percentile(times, 0.99),
            "decision_ms_max": 1000 * max(times, default=0.0),
            "decision_cpu_ms_median": 1000 * statistics.median(cpu) if cpu else 0.0,
            "decision_cpu_ms_p99": 1000 * percentile(cpu, 0.99),
            "illegal_moves": sum(r.illegal for r in games),
        }
    return out


def hands(results: list[GameResult]) -> dict[str, Any]:
    """For each bot and variant, over every seat it held: the largest hand, and the points
    of the last round (mean and most)."""
    out: dict[str, Any] = {}
    for variant in VARIANTS:
        games = [r for r in results if r.variant == variant]
        for name in sorted({n for r in games for n in r.names}, key=lambda n: -MATCHUP_ORDER.get(n, 0)):
            seats = [(r, s) for r in games for s, n in enumerate(r.names) if n == name]
            last = [r.last_round[s] for r, s in seats]
            out[f"{name}, {variant}"] = {
                "bot": name,
                "variant": variant,
                "seats": len(seats),
                "max_hand": max(r.max_hand[s] for r, s in seats),
                "last_round_mean": statistics.fmean(last),
                "last_round_max": max(last),
            }
    return out


#: Bots strongest first, for the hand table.
MATCHUP_ORDER = {name: -i for i, name in enumerate(dict.fromkeys(n for m in MATCHUPS for n in m))}


def hands_table(rows: dict[str, Any]) -> str:
    lines = [
        "| bot | variant | seats played | largest hand | last-round points, mean / most |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for row in rows.values():
        lines.append(
            f"| {row['bot']} | {row['variant']} | {row['seats']} | {row['max_hand']} "
            f"| {row['last_round_mean']:.0f} / {row['last_round_max']} |"
        )
    return "\n".join(lines)


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| hero vs opponents | variant | games | hero wins (95% CI) | hero mean total (95% CI) "
        "| opponents' mean total | decision median / p99 (CPU) | illegal |",
        "| --- | --- | ---: | --- | --- | ---: | --- | ---: |",
    ]
    for row in summary.values():
        lo, hi = row["win_rate_ci95"]
        mlo, mhi = row["mean_total_ci95"]
        lines.append(
            f"| {row['hero']} vs 3 {row['villain']} | {row['variant']} | {row['games']} "
            f"| **{100 * row['win_rate']:.1f}%** ({100 * lo:.1f}–{100 * hi:.1f}%) "
            f"| {row['mean_total']:.0f} ({mlo:.0f}–{mhi:.0f}) | {row['villain_mean_total']:.0f} "
            f"| {row['decision_ms_median']:.2f} / {row['decision_ms_p99']:.1f} ms "
            f"({row['decision_cpu_ms_median']:.2f} / {row['decision_cpu_ms_p99']:.1f} ms) | {row['illegal_moves']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400, help="games a variant a match-up (default 400)")
    parser.add_argument("--quick", action="store_true", help="60 games a variant a match-up")
    parser.add_argument("--workers", type=int, default=2, help="processes playing games (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="every deal follows from it (default 1)")
    parser.add_argument("--variant", choices=VARIANTS, action="append", help="only this variant (repeatable)")
    parser.add_argument(
        "--matchup", choices=[f"{h}-{v}" for h, v in MATCHUPS], action="append", help="only this match-up"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON too")
    parser.add_argument(
        "--minutes", type=float, help="stop after this many minutes and summarise the games played (a partial run)"
    )
    args = parser.parse_args(argv)
    games = 60 if args.quick else args.games
    variants = args.variant or list(VARIANTS)
    matchups = [m for m in MATCHUPS if not args.matchup or f"{m[0]}-{m[1]}" in args.matchup]
    # Game by game across the match-ups and variants, so that a run stopped early (--minutes)
    # has played the first games of each, their seats still rotating.
    specs = [(h, v, variant, g, args.seed) for g in range(games) for h, v in matchups for variant in variants]
    start = time.perf_counter()
    stop = None if args.minutes is None else start + 60 * args.minutes
    results: list[GameResult] = []
    pool = multiprocessing.get_context("fork").Pool(args.workers)
    try:
        played = pool.imap_unordered(play_one, specs)
        while len(results) < len(specs):
            try:
                results.append(played.next(None if stop is None else max(0.0, stop - time.perf_counter())))
            except multiprocessing.TimeoutError:
                break
    finally:
        pool.terminate()
        pool.join()
    seconds = time.perf_counter() - start
    if len(results) < len(specs):
        print(f"stopped after --minutes {args.minutes:g}: {len(results)} of {len(specs)} games played (a partial run)")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = children.ru_utime + children.ru_stime
    summary = summarise(results)
    print(
        f"{len(results)} games of {PLAYERS} players in {seconds:.0f} s with {args.workers} processes, "
        f"{cpu:.0f} CPU-seconds ({cpu / args.workers:.0f} s on {args.workers} idle cores; "
        f"load average {os.getloadavg()[0]:.1f}), "
        f"{platform.python_implementation()} {platform.python_version()}, seed {args.seed}"
    )
    print(table(summary))
    held = hands(results)
    print()
    print(hands_table(held))
    if args.json:
        run = {"seconds": seconds, "cpu_seconds": cpu, "workers": args.workers, "seed": args.seed}
        print(json.dumps({**run, "results": summary, "hands": held}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
