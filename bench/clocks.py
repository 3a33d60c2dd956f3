"""Clock benchmark: how late the service plays a decision whose deadline has passed, and how
soon it plays a house bot's decision, with and without ladder matches in progress.

Run from the repository root with the project's virtual environment::

    python bench/clocks.py                 # 3 runs of each set-up, 30 s each (about 6 minutes)
    python bench/clocks.py --runs 5 --seconds 60 --games 16 --matches 2 --json

Each run starts a fresh ``mayi serve`` with the default settings (rate limits on, clocks
on, its default job workers; the API, its embedded Redis in a temporary folder and its
workers) on a free loopback port, and then at once:

* creates ``--games`` 4-player May I tables with every seat taken, ``claim_seconds`` and
  ``turn_seconds`` of 1 (the shortest allowed), and never plays a move: every decision
  is left to the clocks. Each table is followed by long-polling its events (as a
  spectator): before each wait it reads the table's ``deadline``; the first event batch
  marked ``timeout`` that arrives is a clock action, its lateness the event's ``time``
  minus that deadline. Once every seat of a table is absent (three timeouts in a row
  each), the clock plays the rest of its game at once, a *play-out*: commits of up to
  500 decisions (a batch of more than ``PLAY_OUT_EVENTS`` events), each due the moment
  the one before it is committed (the view's ``deadline`` is then that moment), so its
  lateness is how long the clock took to come back to the table. These are clock
  actions like the others and count in every figure; a line also shows the p99
  without them;
* creates one table of three house bots (ten-minute clocks: only the bots move it); a
  house-bot decision's latency is the time between an event and the house bot's move
  that answers it (the events' ``time``), its thinking included.

The set-ups, each run in turn:

* ``idle``: nothing else (the baseline, measured in the same invocation);
* ``ladder``: ladder matches in progress, formed by the matchmaking from the house
  entrants (``MAYI_LADDER_HOUSE_MATCHES=true``: house bots only, so a match plays as
  fast as the CPU allows, the heaviest load a match can be), played by the default
  single ladder worker, one at a time;
* ``ladder xN`` (an extra line): the same with ``MAYI_LADDER_WORKERS=N``, N matches
  played at once.

Every figure is a median over the runs, with min-max and the ratio to the idle median
beside it. Nothing here asserts a timing; each server is stopped at the end, also on
errors.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests
from api import mayi_serve

ROOT = Path(__file__).resolve().parent.parent
#: A clock commit with more events than this is a play-out step: every seat of the table is
#: absent, and the clock plays the rest of the game at once, up to 500 decisions a commit.
PLAY_OUT_EVENTS = 20


def _create(base: str) -> tuple[str, str]:
    """A full table left to its clocks: its id and the token of its first seat (a player
    following their own table; the limits on waiting long-polls are per token)."""
    body = {
        "variant": "may_i",
        "seats": 4,
        "players": [{"name": f"P{i}"} for i in range(4)],
        "options": {"claim_seconds": 1, "turn_seconds": 1},
    }
    r = requests.post(f"{base}/v1/games", json=body, timeout=30)
    r.raise_for_status()
    return r.json()["game_id"], r.json()["seats"][0]["token"]


def _get(session: requests.Session, url: str, limited: list[int], **options: Any) -> Any:
    """GET, waiting out a 429 as its Retry-After says (counted in ``limited``)."""
    while True:
        r = session.get(url, timeout=60, **options)
        if r.status_code != 429:
            r.raise_for_status()
            return r.json()
        limited.append(1)
        time.sleep(float(r.headers.get("Retry-After", "1")))


def _follow(
    base: str,
    table: tuple[str, str],
    until: float,
    out: list[float],
    single: list[float],
    first: list[float],
    limited: list[int],
) -> None:
    """Measure the lateness of every clock action of one table until ``until``."""
    game_id, token = table
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    while time.monotonic() < until:
        view = _get(session, f"{base}/v1/games/{game_id}", limited)
        if view["status"] != "playing" or view.get("deadline") is None:
            return
        deadline, after = float(view["deadline"]), int(view["last_event"])
        wait = max(1, min(20, int(until - time.monotonic())))
        page = _get(session, f"{base}/v1/games/{game_id}/events", limited, params={"after": after, "wait": wait})
        timed = [e for e in page["events"] if e.get("timeout")]
        if timed:
            lateness = float(timed[0]["time"]) - deadline
            out.append(lateness)
            if len(page["events"]) <= PLAY_OUT_EVENTS:
                single.append(lateness)
            if not first:
                first.append(lateness)


def _house_table(base: str) -> str:
    body = {"variant": "may_i", "seats": 3, "options": {"claim_seconds": 600, "turn_seconds": 600}}
    r = requests.post(f"{base}/v1/games", json=body, timeout=30)
    r.raise_for_status()
    game_id: str = r.json()["game_id"]
    for _ in range(3):
        requests.post(f"{base}/v1/games/{game_id}/seats", json={"house_bot": "random"}, timeout=30).raise_for_status()
    return game_id


def _house_latency(base: str, game_id: str) -> list[float]:
    """The seconds between each event and the house bot's move that followed it."""
    events: list[dict[str, Any]] = []
    session = requests.Session()
    while True:
        page = _get(session, f"{base}/v1/games/{game_id}/events", [], params={"after": len(events)})
        if not page["events"]:
            break
        events += page["events"]
    moves = ("drew", "discarded", "claimed", "passed", "went_down", "laid_off")
    return [
        float(e["time"]) - float(before["time"])
        for before, e in itertools.pairwise(events)
        if e["type"] in moves and not e.get("timeout") and e["time"] != before["time"]
    ]


