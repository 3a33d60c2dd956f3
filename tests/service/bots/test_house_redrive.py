"""A house seat's decision whose job is lost is still played, once, within seconds.

A house bot's decision is one RQ job queued after the commit that gives the seat its
decision. These tests lose that job as the faults do: the enqueue lost (Redis SIGKILLed
between the commit and the enqueue: the job is deleted from RQ's queue, then Redis is
killed and started again on its AOF), and a worker SIGKILLed once it has taken the job
from the queue (stopped with SIGSTOP, so it takes the job and never plays it). Every
table has ten-minute clocks: on the old code the seat waited for its turn clock, far
beyond the cap here. A job queued late (its lease ran out while it waited) is played
once as well: every commit checks the version, so the job and its re-drive never both
play.

Real processes: ``mayi serve`` (its API only) and ``mayi worker --jobs games`` processes,
on a real ``redis-server`` with AOF; every process is stopped at the end, also on failure.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import redis
import requests
from http_moves import auth, move_request
from serving import MAYI, RECOVER_SECONDS, STOP_SECONDS, healthy, mayi_serve, redis_process, wait_until

from mayi_service.bots.house import LEASE_SECONDS

#: The most a lost decision may take to be played (the turn clock is 600 s). A cap, not a timing.
REDRIVE_CAP = 20.0
#: Longer than a lease and two sweeps: a re-drive that would play twice has done so by then.
SETTLE_SECONDS = LEASE_SECONDS + 5.0
SLOW = {"claim_seconds": 600, "turn_seconds": 600}


@contextmanager
def game_worker(tmp_path: Path, env: dict[str, str], name: str) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``mayi worker --jobs games`` (clock timer and sweeper included), killed at the end."""
    assert MAYI is not None
    workdir = tmp_path / "run"
    workdir.mkdir(exist_ok=True)
    full = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    full.update({"PYTHONUNBUFFERED": "1", **env})
    with (tmp_path / f"{name}.err").open("wb") as err:
        proc = subprocess.Popen([str(MAYI), "worker", "--jobs", "games"], env=full, cwd=workdir, stdout=err, stderr=err)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        with suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_SECONDS)


def house_table(url: str) -> tuple[str, str]:
    """A dealt two-seat table: a person (seat 0) and a house bot (seat 1), with slow clocks."""
    created = requests.post(f"{url}/v1/games", json={"variant": "may_i", "seats": 2, "options": SLOW}, timeout=30)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    person = requests.post(f"{url}/v1/games/{game_id}/seats", json={"name": "Dee", "seat": 0}, timeout=30)
    assert person.status_code == 201, person.text
    house = requests.post(f"{url}/v1/games/{game_id}/seats", json={"house_bot": "greedy"}, timeout=30)
    assert house.status_code == 201, house.text
    return game_id, person.json()["token"]


