"""The service clocks (docs/rules.md §14): deadlines, timed-out decisions, absence.

Every decision has a deadline. When it passes, the service plays the
:class:`~mayi_engine.moves.Timeout` move: an unanswered claim is a pass, an undrawn
turn draws from the stock, an undiscarded turn discards the highest-scoring card the
seat could not lay off on that turn. Three timeouts in a row mark a seat absent; an
absent seat is played for at once until it acts again. The engine never reads a
clock: ``now`` is always an argument.
"""

from __future__ import annotations

from .errors import IllegalMoveError
from .game import Event, _count_timeout, _discard, _draw_stock, _pass, _pending, _seat_returns, pending_claimants
from .legal import legal_lay_offs
from .moves import LayOff
from .state import Phase, State

#: Most decisions one Timeout move plays (absent seats are played at once) before returning.
MAX_TIMEOUT_STEPS = 500


def deadline(state: State) -> float | None:
    """When the next decision times out (a :class:`Timeout` move is then due)."""
    s = state
    if s.phase is Phase.FINISHED:
        return None
    times = []
    if s.turn_deadline is not None:
        times.append(s.turn_deadline)
    waiting = False  # a present seat may still answer the upcard
    if s.phase is Phase.DRAW and s.claim_closes_at is not None:
        pending = pending_claimants(s)
        waiting = any(not s.absent[p] for p in pending)
        if any(s.absent[p] for p in pending):
            times.append(s.claim_closes_at - s.rules.claim_seconds)
        elif pending:
            times.append(s.claim_closes_at)
    if s.absent[s.actor] and s.turn_deadline is not None and not waiting:
        # An absent seat is played at once (from when its decision started), but its stock
        # draw still waits for the present seats' answers to the upcard.
        if s.phase is Phase.DRAW and s.claim_closes_at is not None:
            times.append(s.claim_closes_at - s.rules.claim_seconds)
        else:
            times.append(s.turn_deadline - s.rules.turn_seconds)
    return min(times) if times else None


def play_timeouts(s: State, now: float, events: list[Event]) -> None:
    """Play, on the state being built, every decision whose deadline has passed at ``now``
    (the :class:`~mayi_engine.moves.Timeout` move); ``not_due`` if none has."""
    acted = False
    for _ in range(MAX_TIMEOUT_STEPS):
        if s.phase is Phase.FINISHED:
            break
        actor = s.actor
        if s.phase is Phase.DRAW and s.claim_closes_at is not None:
            for p in _pending(s):
                if now >= s.claim_closes_at or s.absent[p]:
                    _pass(s, p, now, events, timeout=True)
                    acted = True
        due = s.absent[actor] or (s.turn_deadline is not None and now >= s.turn_deadline)
        if not due:
            break
        if s.phase is Phase.DRAW:
            if _pending(s):
                break  # a present seat may still answer (claim window longer than the turn clock)
            _count_timeout(s, actor, events)
            _draw_stock(s, actor, now, events, timeout=True)
        elif s.phase is Phase.FIRST_OFFER:
            _count_timeout(s, actor, events)
            _pass(s, actor, now, events, timeout=True)
        else:
            _count_timeout(s, actor, events)
            _discard(s, actor, timeout_discard(s, actor), now, events, timeout=True)
        acted = True
    if not acted:
        raise IllegalMoveError("not_due", "No deadline has passed yet")


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
    if state.phase is Phase.PLAY and state.down[seat] and (not state.went_down or state.rules.lay_off_on_go_down_turn):
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
    _seat_returns(s, seat, events)
    return s, events
