"""Engine benchmarks: game-loop throughput, contract-solver latency, state size.

Run from the repository root (the project installed with ``pip install -e .``, or
with ``engine/`` on the path, which this script adds when needed)::

    python bench/engine.py                 # about a minute on an idle core
    python bench/engine.py --runs 9 --games 40 --json
    /tmp/benchvenv/bin/python bench/engine.py --compare    # RLCard's gin rummy alongside

Every figure is the median over ``--runs`` runs of the same fixed-seed workload
(the engine's caches are emptied before each run, so every run does the same
work), printed beside its goal and the ratio to it. Nothing here asserts a
timing: the numbers are for people to read and compare.

What is measured:

* **Game loop**: 4-player May I, one action = ``legal_moves`` + the policy's
  choice + ``play`` + ``player_view`` of the acting seat on the new state (what
  the service does per request, less storage and HTTP), no invariant checks. The
  ``random`` policy of :mod:`mayi_engine.policies` and ``greedy`` of ``mayi_bots``. A game in
  which nothing changes for ``STALL_ACTIONS`` actions (same round, stock and
  rebuild count: players passing one card round and round) is cut off at its
  last progress and counted as *stalled*; the cut loop counts neither actions nor
  time. Games/s counts only games that finish.
* **Contract solver**: uncached :func:`mayi_engine.solver.find_contract` on
  worst-case hands (13 cards with 3 jokers from 3 decks) against the May I
  round-6 contract (1 book + 2 runs) and round-7 contract (3 runs, all cards):
  median and p99 per run.
* **State size**: bytes of :func:`mayi_engine.state.dumps` for 6-player May I
  states in round 7 (the largest seen over played games, seats named with 40
  ASCII characters, the longest name the API takes).
* ``--compare``: RLCard's gin-rummy environment, random legal actions through
  ``env.step`` from ``env.reset()`` to the end of the game, in the same process; and,
  with the ``rl`` extra installed, our PettingZoo environment (``mayi_rl``, 4-player
  May I) the same way: ``env.last()`` (the observation and action mask, built every
  step as RLCard's ``step`` builds its state) and a random unmasked action to
  ``env.step``, each RLCard run paired with one of ours.

Goals: engine >= 27,000 actions/s with the random policy (and >= 3.0x RLCard's
gin-rummy steps/s: the engine's speed is the strong bot's search budget), the
PettingZoo environment >= 1.5x RLCard's steps/s, solver p99 <= 1 ms, state <= 4 KB.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import json
import math
import os
import platform
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("mayi_engine") is None:
    sys.path.insert(0, str(ROOT / "engine"))

from mayi_bots import make as make_bot  # noqa: E402
from mayi_engine import (  # noqa: E402
    legal_moves,
    new_game,
    play,
    solver,
)
from mayi_engine.cards import JOKER, build_decks  # noqa: E402
from mayi_engine.policies import Policy, random_policy  # noqa: E402
from mayi_engine.rng import KeyedRandom  # noqa: E402
from mayi_engine.rules import MAY_I, Contract, Rules  # noqa: E402
from mayi_engine.simulate import game_seed, next_seat  # noqa: E402
from mayi_engine.state import Phase, State, dumps  # noqa: E402
from mayi_engine.views import player_view  # noqa: E402
from mayi_sdk.local import bot_policy  # noqa: E402

#: The engine's random driver, and the reference greedy bot of mayi_bots (fed the seat's view).
POLICIES: dict[str, Policy] = {"random": random_policy, "greedy": bot_policy(make_bot("greedy"))}

#: Goals (also in bench/README.md).
GOAL_ACTIONS_PER_SECOND = 27_000
GOAL_RATIO_VS_RLCARD = 3.0
GOAL_ENV_RATIO_VS_RLCARD = 1.5
GOAL_SOLVER_P99_SECONDS = 1e-3
GOAL_STATE_BYTES = 4096

#: Actions without progress (round, stock size, rebuilds unchanged) after which a game is cut off.
STALL_ACTIONS = 400
PLAYERS = 4
STATE_PLAYERS = 6
NAME_LENGTH = 40  # the longest seat name the API accepts

ROUND_6 = MAY_I.rounds[5].contract
ROUND_7 = MAY_I.rounds[6].contract

SolverCase = tuple[str, tuple[int, ...], Contract, Rules]
Clock = Callable[[], float]


# ---------------------------------------------------------------------------
# Setup


def pin_to_cpu(cpu: int) -> str:
    """Pin this process to one core where the OS allows it; say what happened."""
    setaffinity = getattr(os, "sched_setaffinity", None)
    if setaffinity is None:
        return "not pinned (no sched_setaffinity here)"
    try:
        setaffinity(0, {cpu})
    except OSError as exc:
        return f"not pinned ({exc.strerror})"
    return f"pinned to CPU {cpu}"


def cpu_idle_percent(seconds: float = 1.0) -> float | None:
    """Share of all cores' time spent idle over ``seconds`` (Linux ``/proc/stat``), or ``None``."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(x) for x in f.readline().split()[1:9]]
        return sum(values), values[3] + values[4]  # idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except (OSError, ValueError):
        return None
    return 100.0 * (idle1 - idle0) / (total1 - total0) if total1 > total0 else None


