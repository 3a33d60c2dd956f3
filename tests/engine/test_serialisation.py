"""The state's JSON: versioned, compact, exact (STYLE 10).

Random playouts are covered by ``test_properties.test_serialisation_round_trips``;
here are the size goal, the version check and the corners a random playout
rarely reaches (stacked decks, table options, clocks, absent seats, the end).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from players import POLICIES

from mayi_engine import apply_move, deadline, legal_moves, new_game
from mayi_engine.cards import parse_cards
from mayi_engine.errors import ConfigError
from mayi_engine.moves import Timeout
from mayi_engine.rng import KeyedRandom
from mayi_engine.rules import MAY_I, SHANGHAI, Rules, get_rules
from mayi_engine.simulate import next_seat
from mayi_engine.state import STATE_VERSION, Setup, State, dumps, from_json, loads, to_json

#: The size goal for one stored state (bytes of ``dumps``).
MAX_STATE_BYTES = 4096


def play(state: State, steps: int, seed: bytes = bytes(32), stop_at_round_end: bool = False) -> list[State]:
    rng = KeyedRandom(seed, "serialisation")
    states = [state]
    for _ in range(steps):
        if state.finished or (stop_at_round_end and state.round != states[0].round):
            break
        seat = next_seat(state)
        bot = "greedy" if seat % 2 else "random"
        state = apply_move(state, seat, POLICIES[bot](state, seat, legal_moves(state, seat), rng))
        states.append(state)
    return states


def assert_round_trips(state: State) -> None:
    text = dumps(state)
    copy = loads(text)
    assert copy == state
    assert to_json(copy) == to_json(state)
    assert dumps(copy) == text


def test_a_six_player_may_i_state_in_round_7_is_small(record_property: Any) -> None:
    """The biggest May I table (6 players, 3 decks, 12-card hands) in its last round."""
    names = [f"player-{i}" for i in range(6)]
    start = new_game(MAY_I, names, bytes(range(32)), start_round=7)
    states = play(start, 2000, stop_at_round_end=True)
    sizes = [len(dumps(s).encode()) for s in states]
    after_100 = sizes[min(100, len(sizes) - 1)]
    record_property("state_bytes_dealt", sizes[0])
    record_property("state_bytes_after_100_moves", after_100)
    record_property("state_bytes_max", max(sizes))
    print(f"6-player May I, round 7: {sizes[0]} bytes dealt, {after_100} after 100 moves, at most {max(sizes)}")
    assert max(sizes) <= MAX_STATE_BYTES


def test_a_whole_eight_player_shanghai_game_stays_small() -> None:
    start = new_game(SHANGHAI, [f"player-{i}" for i in range(8)], bytes(range(32)))
    states = play(start, 20000)
    assert states[-1].finished
    assert max(len(dumps(s)) for s in states[:: max(1, len(states) // 200)] + states[-1:]) <= MAX_STATE_BYTES


def test_json_is_versioned_and_compact() -> None:
    state = new_game(MAY_I, ["a", "b", "c"], bytes(32))
    text = dumps(state)
    assert text.startswith('{"v":1,')
    assert ": " not in text and ", " not in text
    assert to_json(state)["v"] == STATE_VERSION == 1


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_another_version_is_refused(version: object) -> None:
    data = to_json(new_game(MAY_I, ["a", "b", "c"], bytes(32)))
    data["v"] = version
    with pytest.raises(ConfigError) as info:
        from_json(data)
    assert info.value.code == "state_version"
    with pytest.raises(ConfigError):
        loads(json.dumps(data))


def test_a_state_without_a_version_is_refused() -> None:
    data = to_json(new_game(MAY_I, ["a", "b", "c"], bytes(32)))
    del data["v"]
    with pytest.raises(ConfigError):
        from_json(data)


def test_an_unknown_variant_is_refused() -> None:
    data = to_json(new_game(MAY_I, ["a", "b", "c"], bytes(32)))
    data["variant"] = "gin"
    with pytest.raises(ConfigError) as info:
        from_json(data)
    assert "gin" in info.value.message


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("may_i", {"claim_seconds": 5, "turn_seconds": 30.5, "max_reshuffles": 0}),
        ("shanghai", {"all_out_final": True, "bury_joker_upcard": False}),
        ("shanghai", {"max_reshuffles": 7, "all_out_final": False}),
    ],
)
def test_table_options_survive(variant: str, options: dict[str, Any]) -> None:
    rules = get_rules(variant, options)
    state = play(new_game(rules, ["a", "b", "c", "d"], bytes(range(32)), start_round=len(rules.rounds)), 60)[-1]
    copy = loads(dumps(state))
    assert copy.rules == rules
    assert copy.rules.rounds[-1] == rules.rounds[-1]
    assert_round_trips(state)


def test_stacked_decks_survive() -> None:
    top = parse_cards(["AS", "AS", "JK", "KH", "2C", "3C", "4C", "5C"])
    state = new_game(MAY_I, ["a", "b"], bytes(32), stacked=[top, None, top])
    assert "stacked" in to_json(state)
    for s in play(state, 3000)[::50]:
        assert_round_trips(s)
        assert loads(dumps(s)).stacked == (top, None, top)
    assert "stacked" not in to_json(new_game(MAY_I, ["a", "b"], bytes(32)))


def test_test_set_up_is_held_beside_the_state_and_a_production_game_has_none() -> None:
    plain = new_game(MAY_I, ["a", "b"], bytes(32))
    assert plain.setup is None and plain.stacked == () and plain.start_round == 1
    assert to_json(plain)["start_round"] == 1  # the stored form is unchanged
    top = parse_cards(["AS", "KH"])
    table = new_game(MAY_I, ["a", "b"], bytes(32), stacked=[None, top], start_round=2)
    assert table.setup == Setup((None, top), 2) and table.stacked == (None, top) and table.start_round == 2
    assert loads(dumps(table)).setup == table.setup
    assert new_game(MAY_I, ["a", "b"], bytes(32), stacked=[None, None]).setup is None


def test_clocks_timeouts_and_absent_seats_survive() -> None:
    state = new_game(SHANGHAI, ["a", "b", "c"], bytes(32), now=1_700_000_000.25)
    for _ in range(12):  # nobody answers: the service plays for every seat
        due = deadline(state)
        assert due is not None
        state = apply_move(state, None, Timeout(), due)
        assert_round_trips(state)
    assert any(state.absent)
    assert any(state.timeouts)
    assert isinstance(loads(dumps(state)).turn_deadline, float)


@pytest.mark.parametrize("rules", [MAY_I, SHANGHAI], ids=lambda r: r.name)
def test_every_state_of_a_whole_game_survives(rules: Rules) -> None:
    states = play(new_game(rules, ["a", "b", "c", "d"], bytes(range(3, 35))), 20000)
    assert states[-1].finished
    for s in states[::7] + states[-1:]:
        assert_round_trips(s)


def test_a_loaded_state_has_an_empty_cache() -> None:
    state = new_game(MAY_I, ["a", "b", "c"], bytes(32))
    legal_moves(state, 0)
    assert state._legal
    assert loads(dumps(state))._legal == {}
    assert "_legal" not in to_json(state)
