"""A policy over the environments' actions plays as an SDK bot: the same observation and
actions from the view a bot is shown as the environment gives."""

from __future__ import annotations

import random

import numpy as np
import pytest

from mayi_engine import get_rules, legal_moves, new_game, play
from mayi_engine.simulate import next_seat
from mayi_rl.bot import PileTracker, PolicyBot
from mayi_rl.encoding import layout
from mayi_sdk.local import play_local, seat_view


@pytest.mark.parametrize(
    ("variant", "players", "options"), [("may_i", 4, None), ("shanghai", 3, {"free_goal_order": True})]
)
def test_the_bot_sees_what_the_environment_shows(variant: str, players: int, options: dict[str, bool] | None) -> None:
    rules = get_rules(variant, options)
    lay = layout(rules, players)
    bots = [PolicyBot(lambda o, m: 0, variant, players, options=options) for _ in range(players)]
    rng = random.Random(7)
    state = new_game(rules, [f"p{i}" for i in range(players)], bytes(32))
    for _ in range(1500):
        if state.finished:
            break
        actor = next_seat(state)
        for seat in range(players):  # every seat is shown every view here: its tracker knows the pile
            view = seat_view(state, seat)
            pile = bots[seat].pile.update(view.raw)
            assert np.array_equal(lay.observe_view(view.raw, pile), lay.observe(state, seat))
        view = seat_view(state, actor)
        assert sorted(bots[actor].legal_actions(view)) == sorted(lay.legal_actions(state, actor))
        moves = legal_moves(state, actor)
        state, _ = play(state, actor, moves[rng.randrange(len(moves))])


@pytest.mark.parametrize(
    ("variant", "opponents"), [("may_i", ["greedy", "strong", "greedy"]), ("shanghai", ["strong", "greedy"])]
)
def test_a_policy_plays_a_local_game_as_a_bot(variant: str, opponents: list[str]) -> None:
    rng = np.random.default_rng(0)

    def policy(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    game = play_local(PolicyBot(policy, variant, len(opponents) + 1), opponents, variant=variant, seed=1)
    assert game.failures == [0] * (len(opponents) + 1), game.errors
    assert game.rounds == len(get_rules(variant).rounds)


def test_a_masked_action_names_the_mask() -> None:
    bot = PolicyBot(lambda o, m: int(np.flatnonzero(m == 0)[0]), "may_i", 3)
    state = new_game(get_rules("may_i"), ["a", "b", "c"], bytes(32))
    with pytest.raises(ValueError, match="masked"):
        bot.decide(seat_view(state, state.actor))


def test_the_pile_tracker_follows_discards_and_rebuilds() -> None:
    t = PileTracker()
    base = {"round": {"number": 1}}
    assert t.update({**base, "discard_count": 1, "discard_top": "7C"}) == ["7C"]
    assert t.update({**base, "discard_count": 2, "discard_top": "9H"}) == ["7C", "9H"]
    assert t.update({**base, "discard_count": 1, "discard_top": "7C"}) == ["7C"]  # the 9H taken
    assert t.update({**base, "discard_count": 1, "discard_top": "KD"}) == ["KD"]  # rebuilt, a new top
    assert t.update({"round": {"number": 2}, "discard_count": 1, "discard_top": "2S"}) == ["2S"]
