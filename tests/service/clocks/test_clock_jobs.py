"""One clock job per game: scheduling decided atomically with each commit, stale jobs
doing nothing, the sweeper taking over a lost clock, and absent seats coming back.

These drive the clock code directly (no worker process) on a real Redis and a real
RQ queue, with the service's own clock moved by hand.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from http_moves import auth, move_request
from rq import Queue
from rq.registry import ScheduledJobRegistry
from servers import Time

from mayi_engine.state import loads
from mayi_service.play.clock import job_id


@pytest.fixture
def parts(clock_parts: Any) -> Any:
    """The app with clock jobs on, its Games and Clock sharing a hand-moved time."""
    time = Time(1_900_000_000.0)
    p = clock_parts(time)
    return p.client, p.tables, p.clock, p.queue, p.time


def _jobs(queue: Queue, game_id: str) -> list[str]:
    return [j for j in ScheduledJobRegistry(queue=queue).get_job_ids() if j.startswith(f"clock-{game_id}-")]


def _create(client, **options: Any) -> tuple[str, list[str]]:
    body = {
        "variant": "shanghai",
        "seats": 3,
        "players": [{"name": n} for n in ("Ann", "Bob", "Cy")],
        "options": {"claim_seconds": 10, "turn_seconds": 60, **options},
    }
    created = client.post("/v1/games", json=body).get_json()
    return created["game_id"], [s["token"] for s in created["seats"]]


def _act(client, game_id: str, tokens: list[str], seat: int, kind: str) -> dict:
    view = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).get_json()
    move = next(m for m in view["legal"] if m["type"] == kind)
    path, body = move_request(move)
    response = client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(tokens[seat]))
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_a_game_has_exactly_one_clock_job_at_its_deadline_whatever_moves_are_made(parts):
    client, tables, _, queue, time = parts
    game_id, tokens = _create(client)
    for turn in range(6):
        record = tables.repo.load(game_id)
        state = loads(record.state)
        jobs = _jobs(queue, game_id)
        assert jobs == [job_id(game_id, int(record.clock_at))], f"turn {turn}: {jobs}"
        # The one job runs by the deadline (rounded up): at it, or earlier if the deadline
        # has moved later since (that job then moves the clock on without doing anything).
        assert record.clock_at <= math.ceil(record.deadline)
        time.now += 1
        for seat in range(3):
            if seat != state.turn:
                _act(client, game_id, tokens, seat, "claim")  # pass or claim: the first listed
        _act(client, game_id, tokens, state.turn, "draw")
        view = _act(client, game_id, tokens, state.turn, "discard")
        assert view["version"] > record.version
    assert len(_jobs(queue, game_id)) == 1


def test_a_stale_job_does_nothing_and_the_live_job_moves_the_clock(parts):
    client, tables, clock, queue, time = parts
    game_id, _ = _create(client)
    first = int(tables.repo.load(game_id).clock_at)
    clock.run(tables, game_id, first - 7)  # a job that an earlier deadline replaced
    assert int(tables.repo.load(game_id).clock_at) == first and _jobs(queue, game_id) == [job_id(game_id, first)]
    time.now = first + 0.5  # the claim window has closed: the live job passes for everyone
    ScheduledJobRegistry(queue=queue).remove(job_id(game_id, first))  # RQ takes the job to run it
    clock.run(tables, game_id, first)
    record = tables.repo.load(game_id)
    events = tables.repo.events_after(game_id, 0)
    assert [e["type"] for e in events if e.get("timeout")] == ["passed", "passed"]
    assert record.clock_at == math.ceil(record.deadline) > first
    assert _jobs(queue, game_id) == [job_id(game_id, int(record.clock_at))]


def test_the_sweeper_takes_over_a_game_whose_job_was_lost(parts):
    client, tables, clock, queue, time = parts
    game_id, _ = _create(client)
    at = int(tables.repo.load(game_id).clock_at)
    ScheduledJobRegistry(queue=queue).remove(job_id(game_id, at), delete_job=True)  # the job is lost
    time.now = at + 1
    assert clock.sweep(tables) == 0, "not overdue yet: the job may still be running"
    time.now = at + 10
    assert clock.sweep(tables) == 1
    record = tables.repo.load(game_id)
    assert record.clock_at > at and _jobs(queue, game_id) == [job_id(game_id, int(record.clock_at))]
    assert any(e.get("timeout") for e in tables.repo.events_after(game_id, 0))


def test_an_absent_seat_that_acts_is_back_and_its_move_is_applied(parts):
    """RULES-SPEC §9: an absent seat is played for at once until it acts again; its own
    request must not be pre-empted by the service playing for it."""
    client, tables, _, _, time = parts
    game_id, tokens = _create(client, claim_seconds=1, turn_seconds=1)
    # Nobody acts: after three turn timeouts in a row the seat on turn is absent.
    for _ in range(40):
        time.now += 2
        tables.run_clock(game_id)
        state = loads(tables.repo.load(game_id).state)
        if any(state.absent):
            break
    absent = state.absent.index(True)
    headers = auth(tokens[absent])
    assert client.get(f"/v1/games/{game_id}", headers=headers).get_json()["seats"][absent]["absent"]
    # The others play on (the clock stopped) until the absent seat has a decision of its own.
    for _ in range(30):
        view = client.get(f"/v1/games/{game_id}", headers=headers).get_json()
        if view["legal"]:
            break
        other = next(
            seat
            for seat in range(3)
            if seat != absent and client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).get_json()["legal"]
        )
        legal = client.get(f"/v1/games/{game_id}", headers=auth(tokens[other])).get_json()["legal"]
        path, body = move_request(next((m for m in legal if m["type"] in ("claim", "draw", "discard")), legal[0]))
        assert client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(tokens[other])).status_code == 200
    assert view["legal"], "the absent seat never had a decision"
    path, body = move_request(view["legal"][-1])
    response = client.post(f"/v1/games/{game_id}/{path}", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()
    assert not response.get_json()["seats"][absent]["absent"]
    events = tables.repo.events_after(game_id, 0)
    returned = [e for e in events if e["type"] == "seat_returned"]
    assert [e["seat"] for e in returned] == [absent]
    own = [e for e in events if e["seq"] > returned[0]["seq"] and e["seat"] == absent]
    assert own and not own[0].get("timeout"), "its own move was applied, not one played for it"
