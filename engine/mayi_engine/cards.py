"""Cards, their codes, and hands as multisets.

A card is a small ``int``: ``rank * 4 + suit`` for a natural card (rank 1 = ace
… 13 = king, suit 0..3 = clubs, diamonds, hearts, spades) and ``0`` for a joker.
Identical cards from different decks are the same int, so a hand is a multiset,
kept as a sorted tuple. Interfaces speak in codes (``"TH"``, ``"AS"``, ``"JK"``);
:func:`parse_card` reads them (case-insensitive, ``10H`` accepted) and
:func:`card_code` writes the canonical form.

Cards stay plain ``int`` on purpose: an ``int`` subclass printing its code made the
card work of the engine (counting, indexing, sorting, removing) about a third
slower in a micro-benchmark, so the records that hold cards print them as codes
instead: moves (``Discard(card='QS')``), melds, events and the state.

>>> parse_card("10h") == parse_card("TH")
True
>>> card_code(parse_card("as"))
'AS'
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidMoveError

JOKER = 0
RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_NAMES = (
    "",
    "ace",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
CARD_SLOTS = 56  # codes 0..55; 1..3 are unused
NATURALS: tuple[int, ...] = tuple(r * 4 + s for r in range(1, 14) for s in range(4))


def make_card(rank: int, suit: int) -> int:
    """The card of ``rank`` (1..13, or 14 for a high ace) and ``suit`` (0..3)."""
    return (1 if rank == 14 else rank) * 4 + suit


_CODES: list[str] = ["JK"] + ["??"] * 3 + [RANKS[r - 1] + SUITS[s] for r in range(1, 14) for s in range(4)]
_PARSE: dict[str, int] = {code: i for i, code in enumerate(_CODES) if code != "??"}
_PARSE.update({"10" + s: make_card(10, i) for i, s in enumerate(SUITS)})


def card_code(card: int) -> str:
    """The canonical code of a card: ``"TH"``, ``"AS"``, ``"JK"``."""
    return _CODES[card]


def card_codes(cards: Iterable[int]) -> list[str]:
    return [_CODES[c] for c in cards]


def parse_card(code: object) -> int:
    """Read a card code; raise :class:`InvalidMoveError` naming it if it is not one."""
    if isinstance(code, str):
        card = _PARSE.get(code.strip().upper())
        if card is not None:
            return card
    raise InvalidMoveError(
        "bad_card",
        f"{code!r} is not a card: write rank then suit, ranks A 2-9 T J Q K, "
        "suits C D H S (for example TH, AS), or JK for a joker",
    )


def parse_cards(codes: object, field: str = "cards") -> tuple[int, ...]:
    """Read a list of card codes."""
    if not isinstance(codes, list | tuple):
        raise InvalidMoveError("bad_card", f"{field} must be a list of card codes")
    return tuple(parse_card(c) for c in codes)


def card_name(card: int) -> str:
    """A card in words: ``"ten of hearts"``, ``"joker"``."""
    if card == JOKER:
        return "joker"
    return f"{RANK_NAMES[card >> 2]} of {SUIT_NAMES[card & 3]}"


def build_decks(decks: int) -> list[int]:
    """All the cards of ``decks`` full decks (52 naturals and 2 jokers each)."""
    one = [JOKER, JOKER, *NATURALS]
    return one * decks


def counts_of(cards: Iterable[int]) -> list[int]:
    """A multiset as counts indexed by card."""
    counts = [0] * CARD_SLOTS
    for c in cards:
        counts[c] += 1
    return counts


def remove_cards(hand: tuple[int, ...], cards: Iterable[int]) -> tuple[int, ...] | None:
    """``hand`` less ``cards`` (as multisets), or ``None`` if it lacks any of them."""
    rest = list(hand)
    for c in cards:
        try:
            rest.remove(c)
        except ValueError:
            return None
    return tuple(rest)