def view(url: str, game_id: str, token: str | None = None) -> dict[str, Any]:
    answer = requests.get(f"{url}/v1/games/{game_id}", headers=auth(token) if token else {}, timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def play_until_the_house_decides(url: str, game_id: str, token: str) -> int:
    """The person's moves until the house seat must decide (no worker plays it yet); the
    number of the last event then."""
    for _ in range(10):
        seen = view(url, game_id, token)
        if not seen["legal"]:
            return int(seen["last_event"])
        move = next(m for m in seen["legal"] if m["type"] != "go_down")
        path, body = move_request(move)
        moved = requests.post(f"{url}/v1/games/{game_id}/{path}", json=body, headers=auth(token), timeout=30)
        assert moved.status_code == 200, moved.text
    raise AssertionError(f"the house seat of {game_id} never had to decide")


def events_after(url: str, game_id: str, after: int) -> list[dict[str, Any]]:
    page = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": after}, timeout=30)
    assert page.status_code == 200, page.text
    return list(page.json()["events"])


def house_moved(url: str, game_id: str, after: int) -> bool:
    try:
        return any(e.get("seat") == 1 for e in events_after(url, game_id, after))
    except (requests.RequestException, AssertionError):
        return False


def assert_one_turn(url: str, game_id: str, token: str, after: int) -> None:
    """The house seat played its turn once: one draw and one discard, then the person is to
    act, and nothing more comes while a re-drive could still play."""
    assert wait_until(lambda: bool(view(url, game_id, token)["legal"]), REDRIVE_CAP)
    settled = view(url, game_id)["last_event"]
    time.sleep(SETTLE_SECONDS)
    assert view(url, game_id)["last_event"] == settled, events_after(url, game_id, settled)
    played = [e["type"] for e in events_after(url, game_id, after) if e.get("seat") == 1]
    draws = [t for t in played if t in ("drew", "took_upcard")]
    assert len(draws) == 1 and played.count("discarded") == 1, played


def queued_house_jobs(client: redis.Redis, queue: str, game_id: str) -> list[str]:
    return [j.decode() for j in client.lrange(f"rq:queue:{queue}", 0, -1) if j.decode().startswith(f"house-{game_id}")]


def blocked_in_a_pop(client: redis.Redis) -> bool:
    """A client (the worker) blocks in Redis waiting for a job."""
    return any(c.get("cmd") in ("blpop", "blmove", "brpoplpush") for c in client.client_list())


def test_house_decisions_whose_jobs_were_lost_with_redis_or_queued_late_are_played_once(tmp_path: Path) -> None:
    queue = f"q{uuid.uuid4().hex[:10]}"
    with redis_process(tmp_path / "redis") as server:
        env = {"REDIS_URL": server.url, "MAYI_QUEUE_NAME": queue}
        with mayi_serve(tmp_path, env) as served:  # the API only: no worker takes the jobs yet
            served.wait_ready()
            url = served.url
            lost, lost_token = house_table(url)
            late, late_token = house_table(url)
            lost_after = play_until_the_house_decides(url, lost, lost_token)
            late_after = play_until_the_house_decides(url, late, late_token)
            client = server.client()
            # The enqueue lost with Redis: the job gone, then Redis SIGKILLed and started on its AOF.
            jobs = queued_house_jobs(client, queue, lost)
            assert jobs, "the commit queued the house seat's job"
            for job in jobs:
                client.lrem(f"rq:queue:{queue}", 0, job)
            assert queued_house_jobs(client, queue, late), "the late table's job waits in the queue"
            client.close()
            server.kill()
            server.start()  # same port, same AOF
            assert wait_until(lambda: healthy(url), RECOVER_SECONDS), served.stderr()[-3000:]
            time.sleep(LEASE_SECONDS + 0.5)  # the late job's lease runs out while it waits in the queue
            with game_worker(tmp_path, env, "worker") as worker:
                started = time.monotonic()
                assert wait_until(lambda: house_moved(url, lost, lost_after), REDRIVE_CAP), (
                    f"the house seat did not move within {REDRIVE_CAP} s of a worker starting "
                    f"({time.monotonic() - started:.1f} s)"
                )
                assert wait_until(lambda: house_moved(url, late, late_after), REDRIVE_CAP)
                assert_one_turn(url, lost, lost_token, lost_after)
                assert_one_turn(url, late, late_token, late_after)
                assert worker.poll() is None


def test_a_house_decision_taken_by_a_worker_that_died_is_played_once_within_seconds(tmp_path: Path) -> None:
    queue = f"q{uuid.uuid4().hex[:10]}"
    with redis_process(tmp_path / "redis") as server:
        env = {"REDIS_URL": server.url, "MAYI_QUEUE_NAME": queue}
        with mayi_serve(tmp_path, env) as served:
            served.wait_ready()
            url = served.url
            game_id, token = house_table(url)
            with game_worker(tmp_path, env, "doomed") as doomed:
                client = server.client()
                # The worker waits for jobs, blocked in Redis: stopped, it takes the next job
                # from the queue and never plays it.
                assert wait_until(lambda: blocked_in_a_pop(client), RECOVER_SECONDS), "the worker waits for jobs"
                doomed.send_signal(signal.SIGSTOP)
                after = play_until_the_house_decides(url, game_id, token)
                assert wait_until(lambda: not queued_house_jobs(client, queue, game_id), RECOVER_SECONDS), (
                    "the stopped worker took the job"
                )
                doomed.kill()
                doomed.wait(STOP_SECONDS)
                client.close()
            assert not house_moved(url, game_id, after)
            with game_worker(tmp_path, env, "worker") as worker:
                assert wait_until(lambda: house_moved(url, game_id, after), REDRIVE_CAP), (
                    f"the house seat did not move within {REDRIVE_CAP} s of a new worker starting"
                )
                assert_one_turn(url, game_id, token, after)
                assert worker.poll() is None
