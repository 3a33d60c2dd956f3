"""The service clocks (docs/rules.md §14): deadlines, timed-out decisions, absence.

Every decision has a deadline. When it passes, the service plays the
:class:`~mayi_engine.moves.Timeout` move: an unanswered claim is a pass, an undrawn
turn draws from the stock, an undiscarded turn discards the highest-scoring card the
seat could not lay off on that turn. Three timeouts in a row mark a seat absent; an
absent seat is played for at once until it acts again. The engine never reads a
clock: ``now`` is always an argument.
"""

from __future__ import annotations

from .claims import open_claimants, pass_upcard, pending_claimants
from .discarding import discard
from .drawing import draw_stock
from .errors import IllegalMoveError
from .events import Event
from .legal import legal_lay_offs
from .melding import may_lay_off_now
from .moves import Discard, LayOff, Timeout
from .state import DRAW_PHASE, FINISHED_PHASE, OFFER_PHASE, PLAY_PHASE, State
from .turns import clear_timeouts, count_timeout, window_closed

#: Most decisions one Timeout move plays (absent seats are played at once) before returning.
MAX_TIMEOUT_STEPS = 500


def deadline(state: State) -> float | None:
    """When the next decision times out (a :class:`Timeout` move is then due). Memoised on
    the state (the service asks for it for the view and again to store the game)."""
    memo = state._legal
    if "deadline" in memo:
        due: float | None = memo["deadline"]
        return due
    due = memo["deadline"] = _deadline(state)
    return due


def _deadline(s: State) -> float | None:
    phase = s.phase
    if phase is FINISHED_PHASE:
        return None
    turn_deadline = s.turn_deadline
    closes = s.claim_closes_at
    absent = s.absent
    due = turn_deadline  # the earliest of the times below (the first one met, if equal)
    waiting = False  # a present seat may still answer the upcard
    if phase is DRAW_PHASE and closes is not None:
        gone = False
        for p in pending_claimants(s):
            if absent[p]:
                gone = True
            else:
                waiting = True
        if gone or waiting:
            at = closes - s.rules.claim_seconds if gone else closes
            if due is None or at < due:
                due = at
    if absent[s.actor] and turn_deadline is not None and not waiting:
        # An absent seat is played at once (from when its decision started), but its stock
        # draw still waits for the present seats' answers to the upcard.
        if phase is DRAW_PHASE and closes is not None:
            at = closes - s.rules.claim_seconds
        else:
            at = turn_deadline - s.rules.turn_seconds
        if due is None or at < due:
            due = at
    return due


def _due_passes(s: State, now: float) -> list[int]:
    """The claimants the service passes for now: all, once the window has closed; absent ones at once."""
    if s.phase is not DRAW_PHASE or s.claim_closes_at is None:
        return []
    closed = window_closed(s, now)
    return [p for p in open_claimants(s) if closed or s.absent[p]]


def _actor_due(s: State, now: float) -> bool:
    """Whether the actor's decision is due: absent, or past its turn deadline (a stock
    draw also waits for the present seats' answers to the upcard)."""
    due = s.absent[s.actor] or (s.turn_deadline is not None and now >= s.turn_deadline)
    return due and not (s.phase is DRAW_PHASE and open_claimants(s))


def verify_timeout(s: State, seat: None, move: Timeout, now: float) -> None:
    """Refuse the :class:`~mayi_engine.moves.Timeout` move (``not_due``) unless a decision is due at ``now``."""
    if not _due_passes(s, now) and not _actor_due(s, now):
        raise IllegalMoveError("not_due", "No deadline has passed yet")


def play_timeouts(s: State, seat: None, move: Timeout, plan: None, now: float, events: list[Event]) -> None:
    """Apply the verified :class:`~mayi_engine.moves.Timeout` move to the state being built:
    play every decision whose deadline has passed at ``now`` (absent seats at once)."""
    for _ in range(MAX_TIMEOUT_STEPS):
        if s.phase is FINISHED_PHASE:
            break
        for p in _due_passes(s, now):
            pass_upcard(s, p, None, None, now, events, timeout=True)
        if not _actor_due(s, now):
            break
        actor = s.actor
        count_timeout(s, actor, events)
        if s.phase is DRAW_PHASE:
            draw_stock(s, actor, None, (), now, events, timeout=True)  # nobody is pending (_actor_due)
        elif s.phase is OFFER_PHASE:
            pass_upcard(s, actor, None, None, now, events, timeout=True)
        else:
            card = timeout_discard(s, actor)
            rest = list(s.hands[actor])
            rest.remove(card)
            discard(s, actor, Discard(card), tuple(rest), now, events, timeout=True)


def timeout_discard(state: State, seat: int) -> int:
    """The card the service discards for a seat out of time: its highest-scoring
    card that it could not lay off (the highest card if it could lay off them all).

    What the seat could lay off is judged by the rules in force on this turn
    (docs/rules.md, E22): nothing on the turn it went down where the variant forbids
    that (May I), nothing while discarding the first upcard, and never the card taken
    from the discard pile this turn under the hold rule.
    """
    hand = state.hands[seat]
    fitting: set[int] = set()
    if state.phase is PLAY_PHASE and state.down[seat] and may_lay_off_now(state):
        fitting = {
            c for move in legal_lay_offs(state, seat) if isinstance(move, LayOff) for p in move.parts for c in p.cards
        }
    score = state.rules.card_score
    pool = [c for c in hand if c not in fitting] or list(hand)
    return max(pool, key=lambda c: (score(c), c))


def seat_returns(state: State, seat: int) -> tuple[State, list[Event]]:
    """``seat`` is acting again: clear its timeouts and its absence (docs/rules.md, E2).

    :func:`play` does this for every move of the seat itself; the service calls it
    first, before it plays the decisions that are due, so that an absent seat's own
    request is not pre-empted by the service playing for it.
    """
    if not state.absent[seat] and not state.timeouts[seat]:
        return state, []
    s = state.clone()
    events: list[Event] = []
    clear_timeouts(s, seat, events)
    return s, events
