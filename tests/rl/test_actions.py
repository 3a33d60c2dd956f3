"""Every legal move of the engine is exactly one unmasked action, and that action is that
move: over random games of both variants at every player count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mayi_engine import GoDown, LayOff, State, get_rules, legal_moves
from mayi_rl.encoding import every_table, layout

Walk = Callable[..., Iterator[tuple[State, int]]]


def kind(move: object) -> str:
    if isinstance(move, LayOff):
        return "pair" if len(move.parts) == 2 else "lay_off"
    return type(move).__name__


@pytest.mark.parametrize(("variant", "players"), every_table())
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32))
def test_legal_moves_and_actions_are_one_to_one(games: Walk, variant: str, players: int, seed: int) -> None:
    rules = get_rules(variant)
    lay = layout(rules, players)
    seen: Counter[str] = Counter()
    for state, seat in games(rules, players, seed):
        legal = legal_moves(state, seat)
        actions = lay.legal_actions(state, seat)
        assert len(set(legal)) == len(legal) == len(actions), (legal, actions)
        assert set(actions.values()) == set(legal)
        for action, move in actions.items():
            assert 0 <= action < lay.actions
            assert lay.encode(state, seat, move) == action  # ... and back
            seen[kind(move)] += 1
        mask = lay.mask(actions)
        assert mask.dtype == np.int8
        assert sorted(np.flatnonzero(mask)) == sorted(actions)
    assert seen["GoDown"] and seen["Discard"] and seen["Claim"]


def test_the_two_card_go_outs_of_shanghai_are_actions(games: Walk) -> None:
    """Where a player may never keep one card, the last two go out together: pairs of lay-offs."""
    rules = get_rules("shanghai")
    lay = layout(rules, 4)
    pairs = 0
    for seed in range(40):
        for state, seat in games(rules, 4, seed):
            for action, move in lay.legal_actions(state, seat).items():
                if isinstance(move, LayOff) and len(move.parts) == 2:
                    pairs += 1
                    assert action >= lay.pair_base
                    assert lay.encode(state, seat, move) == action
        if pairs:
            break
    assert pairs


def test_free_goal_order_goes_down_by_goal(games: Walk) -> None:
    rules = get_rules("shanghai", {"free_goal_order": True})
    lay = layout(rules, 3)
    goals = set()
    for seed in range(3):
        for state, seat in games(rules, 3, seed):
            actions = lay.legal_actions(state, seat)
            assert set(actions.values()) == set(legal_moves(state, seat))
            goals.update(a - lay.go_down_base for a, m in actions.items() if isinstance(m, GoDown))
    assert len(goals) > 1
