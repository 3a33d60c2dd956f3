"""Card codes as the API writes them (``"7C"``, ``"TH"``, ``"JK"``): ranks, suits, and the
order of cards, for bots and helpers alike.

>>> rank("AS"), rank("TH"), suit("TH"), order("JK") < order("AC") < order("2C")
(1, 10, 2, True)
>>> code(14, 3), rank_code("TH"), rank_code("jk")
('AS', 'T', 'JK')
"""

from __future__ import annotations

#: The joker's code.
JOKER = "JK"
#: The rank letters, ace (1) to king (13).
RANKS = "A23456789TJQK"
#: The suit letters: clubs, diamonds, hearts, spades (0..3).
SUITS = "CDHS"

_RANK: dict[str, int] = {r + s: i + 1 for i, r in enumerate(RANKS) for s in SUITS} | {JOKER: 0}
_SUIT: dict[str, int] = {r + s: i for r in RANKS for i, s in enumerate(SUITS)} | {JOKER: -1}
_ORDER: dict[str, int] = {c: (0 if c == JOKER else _RANK[c] * 4 + _SUIT[c]) for c in _RANK}
#: The card code of each number of :func:`order`.
CODES: dict[int, str] = {n: c for c, n in _ORDER.items()}


def rank(card: str) -> int:
    """1 (ace) .. 13 (king); 0 for a joker."""
    return _RANK[card]


def suit(card: str) -> int:
    """0..3 for clubs, diamonds, hearts, spades; -1 for a joker."""
    return _SUIT[card]


def code(rank_: int, suit_: int) -> str:
    """The card of ``rank_`` (1..13, or 14 for a high ace) and ``suit_`` (0..3)."""
    return RANKS[(rank_ - 1) % 13] + SUITS[suit_]


def order(card: str) -> int:
    """The number ``rank * 4 + suit`` (0 for a joker): the engine's order of cards (joker
    first, then by rank, ace low, then suit), and its number for the card."""
    return _ORDER[card]


def rank_code(card: str) -> str:
    """The rank part of a card code, as the variants' ``card_points`` key it (``"T"`` for
    ``"TH"`` or ``"10H"``, ``"JK"`` for a joker); any case."""
    upper = card.upper()
    if upper == JOKER:
        return JOKER
    letter = "T" if upper.startswith("10") else upper[:1]
    if letter not in RANKS or upper[-1:] not in SUITS or len(upper) != (3 if upper.startswith("10") else 2):
        raise ValueError(f"{card!r} is not a card code (rank A 2-9 T J Q K, or 10, then suit C D H S; or JK)")
    return letter
