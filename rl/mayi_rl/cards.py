"""Card indexes 0..52: 0 the joker, then ``rank * 4 + suit - 3`` for the naturals (ace of
clubs 1 ... king of spades 52), the one card numbering of the actions and observations."""

from __future__ import annotations

from mayi_engine.cards import JOKER

#: Card kinds: the joker and the 52 naturals.
CARDS = 53


def card_index(card: int) -> int:
    """The index 0..52 of an engine card (0: joker)."""
    return 0 if card == JOKER else card - 3


def index_card(index: int) -> int:
    """The engine card of an index 0..52."""
    return JOKER if index == 0 else index + 3


#: :func:`card_index` as a table by engine card, for the hot loops (-1: no such card).
INDEX_OF: list[int] = [card_index(c) if c == JOKER or c >= 4 else -1 for c in range(56)]
