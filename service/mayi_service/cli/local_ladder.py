"""``mayi ladder run``: a local ladder of the house bots, played by ``mayi worker`` processes.

This process makes the tables (house bots only, at most one match per worker at once, and
no more than asked for); the workers play them as they would any ladder match, through
the ladder queue. ``bench/ladder.py`` measures with it.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

from mayi_engine.rules import get_rules
from mayi_service.config import Settings
from mayi_service.ladder.matches import Ladder
from mayi_service.processes import die_with_parent
from mayi_service.service import Service
from mayi_service.storage.connections import redis_url

#: How long stopping the workers may take before they are killed (seconds).
STOP_SECONDS = 30.0
#: Workers that stopped are replaced, up to this many times per worker asked for.
RESTARTS_PER_WORKER = 5


def _workers(count: int, env: dict[str, str]) -> list[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "mayi_service.cli", "worker"]
    return [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, preexec_fn=die_with_parent(signal.SIGTERM))
        for _ in range(count)
    ]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + STOP_SECONDS
    for proc in procs:
        try:
            proc.wait(max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _how(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _wait_ready(ladder: Ladder, procs: list[subprocess.Popen[bytes]], most: float = 120.0) -> None:
    """Wait until every worker listens on the ladder queue (their start is no match's time)."""
    from rq import Worker

    assert ladder.queue is not None
    end = time.monotonic() + most
    while Worker.count(queue=ladder.queue) < len(procs):
        if time.monotonic() > end or any(proc.poll() is not None for proc in procs):
            _stop(procs)
            raise RuntimeError("the mayi workers did not start; see the messages above")
        time.sleep(0.05)


def run_local_ladder(
    variant: str, matches: int, workers: int, players: int | None = None, *, progress: bool = True
) -> dict[str, Any]:
    """Play ``matches`` house-bot matches of ``variant`` with ``workers`` worker processes
    (a worker that stops is replaced, and its match resumes on the next free worker);
    return the leaderboard and the run's figures (matches a minute; the share of the
    matches' time spent outside playing; the workers replaced)."""
    import mayi_bots

    base = Settings.from_env()
    url = redis_url(base.redis_url, base.data_dir)
    sizes = [players] if players else list(range(get_rules(variant).min_players, get_rules(variant).max_players + 1))
    settings = replace(
        base,
        redis_url=url,
        schedule_clock_jobs=True,
        ladder_house_matches=True,
        ladder_players=tuple(str(n) for n in sizes),
        ladder_max_matches=workers,
        ladder_house_games=workers,
    )
    ladder = Service(settings).ladder
    copies = math.ceil(max(sizes) / len(mayi_bots.NAMES))
    ladder.enter_house(variant, copies=copies)
    for entry in ladder.entries(variant):
        if entry.house is not None and entry.max_games < workers:
            ladder.enter(variant, replace(entry, max_games=workers))

    env = dict(os.environ, REDIS_URL=url, MAYI_LADDER_VARIANTS=variant)
    env.pop("MAYI_LADDER_HOUSE_MATCHES", None)  # the workers make no house tables: this process does
    procs = _workers(workers, env)
    _wait_ready(ladder, procs)
    started = time.perf_counter()  # from when every worker listens
    created: list[str] = []
    finished: dict[str, dict[str, Any]] = {}
    replaced = 0
    bar = None
    try:
        if progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                transient=True,
            )
            bar.start()
            task = bar.add_task(f"{variant}, {workers} worker(s)", total=matches)
        while len(finished) < matches:
            if len(created) < matches:
                created += ladder.matchmake(variant, most=matches - len(created))
            for match_id in [m for m in created if m not in finished]:
                match = ladder.match(variant, match_id)
                if match is not None and match["status"] == "finished":
                    finished[match_id] = match
            if bar is not None:
                bar.update(task, completed=len(finished))
            for n, proc in enumerate(procs):
                if proc.poll() is None:
                    continue
                if replaced >= RESTARTS_PER_WORKER * workers:
                    raise RuntimeError("the mayi workers keep stopping; see the messages above")
                (procs[n],) = _workers(1, env)
                replaced += 1
                print(
                    f"mayi ladder run: worker {proc.pid} stopped ({_how(proc.returncode)}); "
                    f"started worker {procs[n].pid} in its place (a match it played resumes on the next free worker)",
                    file=sys.stderr,
                )
            time.sleep(0.05)
    finally:
        if bar is not None:
            bar.stop()
        _stop(procs)
    seconds = time.perf_counter() - started
    walls = [m["finished_at"] - m["created_at"] for m in finished.values()]
    plays = [float(m.get("play_seconds") or 0.0) for m in finished.values()]
    return {
        "variant": variant,
        "matches": len(finished),
        "workers": workers,
        "seconds": round(seconds, 3),
        "matches_per_minute": round(60 * len(finished) / seconds, 2),
        "match_seconds": round(sum(walls) / len(walls), 4),
        "play_seconds": round(sum(plays) / len(plays), 4),
        "overhead_share": round(1 - sum(plays) / sum(walls), 4) if sum(walls) > 0 else 0.0,
        "workers_replaced": replaced,
        "leaderboard": ladder.leaderboard(variant),
        "match_ids": created,
    }
