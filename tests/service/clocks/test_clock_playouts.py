"""A play-out (every seat of a table absent: the clock plays the rest of its game at once,
in commits of many decisions) goes on without waiting for the next poll, plays the moves
the engine's clocks make, keeps a complete log, and never holds up a clock that fell due at
another table: the timer plays that one first.

These drive the clock timer directly (no worker process) on a real Redis, with the
service's own clock moved by hand (as tests/service/clocks/test_clock_timer.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from mayi_engine import Timeout, deadline, event_to_json, play
from mayi_engine.state import FINISHED_PHASE
from mayi_service.play.games import Games
from mayi_service.storage import codec

POLL = 0.1


class Ticking:
    """A clock moved by hand that also moves a millisecond at each reading, so that every
    commit is stamped with a time of its own and their order shows in the log."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


@pytest.fixture
def parts(clock_parts: Any) -> Any:
    time = Ticking(1_900_000_000.25)
    p = clock_parts(time)
    return p.client, p.tables, p.clock, p.time


def _table(client: Any) -> str:
    body = {
        "variant": "may_i",
        "seats": 4,
        "players": [{"name": f"P{i}"} for i in range(4)],
        "options": {"claim_seconds": 1, "turn_seconds": 1},
    }
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.get_json()
    return str(created.get_json()["game_id"])


def _until_played_out(tables: Games, time: Ticking, game_id: str) -> None:
    """Play the table's clocks one commit at a time, each at its deadline, until a commit
    leaves every seat absent: the play-out has begun, and its next step is due at once."""
    for _ in range(100):
        record = tables.repo.load(game_id)
        time.now = max(time.now, record.deadline) + 0.01
        tables.run_clock(game_id)
        record = tables.repo.load(game_id)
        if all(codec.load_state(record.state).absent):
            assert record.deadline is not None and record.deadline <= time.now, "the rest is due at once"
            return
    raise AssertionError("the seats never became absent")


def _events(tables: Games, game_id: str) -> list[dict[str, Any]]:
    return tables.repo.events_after(game_id, 0, count=1_000_000)


def test_a_play_out_is_played_to_the_end_in_one_tick_with_the_engines_moves(parts: Any) -> None:
    client, tables, clock, time = parts
    game_id = _table(client)
    created = tables.repo.load(game_id)
    start = codec.load_state(created.state)
    _until_played_out(tables, time, game_id)

    clock.tick(tables, POLL)  # no poll's sleep between the steps of a play-out
    record = tables.repo.load(game_id)
    assert record.status == "finished"

    # The moves are the engine's own, each decision timed out at its deadline.
    state, expected = start, []
    while state.phase is not FINISHED_PHASE:
        due = deadline(state)
        assert due is not None
        state, events = play(state, None, Timeout(), due + 0.01)
        expected += [event_to_json(e) for e in events]
    logged = _events(tables, game_id)
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1)), "a complete log, in order"
    moves = [{k: v for k, v in e.items() if k not in ("seq", "time")} for e in logged[created.seq :]]
    assert moves == expected
    assert tables.replay(game_id)["events"] == logged


def test_a_play_outs_rounds_are_archived_once_at_its_end(parts: Any, redis_client: Any) -> None:
    client, tables, _, time = parts
    game_id = _table(client)
    _until_played_out(tables, time, game_id)
    archived = redis_client.hget(tables.repo.game_key(game_id), "archived_to")
    ended = 0
    while tables.repo.load(game_id).status == "playing":
        seq = tables.repo.load(game_id).seq
        tables.run_clock(game_id)
        new = tables.repo.events_after(game_id, seq)
        ended += sum(e["type"] == "round_ended" for e in new)
        if tables.repo.load(game_id).status == "playing":
            # The play-out goes on at once: its rounds stay in the stream until it ends.
            assert redis_client.hget(tables.repo.game_key(game_id), "archived_to") == archived
    assert ended > 1, "the play-out ended several rounds"
    logged = _events(tables, game_id)
    assert int(redis_client.hget(tables.repo.game_key(game_id), "archived_to")) == logged[-1]["seq"]
    assert not redis_client.exists(tables.repo.events_key(game_id)), "the whole log is in the archive"
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))


def test_a_clock_due_at_another_table_is_played_before_a_play_out(parts: Any) -> None:
    client, tables, clock, time = parts
    playing_out = _table(client)
    _until_played_out(tables, time, playing_out)
    seq = tables.repo.load(playing_out).seq

    waiting = _table(client)  # a table of present seats, its first clock due a second later
    time.now = tables.repo.load(waiting).deadline + 0.01
    # Both are due now; the play-out's step since earlier, the other table's clock just now.
    assert tables.repo.load(playing_out).deadline < tables.repo.load(waiting).deadline

    clock.tick(tables, POLL)
    timed = [e for e in _events(tables, waiting) if e.get("timeout")]
    assert timed, "the other table's clock was played"
    steps = tables.repo.events_after(playing_out, seq, count=1_000_000)
    assert steps and tables.repo.load(playing_out).status == "finished"
    assert timed[0]["time"] < steps[0]["time"], "the table's clock first, then the play-out"
