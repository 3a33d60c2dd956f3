"""The clock timer of the game workers plays each clock at its exact deadline, not at the
whole second after it when RQ's scheduler queues the game's job, once per deadline, and
says how long it may sleep.

These drive the clock code directly (no worker process) on a real Redis and a real RQ
queue, with the service's own clock moved by hand (as tests/service/clocks/test_clock_jobs.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from servers import Time

from mayi_service.play.games import Games

POLL = 0.1


@pytest.fixture
def parts(clock_parts: Any) -> Any:
    time = Time(1_900_000_000.25)  # a quarter past a whole second: RQ's job comes 0.75 s after the deadline
    p = clock_parts(time)
    return p.client, p.tables, p.clock, p.time


def _table(client: Any) -> str:
    body = {
        "variant": "may_i",
        "seats": 3,
        "players": [{"name": n} for n in ("Ann", "Bob", "Cy")],
        "options": {"claim_seconds": 10, "turn_seconds": 60},
    }
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.get_json()
    return str(created.get_json()["game_id"])


def _timeouts(tables: Games, game_id: str) -> list[dict[str, Any]]:
    return [e for e in tables.repo.events_after(game_id, 0) if e.get("timeout")]


def test_the_timer_plays_a_clock_at_its_deadline_before_the_jobs_whole_second(parts: Any) -> None:
    client, tables, clock, time = parts
    game_id = _table(client)
    record = tables.repo.load(game_id)
    deadline, job_at = record.deadline, record.clock_at
    assert job_at > deadline + 0.5, "the job's time is the deadline rounded up to a whole second"

    time.now = deadline - 0.05
    wait = clock.tick(tables, POLL)
    assert not _timeouts(tables, game_id), "not due yet"
    assert 0 < wait <= 0.05 + 1e-6, "the timer sleeps until the deadline, not a whole poll"

    time.now = deadline + 0.01  # the deadline has passed; the job's whole second has not
    clock.tick(tables, POLL)
    played = _timeouts(tables, game_id)
    assert played and all(e["time"] < job_at for e in played)
    assert abs(played[0]["time"] - (deadline + 0.01)) < 1e-3

    # The job of that whole second, when RQ runs it, finds nothing due and moves the clock on.
    time.now = job_at + 0.5
    clock.run(tables, game_id, int(job_at))
    assert _timeouts(tables, game_id) == played
    assert tables.repo.load(game_id).clock_at > job_at


def test_a_deadline_is_played_once_however_many_ticks_see_it(parts: Any) -> None:
    client, tables, clock, time = parts
    game_id = _table(client)
    deadline = tables.repo.load(game_id).deadline
    time.now = deadline + 0.01
    clock.tick(tables, POLL)
    first = tables.repo.load(game_id).version
    for _ in range(3):  # the next deadline is far: later ticks play nothing
        time.now += POLL
        clock.tick(tables, POLL)
    assert tables.repo.load(game_id).version == first


def test_the_timers_of_several_workers_claim_each_deadline_once(parts: Any) -> None:
    client, tables, _, _ = parts
    game_id = _table(client)
    deadline = tables.repo.load(game_id).deadline
    assert tables.repo.claim_deadline(game_id, deadline) is True
    assert tables.repo.claim_deadline(game_id, deadline) is False, "a second timer leaves it to the first"
    assert tables.repo.claim_deadline(game_id, deadline + 1.0) is True, "the next deadline is a claim of its own"
