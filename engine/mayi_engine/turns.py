"""Rules every phase of a turn shares, each written once, and the state updates they share.

The predicates the errors are worded from: :func:`turn_problem` (whose turn, which
phase), :func:`last_card_problem` (the last-card rule) and :func:`window_closed` (the
claim window's clock). The updates work on a state being built (a clone): hands, the
turn's clock, the claim window opening, and the count of timeouts toward absence.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Sequence

from .cards import card_codes, counts_of, remove_cards
from .errors import IllegalMoveError
from .events import Event, SeatAbsent, SeatReturned
from .rules import Rules
from .state import DRAW_PHASE, FIRST_DISCARD_PHASE, OFFER_PHASE, PLAY_PHASE, Phase, State

_PHASE_HINTS = {
    DRAW_PHASE: "draw first (from the stock or the discard pile)",
    PLAY_PHASE: "you have drawn already; go down, lay off or discard",
    FIRST_DISCARD_PHASE: "you took the first upcard: discard one card now",
}


def turn_problem(s: State, seat: int, phases: tuple[Phase, ...] = (PLAY_PHASE,)) -> str | None:
    """Why ``seat`` may not act on its turn now (``"offer"``: the May I first upcard is
    being offered; ``"not_actor"``; ``"phase"``: not one of ``phases``), or ``None``.
    The one place the turn is checked: :func:`turn_error` words it."""
    if s.phase is OFFER_PHASE:
        return "offer"
    if s.actor != seat:
        return "not_actor"
    if s.phase not in phases:
        return "phase"
    return None


def turn_error(s: State, seat: int, what: str, phases: tuple[Phase, ...] = (PLAY_PHASE,)) -> IllegalMoveError | None:
    """Why ``seat`` may not ``what`` now (it must be the actor, in one of ``phases``), or ``None``."""
    problem = turn_problem(s, seat, phases)
    if problem is None:
        return None
    if problem == "offer":
        return IllegalMoveError(
            "wrong_phase",
            f"The first upcard is being offered to seat {s.actor}; it is not time to {what} "
            "(answer the offer with a claim to take it, or a pass)",
        )
    if problem == "not_actor":
        return IllegalMoveError(
            "not_your_turn", f"It is seat {s.actor}'s turn, not seat {seat}'s: you cannot {what} now"
        )
    return IllegalMoveError("wrong_phase", f"You cannot {what} now: {_PHASE_HINTS[s.phase]}")


def own_turn(s: State, seat: int, what: str, phases: tuple[Phase, ...] = (PLAY_PHASE,)) -> None:
    """Raise :func:`turn_error` if there is one."""
    error = turn_error(s, seat, what, phases)
    if error is not None:
        raise error


def last_card_problem(rules: Rules, left: int, discarding: bool) -> str | None:
    """The last-card rule, the one place it is written: where a player may not go out by
    discarding (Shanghai), a discard may not empty the hand, and a go-down or lay-off may
    not keep a single card (it could never be discarded). The problem, or ``None``."""
    if rules.out_by_discard:
        return None
    if discarding and left == 0:
        return f"In {rules.title} you may never discard your last card; go out by melding it"
    if not discarding and left == 1:
        return (
            f"In {rules.title} you may never discard your last card, so you may not keep just one: "
            "play all your cards in one request to go out"
        )
    return None


def window_closed(s: State, now: float | None) -> bool:
    """Whether the claim window on the upcard has closed at ``now`` (the one place its clock
    is read; ``None``: no time given, the window is taken as open)."""
    closes = s.claim_closes_at
    return now is not None and closes is not None and now >= closes


def hand_less(hand: tuple[int, ...], cards: Sequence[int]) -> tuple[int, ...]:
    """``hand`` less ``cards``; ``card_not_in_hand`` naming the missing ones."""
    rest = remove_cards(hand, cards)
    if rest is None:
        counts = counts_of(hand)
        missing = []
        for c in cards:
            if counts[c]:
                counts[c] -= 1
            else:
                missing.append(c)
        raise IllegalMoveError(
            "card_not_in_hand", f"You do not hold {' '.join(card_codes(missing))}", cards=card_codes(missing)
        )
    return rest


def set_hand(s: State, seat: int, hand: tuple[int, ...]) -> None:
    hands = list(s.hands)
    hands[seat] = hand
    s.hands = tuple(hands)


def give(s: State, seat: int, card: int) -> None:
    """Put ``card`` in ``seat``'s hand (kept sorted)."""
    hands = list(s.hands)
    hand = list(hands[seat])
    insort(hand, card)
    hands[seat] = tuple(hand)
    s.hands = tuple(hands)


def bump(values: tuple[int, ...], seat: int, by: int = 1) -> tuple[int, ...]:
    out = list(values)
    out[seat] += by
    return tuple(out)


def flag(values: tuple[bool, ...], seat: int, value: bool) -> tuple[bool, ...]:
    out = list(values)
    out[seat] = value
    return tuple(out)


def set_turn_deadline(s: State, now: float) -> None:
    s.turn_deadline = now + s.rules.turn_seconds


def open_window(s: State, now: float) -> None:
    """The seat on turn draws next; the upcard's claim window opens at ``now``."""
    s.phase = DRAW_PHASE
    s.actor = s.turn
    s.claims = ()
    s.passes = ()
    s.went_down = False
    s.held = -1
    s.claim_closes_at = now + s.rules.claim_seconds
    s.turn_deadline = max(now + s.rules.turn_seconds, s.claim_closes_at)


def count_timeout(s: State, seat: int, events: list[Event]) -> None:
    """One more timeout of ``seat`` in a row; the third marks it absent."""
    s.timeouts = bump(s.timeouts, seat)
    if s.timeouts[seat] >= 3 and not s.absent[seat]:
        s.absent = flag(s.absent, seat, True)
        events.append(SeatAbsent(seat, s.timeouts[seat]))


def clear_timeouts(s: State, seat: int, events: list[Event]) -> None:
    """``seat`` acted: its timeouts and its absence are cleared."""
    if s.absent[seat]:
        events.append(SeatReturned(seat))
    s.timeouts = bump(s.timeouts, seat, -s.timeouts[seat])
    s.absent = flag(s.absent, seat, False)
