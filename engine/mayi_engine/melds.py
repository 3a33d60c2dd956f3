"""Melds on the table: reading a submitted meld, and laying cards off on one.

Glossary
--------
book
    Three or more cards of one rank, any suits ("three" in Shanghai).
run
    Four or more cards of one suit in sequence, submitted low to high. An ace
    is low (A 2 3 4) or high (J Q K A), never both; runs never wrap.
stand-in
    A joker in a meld stands for one card: in a book, that book's rank; in a
    run, the rank of its position. :meth:`Meld.stands_for` names it.
lay-off
    Adding cards from your hand to a meld already on the table. Laying off the
    natural card a run's joker stands for *displaces* the joker to the high or
    low end of the run (the player who laid the card off chooses).

>>> from .cards import parse_cards
>>> from .rules import MAY_I
>>> [k for k, _, _ in read_meld(parse_cards(["4C", "5C", "JK", "7C"]), MAY_I)]
['run']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from .cards import JOKER, card_code, card_codes, card_name, make_card
from .errors import IllegalMoveError, InvalidMoveError
from .rules import MeldKind, Rules

BOOK = MeldKind.BOOK
RUN = MeldKind.RUN
HIGH = "high"
LOW = "low"


def codes(cards: tuple[int, ...] | list[int]) -> str:
    return " ".join(card_code(c) for c in cards)


class Reading(NamedTuple):
    """One way to read submitted cards as a meld: its ``kind``, ``low`` (a book's rank,
    or a run's lowest rank, 1..14) and ``suit`` (a run's suit 0..3; -1 for a book)."""

    kind: MeldKind
    low: int
    suit: int


@dataclass(frozen=True, slots=True, repr=False)
class Meld:
    """A meld on the table. ``low`` is a book's rank, or a run's lowest rank (1..14).
    Prints with its cards' codes."""

    id: int
    owner: int
    kind: MeldKind
    cards: tuple[int, ...]
    low: int
    suit: int = -1

    def __repr__(self) -> str:
        return (
            f"Meld(id={self.id}, owner={self.owner}, kind={self.kind!r}, cards={tuple(card_codes(self.cards))!r}, "
            f"low={self.low}, suit={self.suit})"
        )

    @property
    def high(self) -> int:
        return self.low + len(self.cards) - 1 if self.kind == RUN else self.low

    @property
    def jokers(self) -> int:
        return self.cards.count(JOKER)

    def stands_for(self, index: int) -> int:
        """The card that the card at ``index`` stands for (itself if natural)."""
        card = self.cards[index]
        if card != JOKER:
            return card
        if self.kind == BOOK:
            return make_card(self.low, 0)
        return make_card(self.low + index, self.suit)

    def stand_in_codes(self) -> dict[int, str]:
        """``{index: code}`` of what each joker stands for (a book's joker: the rank only)."""
        out: dict[int, str] = {}
        for i, card in enumerate(self.cards):
            if card == JOKER:
                stood = self.stands_for(i)
                out[i] = card_code(stood)[0] if self.kind == BOOK else card_code(stood)
        return out

    def describe(self) -> str:
        return codes(self.cards)


def meld_json(meld: Meld) -> dict[str, Any]:
    """A meld as the API shows it, with what each joker stands for."""
    return {
        "id": meld.id,
        "owner": meld.owner,
        "type": meld.kind,
        "cards": card_codes(meld.cards),
        "jokers": [{"index": i, "stands_for": code} for i, code in meld.stand_in_codes().items()],
    }


def _joker_problem(cards: tuple[int, ...], rules: Rules, what: str) -> str | None:
    jokers = cards.count(JOKER)
    if rules.joker_limit is not None and jokers > rules.joker_limit:
        n = rules.joker_limit
        return f"{rules.title} allows at most {n} joker{'s' if n != 1 else ''} in a meld; {codes(cards)} has {jokers}"
    naturals = len(cards) - jokers
    if naturals < rules.min_naturals:
        n = rules.min_naturals
        return (
            f"a {what} must keep at least {n} natural card{'s' if n != 1 else ''}; "
            f"{codes(cards)} has {naturals or 'none'}"
        )
    return None


