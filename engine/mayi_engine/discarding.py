"""The discard that ends a turn (or goes out), and the next turn's claim window it opens."""

from __future__ import annotations

from .errors import IllegalMoveError
from .events import Discarded, Event, TurnLimit
from .moves import Discard
from .rounds import end_round
from .state import FIRST_DISCARD_PHASE, PLAY_PHASE, State
from .turns import hand_less, last_card_problem, open_window, own_turn, set_hand


def verify_discard(s: State, seat: int, move: Discard, now: float | None) -> tuple[int, ...]:
    """Refuse a discard that is not ``seat``'s to make, of a card it lacks, or of the last
    card where the variant forbids that; else the hand it leaves (for the apply step)."""
    own_turn(s, seat, "discard", (PLAY_PHASE, FIRST_DISCARD_PHASE))
    rest = hand_less(s.hands[seat], [move.card])
    problem = last_card_problem(s.rules, len(rest), discarding=True)
    if problem is not None:
        raise IllegalMoveError("illegal_discard", problem)
    return rest


def discard(
    s: State, seat: int, move: Discard, rest: tuple[int, ...], now: float, events: list[Event], timeout: bool = False
) -> None:
    """Apply a verified discard, leaving ``rest`` in hand: go out, or pass the turn on."""
    card = move.card
    set_hand(s, seat, rest)
    s.discard = (*s.discard, card)
    events.append(Discarded(seat, card, timeout))
    if not rest:
        end_round(s, seat, now, events)
        return
    if s.phase is not FIRST_DISCARD_PHASE:
        s.turn = (seat + 1) % s.players
        s.round_turns += 1
        if s.round_turns >= s.rules.max_turns:
            # A service safeguard so that every round ends, even when nobody ever draws from the stock.
            events.append(TurnLimit(None, s.round_turns))
            end_round(s, -1, now, events)
            return
    s.discarder = seat
    open_window(s, now)
