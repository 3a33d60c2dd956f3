"""Playing the OpenSpiel games: OpenSpiel's bots and the reference bots at one table.

A :data:`Player` chooses an action for the seat to act; :func:`reference_player` and
:func:`spiel_player` make one from a reference (SDK) bot or an OpenSpiel bot, and
:func:`play_game` plays a game with them. :class:`HandEvaluator` is a cheap leaf
evaluator for OpenSpiel's MCTS and ISMCTS bots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .openspiel_game import MayIGame
from .openspiel_state import MayIState
from .rewards import place_rewards, round_rewards

__all__ = ["HandEvaluator", "Player", "play_game", "reference_player", "spiel_player"]

#: A player of these games: chooses an action for the seat to act in a state.
Player = Callable[[MayIState], int]


class HandEvaluator:
    """A leaf evaluator for OpenSpiel's MCTS and ISMCTS bots: the returns as if the round (and
    the game) ended now, every hand scored; uniform priors. Cheap: no rollout."""

    def evaluate(self, state: MayIState) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        s = state.d.engine
        rules = state.rules
        points = [rules.hand_score(h) for h in s.hands]
        values = np.array(round_rewards(points))
        for result in s.results:
            values += round_rewards(result.scores)
        values += place_rewards([t + p for t, p in zip(s.totals, points, strict=True)])
        return values

    def prior(self, state: MayIState) -> list[tuple[int, float]]:
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


def reference_player(bot: Any, seed: int = 0) -> Player:
    """A reference bot of ``mayi_bots`` (by name: ``"strong"``, ``"greedy"``...), or any SDK
    ``Bot``, as a player: it sees the seat's view, as on a server."""
    from mayi_sdk.local import bot_policy

    if isinstance(bot, str):
        from mayi_bots import make

        bot = make(bot, seed=seed)
    policy = bot_policy(bot)

    def choose(state: MayIState) -> int:
        seat = state.current_player()
        legal = state.legal_map()
        move = policy(state.d.engine, seat, tuple(legal.values()), None)
        return state.lay.encode(state.d.engine, seat, move)

    return choose


def spiel_player(bot: Any) -> Player:
    """An OpenSpiel bot (``pyspiel.Bot``: ISMCTS, MCTS, uniform random...) as a player."""
    return lambda state: int(bot.step(state))


def play_game(game: MayIGame, players: list[Player], seed: int = 0) -> MayIState:
    """One game, each seat played by its player, chance outcomes drawn with ``seed``: the final state."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(players[state.current_player()](state))
    return state
