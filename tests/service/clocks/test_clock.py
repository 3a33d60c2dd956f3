"""Turn clocks (RULES-SPEC §9) enforced with nobody calling: real RQ workers on a real Redis.

The worker under test is the real one, ``python -m mayi_service.cli worker`` (RQ
worker + scheduler + clock sweeper) in a subprocess; the tests read the game
straight from Redis, so no request reaches the service that could apply the
timeouts lazily. The last test covers the lazy path, with no worker at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from http_moves import move_request

from mayi_service.api.app import create_app
from mayi_service.config import Settings
from mayi_service.storage.repository import GameRepository

#: Longest wait for a clock to do its work before the test fails.
BOUND_SECONDS = 60.0

#: A table that plays itself out fast: one-second clocks, the last May I round only,
#: and no stock rebuilds (the round ends when the stock runs out).
QUICK_TABLE = {
    "variant": "may_i",
    "seats": 2,
    "players": [{"name": "Ann"}, {"name": "Bob"}],
    "options": {"claim_seconds": 1, "turn_seconds": 1, "max_reshuffles": 0},
    "test": {"seed": "c10c" * 8, "start_round": 7},
}


class Worker:
    """``mayi worker`` in a subprocess (its own process group: RQ forks a scheduler)."""

    def __init__(self, redis_url: str, settings: Settings, log: Path, sweeper: bool = True) -> None:
        env = dict(
            os.environ,
            REDIS_URL=redis_url,
            MAYI_KEY_PREFIX=settings.key_prefix,
            MAYI_QUEUE_NAME=settings.queue_name,
            MAYI_SWEEP_SECONDS="0.5",
            MAYI_SCHEDULE_CLOCK_JOBS="1",
        )
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mayi_service.cli", "worker", *([] if sweeper else ["--no-sweeper"])],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def output(self) -> str:
        """The end of what the worker printed."""
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        """Terminate the worker (and the scheduler it forked), then kill what is left."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
            except ProcessLookupError:
                pass
        with contextlib.suppress(ProcessLookupError):  # a forked scheduler may outlive the worker
            os.killpg(self.process.pid, signal.SIGKILL)


