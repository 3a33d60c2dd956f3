"""The JSON of events is pinned: typed event records turn into exactly the JSON the
service has always logged and served.

The engine's events are frozen dataclasses (:mod:`mayi_engine.events`), turned into
JSON once, at the edge (:func:`mayi_engine.event_to_json`). The event logs of the
golden games (replayed from their stored moves) and of seeded games played with the
service clocks (timeouts, absent seats, returns; every kind of event occurs) are
hashed and compared with ``golden/events_sha256.json``. A failure means the JSON of
some event changed: the API's event union (docs/api.md, ``openapi/openapi.json``)
would no longer be true. If the change is deliberate, regenerate the file::

    python tests/engine/test_event_json.py --regenerate
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from mayi_engine import (
    EVENT_TYPES,
    Event,
    Timeout,
    deadline,
    event_to_json,
    get_rules,
    legal_moves,
    play,
    seat_returns,
    start_game,
)
from mayi_engine.events import Discarded
from mayi_engine.moves import move_from_json
from mayi_engine.simulate import next_seat
from mayi_engine.state import Phase

GOLDEN = Path(__file__).parent / "golden"
PINNED = GOLDEN / "events_sha256.json"
CLOCKED_GAMES = 4


def _lines(events: list[Event]) -> list[str]:
    out = []
    for event in events:
        assert isinstance(event, Event) and type(event).type in EVENT_TYPES
        out.append(json.dumps(event_to_json(event), separators=(",", ":"), ensure_ascii=False))
    return out


def golden_log(variant: str) -> list[str]:
    """The event log of the golden game of ``variant``, replayed from its stored moves."""
    golden = json.loads((GOLDEN / f"{variant}_seed.json").read_text())
    state, events = start_game(get_rules(variant), golden["names"], bytes.fromhex(golden["seed"]))
    lines = _lines(events)
    for seat, data in golden["moves"]:
        state, events = play(state, seat, move_from_json(data))
        lines += _lines(events)
    return lines


def clocked_log(variant: str, k: int) -> list[str]:
    """A seeded game of random moves in which the clock often plays for the seats."""
    rng = random.Random(k)
    names = ["a", "b", "c", "d", "e"][: 3 + k % 3]
    state, events = start_game(get_rules(variant), names, bytes([k]) * 32, now=0.0)
    lines = _lines(events)
    now = 0.0
    for _ in range(3000):
        if state.phase is Phase.FINISHED:
            break
        r = rng.random()
        due = deadline(state)
        if r < 0.3 and due is not None:
            now = max(now, due)
            state, events = play(state, None, Timeout(), now)
        else:
            seat = next_seat(state)
            if r < 0.35:
                state, events = seat_returns(state, seat)
                lines += _lines(events)
            legal = legal_moves(state, seat, now)
            if not legal:
                now = max(now, due or now)
                continue
            state, events = play(state, seat, rng.choice(legal), now)
        now += rng.random() * 3
        lines += _lines(events)
    return lines


def logs() -> dict[str, list[str]]:
    out = {variant: golden_log(variant) for variant in ("may_i", "shanghai")}
    for variant in ("may_i", "shanghai"):
        for k in range(CLOCKED_GAMES):
            out[f"{variant}-clocked-{k}"] = clocked_log(variant, k)
    return out


def digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.fixture(scope="module")
def all_logs() -> dict[str, list[str]]:
    return logs()


def test_the_event_json_of_pinned_games_is_unchanged(all_logs: dict[str, list[str]]) -> None:
    pinned = json.loads(PINNED.read_text())
    assert {name: digest(lines) for name, lines in all_logs.items()} == pinned


def test_the_pinned_games_hold_every_kind_of_event(all_logs: dict[str, list[str]]) -> None:
    seen = {json.loads(line)["type"] for lines in all_logs.values() for line in lines}
    assert seen == set(EVENT_TYPES)
    assert any('"timeout":true' in line for lines in all_logs.values() for line in lines)


def test_events_are_frozen_and_print_cards_as_codes() -> None:
    _, events = start_game(get_rules("may_i"), ["A", "B", "C"], bytes(32))
    dealt = events[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        dealt.seat = 2  # type: ignore[misc]
    hand = event_to_json(dealt)["private"]["hand"]
    assert repr(dealt) == f"Dealt(seat=0, hand={tuple(hand)!r})"
    assert repr(Discarded(1, 51, timeout=True)) == "Discarded(seat=1, card='QS', timeout=True)"
    assert repr(Discarded(1, 0)) == "Discarded(seat=1, card='JK')"


def regenerate() -> None:
    PINNED.write_text(json.dumps({name: digest(lines) for name, lines in logs().items()}, indent=2) + "\n")
    print(f"{PINNED}: written")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(__doc__)
    regenerate()
