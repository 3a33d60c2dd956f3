"""Observations hold nothing hidden: each is what the seat's view shows (and the face-up
discard pile), and swapping the hidden cards (the other hands, the stock) changes nothing."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mayi_engine import State, card_codes, get_rules, player_view
from mayi_rl.encoding import CARDS, card_index, every_table, layout

Walk = Callable[..., Iterator[tuple[State, int]]]


def hidden_shuffled(state: State, seat: int, rng: random.Random) -> State:
    """``state`` with the cards ``seat`` cannot see dealt anew: the other hands (same sizes) and the stock."""
    hidden = [c for i, h in enumerate(state.hands) if i != seat for c in h] + list(state.stock)
    rng.shuffle(hidden)
    hands = []
    for i, h in enumerate(state.hands):
        if i == seat:
            hands.append(h)
        else:
            hands.append(tuple(sorted(hidden[: len(h)])))
            hidden = hidden[len(h) :]
    other = state.clone()
    other.hands = tuple(hands)
    other.stock = tuple(hidden)
    return other


@pytest.mark.parametrize(("variant", "players"), every_table())
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32))
def test_an_observation_is_the_seats_view(games: Walk, variant: str, players: int, seed: int) -> None:
    rules = get_rules(variant)
    lay = layout(rules, players)
    rng = random.Random(seed)
    for step, (state, _actor) in enumerate(games(rules, players, seed)):
        if step % 7:  # every seventh state, for every seat
            continue
        for seat in range(players):
            obs = lay.observe(state, seat)
            assert obs.shape == (lay.size,) and obs.dtype == np.float32
            view = player_view(state, seat)
            # The same array from the view alone and the face-up pile (public: every discard was seen).
            assert np.array_equal(obs, lay.observe_view(view, card_codes(state.discard))), (variant, players, step)
            # The hidden cards do not count.
            assert np.array_equal(obs, lay.observe(hidden_shuffled(state, seat, rng), seat))
            parts = lay.split(obs)
            assert parts["hand"].sum() == len(view["hand"])
            assert parts["seats"][0][0] == len(view["hand"])


def test_the_pile_part_counts_only_face_up_discards(games: Walk) -> None:
    rules = get_rules("may_i")
    lay = layout(rules, 4)
    for state, seat in games(rules, 4, 3):
        parts = lay.split(lay.observe(state, seat))
        pile = list(state.discard[:-1] if state.upcard is not None else state.discard)
        expected = np.zeros(CARDS)
        for c in pile:
            expected[card_index(c)] += 1
        assert np.array_equal(parts["discard_pile"], expected)
        if state.upcard is not None:
            assert parts["upcard"][card_index(state.upcard)] == 1 and parts["upcard"].sum() == 1