def book_problem(cards: tuple[int, ...], rules: Rules) -> str | None:
    """Why ``cards`` is not a book, or ``None`` if it is one."""
    if len(cards) < 3:
        return f"A book needs 3 or more cards of one rank; {codes(cards)} has only {len(cards)}"
    ranks = {c >> 2 for c in cards if c != JOKER}
    if len(ranks) > 1:
        return f"A book needs 3 or more cards of one rank; {codes(cards)} mixes ranks"
    return _joker_problem(cards, rules, "book")


def run_low(cards: tuple[int, ...]) -> tuple[int, int] | str:
    """``(low rank, suit)`` of ``cards`` read as a run low to high, or why it is not a run."""
    not_run = f"A run needs 4 or more cards of one suit in sequence; {codes(cards)} is not a run"
    if len(cards) < 4:
        return f"A run needs 4 or more cards of one suit in sequence; {codes(cards)} has only {len(cards)}"
    if len(cards) > 13:
        return f"A run can hold at most 13 cards (an ace is high or low, never both); {codes(cards)} is too long"
    suit = -1
    lows: set[int] | None = None
    for i, card in enumerate(cards):
        if card == JOKER:
            continue
        if suit == -1:
            suit = card & 3
        elif card & 3 != suit:
            return f"A run needs 4 or more cards of one suit in sequence; {codes(cards)} mixes suits"
        rank = card >> 2
        options = {rank - i, 14 - i} if rank == 1 else {rank - i}
        lows = options if lows is None else lows & options
        if not lows:
            hint = "list a run from low to high, a joker where the missing card goes"
            if any(c != JOKER and c >> 2 == 1 for c in cards):
                hint += "; runs never wrap around: an ace is high or low, never both (K A 2 is not a run)"
            return f"{not_run} ({hint})"
    if lows is None:
        return f"a run must keep at least 1 natural card; {codes(cards)} has none"
    for low in sorted(lows):
        if low >= 1 and low + len(cards) - 1 <= 14:
            return low, suit
    return f"Runs never wrap around and an ace is high or low, not both; {codes(cards)} is not a run"


def read_meld(cards: tuple[int, ...], rules: Rules) -> list[Reading]:
    """Every reading of ``cards`` as a legal meld (a :class:`Reading` each).

    Raises :class:`IllegalMoveError` (``illegal_meld``) naming the rule if there is none.
    """
    readings: list[Reading] = []
    problem = book_problem(cards, rules)
    if problem is None:
        rank = next(c >> 2 for c in cards if c != JOKER)
        readings.append(Reading(BOOK, rank, -1))
    run = run_low(cards)
    run_problem: str | None
    if isinstance(run, str):
        run_problem = run
    else:
        run_problem = _joker_problem(cards, rules, "run")
        if run_problem is None:
            readings.append(Reading(RUN, run[0], run[1]))
    if not readings:
        # Name the problem of the reading the player most likely meant.
        naturals = [c for c in cards if c != JOKER]
        # Two naturals of one rank can never be in one run: that is a book.
        looks_like_book = len({c >> 2 for c in naturals}) <= 1 and (len(cards) < 4 or len(naturals) > 1)
        raise IllegalMoveError(
            "illegal_meld", (problem if looks_like_book or run_problem is None else run_problem) or ""
        )
    return readings


# ---------------------------------------------------------------------------
# Lay-offs


def _run_ends(meld: Meld) -> list[str]:
    """Ends of a run where one more card fits without breaking the ace rule."""
    ends = []
    n = len(meld.cards)
    if n < 13:
        if meld.high < 14:
            ends.append(HIGH)
        if meld.low > 1:
            ends.append(LOW)
    return ends


