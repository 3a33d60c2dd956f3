"""The chance outcomes of the OpenSpiel games: the cards a deal deals and a draw draws.

A deal in progress is a :class:`Deal` (the cards still to deal, counted by index, and
where each goes); a draw waits on the counts of the cards it may draw
(:func:`card_counts`); once chance has picked the cards, :func:`arranged` orders the
stock (and the pile a rebuild turns over) so that the engine draws exactly those.
"""

from __future__ import annotations

from functools import lru_cache

from mayi_engine import State
from mayi_engine.cards import build_decks
from mayi_engine.rng import KeyedRandom

from .cards import CARDS, INDEX_OF, card_index, index_card

__all__ = ["Deal", "arranged", "card_counts", "new_deal"]


class Deal:
    """A deal in progress: the cards still to deal (counts by index) and where each goes."""

    __slots__ = ("bury", "hands", "pool", "targets")

    def __init__(self, decks: int, players: int, first: int, cards: int, bury: bool) -> None:
        self.pool = [0] * CARDS
        for c in build_decks(decks):
            self.pool[card_index(c)] += 1
        self.targets = [(first + k) % players for _ in range(cards) for k in range(players)] + [-1]
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.bury = bury

    def copy(self) -> Deal:
        new = Deal.__new__(Deal)
        new.pool, new.targets, new.hands, new.bury = self.pool, self.targets, self.hands, self.bury
        return new


@lru_cache(maxsize=256)
def new_deal(decks: int, players: int, first: int, cards: int, bury: bool) -> Deal:
    """A deal about to start (shared: a deal in progress is copied before each card)."""
    return Deal(decks, players, first, cards, bury)


def card_counts(cards: tuple[int, ...]) -> list[int]:
    """The count of each card index among engine ``cards``."""
    out = [0] * CARDS
    idx = INDEX_OF
    for c in cards:
        out[idx[c]] += 1
    return out


def arranged(state: State, picks: list[int], segments: list[int], length: int) -> State:
    """``state`` with its stock (and the pile a rebuild turns over) ordered so that the
    engine draws ``picks`` (the stock's first, then the rebuilt stock's)."""
    s = state.clone()
    first = [index_card(k) for k, seg in zip(picks, segments, strict=True) if seg == 0]
    later = [index_card(k) for k, seg in zip(picks, segments, strict=True) if seg == 1]
    rest = list(s.stock)
    for c in first:
        rest.remove(c)
    s.stock = tuple(rest + first[::-1])  # the top card is the last
    if later:
        # Cards after the rebuild: order the pile's cards under its top so that the engine's
        # shuffle of the rebuild puts them on top of the new stock.
        order = list(range(length))
        KeyedRandom(s.seed, f"rebuild/{s.round}/{s.reshuffles + 1}").shuffle(order)
        cards = list(s.discard[:length])
        for c in later:
            cards.remove(c)
        placed: list[int | None] = [None] * length
        for j, c in enumerate(later):
            placed[order[length - 1 - j]] = c
        it = iter(cards)
        s.discard = tuple(c if c is not None else next(it) for c in placed) + s.discard[length:]
    return s
