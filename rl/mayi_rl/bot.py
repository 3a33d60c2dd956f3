"""A policy over the environments' actions, entered as an SDK bot (:class:`PolicyBot`).

A policy trained on :mod:`mayi_rl.aec` (or the OpenSpiel games) maps an observation and
an action mask to an action. :class:`PolicyBot` gives it the same observation from the
view a bot is shown (``Layout.observe_view``), the mask of the view's legal moves, and
plays the legal move of the action it picks: on a server (``run_polling``, webhooks), in
``play_local`` and ``mayi simulate``-style loops, like any other :class:`mayi_sdk.Bot`.

The discard pile: a view shows only its top and its size. :class:`PileTracker` keeps its
cards from the views the bot is shown; a discard the bot was not shown (a claim window
it could not answer, another seat's draw of it before the bot's next view) is missing
from its count, where the environment, which sees every step, has it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from mayi_engine import move_from_json, parse_cards
from mayi_sdk import Bot, GameView, LegalMove

from .encoding import Layout, layout, table_rules

#: A policy: ``(observation, action_mask) -> action``.
Policy = Callable[[np.ndarray, np.ndarray], int]


class PileTracker:
    """The discard pile's cards, bottom to top, as far as the views shown tell."""

    def __init__(self) -> None:
        self.cards: list[str] = []
        self._round: Any = None

    def update(self, view: dict[str, Any]) -> list[str]:
        """Read one more view (``GameView.raw`` or ``player_view``); the pile as now known."""
        number = (view.get("round") or {}).get("number")
        count = view.get("discard_count") or 0
        top = view.get("discard_top")
        if number != self._round:
            self._round, self.cards = number, []
        if count == 0 or top is None:
            self.cards = []
        elif len(self.cards) >= count:
            self.cards = [*self.cards[: count - 1], top]
        else:  # one more card (or more, of which the bot saw only the last)
            self.cards = [*self.cards, top]
        return self.cards


class PolicyBot(Bot):
    """An SDK bot that plays ``policy`` at a table of ``variant`` with ``players`` seats
    (the table the policy was trained for: its action and observation layout)."""

    name = "policy"

    def __init__(
        self,
        policy: Policy,
        variant: str = "may_i",
        players: int = 4,
        *,
        options: dict[str, Any] | None = None,
        rounds: int | None = None,
    ) -> None:
        self.policy = policy
        self.layout: Layout = layout(table_rules(variant, options, rounds), players)
        self.pile = PileTracker()

    def legal_actions(self, view: GameView) -> dict[int, LegalMove]:
        """The view's legal moves by action."""
        raw = view.raw
        seat = raw["seat"]
        lay = self.layout
        # What the encoding reads of a state: the seat's hand (its order), the round, the goals met.
        goals = raw.get("goals_done")
        shown = SimpleNamespace(
            hands={seat: tuple(sorted(parse_cards(raw["hand"])))},
            round=raw["round"]["number"],
            rules=lay.rules,
            goals_done={seat: tuple(g - 1 for g in goals[seat]) if goals else ()},
        )
        out: dict[int, LegalMove] = {}
        for legal in view.legal:
            move = move_from_json({"type": legal.type, **legal.body})
            out.setdefault(lay.encode(shown, seat, move), legal)  # type: ignore[arg-type]
        return out

    def decide(self, view: GameView) -> LegalMove:
        raw = view.raw
        pile = self.pile.update(raw)
        legal = self.legal_actions(view)
        obs = self.layout.observe_view(raw, pile)
        mask = np.zeros(self.layout.actions, np.int8)
        mask[list(legal)] = 1
        action = int(self.policy(obs, mask))
        if action not in legal:
            raise ValueError(f"policy: action {action} is masked ({len(legal)} legal now)")
        return legal[action]
