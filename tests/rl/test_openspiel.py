"""The OpenSpiel games: registered with parameters, OpenSpiel's own random-simulation test,
chance nodes for every card dealt or drawn, resampling from an information state, and
OpenSpiel's ISMCTS bot finishing games against the reference bots."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts

from mayi_engine import get_rules
from mayi_rl import openspiel
from mayi_rl.encoding import CARDS, layout


@pytest.mark.parametrize(
    ("name", "serialize"),
    [("python_may_i(players=2,rounds=2)", True), ("python_shanghai(players=3,rounds=1)", False)],
)
def test_openspiel_random_sim_test(name: str, serialize: bool) -> None:
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=1, serialize=serialize, verbose=False)


def test_the_games_are_registered_with_their_parameters() -> None:
    names = pyspiel.registered_names()
    assert "python_may_i" in names and "python_shanghai" in names
    game = pyspiel.load_game("python_shanghai(players=5)")
    assert game.num_players() == 5
    assert game.num_distinct_actions() == layout(get_rules("shanghai"), 5).actions
    assert game.max_chance_outcomes() == CARDS
    assert game.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    with pytest.raises(ValueError, match="players"):
        pyspiel.load_game("python_may_i(players=7)")


def random_until(state: openspiel.MayIState, rng: np.random.Generator, stop: object) -> openspiel.MayIState:
    while not state.is_terminal() and not stop(state):  # type: ignore[operator]
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            assert abs(sum(probs) - 1) < 1e-9
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_every_card_dealt_and_drawn_is_a_chance_outcome() -> None:
    game = pyspiel.load_game("python_may_i(players=2,rounds=1)")
    state = game.new_initial_state()
    deal = 2 * 10 + 1  # two hands of 10, then the upcard
    for _ in range(deal):
        assert state.is_chance_node()
        state.apply_action(state.chance_outcomes()[0][0])
    assert not state.is_chance_node()
    # Play on at random, through a stock rebuilt from the pile, to the end.
    rng = np.random.default_rng(4)
    rebuilt = False
    while not state.is_terminal():
        state = random_until(state, rng, lambda s: s.d.engine.reshuffles > 0)
        rebuilt = rebuilt or state.d.engine.reshuffles > 0
        if not state.is_terminal():
            state = random_until(state, rng, lambda s: False)
    assert rebuilt
    assert sum(state.returns()) == pytest.approx(0)


def test_resampling_keeps_what_the_player_knows() -> None:
    game = pyspiel.load_game("python_shanghai(players=4,rounds=1)")
    rng = np.random.default_rng(2)
    state = random_until(game.new_initial_state(), rng, lambda s: len(s.history()) > 160 and not s.is_chance_node())
    assert not state.is_terminal()
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    worlds = [state.resample_from_infostate(player, sampler) for _ in range(5)]
    for world in worlds:
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.observation_string(player) == state.observation_string(player)
        assert np.array_equal(world.observation_tensor(player), state.observation_tensor(player))
        assert world.d.engine.hands[player] == state.d.engine.hands[player]
        for seat in range(4):
            assert len(world.d.engine.hands[seat]) == len(state.d.engine.hands[seat])
            known = state.d.known[seat]
            held = [0] * CARDS
            for c in world.d.engine.hands[seat]:
                held[openspiel.card_index(c)] += 1
            assert all(h >= k for h, k in zip(held, known, strict=True))
        assert sorted(c for h in world.d.engine.hands for c in h) + sorted(world.d.engine.stock) != []
    others = [tuple(w.d.engine.hands[s] for s in range(4) if s != player) for w in worlds]
    assert len(set(others)) > 1  # the hidden cards are dealt anew


def test_the_observation_tensor_is_the_layouts() -> None:
    game = pyspiel.load_game("python_may_i(players=3)")
    state = random_until(game.new_initial_state(), np.random.default_rng(1), lambda s: len(s.history()) > 80)
    lay = layout(get_rules("may_i"), 3)
    for p in range(3):
        assert np.array_equal(np.array(state.observation_tensor(p)), lay.observe(state.d.engine, p))
        assert len(state.information_state_tensor(p)) == lay.size + 2 * 3 * CARDS


@pytest.mark.parametrize("name", ["python_may_i(players=3,rounds=1)", "python_shanghai(players=4,rounds=1)"])
def test_ismcts_finishes_a_game_against_the_reference_bots(name: str) -> None:
    game = pyspiel.load_game(name)
    bot = ismcts.ISMCTSBot(
        game,
        openspiel.HandEvaluator(),
        uct_c=2.0,
        max_simulations=20,
        random_state=np.random.RandomState(1),
        allow_inconsistent_action_sets=True,  # another seat's moves differ between the worlds sampled
    )
    others = ["strong", "greedy", "strong"][: game.num_players() - 1]
    players = [openspiel.spiel_player(bot)] + [openspiel.reference_player(b, seed=i) for i, b in enumerate(others)]
    final = openspiel.play_game(game, players, seed=3)
    assert final.is_terminal()
    assert len(final.d.engine.results) == 1
    assert sum(final.returns()) == pytest.approx(0)
