"""Decision latency of polling bots over HTTP: 4 bots in each of 4 games at once.

Each bot runs ``mayi_sdk.run_polling`` (its own thread and connection) against the API
under gunicorn (``bench/api.py``'s server: 2 gthread workers) on a fresh Redis. Every
seat is a bot, so every commit but the first is a bot's move, and a decision's latency
is the time from the commit that made it wait to the commit of the bot's move: the gap
between successive commit times in the game's event log (the service stamps each event
with its commit time, to the millisecond). Claims answered at once by several bots
make gaps shorter than one bot's full round trip, so the figures are per commit.

Also: HTTP requests per move (decision polls + moves, ÷ moves).

    python bench/bots_http.py [--games 4] [--seats 4] [--round 1]

Prints medians and ratios; never asserts a timing. Webhook delivery is not built yet.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api import gunicorn, percentile, redis_server

from mayi_sdk import Bot, Client, RunStats, run_polling

SLOW = {"claim_seconds": 600, "turn_seconds": 600}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--round", type=int, default=1, help="the round to start at (7: a short run)")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url, _ = stack.enter_context(redis_server(tmp))
        env = dict(os.environ, REDIS_URL=url, MAYI_KEY_PREFIX="bench-bots")
        env.update(MAYI_RATE_LIMITS_ENABLED="false", MAYI_SCHEDULE_CLOCK_JOBS="false")
        api = stack.enter_context(gunicorn("api", "mayi_service.wsgi:app", env, tmp))
        anon = Client(api.base, timeout=120)
        games, bots = [], []
        for g in range(args.games):
            test = {"seed": f"{g:02x}" * 16, "start_round": args.round}
            game_id = anon.create_game("may_i", args.seats, options=SLOW, test=test).game_id
            games.append(game_id)
            for s in range(args.seats):
                client = Client(api.base, anon.register_bot(f"bench{g}-{s}").token, timeout=120)
                client.take_seat(game_id, f"bench{g}-{s}")
                bots.append(client)
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
        gaps: list[float] = []
        for game_id in games:
            times = sorted({e.time for e in anon.get_replay(game_id).events})
            gaps += [b - a for a, b in itertools.pairwise(times)]
        gaps.sort()
        moves = sum(s.moves for s in stats)
        polls = sum(s.polls for s in stats)
        print(
            f"{args.games} games x {args.seats} polling bots, from round {args.round}: {seconds:.1f} s, {moves} moves"
        )
        print(
            f"decision latency (commit to commit): median {statistics.median(gaps) * 1000:.1f} ms, "
            f"p99 {percentile(gaps, 99) * 1000:.1f} ms (goal: median <= 10 ms, p99 <= 50 ms)"
        )
        print(f"requests per move: {(polls + moves) / max(1, moves):.2f} ({polls} polls, {moves} moves; goal <= 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
