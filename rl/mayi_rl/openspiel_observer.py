"""OpenSpiel's observer of a seat in the OpenSpiel games (:class:`Observer`).

The observation is :mod:`mayi_rl.encoding`'s (what the seat's view shows); the
information state adds this round's public record as counts and, as a string, the seat's
record of the game. Neither shows what the seat cannot see.
"""

from __future__ import annotations

import numpy as np

from mayi_engine import State, card_code

from .cards import CARDS, index_card
from .encoding import Layout
from .openspiel_state import MayIState

__all__ = ["Observer"]


class Observer:
    """OpenSpiel's observer of a seat: the observation (``perfect_recall`` false) or the
    information state (true) as a ``tensor`` (with named views in ``dict``) and a string."""

    def __init__(self, lay: Layout, perfect_recall: bool) -> None:
        self.lay = lay
        self.perfect_recall = perfect_recall
        n = lay.players
        size = lay.size + (2 * n * CARDS if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = lay.split(self.tensor[: lay.size])
        if perfect_recall:
            self.dict["discarded"] = self.tensor[lay.size : lay.size + n * CARDS].reshape(n, CARDS)
            self.dict["taken"] = self.tensor[lay.size + n * CARDS :].reshape(n, CARDS)

    def set_from(self, state: MayIState, player: int) -> None:
        lay = self.lay
        self.tensor[: lay.size] = lay.observe(_shown(state, player), player)
        if self.perfect_recall:
            n = lay.players
            for k in range(n):
                other = (player + k) % n
                self.dict["discarded"][k] = state.d.discarded[other]
                self.dict["taken"][k] = state.d.taken[other]

    def string_from(self, state: MayIState, player: int) -> str:
        if self.perfect_recall:
            return f"seat {player}\n" + "\n".join(state.d.logs[player])
        s = _shown(state, player)
        upcard = s.upcard
        melds = "; ".join(f"{m.owner}:{m.describe()}" for m in s.melds)
        counts = " ".join(str(len(h)) for h in s.hands)
        return (
            f"seat {player} round {s.round} phase {s.phase.value} turn {s.turn} actor {s.actor} "
            f"hand {' '.join(card_code(c) for c in s.hands[player])} "
            f"upcard {card_code(upcard) if upcard is not None else '-'} "
            f"pile {len(s.discard)} stock {len(s.stock)} counts {counts} melds [{melds}] "
            f"down {''.join('1' if d else '0' for d in s.down)} totals {' '.join(map(str, s.totals))}"
        )


def _shown(state: MayIState, player: int) -> State:
    """The engine state to observe: during a deal, the cards dealt so far (none on the table)."""
    deal = state.d.deal
    if deal is None:
        return state.d.engine
    s = state.d.engine.clone()
    s.hands = tuple(tuple(sorted(index_card(k) for k in h)) for h in deal.hands)
    s.discard = ()
    s.stock = ()
    s.melds = ()
    return s
