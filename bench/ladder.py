"""Ladder benchmark: matches a minute with 1 and with 2 workers, and the share of a match's
time spent outside playing.

Run from the repository root with the project's virtual environment::

    python bench/ladder.py                        # 2 runs of 8 matches per worker count
    python bench/ladder.py --runs 3 --matches 12 --json
    python bench/ladder.py --start-round 7        # the last round only: a quick check

What it does, for each run and each worker count (1, then 2):

* runs ``mayi ladder run --variant may_i --players 4 --workers W --matches M --json``
  on a fresh embedded Redis in a temporary folder: the house bots (copies of the
  reference bots, enough for 4 seats) play M whole 4-player May I matches, each a
  match job on a ``mayi worker`` process; the command makes one table per worker at
  a time, as soon as a worker is free;
* reads from its figures: matches a minute (from when every worker listens to the
  last result), and, over the matches, ``1 - play / wall``, where *wall* is from the
  match's creation to its result being recorded (queueing, the job's start, the
  table's creation, the lease, the rating, every Redis round trip outside the moves)
  and *play* is the time the job spent in its play loop (the bots' decisions and the
  commits of their moves).

Every figure is a median over the runs, with min-max beside it. Goals: 2 workers
≥ 1.7× the matches a minute of 1 worker; overhead ≤ 5 % of a match's time. On a
machine with fewer free cores than workers plus Redis, the first goal cannot be met:
the report prints the core count and load. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAYI = Path(sys.executable).parent / "mayi"


def _run(workers: int, matches: int, start_round: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mayi-bench-ladder-") as folder:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
        env.update(MAYI_DATA_DIR=os.path.join(folder, "var"), MAYI_LADDER_START_ROUND=str(start_round))
        command = [str(MAYI), "ladder", "run", "--variant", "may_i", "--players", "4"]
        command += ["--workers", str(workers), "--matches", str(matches), "--json"]
        done = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"mayi ladder run failed ({done.returncode}):\n{done.stderr}")
        result: dict[str, Any] = json.loads(done.stdout)
        return result


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--matches", type=int, default=8, help="matches per run and worker count")
    parser.add_argument("--start-round", type=int, default=1, help="ladder games start at this round (1: whole)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    rows: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for _ in range(args.runs):
        for workers in (1, 2):
            rows[workers].append(_run(workers, args.matches, args.start_round))
    per_minute = {w: [r["matches_per_minute"] for r in rows[w]] for w in rows}
    ratios = [two / one for one, two in zip(per_minute[1], per_minute[2], strict=True)]
    overhead = [r["overhead_share"] for w in rows for r in rows[w]]
    summary = {
        "machine": {"cores": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version()},
        "runs": args.runs,
        "matches": args.matches,
        "start_round": args.start_round,
        "matches_per_minute_1": per_minute[1],
        "matches_per_minute_2": per_minute[2],
        "ratio_2_over_1": [round(r, 3) for r in ratios],
        "match_seconds": [r["match_seconds"] for w in rows for r in rows[w]],
        "overhead_share": overhead,
        "goals": {"ratio": 1.7, "overhead_share": 0.05},
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; {args.runs} runs of {args.matches} matches each")
    print(f"matches a minute, 1 worker:   {_median(per_minute[1])}")
    print(f"matches a minute, 2 workers:  {_median(per_minute[2])}")
    print(f"2 workers / 1 worker:         {_median(ratios)}   goal >= 1.70")
    print(f"overhead share of a match:    {_median([100 * o for o in overhead])} %   goal <= 5 %")
    print(f"mean match (wall), seconds:   {_median(summary['match_seconds'])}")


if __name__ == "__main__":
    main()
