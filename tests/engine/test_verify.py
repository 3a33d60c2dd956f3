"""Verify, then apply: verifying a move changes nothing and deals nothing, and ``play``
applies exactly what the verify functions accepted."""

from __future__ import annotations

import pytest
from mayi_scenarios import table

from mayi_engine import (
    JOKER,
    MAY_I,
    POLICIES,
    SHANGHAI,
    Discard,
    IllegalMoveError,
    check_move,
    dumps,
    is_legal,
    legal_moves,
    new_game,
    play,
)
from mayi_engine.discarding import verify_discard
from mayi_engine.rng import KeyedRandom
from mayi_engine.simulate import next_seat
from mayi_engine.state import Phase, Setup
from mayi_engine.turns import last_card_problem


def test_check_move_does_not_deal_the_next_round():
    state = table(MAY_I, 2)
    state = state.clone()
    state.phase = Phase.PLAY
    state.actor = state.turn = 0
    state.hands = ((state.hands[0][0],), state.hands[1])
    state.down = (True, False)
    # Dealing round 2 from this "stack" would fail: more jokers than the decks hold.
    state.setup = Setup((None, (JOKER,) * 500))
    out = Discard(state.hands[0][0])
    assert check_move(state, 0, out) is None and is_legal(state, 0, out)
    with pytest.raises(ValueError):
        play(state, 0, out)  # only applying the move deals the next round


@pytest.mark.parametrize("rules", [MAY_I, SHANGHAI])
def test_verifying_changes_nothing_and_play_applies_what_it_accepted(rules):
    state = new_game(rules, ["a", "b", "c", "d"], bytes(32))
    rng = KeyedRandom(bytes(32), "verify")
    for _ in range(400):
        if state.phase is Phase.FINISHED:
            break
        before = dumps(state)
        for seat in range(state.players):
            for move in legal_moves(state, seat):
                check_move(state, seat, move)
        assert dumps(state) == before
        seat = next_seat(state)
        move = POLICIES["random"](state, seat, legal_moves(state, seat), rng)
        state, _ = play(state, seat, move)


def test_the_last_card_rule_is_written_once():
    assert last_card_problem(MAY_I, 0, discarding=True) is None
    assert last_card_problem(MAY_I, 1, discarding=False) is None
    assert "never discard your last card" in (last_card_problem(SHANGHAI, 0, discarding=True) or "")
    assert "may not keep just one" in (last_card_problem(SHANGHAI, 1, discarding=False) or "")
    assert last_card_problem(SHANGHAI, 1, discarding=True) is None
    state = table(SHANGHAI, 3).clone()
    state.phase = Phase.PLAY
    state.hands = ((state.hands[0][0],), *state.hands[1:])
    with pytest.raises(IllegalMoveError) as info:
        verify_discard(state, 0, Discard(state.hands[0][0]), None)
    assert info.value.code == "illegal_discard"
    assert legal_moves(state, 0) == ()  # the generator uses the same rule