@pytest.fixture
def start_worker(redis_url: str, settings: Settings, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start ``mayi worker`` on the test's Redis, key prefix and queue; always stopped afterwards."""
    started: list[Worker] = []

    def start(sweeper: bool = True) -> Worker:
        worker = Worker(redis_url, settings, tmp_path / f"worker{len(started)}.log", sweeper)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def clock_app(settings: Settings) -> Any:
    """The app, scheduling an RQ job at each deadline."""
    return create_app(replace(settings, schedule_clock_jobs=True))


class Game:
    """One game as stored in Redis, read through the repository (no request to the service)."""

    def __init__(self, r: redis.Redis, settings: Settings, game_id: str) -> None:
        self.repo = GameRepository(r, settings.key_prefix)
        self.id = game_id

    def status(self) -> str:
        record = self.repo.load(self.id)
        assert record is not None
        return record.status

    def deadline(self) -> float | None:
        record = self.repo.load(self.id)
        assert record is not None
        return record.deadline

    def events(self) -> list[dict[str, Any]]:
        return self.repo.events_after(self.id, 0, count=1_000_000)

    def wait_for(self, what: str, done: Callable[[], bool], worker: Worker | None = None) -> None:
        end = time.monotonic() + BOUND_SECONDS
        while time.monotonic() < end:
            if done():
                return
            if worker is not None and worker.process.poll() is not None:
                pytest.fail(f"the worker exited ({worker.process.returncode}):\n{worker.output()}")
            time.sleep(0.1)
        types = [(e["type"], e.get("seat"), e.get("timeout")) for e in self.events()]
        pytest.fail(
            f"game {self.id}: {what} did not happen within {BOUND_SECONDS:.0f} s; "
            f"status {self.status()!r}, events {types}"
        )


def _create(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    assert created["game"]["status"] == "playing"
    return created


def _scheduled_jobs(r: redis.Redis, queue: str) -> list[bytes]:
    return list(r.zrange(f"rq:scheduled:{queue}", 0, -1))


def test_a_silent_table_is_played_out_by_the_worker(
    clock_app: Any, settings: Settings, redis_client: redis.Redis, start_worker: Callable[..., Worker]
) -> None:
    """Nobody ever acts: at each deadline the worker passes, draws and discards for the seat
    (events marked ``timeout``), marks both seats absent after three timeouts, and plays them
    out until the game ends -- with no request reaching the service."""
    # No sweeper: every step must be played by the game's own RQ jobs, none lost.
    worker = start_worker(sweeper=False)
    created = _create(clock_app.test_client(), QUICK_TABLE)
    game = Game(redis_client, settings, created["game_id"])
    assert _scheduled_jobs(redis_client, settings.queue_name), "the app scheduled no clock job"

    game.wait_for("the end of the game", lambda: game.status() == "finished", worker)

    events = game.events()
    timed_out = [e for e in events if e.get("timeout")]
    kinds = {e["type"] for e in timed_out}
    assert {"passed", "drew", "discarded"} <= kinds, kinds
    assert all(e["seat"] in (0, 1) for e in timed_out)
    absent = [e for e in events if e["type"] == "seat_absent"]
    assert sorted(e["seat"] for e in absent) == [0, 1]
    for mark in absent:  # after three timeouts in a row
        earlier = [e for e in events[: events.index(mark)] if e.get("timeout") and e["seat"] == mark["seat"]]
        assert len(earlier) >= 2, (mark, earlier)
    # Nobody played but the clock: every move of a seat was made for it.
    moves = [e for e in events if e["type"] in ("passed", "discarded", "claimed", "went_down", "laid_off")]
    assert all(e.get("timeout") for e in moves), [e for e in moves if not e.get("timeout")]
    assert events[-1]["type"] == "game_ended"
    # The job that played the last move drops the game's clock just after its commit.
    deadlines = f"{settings.key_prefix}:{{index}}:deadlines"
    game.wait_for("the finished game's clock to go", lambda: redis_client.zscore(deadlines, game.id) is None, worker)


def test_a_clock_whose_job_was_lost_is_played_anyway(
    clock_app: Any, settings: Settings, redis_client: redis.Redis, start_worker: Callable[..., Worker]
) -> None:
    """The RQ job scheduled for the first deadline is deleted (as if lost with a crashed
    worker); the worker plays the timeout anyway: its clock timer at the deadline, or its
    sweeper once the game is overdue (when the worker starts late), and the clock goes on."""
    created = _create(clock_app.test_client(), QUICK_TABLE)
    game = Game(redis_client, settings, created["game_id"])
    deadline = game.deadline()
    assert deadline is not None
    jobs = _scheduled_jobs(redis_client, settings.queue_name)
    assert jobs, "the app scheduled no clock job"
    for job_id in jobs:
        redis_client.delete(f"rq:job:{job_id.decode()}")
    redis_client.delete(f"rq:scheduled:{settings.queue_name}")
    assert not redis_client.keys("rq:job:clock-*" + game.id + "*")

    worker = start_worker()
    game.wait_for("a timed-out move", lambda: any(e.get("timeout") for e in game.events()), worker)

    first = next(e for e in game.events() if e.get("timeout"))
    assert first["type"] == "passed" and first["data"]["first_upcard"]
    assert first["time"] >= deadline
    # ... and the clock goes on from there: the next deadline gets a job again.
    game.wait_for("a second timed-out move", lambda: sum(bool(e.get("timeout")) for e in game.events()) >= 2, worker)


def test_an_action_after_the_deadline_first_applies_the_due_timeouts(client: Any, settings: Settings) -> None:
    """No worker at all: the first request that acts on the game after a deadline applies
    the timeouts that are due (ordinary events, marked ``timeout``) before its own move.
    (The clock's jobs are queued, as by default, but no worker takes them here.)"""
    created = _create(client, QUICK_TABLE)
    game_id = created["game_id"]
    view = created["game"]
    assert view["phase"] == "first_offer"
    offered, deadline = view["actor"], view["deadline"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    other = 1 - offered
    time.sleep(max(0.0, deadline - time.time()) + 0.2)

    # No request acted yet: nothing has timed out, however late it is.
    events = client.get(f"/v1/games/{game_id}/events").get_json()["events"]
    assert not any(e.get("timeout") for e in events)

    # The other seat now answers the offer, which has passed to it when the first seat timed out.
    response = client.post(
        f"/v1/games/{game_id}/claims", json={"claim": False}, headers={"Authorization": f"Bearer {tokens[other]}"}
    )
    assert response.status_code == 200, response.get_json()
    events = client.get(f"/v1/games/{game_id}/events").get_json()["events"]
    timed_out = [e for e in events if e.get("timeout")]
    assert [(e["type"], e["seat"]) for e in timed_out] == [("passed", offered)]
    assert timed_out[0]["time"] >= deadline
    mine = next(e for e in events if e["type"] == "passed" and e["seat"] == other)
    assert "timeout" not in mine and mine["seq"] > timed_out[0]["seq"]


class ProcessDied(Exception):
    """What a listener of the app's process raises after each commit: as if the process died
    right after the commit, before any listener's follow-up (claiming the clock, queueing a
    house job, waking bots) was made."""


class Dying:
    """A commit listener that prepares as ``listener`` does, then dies instead of following."""

    def __init__(self, listener: Any) -> None:
        self.listener = listener

    def prepare(self, commit: Any) -> None:
        self.listener.prepare(commit)

    def follow(self, commit: Any, batch: Any) -> None:
        raise ProcessDied(commit.after.id)


def _dying(app: Any) -> Any:
    """The games of ``app`` with every listener dying after each commit."""
    games = app.extensions["mayi"].games
    games.listeners = tuple(Dying(listener) for listener in games.listeners)
    return games


def test_a_game_whose_commit_never_had_its_follow_ups_still_has_its_clock_played(
    clock_app: Any, settings: Settings, redis_client: redis.Redis, start_worker: Callable[..., Worker]
) -> None:
    """The process that commits a game's start dies before its listeners follow the commit:
    no clock is claimed and no clock job queued. The worker plays the game's timeouts all
    the same (its clock timer and sweeper find the game in the ``deadlines`` index, written
    before the commit), and the clock goes on from there."""
    games = _dying(clock_app)
    with pytest.raises(ProcessDied):
        games.create(QUICK_TABLE)
    [game_id], _ = games.repo.list_ids(["playing"], None, 0, 10)
    game = Game(redis_client, settings, game_id)
    assert games.repo.load(game_id).clock_at is None
    assert not _scheduled_jobs(redis_client, settings.queue_name)

    worker = start_worker()
    game.wait_for("two timed-out moves", lambda: sum(bool(e.get("timeout")) for e in game.events()) >= 2, worker)


def test_a_house_decision_whose_commit_never_had_its_follow_ups_is_played_within_seconds(
    clock_app: Any, settings: Settings, redis_client: redis.Redis, start_worker: Callable[..., Worker]
) -> None:
    """Every commit of the API's process dies before its listeners follow it, so none queues
    a house job: each decision that a person's move gives the house seat is still played, by
    the worker's sweeper, from the house due-set entry written before the commit. The
    clocks are ten minutes: only the re-drive can play those decisions within the cap."""
    from mayi_engine import to_act
    from mayi_engine.state import loads
    from mayi_service.bots.house import LEASE_SECONDS

    client = clock_app.test_client()
    slow = {"claim_seconds": 600, "turn_seconds": 600}
    body = {"variant": "may_i", "seats": 2, "players": [{"name": "Ann"}], "options": slow}
    created = client.post("/v1/games", json=body).get_json()
    game_id, token = created["game_id"], created["seats"][0]["token"]
    games = _dying(clock_app)
    assert client.post(f"/v1/games/{game_id}/seats", json={"house_bot": "random"}).status_code == 500
    worker = start_worker()
    cap = 10 * LEASE_SECONDS + 30  # a cap for what otherwise takes ten minutes, not a timing
    house_moves = 0
    while house_moves < 3:
        record = games.load(game_id)
        if record.status != "playing":
            break
        if 0 not in to_act(loads(record.state)):  # the house seat alone must decide
            version = record.version
            end = time.monotonic() + cap
            while games.load(game_id).version == version:
                assert time.monotonic() < end, f"the house seat's decision was not played:\n{worker.output()}"
                assert worker.process.poll() is None, worker.output()
                time.sleep(0.1)
            house_moves += 1
            continue
        view = client.get(f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"}).get_json()
        move = _person_move(view["legal"])
        path, payload = move_request(move)
        response = client.post(
            f"/v1/games/{game_id}/{path}", json=payload, headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 500  # committed; the process "died" before its follow-ups
        assert games.load(game_id).version > record.version
    assert house_moves == 3


def _person_move(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A pass, else the stock draw, else a discard, else the first move listed."""
    for wanted in ({"type": "claim", "claim": False}, {"type": "draw", "source": "stock"}, {"type": "discard"}):
        found = [m for m in legal if all(m.get(k) == v for k, v in wanted.items())]
        if found:
            return found[0]
    return legal[0]
