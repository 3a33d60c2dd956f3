"""What the bots compute over card codes: points, the joker limit, and what fits a meld
on the table. The codec (ranks, suits, the order of cards) is the SDK's
(:mod:`mayi_sdk.cards`); points and the joker limit come from the rules engine
(installed with the bots: both ship in ``mayi-game-service``).

>>> sorted(fitting(Meld(0, 0, "book", ["7C", "7D", "7H"], []), "may_i"))
['7C', '7D', '7H', '7S', 'JK']
"""

from __future__ import annotations

from functools import lru_cache

from mayi_sdk import Meld
from mayi_sdk.cards import JOKER, code, rank, suit
from mayi_sdk.helpers import card_points, engine


@lru_cache(maxsize=512)
def points(card: str, variant: str) -> int:
    """Points ``card`` scores against its holder at the end of a round."""
    return card_points(card, variant)


@lru_cache(maxsize=64)
def joker_limit(variant: str) -> int | None:
    """Most jokers in one meld (None: no limit)."""
    limit = engine().get_rules(variant).joker_limit
    return None if limit is None else int(limit)


def _run_low(meld: Meld) -> int:
    """A run's lowest rank (1..14)."""
    stand = {j.index: j.stands_for for j in meld.jokers}
    for i, card in enumerate(meld.cards):
        c = stand.get(i, card)
        if c == JOKER:
            continue
        r = rank(c)
        if r == 1 and i > 0:
            r = 14
        return r - i
    return 1


def run_span(meld: Meld) -> tuple[int, int, int]:
    """A run's ``(low, high, suit)``: ranks 1..14 (14: a high ace)."""
    low = _run_low(meld)
    naturals = [c for c in meld.cards if c != JOKER]
    return low, low + len(meld.cards) - 1, suit(naturals[0]) if naturals else 0


def book_rank(meld: Meld) -> int:
    """A book's rank (1..13)."""
    naturals = [c for c in meld.cards if c != JOKER]
    return rank(naturals[0]) if naturals else 0


@lru_cache(maxsize=4096)
def _fits(kind: str, cards: tuple[str, ...], stands: tuple[tuple[int, str], ...], variant: str) -> frozenset[str]:
    from mayi_sdk.models import Joker

    meld = Meld(0, 0, kind, list(cards), [Joker(i, s) for i, s in stands])
    out: set[str] = set()
    limit = joker_limit(variant)
    if limit is None or cards.count(JOKER) < limit:
        out.add(JOKER)
    if kind == "book":
        r = book_rank(meld)
        out.update(code(r, s) for s in range(4))
        return frozenset(out)
    low, high, s = run_span(meld)
    if high < 14:
        out.add(code(high + 1, s))
    if low > 1:
        out.add(code(low - 1, s))
    for i, c in enumerate(cards):
        if c == JOKER:
            out.add(code(low + i, s))
    return frozenset(out)


def fitting(meld: Meld, variant: str) -> frozenset[str]:
    """Cards that might be laid off on ``meld`` (a fast superset of what the rules allow)."""
    return _fits(meld.type, tuple(meld.cards), tuple((j.index, j.stands_for) for j in meld.jokers), variant)