def clear_engine_caches() -> None:
    """Empty every ``functools`` cache of the engine so each run does the same work."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("mayi_engine"):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def _clear_solver_cache() -> Callable[[], None]:
    clear = getattr(solver, "clear_cache", None)
    if callable(clear):
        return clear  # type: ignore[no-any-return]
    return solver.find_contract.cache_clear  # type: ignore[attr-defined,no-any-return]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


# ---------------------------------------------------------------------------
# The game loop


@dataclass
class LoopRun:
    """One run of the game loop: counted actions and seconds, finished and stalled games."""

    actions: int = 0
    seconds: float = 0.0
    games: int = 0
    game_seconds: float = 0.0
    stalled: int = 0
    stuck: int = 0  # a seat had to act with no legal move (an engine bug)

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.seconds if self.seconds else math.nan

    @property
    def games_per_second(self) -> float:
        return self.games / self.game_seconds if self.game_seconds else math.nan


def play_games(
    policy: str,
    games: int,
    seed: int,
    *,
    players: int = PLAYERS,
    rules: Rules = MAY_I,
    clock: Clock = time.perf_counter,
    on_state: Callable[[State], None] | None = None,
) -> LoopRun:
    """Play ``games`` fixed-seed games with ``policy`` at every seat, building the actor's view each step."""
    choose = POLICIES[policy]
    names = [f"{policy}{i}" for i in range(players)]
    out = LoopRun()
    for g in range(games):
        gseed = game_seed(seed, g)
        rng = KeyedRandom(gseed, "policies")
        start = clock()
        state = new_game(rules, names, gseed)
        actions = 0
        mark = (state.round, state.reshuffles, len(state.stock))
        mark_actions, mark_time = 0, start
        stalled = stuck = False
        while state.phase is not Phase.FINISHED:
            seat = next_seat(state)
            legal = legal_moves(state, seat)
            if not legal:
                stuck = True
                break
            move = choose(state, seat, legal, rng)
            state = play(state, seat, move)[0]
            player_view(state, seat)
            actions += 1
            if on_state is not None:
                on_state(state)
            now_mark = (state.round, state.reshuffles, len(state.stock))
            if now_mark != mark:
                mark, mark_actions, mark_time = now_mark, actions, clock()
            elif actions - mark_actions >= STALL_ACTIONS:
                stalled = True
                break
        if stalled or stuck:
            out.stalled += stalled
            out.stuck += stuck
            out.actions += mark_actions
            out.seconds += mark_time - start
            continue
        elapsed = clock() - start
        out.actions += actions
        out.seconds += elapsed
        out.games += 1
        out.game_seconds += elapsed
    return out


def bench_loop(policy: str, runs: int, games: int, seed: int, clock: Clock = time.perf_counter) -> dict[str, Any]:
    play_games(policy, 1, seed + 1_000_003)  # warm up (imports, first allocations)
    samples: list[LoopRun] = []
    for _ in range(runs):
        clear_engine_caches()
        gc.collect()
        samples.append(play_games(policy, games, seed, clock=clock))
    first = samples[0]
    aps = [s.actions_per_second for s in samples]
    gps = [s.games_per_second for s in samples]
    return {
        "policy": policy,
        "players": PLAYERS,
        "games_per_run": games,
        "actions_per_run": first.actions,
        "finished_games": first.games,
        "stalled_games": first.stalled,
        "stuck_games": first.stuck,
        "actions_per_second": median(aps),
        "actions_per_second_min": min(aps),
        "actions_per_second_max": max(aps),
        "games_per_second": median(gps) if first.games else None,
        "runs": [round(x, 1) for x in aps],
    }


# ---------------------------------------------------------------------------
# The contract solver


