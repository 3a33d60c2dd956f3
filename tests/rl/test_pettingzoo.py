"""The PettingZoo environments pass PettingZoo's own tests, and play games to the end
with the rewards docs/ai.md promises."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from mayi_rl import may_i_v0, shanghai_v0
from mayi_rl.aec import MayIEnv
from mayi_rl.rewards import place_rewards, round_rewards

MODULES = {"may_i": may_i_v0, "shanghai": shanghai_v0}


@pytest.mark.parametrize(("variant", "players", "obs_type"), [("may_i", 3, "flat"), ("shanghai", 4, "dict")])
def test_pettingzoo_api_test(variant: str, players: int, obs_type: str) -> None:
    api_test(MODULES[variant].env(players=players, obs_type=obs_type), num_cycles=300)


@pytest.mark.parametrize(("variant", "players"), [("may_i", 2), ("shanghai", 5)])
def test_pettingzoo_seed_test(variant: str, players: int) -> None:
    seed_test(lambda: MODULES[variant].env(players=players), num_cycles=300)


def play_out(env: MayIEnv, seed: int) -> dict[str, float]:
    """One game of random unmasked actions; each agent's rewards summed."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    summed = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        summed[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    return summed


@pytest.mark.parametrize(("variant", "players"), [("may_i", 4), ("shanghai", 3)])
def test_a_game_ends_with_the_documented_rewards(variant: str, players: int) -> None:
    env = MODULES[variant].env(players=players, rounds=2)
    summed = play_out(env, seed=5)
    state = env.game
    assert state is not None and state.finished and len(state.results) == 2
    expected = np.zeros(players)
    for result in state.results:
        expected += round_rewards(result.scores)
    expected += place_rewards(state.totals)
    assert np.allclose([summed[a] for a in env.possible_agents], expected)
    assert abs(sum(summed.values())) < 1e-9  # zero-sum
    assert not env.agents  # every agent stepped out with None


def test_a_masked_action_is_refused_naming_the_mask() -> None:
    env = may_i_v0.env(players=3)
    env.reset(seed=1)
    obs, *_ = env.last()
    masked = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="masked"):
        env.step(masked)


def test_the_same_seed_deals_the_same_game() -> None:
    a, b = shanghai_v0.env(players=4), shanghai_v0.env(players=4)
    assert play_out(a, 9) == play_out(b, 9)
    assert a.game is not None and b.game is not None and a.game.totals == b.game.totals
