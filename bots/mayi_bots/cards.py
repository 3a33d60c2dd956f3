"""Card codes as the bots read them: ranks, suits, points, and what fits a meld on the table.

Everything here works on the API's card codes (``"7C"``, ``"TH"``, ``"JK"``) and the
SDK's :class:`~mayi_sdk.Meld`; points and the joker limit come from
:mod:`mayi_sdk.helpers` (the rules engine when it is installed, May I's table otherwise).

>>> rank("AS"), rank("TH"), suit("TH"), order("JK") < order("AC") < order("2C")
(1, 10, 2, True)
"""

from __future__ import annotations

from functools import lru_cache

from mayi_sdk import Meld
from mayi_sdk.helpers import EngineMissing, card_points, engine

JOKER = "JK"
RANKS = "A23456789TJQK"
SUITS = "CDHS"


_RANK: dict[str, int] = {r + s: i + 1 for i, r in enumerate(RANKS) for s in SUITS} | {JOKER: 0}
_SUIT: dict[str, int] = {r + s: i for r in RANKS for i, s in enumerate(SUITS)} | {JOKER: -1}


def rank(card: str) -> int:
    """1 (ace) .. 13 (king); 0 for a joker."""
    return _RANK[card]


def suit(card: str) -> int:
    """0..3 for clubs, diamonds, hearts, spades; -1 for a joker."""
    return _SUIT[card]


def code(rank_: int, suit_: int) -> str:
    """The card of ``rank_`` (1..13, or 14 for a high ace) and ``suit_``."""
    return RANKS[(rank_ - 1) % 13] + SUITS[suit_]


def order(card: str) -> int:
    """The engine's order of cards (joker first, then by rank, ace low, then suit): the
    number ``rank * 4 + suit`` (0 for a joker) the strong bot also computes with."""
    return _ORDER[card]


_ORDER: dict[str, int] = {c: (0 if c == JOKER else _RANK[c] * 4 + _SUIT[c]) for c in _RANK}
#: The card code of each number of :func:`order`.
CODES: dict[int, str] = {n: c for c, n in _ORDER.items()}


@lru_cache(maxsize=512)
def points(card: str, variant: str) -> int:
    """Points ``card`` scores against its holder at the end of a round."""
    return card_points(card, variant)


@lru_cache(maxsize=64)
def joker_limit(variant: str) -> int | None:
    """Most jokers in one meld (None: no limit)."""
    try:
        limit = engine().get_rules(variant).joker_limit
    except (EngineMissing, Exception):  # an unknown variant without the engine: May I's limit
        return 1 if variant == "may_i" else None
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
