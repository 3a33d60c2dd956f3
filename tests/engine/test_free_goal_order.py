"""Shanghai's house option "free goal order": each player meets the goals (the rounds'
contracts) in any order, one per round (docs/rules.md, E7)."""

from __future__ import annotations

from mayi_scenarios import act, down, refused, table

from mayi_engine import goals_for, legal_moves
from mayi_engine.moves import GoDown, TakeDiscard
from mayi_engine.rules import SHANGHAI
from mayi_engine.state import dumps, loads

FREE = {"free_goal_order": True}
#: Seat 0 holds two runs (round 3's goal) and two books (round 1's goal) at once.
HANDS = ["4H 5H 6H 7H 8C 9C TC JC 2S 3D", "", ""]


def _drawn(options=FREE):
    state = table(SHANGHAI, 3, hands=HANDS, upcard="KD", options=options)
    state, _ = act(state, 0, TakeDiscard())
    return state


def test_a_later_goal_may_be_met_in_the_first_round():
    state = _drawn()
    state, events = act(state, 0, down("4H 5H 6H 7H", "8C 9C TC JC"))
    assert state.down[0] and state.goals_done[0] == (2,)
    went = next(e for e in events if e["type"] == "went_down")
    assert went["data"]["contract"]["text"] == "2 runs"


def test_without_the_option_only_the_rounds_contract_counts():
    state = _drawn(options=None)
    refused(state, 0, down("4H 5H 6H 7H", "8C 9C TC JC"), "illegal_meld", "Round 1's contract is 2 books")


def test_a_goal_met_once_is_not_met_again():
    state = _drawn().clone()
    state.goals_done = ((2,), (), ())  # as if seat 0 had met its two runs in an earlier round
    refused(state, 0, down("4H 5H 6H 7H", "8C 9C TC JC"), "illegal_meld", "none of your goals not yet met", "2 books")
    assert all(contract.runs != 2 or contract.books for _, contract in goals_for(state, 0))
    assert len(goals_for(state, 0)) == 7


def test_legal_moves_offer_one_way_down_for_each_goal_the_hand_meets():
    hands = ["4H 5H 6H 7H 8C 9C TC JC 2S 2D", "", ""]
    state = table(SHANGHAI, 3, hands=hands, upcard="2C", options=FREE)
    state, _ = act(state, 0, TakeDiscard())  # 2C: now also a book of twos
    downs = [m for m in legal_moves(state, 0) if isinstance(m, GoDown)]
    shapes = sorted((sum(len(set(c >> 2 for c in m)) == 1 for m in d.melds), len(d.melds)) for d in downs)
    # a book and a run, two runs, and a book and two runs (all eleven cards: out): each once
    assert shapes == [(0, 2), (1, 2), (1, 3)]
    for move in downs:
        after, _ = act(state, 0, move)
        assert len(after.results) == 1 if len(move.melds) == 3 else after.down[0] and len(after.goals_done[0]) == 1


def test_the_view_shows_each_seats_goals_met_only_with_the_option():
    from mayi_engine.views import player_view

    state, _ = act(_drawn(), 0, down("4H 5H 6H 7H", "8C 9C TC JC"))
    assert player_view(state, 1)["goals_done"] == [[3], [], []]
    assert "goals_done" not in player_view(_drawn(options=None), 1)


def test_goals_met_survive_serialisation():
    state, _ = act(_drawn(), 0, down("4H 5H 6H 7H", "8C 9C TC JC"))
    again = loads(dumps(state))
    assert again.goals_done == state.goals_done and again.rules.free_goal_order
