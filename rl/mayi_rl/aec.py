"""May I and Shanghai as PettingZoo AEC environments (:class:`MayIEnv`).

Agents ``player_0`` ... ``player_{n-1}`` are the seats. Each step one agent acts
(``agent_selection``): while an upcard may be claimed, the seats that may still
answer it claim or pass one after the other, clockwise from the seat on turn; then
the seat on turn draws (the upcard, which voids any claim, or the stock). That is the
order the engine's own simulations use: the claim window's answers are simultaneous
at a real table, and their order changes nothing but who saw whose answer.

The action space is ``Discrete(layout.actions)`` and the observation a dict of the flat
``observation`` (``float32``; or, with ``obs_type="dict"``, its named parts) and the
``action_mask`` (``int8``; all zeros for an agent that is not selected). Rewards come at
each round's end and at the game's end (:mod:`mayi_rl.rewards`). docs/ai.md lists the
layouts.
"""

from __future__ import annotations

import hashlib
import os
import random
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from mayi_engine import Move, State, new_game, play
from mayi_engine.events import GameEnded, RoundEnded
from mayi_engine.simulate import next_seat
from mayi_engine.state import FINISHED_PHASE

from .encoding import Layout, layout, table_rules
from .rewards import place_rewards, round_rewards


class MayIEnv(AECEnv):  # type: ignore[misc]
    """One table of ``variant`` (``"may_i"`` or ``"shanghai"``) with ``players`` seats."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi"],
        "name": "mayi_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variant: str = "may_i",
        players: int = 4,
        *,
        obs_type: str = "flat",
        options: dict[str, Any] | None = None,
        rounds: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = table_rules(variant, options, rounds)
        if not self.rules.min_players <= players <= self.rules.max_players:
            raise ValueError(
                f"players: {self.rules.title} is for {self.rules.min_players} to {self.rules.max_players} players, "
                f"not {players}"
            )
        if obs_type not in ("flat", "dict"):
            raise ValueError(f"obs_type must be 'flat' or 'dict', not {obs_type!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.metadata = {**self.metadata, "name": f"{variant}_v0"}
        self.variant = variant
        self.obs_type = obs_type
        self.render_mode = render_mode
        self.layout: Layout = layout(self.rules, players)
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        lay = self.layout
        mask_space = spaces.Box(0, 1, (lay.actions,), np.int8)
        high = lay.high()
        if obs_type == "flat":
            inner: spaces.Space[Any] = spaces.Box(0.0, high, (lay.size,), np.float32)
        else:
            inner = spaces.Dict(
                {
                    name: spaces.Box(0.0, high[p.start : p.stop].reshape(p.shape), p.shape, np.float32)
                    for name, p in lay.parts.items()
                }
            )
        self.observation_spaces = {
            a: spaces.Dict({"observation": inner, "action_mask": mask_space}) for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(lay.actions) for a in self.possible_agents}
        self._rng = random.Random(os.urandom(16))
        #: The engine's state of the game being played (``mayi_engine.State``).
        self.game: State | None = None
        self._legal: dict[int, Move] = {}
        self._seat = 0

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; ``seed`` makes it (and the games after it) reproducible."""
        if seed is not None:
            self._rng = random.Random(hashlib.blake2b(f"mayi_rl/{seed}".encode()).digest())
        names = [f"player_{i}" for i in range(self.layout.players)]
        self.game = new_game(self.rules, names, self._rng.randbytes(32))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewarded = False
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._select()

    def _select(self) -> None:
        state = self.game
        assert state is not None
        self._seat = seat = next_seat(state)
        self.agent_selection = self.possible_agents[seat]
        self._legal = self.layout.legal_actions(state, seat)

    def legal_moves(self) -> dict[int, Move]:
        """The selected agent's legal moves by action (the engine's moves)."""
        return self._legal

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        assert self.game is not None
        agent = self.agent_selection
        move = self._legal.get(int(action)) if action is not None else None
        if move is None:
            raise ValueError(
                f"action {action!r} is masked for {agent}: pick one whose action_mask is 1 "
                f"({len(self._legal)} legal now)"
            )
        self.game, events = play(self.game, self._seat, move)
        self._cumulative_rewards[agent] = 0.0
        rewards: dict[str, float] | None = None
        agents = self.possible_agents
        for event in events:
            kind = type(event)
            if kind is RoundEnded or kind is GameEnded:
                if rewards is None:
                    rewards = dict.fromkeys(self.agents, 0.0)
                gains = round_rewards(event.scores) if kind is RoundEnded else place_rewards(event.totals)  # type: ignore[attr-defined]
                for i, r in enumerate(gains):
                    rewards[agents[i]] += r
        if rewards is not None:
            self.rewards = rewards
            self._rewarded = True
            self._accumulate_rewards()
        elif self._rewarded:  # (most steps reward nobody: the zeros stay as they are)
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        if self.game.phase is FINISHED_PHASE:
            self.terminations = dict.fromkeys(self.agents, True)
            self._legal = {}
        else:
            self._select()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, Any]:
        assert self.game is not None
        seat = self.agent_name_mapping[agent]
        lay = self.layout
        obs = lay.observe(self.game, seat)
        mask = lay.mask(self._legal) if seat == self._seat else np.zeros(lay.actions, np.int8)
        if self.obs_type == "dict":
            return {"observation": {k: v.copy() for k, v in lay.split(obs).items()}, "action_mask": mask}
        return {"observation": obs, "action_mask": mask}

    def render(self) -> str | None:
        if self.render_mode is None or self.game is None:
            return None
        text = repr(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def env(variant: str = "may_i", players: int = 4, **kwargs: Any) -> MayIEnv:
    """A new environment (see :class:`MayIEnv`)."""
    return MayIEnv(variant, players, **kwargs)
