"""The safeguards that make every round end (RULES-SPEC §7 and docs/rules.md)."""

from __future__ import annotations

import pytest
from mayi_scenarios import act, cards, table

from mayi_engine.errors import ConfigError
from mayi_engine.moves import Claim, Discard, TakeDiscard
from mayi_engine.rules import MAY_I, SHANGHAI
from mayi_engine.state import Phase


def test_a_round_where_nobody_draws_from_the_stock_ends_at_max_turns():
    """Two players pass the same card back and forth: the stock never runs out, but
    after ``max_turns`` turns the round ends with nobody out and everybody counts."""
    state = table(MAY_I, 2, round=1, upcard="9C", options={"max_turns": 10})
    state, _ = act(state, 0, Claim())  # the first player takes the first upcard as its draw
    events = []
    for _ in range(10):
        seat = state.actor
        state, made = act(state, seat, Discard(cards("9C")[0]))
        events += made
        if state.round != 1:
            break
        state, made = act(state, state.actor, TakeDiscard())
        events += made
    ended = [e for e in events if e["type"] == "round_ended"]
    assert [e["type"] for e in events if e["type"] == "turn_limit"] == ["turn_limit"]
    assert ended and ended[0]["data"]["out"] is None and ended[0]["data"]["round"] == 1
    assert state.results[0].out == -1 and all(score > 0 for score in state.results[0].scores)
    assert state.round == 2 and state.phase is Phase.FIRST_OFFER


@pytest.mark.parametrize("value", [0, 9, 10001, "20", True])
def test_max_turns_must_be_a_sensible_whole_number(value):
    with pytest.raises(ConfigError, match="max_turns"):
        SHANGHAI.with_options({"max_turns": value})


def test_max_turns_defaults_to_500_and_is_a_table_option():
    assert MAY_I.max_turns == 500 and SHANGHAI.max_turns == 500
    assert MAY_I.with_options({"max_turns": 40}).table_options() == {"max_turns": 40}
