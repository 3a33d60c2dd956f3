"""The fixed action space of a table: every legal move of the engine is exactly one action.

:class:`ActionSpace` numbers the actions (the moves without fields, then a discard per
card, a go-down per goal, a lay-off per meld slot, card and end, and, where a player may
never keep one card, the pairs of lay-offs that go out), maps each legal move to its
action and back, and says what each action means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mayi_engine import (
    VARIANTS,
    Claim,
    Discard,
    DrawStock,
    GoDown,
    LayOff,
    Move,
    Pass,
    Rules,
    State,
    TakeDiscard,
    legal_moves,
)
from mayi_engine.cards import card_code
from mayi_engine.contracts import match_goal
from mayi_engine.melds import read_meld

from .cards import CARDS, INDEX_OF, index_card

#: Action ids of the moves without fields.
DRAW_STOCK, TAKE_DISCARD, CLAIM, PASS = 0, 1, 2, 3
DISCARD_BASE = 4
#: The two lay-off end slots: 0 no joker moves (or it moves to the high end), 1 it moves to the low end.
ENDS = 2

_CARD_OF = [index_card(i) for i in range(CARDS)]
_END = {None: 0, "high": 0, "low": 1}
_CLAIM, _PASS, _TAKE, _DRAW = Claim(), Pass(), TakeDiscard(), DrawStock()
# (The legal-action maps of the claim window and the draws: shared, never changed.)
_CLAIM_OR_PASS: dict[int, Move] = {2: _CLAIM, 3: _PASS}
_TAKE_OR_DRAW: dict[int, Move] = {1: _TAKE, 0: _DRAW}
_TAKE_ONLY: dict[int, Move] = {1: _TAKE}
_FIXED: dict[type, int] = {DrawStock: DRAW_STOCK, TakeDiscard: TAKE_DISCARD, Claim: CLAIM, Pass: PASS}


def _max_melds(rules: Rules) -> int:
    return max(r.contract.books + r.contract.runs for r in rules.rounds)


@dataclass
class ActionSpace:
    """The action space of one table: ``rules`` with ``players`` seats."""

    rules: Rules
    players: int
    #: Most melds on the table in a round (every seat down with the largest contract).
    melds: int = 0
    goals: int = 0
    actions: int = 0
    go_down_base: int = 0
    lay_off_base: int = 0
    pair_base: int = 0
    pairs: int = 0

    def __post_init__(self) -> None:
        self.melds = self.players * _max_melds(self.rules)
        # (A game of fewer rounds, ``rounds=``, keeps the variant's layout: a policy trained
        # on short games plays whole ones.)
        self.goals = len(VARIANTS.get(self.rules.name, self.rules).rounds)
        self.go_down_base = DISCARD_BASE + CARDS
        self.lay_off_base = self.go_down_base + self.goals
        self.pair_base = self.lay_off_base + self.melds * CARDS * ENDS
        # Where a player may never keep one card (Shanghai), the last two cards go out together.
        self.pairs = 0 if self.rules.out_by_discard else 2 * (self.melds * ENDS) ** 2
        self.actions = self.pair_base + self.pairs
        self._masks: dict[int, np.ndarray] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> ActionSpace:
        return self  # (never changed once made; a copied game state shares it)

    def encode(self, state: State, seat: int, move: Move) -> int:
        """The action of ``move`` (one of the seat's legal moves) in ``state``."""
        kind = type(move)
        if kind is Discard:
            return DISCARD_BASE + INDEX_OF[move.card]  # type: ignore[union-attr]
        if kind is LayOff:
            parts = move.parts  # type: ignore[union-attr]
            if len(parts) == 1:
                p = parts[0]
                return self.lay_off_base + (p.meld * CARDS + INDEX_OF[p.cards[0]]) * ENDS + _END[p.joker_to]
            first, second = parts
            hand = state.hands[seat]
            which = 0 if first.cards[0] == hand[0] else 1
            slots = self.melds * ENDS
            a = first.meld * ENDS + _END[first.joker_to]
            b = second.meld * ENDS + _END[second.joker_to]
            return self.pair_base + (which * slots + a) * slots + b
        if kind is GoDown:
            return self.go_down_base + _goal_of(state, seat, move)  # type: ignore[arg-type]
        return _FIXED[kind]

    def legal_actions(self, state: State, seat: int) -> dict[int, Move]:
        """Each legal move of ``seat`` by its action (the engine's ``legal_moves``, no clock)."""
        moves = legal_moves(state, seat)
        if not moves:
            return {}
        first = type(moves[0])
        if first is Claim:  # the claim window: most of a game's decisions
            return _CLAIM_OR_PASS
        if first is TakeDiscard and len(moves) <= 2:
            return _TAKE_OR_DRAW if len(moves) == 2 else _TAKE_ONLY
        out: dict[int, Move] = {}
        encode = self.encode
        for m in moves:
            a = encode(state, seat, m)
            if a not in out:  # (two goals met by the same melds are one move)
                out[a] = m
        return out

    def mask(self, legal: dict[int, Move]) -> np.ndarray:
        """The action mask (``int8``, 1: legal) of a legal-action map (a new array)."""
        if len(legal) <= 2:  # the draws and the claim window: masks made once, copied
            key = sum(1 << a for a in legal)
            made = self._masks.get(key)
            if made is None:
                made = self._masks[key] = np.zeros(self.actions, np.int8)
                made[list(legal)] = 1
            return made.copy()
        mask = np.zeros(self.actions, np.int8)
        mask[list(legal)] = 1
        return mask

    def describe_action(self, action: int) -> str:
        """What ``action`` means, in words (for any state)."""
        if action < DISCARD_BASE:
            return ("draw from the stock", "take the upcard", "claim the upcard", "pass")[action]
        if action < self.go_down_base:
            return f"discard {card_code(_CARD_OF[action - DISCARD_BASE])}"
        if action < self.lay_off_base:
            goal = action - self.go_down_base + 1
            return f"go down with goal {goal} (round {goal}'s contract)"
        if action < self.pair_base:
            rest, end = divmod(action - self.lay_off_base, ENDS)
            meld, card = divmod(rest, CARDS)
            return f"lay off {card_code(_CARD_OF[card])} on meld {meld}" + (", joker to the low end" if end else "")
        rest = action - self.pair_base
        slots = self.melds * ENDS
        which, rest = divmod(rest, slots * slots)
        a, b = divmod(rest, slots)
        return (
            f"go out laying off the hand's card {which} on meld {a // ENDS} (end {a % ENDS}), "
            f"then the other on meld {b // ENDS} (end {b % ENDS})"
        )


def _goal_of(state: State, seat: int, move: GoDown) -> int:
    """The goal (index into the rules' rounds) a legal go-down meets."""
    if not state.rules.free_goal_order:
        return state.round - 1
    readings = [read_meld(m, state.rules) for m in move.melds]
    return match_goal(state, seat, readings, move.melds)[0]
