"""Clock benchmark: how late the service plays a decision whose deadline has passed.

Run from the repository root with the project's virtual environment::

    python bench/clocks.py                 # 3 runs of 30 s, 8 idle tables each (about 2 minutes)
    python bench/clocks.py --runs 5 --seconds 60 --games 16 --json

What it does, for each run:

* starts a fresh ``mayi serve`` (the API, its embedded Redis in a temporary
  folder, and its job worker) on a free loopback port, rate limits off;
* at once creates ``--games`` 4-player May I tables with every seat taken,
  ``claim_seconds`` and ``turn_seconds`` of 1 (the shortest allowed), and then
  never plays a move: every decision is left to the clocks;
* follows each table by long-polling its events (as a spectator). Before each
  wait it reads the table's ``deadline`` from the public view; the first event
  batch marked ``timeout`` that arrives is a clock action, and its lateness is
  the event's ``time`` minus that deadline;
* reports the lateness p50, p99 and worst of every clock action of the run, and
  the worst of the first action of each table (the clock actions right after the
  server started, before its worker's scheduler has settled).

Every figure is a median over the runs, with min-max beside it. The ratio is to
the design's one second: RQ schedules in whole seconds (a job is due at the
deadline rounded up), and its scheduler looks for due jobs every second. Nothing
here asserts a timing; the server is stopped at the end, also on errors.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
DESIGN_SECONDS = 1.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(folder: str) -> tuple[subprocess.Popen[bytes], str, Any]:
    port = _free_port()
    env = dict(os.environ, MAYI_DATA_DIR=os.path.join(folder, "var"), MAYI_RATE_LIMITS_ENABLED="false")
    env.pop("REDIS_URL", None)
    log = open(os.path.join(folder, "serve.log"), "wb")  # noqa: SIM115 - closed by _stop_server
    command = [sys.executable, "-m", "mayi_service.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    base = f"http://127.0.0.1:{port}"
    give_up = time.monotonic() + 120
    while time.monotonic() < give_up:
        if process.poll() is not None:
            break
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base}/healthz", timeout=5).status_code == 200:
                return process, base, log
        time.sleep(0.2)
    _stop_server(process, log)
    raise SystemExit(f"mayi serve did not become healthy; see {folder}/serve.log")


def _stop_server(process: subprocess.Popen[bytes], log: Any) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    log.close()


def _create(base: str) -> str:
    body = {
        "variant": "may_i",
        "seats": 4,
        "players": [{"name": f"P{i}"} for i in range(4)],
        "options": {"claim_seconds": 1, "turn_seconds": 1},
    }
    r = requests.post(f"{base}/v1/games", json=body, timeout=30)
    r.raise_for_status()
    game_id: str = r.json()["game_id"]
    return game_id


def _follow(base: str, game_id: str, until: float, out: list[float], first: list[float]) -> None:
    """Measure the lateness of every clock action of one table until ``until``."""
    session = requests.Session()
    after = 0
    while time.monotonic() < until:
        view = session.get(f"{base}/v1/games/{game_id}", timeout=30).json()
        if view["status"] != "playing" or view.get("deadline") is None:
            return
        deadline, after = float(view["deadline"]), int(view["last_event"])
        wait = max(1, min(20, int(until - time.monotonic())))
        page = session.get(f"{base}/v1/games/{game_id}/events", params={"after": after, "wait": wait}, timeout=60)
        page.raise_for_status()
        timed = [e for e in page.json()["events"] if e.get("timeout")]
        if timed:
            lateness = float(timed[0]["time"]) - deadline
            out.append(lateness)
            if not first:
                first.append(lateness)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_once(games: int, seconds: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="mayi-bench-clocks-") as folder:
        process, base, log = _start_server(folder)
        try:
            ids = [_create(base) for _ in range(games)]
            until = time.monotonic() + seconds
            lateness: list[float] = []
            firsts: list[list[float]] = [[] for _ in ids]
            threads = [
                threading.Thread(target=_follow, args=(base, game_id, until, lateness, first))
                for game_id, first in zip(ids, firsts, strict=True)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(seconds + 90)
        finally:
            _stop_server(process, log)
    if not lateness:
        raise SystemExit("no clock action was seen: is the worker running?")
    first = [f[0] for f in firsts if f]
    return {
        "actions": len(lateness),
        "p50": statistics.median(lateness),
        "p99": _percentile(lateness, 0.99),
        "worst": max(lateness),
        "worst_first": max(first) if first else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh servers, one run each (default 3)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each run follows its tables")
    parser.add_argument("--games", type=int, default=8, help="idle tables a run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    if args.runs < 1 or args.games < 1 or args.seconds < 5:
        parser.error("--runs and --games must be at least 1, --seconds at least 5")

    runs = []
    for i in range(args.runs):
        result = run_once(args.games, args.seconds)
        runs.append(result)
        print(
            f"run {i + 1}: {result['actions']} clock actions; lateness p50 {result['p50']:.3f} s, "
            f"p99 {result['p99']:.3f} s, worst {result['worst']:.3f} s, "
            f"worst first action {result['worst_first']:.3f} s",
            flush=True,
        )
    print(f"\nclock lateness over {args.runs} runs, {args.games} idle tables each ({platform.python_version()}):")
    print(f"{'what':<34}{'median':>10}{'min-max':>18}{'ratio to 1 s':>15}")
    summary: dict[str, Any] = {}
    for key, label in (
        ("p50", "lateness p50 (s)"),
        ("p99", "lateness p99 (s)"),
        ("worst", "lateness worst (s)"),
        ("worst_first", "first action after start, worst (s)"),
    ):
        values = [r[key] for r in runs]
        median = statistics.median(values)
        summary[key] = {"median": median, "min": min(values), "max": max(values)}
        print(
            f"{label:<34}{median:>10.3f}{f'{min(values):.3f}-{max(values):.3f}':>18}{median / DESIGN_SECONDS:>14.2f}x"
        )
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        print(json.dumps({"runs": runs, "summary": summary}, indent=2))


if __name__ == "__main__":
    main()
