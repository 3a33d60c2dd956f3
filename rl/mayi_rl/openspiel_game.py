"""The OpenSpiel games ``python_may_i`` and ``python_shanghai`` (:class:`MayIGame`,
:class:`ShanghaiGame`), registered with ``pyspiel`` when this module is imported.

:mod:`mayi_rl.openspiel` describes the games and their parameters.
"""

from __future__ import annotations

from typing import Any

import pyspiel

from mayi_engine import new_game
from mayi_engine.cards import build_decks

from .cards import CARDS
from .encoding import Layout, layout, table_rules
from .openspiel_observer import Observer
from .openspiel_state import MayIState
from .rewards import utility_bound

__all__ = ["MayIGame", "ShanghaiGame"]

#: The seed of every engine state here: the engine shuffles nothing that matters (every
#: card dealt or drawn is a chance outcome), so the seed is fixed and public.
_SEED = bytes(32)
_DEFAULT_PLAYERS = 4


def _game_type(variant: str) -> pyspiel.GameType:
    rules = table_rules(variant)
    return pyspiel.GameType(
        short_name=f"python_{variant}",
        long_name=f"Python {rules.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=rules.max_players,
        min_num_players=rules.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": _DEFAULT_PLAYERS, "rounds": len(rules.rounds)},
    )


class MayIGame(pyspiel.Game):  # type: ignore[misc]
    """One variant's game; ``params``: ``players``, ``rounds``."""

    variant = "may_i"

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        game_type = _GAME_TYPES[self.variant]
        given = dict(params or {})
        players = int(given.get("players", _DEFAULT_PLAYERS))
        rules = table_rules(self.variant, None, int(given.get("rounds", len(table_rules(self.variant).rounds))))
        if not rules.min_players <= players <= rules.max_players:
            raise ValueError(f"players: {rules.title} is for {rules.min_players} to {rules.max_players}, not {players}")
        self.rules = rules
        self.lay: Layout = layout(rules, players)
        #: The first round's engine state before its deal (cards dealt by chance replace the engine's).
        self.initial = new_game(rules, [f"p{i}" for i in range(players)], _SEED)
        decks = rules.decks_for(players)
        most = decks * sum(rules.card_score(c) for c in build_decks(1))
        bound = utility_bound(most, len(rules.rounds), players)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.lay.actions,
            max_chance_outcomes=CARDS,
            num_players=players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            # Each turn: the claim answers, a draw, melds (one card each at most) and a discard.
            max_game_length=len(rules.rounds) * rules.max_turns * (players + 3 + 3 * rules.rounds[-1].deal),
        )
        super().__init__(game_type, info, {"players": players, "rounds": len(rules.rounds)})

    def new_initial_state(self) -> MayIState:
        return MayIState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        perfect = iig_obs_type is not None and iig_obs_type.perfect_recall
        return Observer(self.lay, perfect)


class ShanghaiGame(MayIGame):
    variant = "shanghai"


_GAME_TYPES = {variant: _game_type(variant) for variant in ("may_i", "shanghai")}

pyspiel.register_game(_GAME_TYPES["may_i"], MayIGame)
pyspiel.register_game(_GAME_TYPES["shanghai"], ShanghaiGame)