def _matches_playing(base: str) -> int:
    with contextlib.suppress(requests.RequestException, ValueError):
        params = {"variant": "may_i", "status": "playing"}
        r = requests.get(f"{base}/v1/ladder/matches", params=params, timeout=30)
        return len(r.json()["matches"]) if r.status_code == 200 else 0
    return 0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_once(games: int, seconds: float, settings: dict[str, str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="mayi-bench-clocks-") as folder, mayi_serve(Path(folder), settings) as base:
        if settings:  # matches in progress before the measurement starts
            give_up = time.monotonic() + 60
            while _matches_playing(base) == 0 and time.monotonic() < give_up:
                time.sleep(0.5)
        ids = [_create(base) for _ in range(games)]
        house = _house_table(base)
        until = time.monotonic() + seconds
        lateness: list[float] = []
        single: list[float] = []
        limited: list[int] = []
        firsts: list[list[float]] = [[] for _ in ids]
        threads = [
            threading.Thread(target=_follow, args=(base, table, until, lateness, single, first, limited))
            for table, first in zip(ids, firsts, strict=True)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds + 90)
        matches = _matches_playing(base)
        latency = _house_latency(base, house)
    if not lateness:
        raise SystemExit("no clock action was seen: is the worker running?")
    first = [f[0] for f in firsts if f]
    return {
        "actions": len(lateness),
        "p50": statistics.median(lateness),
        "p99": _percentile(lateness, 0.99),
        "worst": max(lateness),
        "worst_first": max(first) if first else float("nan"),
        "single_p99": _percentile(single, 0.99) if single else float("nan"),
        "house_decisions": len(latency),
        "house_p50": statistics.median(latency) if latency else float("nan"),
        "house_p99": _percentile(latency, 0.99) if latency else float("nan"),
        "matches_playing_at_end": matches,
        "answers_429": len(limited),
    }


KEYS = (
    ("p50", "clock lateness p50 (s)"),
    ("p99", "clock lateness p99 (s)"),
    ("worst", "clock lateness worst (s)"),
    ("worst_first", "first clock action, worst (s)"),
    ("single_p99", "p99 without the play-outs (s)"),
    ("house_p50", "house-bot decision p50 (s)"),
    ("house_p99", "house-bot decision p99 (s)"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh servers per set-up (default 3)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each run follows its tables")
    parser.add_argument("--games", type=int, default=8, help="idle tables a run")
    parser.add_argument("--matches", type=int, default=2, help="ladder workers (matches at once) of the extra line")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    if args.runs < 1 or args.games < 1 or args.seconds < 5 or args.matches < 1:
        parser.error("--runs, --games and --matches must be at least 1, --seconds at least 5")

    setups = {
        "idle": {},
        "ladder": {"MAYI_LADDER_HOUSE_MATCHES": "true"},
        f"ladder x{args.matches} (extra)": {
            "MAYI_LADDER_HOUSE_MATCHES": "true",
            "MAYI_LADDER_WORKERS": str(args.matches),
        },
    }
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in setups}
    for i in range(args.runs):
        for name, settings in setups.items():  # interleaved: a drift of the machine's load hits each alike
            result = run_once(args.games, args.seconds, settings)
            runs[name].append(result)
            print(
                f"run {i + 1} {name}: {result['actions']} clock actions, lateness p50 {result['p50']:.3f} s, "
                f"p99 {result['p99']:.3f} s; {result['house_decisions']} house-bot decisions, "
                f"p50 {result['house_p50']:.3f} s, p99 {result['house_p99']:.3f} s; "
                f"{result['matches_playing_at_end']} matches playing at the end, {result['answers_429']} answers 429",
                flush=True,
            )
    print(
        f"\nover {args.runs} runs of {args.seconds:.0f} s, {args.games} idle tables and a house-bot table each, "
        f"default settings ({platform.python_version()}):"
    )
    summary: dict[str, Any] = {}
    baseline = {key: statistics.median(r[key] for r in runs["idle"]) for key, _ in KEYS}
    for name in setups:
        print(f"\n{name}:")
        print(f"{'what':<34}{'median':>10}{'min-max':>18}{'ratio to idle':>15}")
        summary[name] = {}
        for key, label in KEYS:
            values = [r[key] for r in runs[name]]
            median = statistics.median(values)
            summary[name][key] = {"median": median, "min": min(values), "max": max(values)}
            ratio = median / baseline[key] if baseline[key] else float("nan")
            span = f"{min(values):.3f}-{max(values):.3f}"
            print(f"{label:<34}{median:>10.3f}{span:>18}{ratio:>14.2f}x")
    print(f"\nload average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        print(json.dumps({"runs": runs, "summary": summary}, indent=2))


if __name__ == "__main__":
    main()