def _own_worst_cases(n: int, seed: int) -> list[SolverCase]:
    """Fallback when bench/solver_bench.py is missing: 13 cards, 3 jokers, 10 naturals from 3 decks,
    half uniform and half clustered in 2-4 suits over 5-8 neighbouring ranks."""
    rng = random.Random(seed)
    naturals = [c for c in build_decks(3) if c != JOKER]
    cases: list[SolverCase] = []
    for family, contract in (("round6", ROUND_6), ("round7", ROUND_7)):
        for i in range(n):
            pool = naturals
            if i % 2:
                suits = set(rng.sample(range(4), rng.randint(2, 4)))
                lo = rng.randint(1, 8)
                ranks = set(range(lo, lo + rng.randint(5, 8)))
                pool = [c for c in naturals if c & 3 in suits and c >> 2 in ranks]
            cases.append((family, tuple(sorted([JOKER] * 3 + rng.sample(pool, 10))), contract, MAY_I))
    return cases


def worst_cases(n: int, seed: int) -> tuple[list[SolverCase], str]:
    """Round-6 and round-7 worst-case hands: bench/solver_bench.py's ``solver_cases`` when it fits."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from solver_bench import solver_cases  # type: ignore[import-not-found,unused-ignore]

        cases = [c for c in solver_cases(n, seed) if c[0] in ("round6", "round7")]
        if {c[0] for c in cases} == {"round6", "round7"} and all(len(c) == 4 for c in cases):
            return cases, "bench/solver_bench.py solver_cases"
    except Exception as exc:  # a helper module being edited must not stop the other benchmarks
        print(f"note: bench/solver_bench.py not usable ({exc!r}); using this script's own hands", file=sys.stderr)
    finally:
        sys.path.pop(0)
    return _own_worst_cases(n, seed), "bench/engine.py fallback generator"


def time_solver(cases: Sequence[SolverCase], clock: Clock = time.perf_counter) -> dict[str, list[float]]:
    """Seconds of one uncached solve per case, by family."""
    clear = _clear_solver_cache()
    find = solver.find_contract
    times: dict[str, list[float]] = {}
    for family, hand, contract, rules in cases:
        clear()
        start = clock()
        find(hand, contract, rules)
        times.setdefault(family, []).append(clock() - start)
    return times


def bench_solver(runs: int, n: int, seed: int, clock: Clock = time.perf_counter) -> dict[str, Any]:
    cases, source = worst_cases(n, seed)
    time_solver(cases[:200])  # warm up
    per_run: dict[str, dict[str, list[float]]] = {}
    for _ in range(runs):
        gc.collect()
        for family, ts in time_solver(cases, clock).items():
            stats = per_run.setdefault(family, {"median": [], "p99": [], "max": []})
            stats["median"].append(median(ts))
            stats["p99"].append(percentile(ts, 99))
            stats["max"].append(max(ts))
    met: dict[str, int] = {}
    for family, hand, contract, rules in cases:
        met[family] = met.get(family, 0) + (solver.find_contract(hand, contract, rules) is not None)
    out: dict[str, Any] = {"source": source, "cases_per_family": n}
    for family, stats in per_run.items():
        out[family] = {
            "contract": (ROUND_6 if family == "round6" else ROUND_7).describe(),
            "met": met[family],
            "median_ms": median(stats["median"]) * 1e3,
            "p99_ms": median(stats["p99"]) * 1e3,
            "p99_ms_runs": [round(x * 1e3, 4) for x in stats["p99"]],
            "max_ms": median(stats["max"]) * 1e3,
        }
    return out


# ---------------------------------------------------------------------------
# State size


def bench_state_size(seed: int, games: int = 2) -> dict[str, Any]:
    """Largest ``dumps`` of a 6-player May I state in round 7, over games of both policies."""
    largest: list[State] = []
    biggest = 0
    at_deal = 0

    def watch(state: State) -> None:
        nonlocal biggest, at_deal
        if state.round != len(MAY_I.rounds):
            return
        size = len(dumps(state).encode())
        if not at_deal:
            at_deal = size
        if size > biggest:
            biggest = size
            largest[:] = [state]

    reached = 0
    for policy in ("greedy", "random"):
        for g in range(games):
            named = play_games(policy, 1, seed + g, players=STATE_PLAYERS, on_state=watch)
            reached += named.games
    # The same names at the API's length limit: ASCII, and astral characters
    # (4 bytes each in the UTF-8 that dumps writes).
    ascii_size = unicode_size = 0
    if largest:
        state = largest[0]
        for chars in ("n", "\U0001f0cf"):
            copy = state.clone()
            copy.names = tuple(f"{i}".rjust(NAME_LENGTH, chars) for i in range(STATE_PLAYERS))
            size = len(dumps(copy).encode())
            if chars == "n":
                ascii_size = size
            else:
                unicode_size = size
    return {
        "players": STATE_PLAYERS,
        "round": len(MAY_I.rounds),
        "games_to_the_end": reached,
        "bytes_at_round7_deal_short_names": at_deal,
        "bytes_max_short_names": biggest,
        "bytes_max": ascii_size,
        "bytes_max_astral_names": unicode_size,
    }


# ---------------------------------------------------------------------------
# RLCard


def rlcard_available() -> bool:
    return importlib.util.find_spec("rlcard") is not None and importlib.util.find_spec("numpy") is not None


def env_available() -> bool:
    """Whether the rl extra (mayi_rl, pettingzoo) is importable here."""
    return importlib.util.find_spec("mayi_rl") is not None and importlib.util.find_spec("pettingzoo") is not None


def play_env(env: Any, games: int, seed: int, clock: Clock = time.perf_counter) -> tuple[int, float]:
    """Steps and seconds for ``games`` games of our PettingZoo environment, random unmasked
    actions, the observation built every step (``env.last()``)."""
    import numpy as np

    rng = random.Random(seed)
    steps = 0
    start = clock()
    for g in range(games):
        env.reset(seed=seed + g)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            steps += 1
    return steps, clock() - start


def play_rlcard(env: Any, games: int, seed: int, clock: Clock = time.perf_counter) -> tuple[int, float]:
    """Steps and seconds for ``games`` gin-rummy games of random legal actions."""
    env.seed(seed)
    rng = random.Random(seed)
    steps = 0
    start = clock()
    for _ in range(games):
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[rng.randrange(len(legal))])
            steps += 1
    return steps, clock() - start


def bench_rlcard(
    runs: int, games: int, seed: int, clock: Clock = time.perf_counter, engine_games: int = 0, env_games: int = 0
) -> dict[str, Any]:
    """RLCard's gin-rummy steps/s. With ``engine_games``, each RLCard run is paired with a
    run of our random-policy loop just before it, and the ratio of each pair is kept: the
    two loops then see the same load on a shared machine. With ``env_games`` (and the rl
    extra), each is also paired with a run of our PettingZoo environment."""
    import rlcard  # type: ignore[import-not-found,import-untyped,unused-ignore]

    env = rlcard.make("gin-rummy", config={"seed": seed})
    play_rlcard(env, 2, seed + 1)  # warm up
    ours_env = None
    if env_games and env_available():
        from mayi_rl import may_i_v0

        ours_env = may_i_v0.env(players=PLAYERS)
        play_env(ours_env, 1, seed + 1)  # warm up
    rates: list[float] = []
    ratios: list[float] = []
    env_rates: list[float] = []
    env_ratios: list[float] = []
    steps = 0
    for _ in range(runs):
        ours = math.nan
        if engine_games:
            clear_engine_caches()
            gc.collect()
            ours = play_games("random", engine_games, seed, clock=clock).actions_per_second
        if ours_env is not None:
            gc.collect()
            env_steps, env_seconds = play_env(ours_env, env_games, seed, clock)
            env_rates.append(env_steps / env_seconds)
        gc.collect()
        steps, seconds = play_rlcard(env, games, seed, clock)
        rates.append(steps / seconds)
        ratios.append(ours / rates[-1])
        if ours_env is not None:
            env_ratios.append(env_rates[-1] / rates[-1])
    return {
        "env_steps_per_second": median(env_rates) if env_rates else None,
        "env_steps_per_second_min": min(env_rates) if env_rates else None,
        "env_steps_per_second_max": max(env_rates) if env_rates else None,
        "env_paired_ratios": [round(x, 3) for x in env_ratios],
        "paired_ratios": [round(x, 3) for x in ratios],
        "version": getattr(rlcard, "__version__", "?"),
        "game": "gin-rummy",
        "games_per_run": games,
        "steps_per_run": steps,
        "steps_per_second": median(rates),
        "steps_per_second_min": min(rates),
        "steps_per_second_max": max(rates),
        "runs": [round(x, 1) for x in rates],
    }


# ---------------------------------------------------------------------------
# Profile


def profile_loop(games: int, seed: int, top: int = 30) -> None:
    """cProfile one run of the random-policy loop; print the hot spots."""
    clear_engine_caches()
    profiler = cProfile.Profile()
    profiler.enable()
    play_games("random", games, seed)
    profiler.disable()
    for key in ("tottime", "cumulative"):
        print(f"\n--- random-policy loop, {games} games, top {top} by {key} ---")
        pstats.Stats(profiler, stream=sys.stdout).strip_dirs().sort_stats(key).print_stats(top)


# ---------------------------------------------------------------------------
# Report


def _times(ratio: float | None) -> str:
    return "" if ratio is None or math.isnan(ratio) else f"{ratio:.2f}x"


def _row(name: str, value: str, goal: str, ratio: float | str | None, note: str = "") -> str:
    shown = ratio if isinstance(ratio, str) else _times(ratio)
    return f"{name:<40} {value:>22} {goal:>12} {shown:>7}  {note}"


def report(results: dict[str, Any]) -> str:
    cfg = results["config"]
    lines = [
        f"May I engine benchmark: seed {cfg['seed']}, {cfg['runs']} runs, {cfg['games']} games a run, "
        f"{cfg['pinning']}, Python {cfg['python']}, timed by {cfg['clock']}",
        f"machine before the run: load average {cfg['load_average']}, "
        + (f"CPU idle {idle:.0f}% over 1 s" if (idle := cfg["cpu_idle_percent_before"]) is not None else "CPU idle ?")
        + " (noisy when busy: see the min-max spreads)",
        "Medians over the runs (min-max). 'x goal' >= 1.00 meets the goal "
        "(throughput: measured/goal; time and size: goal/measured).",
        "",
        _row("metric", "median (min-max)", "goal", "x goal"),
    ]
    for policy in ("random", "greedy"):
        r = results["engine"][policy]
        value = (
            f"{r['actions_per_second']:,.0f} ({r['actions_per_second_min']:,.0f}-{r['actions_per_second_max']:,.0f})"
        )
        goal = f">= {GOAL_ACTIONS_PER_SECOND:,}" if policy == "random" else ""
        ratio = r["actions_per_second"] / GOAL_ACTIONS_PER_SECOND if policy == "random" else None
        note = f"{r['actions_per_run']:,} actions a run"
        if r["stalled_games"] or r["stuck_games"]:
            note += f"; {r['stalled_games']} of {r['games_per_run']} games stalled (cut off)"
            if r["stuck_games"]:
                note += f", {r['stuck_games']} stuck with no legal move"
        lines.append(_row(f"engine actions/s, {policy} policy", value, goal, ratio, note))
        gps = r["games_per_second"]
        lines.append(
            _row(
                f"engine games/s, {policy} policy",
                "n/a" if gps is None else f"{gps:.2f}",
                "",
                None,
                f"{r['finished_games']} games finished a run",
            )
        )
    if "rlcard" in results:
        rl = results["rlcard"]
        value = f"{rl['steps_per_second']:,.0f} ({rl['steps_per_second_min']:,.0f}-{rl['steps_per_second_max']:,.0f})"
        lines.append(_row("RLCard gin-rummy steps/s", value, "", None, f"rlcard {rl['version']}"))
        ratio = results["ratio_vs_rlcard"]
        lines.append(
            _row(
                "ratio ours (random) / RLCard",
                f"{ratio:.2f} ({results['ratio_vs_rlcard_min']:.2f}-{results['ratio_vs_rlcard_max']:.2f})",
                f">= {GOAL_RATIO_VS_RLCARD:.1f}",
                ratio / GOAL_RATIO_VS_RLCARD,
                "median of paired runs (ours, then RLCard's)",
            )
        )
        if rl.get("env_steps_per_second") is not None:
            value = (
                f"{rl['env_steps_per_second']:,.0f} "
                f"({rl['env_steps_per_second_min']:,.0f}-{rl['env_steps_per_second_max']:,.0f})"
            )
            lines.append(_row("env steps/s (PettingZoo, May I 4p)", value, "", None, "observation every step"))
            env_ratios = rl["env_paired_ratios"]
            ratio = median(env_ratios)
            lines.append(
                _row(
                    "ratio env / RLCard",
                    f"{ratio:.2f} ({min(env_ratios):.2f}-{max(env_ratios):.2f})",
                    f">= {GOAL_ENV_RATIO_VS_RLCARD:.1f}",
                    ratio / GOAL_ENV_RATIO_VS_RLCARD,
                    "median of paired runs (ours, then RLCard's)",
                )
            )
        else:
            lines.append("(env steps/s: the rl extra is not installed here: pip install -e '.[rl]')")
    sv = results["solver"]
    goal_ms = GOAL_SOLVER_P99_SECONDS * 1e3
    for family in ("round6", "round7"):
        f = sv[family]
        note = f"{f['contract']}; {f['met']} of {sv['cases_per_family']} met"
        lines.append(_row(f"solver {family} median ms", f"{f['median_ms']:.4f}", "", None, note))
        lines.append(_row(f"solver {family} p99 ms", f"{f['p99_ms']:.4f}", f"<= {goal_ms:g}", goal_ms / f["p99_ms"]))
    st = results["state"]
    lines.append(
        _row(
            "state bytes, 6 players, round 7",
            f"{st['bytes_max']:,}",
            f"<= {GOAL_STATE_BYTES:,}",
            GOAL_STATE_BYTES / st["bytes_max"] if st["bytes_max"] else None,
            f"largest seen, {NAME_LENGTH}-char ASCII names "
            f"({st['bytes_max_astral_names']:,} with {NAME_LENGTH} astral chars a name)",
        )
    )
    lines.append(f"\nsolver hands: {sv['source']}; state sizes: dumps of every round-7 state of played games")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of each workload; medians are reported (5)")
    parser.add_argument("--games", type=int, default=20, help="4-player games a run, for each policy (20)")
    parser.add_argument("--solver-cases", type=int, default=1000, help="worst-case hands a contract (1000)")
    parser.add_argument("--rlcard-games", type=int, default=300, help="gin-rummy games a run with --compare (300)")
    parser.add_argument(
        "--env-games", type=int, default=5, help="games of our PettingZoo environment a run with --compare (5)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every workload (1)")
    parser.add_argument("--cpu", type=int, default=0, help="core to pin to (0)")
    parser.add_argument("--compare", action="store_true", help="also measure RLCard's gin rummy in this process")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument("--profile", action="store_true", help="only cProfile one run of the random-policy loop")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the process's CPU time, not the wall clock (a busy, shared machine)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.games < 1 or args.solver_cases < 1 or args.rlcard_games < 1 or args.env_games < 1:
        parser.error("--runs, --games, --solver-cases, --rlcard-games and --env-games must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.compare and not rlcard_available():
        print(
            "--compare needs rlcard (and numpy) importable by this Python. Install them in a separate venv,\n"
            "never in the project's:\n"
            "  python3 -m venv /tmp/benchvenv && /tmp/benchvenv/bin/pip install -q rlcard numpy \\\n"
            "    && /tmp/benchvenv/bin/pip install -q -e '.[rl]'\n"
            "then run: /tmp/benchvenv/bin/python bench/engine.py --compare",
            file=sys.stderr,
        )
        return 2
    pinning = pin_to_cpu(args.cpu)
    clock: Clock = time.process_time if args.cpu_time else time.perf_counter
    if args.profile:
        profile_loop(args.games, args.seed)
        return 0
    started = time.perf_counter()
    results: dict[str, Any] = {
        "config": {
            "seed": args.seed,
            "runs": args.runs,
            "games": args.games,
            "pinning": pinning,
            "clock": "process CPU time" if args.cpu_time else "wall clock",
            "python": platform.python_version(),
            "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?",
            "cpu_idle_percent_before": cpu_idle_percent(),
        },
        "goals": {
            "actions_per_second_random": GOAL_ACTIONS_PER_SECOND,
            "ratio_vs_rlcard": GOAL_RATIO_VS_RLCARD,
            "env_ratio_vs_rlcard": GOAL_ENV_RATIO_VS_RLCARD,
            "solver_p99_ms": GOAL_SOLVER_P99_SECONDS * 1e3,
            "state_bytes": GOAL_STATE_BYTES,
        },
        "engine": {p: bench_loop(p, args.runs, args.games, args.seed, clock) for p in ("random", "greedy")},
    }
    if args.compare:
        rl = results["rlcard"] = bench_rlcard(
            args.runs, args.rlcard_games, args.seed, clock, args.games, args.env_games
        )
        results["ratio_vs_rlcard"] = median(rl["paired_ratios"])
        results["ratio_vs_rlcard_min"] = min(rl["paired_ratios"])
        results["ratio_vs_rlcard_max"] = max(rl["paired_ratios"])
    results["solver"] = bench_solver(args.runs, args.solver_cases, args.seed, clock)
    results["state"] = bench_state_size(args.seed)
    results["config"]["seconds"] = round(time.perf_counter() - started, 1)
    print(report(results))
    print(f"(took {results['config']['seconds']} s)")
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