def lay_off_card(meld: Meld, card: int, joker_to: str | None, rules: Rules) -> Meld:
    """``meld`` with ``card`` laid off on it, or :class:`IllegalMoveError` naming the rule.

    ``joker_to`` (``"high"``/``"low"``) says where a joker goes when it moves to an end
    of a run: a joker laid off on a run, or a joker displaced by its natural card.
    It may be left out when only one end is open.
    """
    return _lay_off(meld, card, joker_to, rules.joker_limit, rules.title)


def _where(meld: Meld) -> str:
    return f"meld {meld.id} ({meld.describe()})"


def _lay_off(meld: Meld, card: int, joker_to: str | None, joker_limit: int | None, title: str) -> Meld:
    """:func:`lay_off_card` with the two rules it reads (the words of its errors are built only on failure)."""
    if joker_to not in (None, HIGH, LOW):
        raise InvalidMoveError("validation_error", f"joker_to must be 'high' or 'low', not {joker_to!r}")
    if meld.kind == BOOK:
        if card == JOKER:
            if joker_limit is not None and meld.jokers >= joker_limit:
                raise IllegalMoveError(
                    "illegal_lay_off",
                    f"{title} allows at most {joker_limit} joker in a meld; {_where(meld)} has one",
                )
            return _with(meld, (*meld.cards, JOKER), meld.low)
        if card >> 2 != meld.low:
            raise IllegalMoveError(
                "illegal_lay_off", f"The {card_name(card)} does not fit {_where(meld)}: a book takes only its own rank"
            )
        return _with(meld, _book_order((*meld.cards, card)), meld.low)
    # A run.
    if card == JOKER:
        if joker_limit is not None and meld.jokers >= joker_limit:
            raise IllegalMoveError(
                "illegal_lay_off", f"{title} allows at most {joker_limit} joker in a meld; {_where(meld)} has one"
            )
        end = _choose_end(meld, joker_to, meld, "the joker")
        return _extend(meld, JOKER, end)
    if card & 3 != meld.suit:
        raise IllegalMoveError(
            "illegal_lay_off", f"The {card_name(card)} does not fit {_where(meld)}: a run takes only its own suit"
        )
    rank = card >> 2
    high_rank = 14 if rank == 1 else rank
    if high_rank == meld.high + 1 and len(meld.cards) < 13:
        return _extend(meld, card, HIGH)
    if rank == meld.low - 1 and len(meld.cards) < 13:
        return _extend(meld, card, LOW)
    for r in {rank, high_rank}:
        if meld.low <= r <= meld.high:
            index = r - meld.low
            if meld.cards[index] != JOKER:
                break
            # Displacement: the natural card takes the joker's place; the joker moves to an end.
            replaced = Meld(
                meld.id, meld.owner, RUN, (*meld.cards[:index], card, *meld.cards[index + 1 :]), meld.low, meld.suit
            )
            if not _run_ends(replaced):
                raise IllegalMoveError(
                    "illegal_lay_off",
                    f"The {card_name(card)} would displace the joker of {_where(meld)}, "
                    "but neither end of the run can take it (an ace is high or low, never both)",
                )
            end = _choose_end(replaced, joker_to, meld, "the displaced joker")
            return _extend(replaced, JOKER, end)
    raise IllegalMoveError(
        "illegal_lay_off",
        f"The {card_name(card)} does not fit {_where(meld)}: a run takes the next card of its suit at either end, "
        "or the card one of its jokers stands for",
    )


def _book_order(cards: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(cards, key=lambda c: (c == JOKER, c)))


def _with(meld: Meld, cards: tuple[int, ...], low: int) -> Meld:
    return Meld(meld.id, meld.owner, meld.kind, cards, low, meld.suit)


def _choose_end(meld: Meld, joker_to: str | None, named: Meld, what: str) -> str:
    """The end a moving joker goes to (``named``: the meld as the errors name it)."""
    ends = _run_ends(meld)
    if not ends:
        raise IllegalMoveError("illegal_lay_off", f"{_where(named)} is full: neither end can take {what}")
    if joker_to is None:
        if len(ends) == 1:
            return ends[0]
        raise IllegalMoveError(
            "illegal_lay_off", f"Choose where {what} goes on {_where(named)}: joker_to 'high' or 'low'"
        )
    if joker_to not in ends:
        raise IllegalMoveError(
            "illegal_lay_off",
            f"{what.capitalize()} cannot go to the {joker_to} end of {_where(named)}: "
            "an ace is high or low, never both, and runs never wrap",
        )
    return joker_to


def _extend(meld: Meld, card: int, end: str) -> Meld:
    if end == HIGH:
        return _with(meld, (*meld.cards, card), meld.low)
    return _with(meld, (card, *meld.cards), meld.low - 1)


def lay_off_options(meld: Meld, card: int, rules: Rules) -> list[str | None]:
    """The ``joker_to`` values with which ``card`` may be laid off on ``meld`` (empty: none).

    ``[None]`` when no joker moves to an end; otherwise each open end.
    """
    return _lay_off_options(meld, card, rules.joker_limit, rules.title)


def _lay_off_options(meld: Meld, card: int, joker_limit: int | None, title: str) -> list[str | None]:
    if meld.kind == BOOK or not (card == JOKER or _displaces(meld, card)):
        try:
            _lay_off(meld, card, None, joker_limit, title)
        except IllegalMoveError:
            return []
        return [None]
    out: list[str | None] = []
    for end in (HIGH, LOW):
        try:
            _lay_off(meld, card, end, joker_limit, title)
        except IllegalMoveError:
            continue
        out.append(end)
    return out


def candidate_cards(meld: Meld, rules: Rules) -> set[int]:
    """Cards that might be laid off on ``meld`` (a fast superset; check with :func:`lay_off_options`)."""
    return _candidate_cards(meld, rules.joker_limit)


def _candidate_cards(meld: Meld, joker_limit: int | None) -> set[int]:
    out: set[int] = set()
    if joker_limit is None or meld.jokers < joker_limit:
        out.add(JOKER)
    if meld.kind == BOOK:
        out.update(meld.low * 4 + s for s in range(4))
        return out
    if meld.high < 14:
        out.add(make_card(meld.high + 1, meld.suit))
    if meld.low > 1:
        out.add(make_card(meld.low - 1, meld.suit))
    for i, c in enumerate(meld.cards):
        if c == JOKER:
            out.add(make_card(meld.low + i, meld.suit))
    return out


def lay_off_fits(meld: Meld, rules: Rules) -> tuple[tuple[int, tuple[str | None, ...]], ...]:
    """Every card that may be laid off on ``meld`` now, in card order, each with its
    ``joker_to`` choices (:func:`lay_off_options`). Cached: a meld stays on the table,
    unchanged, for many turns, and only two rules matter."""
    return lay_off_fits_for(meld, rules.joker_limit, rules.title)


@lru_cache(maxsize=16384)
def lay_off_fits_for(meld: Meld, joker_limit: int | None, title: str) -> tuple[tuple[int, tuple[str | None, ...]], ...]:
    """:func:`lay_off_fits` with the two rules it reads (``Rules.joker_limit`` and ``Rules.title``)."""
    out = []
    for card in sorted(_candidate_cards(meld, joker_limit)):
        ends = _lay_off_options(meld, card, joker_limit, title)
        if ends:
            out.append((card, tuple(ends)))
    return tuple(out)


def _displaces(meld: Meld, card: int) -> bool:
    """Whether laying off natural ``card`` on run ``meld`` displaces a joker (rather than extending)."""
    if card == JOKER or meld.kind != RUN or card & 3 != meld.suit:
        return False
    rank = card >> 2
    high_rank = 14 if rank == 1 else rank
    if (high_rank == meld.high + 1 or rank == meld.low - 1) and len(meld.cards) < 13:
        return False
    return any(meld.low <= r <= meld.high and meld.cards[r - meld.low] == JOKER for r in {rank, high_rank})
