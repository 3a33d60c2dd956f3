"""The upcard's claim window, and the May I first-upcard offer: who may answer, claims and passes.

:func:`claim_refusal` is the one source of truth for who may claim or pass (the
window's clock is :func:`~mayi_engine.turns.window_closed`); :func:`claim_problem`
adds the offer and the clock, and :func:`claim_error` words it. :func:`to_act` is who
must decide next, the order every driver of a table asks the seats in.
"""

from __future__ import annotations

from .cards import card_name
from .errors import IllegalMoveError
from .events import Claimed, Event, Passed, TookUpcard
from .moves import Claim, Pass
from .rounds import stock_to
from .state import DRAW_PHASE, FINISHED_PHASE, FIRST_DISCARD_PHASE, OFFER_PHASE, PLAY_PHASE, State
from .turns import count_timeout, give, set_turn_deadline, window_closed

#: What a verified claim or pass hands to its apply step: the seats still to answer after
#: it, where the state had them memoised (``None``: not known).
Pending = tuple[int, ...] | None


def claim_refusal(s: State, seat: int) -> str | None:
    """Why ``seat`` may not answer the upcard (a key of ``_CLAIM_REFUSALS``), or ``None``."""
    if s.phase is PLAY_PHASE:
        return "drawn"
    if s.phase is not DRAW_PHASE:
        return "no_upcard"
    if seat == s.turn:
        return "on_turn"
    if seat in s.claims or seat in s.passes:
        return "answered"
    if seat == s.discarder and not s.rules.discarder_may_claim:
        return "own_discard"
    limit = s.rules.claim_limit
    if limit is not None and s.claims_used[seat] >= limit:
        return "no_buys_left"
    return None


_CLAIM_REFUSALS = {
    "no_upcard": ("wrong_phase", "There is no upcard on offer to {what} now"),
    "drawn": (
        "claim_not_allowed",
        "Claim not allowed: the claim window closed when seat {turn} drew, so there is no upcard to {what} "
        "(an unanswered claim is a pass); the next upcard comes with seat {turn}'s discard",
    ),
    "on_turn": (
        "claim_not_allowed",
        "You are on turn: take the upcard with a draw from the discard pile instead of a {what}",
    ),
    "answered": ("claim_not_allowed", "You have already answered this upcard"),
    "own_discard": ("claim_not_allowed", "In {title} you may not claim your own discard"),
    "no_buys_left": (
        "claim_not_allowed",
        "{title} allows {limit} buys per player in a round; you have used them, so you have no upcard to {what}",
    ),
}


def is_eligible(s: State, seat: int) -> bool:
    """Whether ``seat`` may claim or pass the upcard now (having not answered yet)."""
    return claim_refusal(s, seat) is None


def pending_claimants(state: State) -> tuple[int, ...]:
    """Seats that may still claim or pass the upcard, the clock aside: once its window has
    closed (``claim_closes_at``) they may no longer answer, and the next :class:`Timeout`
    or stock draw records their passes. Memoised on the state (a tuple: no caller can change it)."""
    memo = state._legal
    cached: tuple[int, ...] | None = memo.get("pending")
    if cached is None:
        cached = memo["pending"] = open_claimants(state)
    return cached


def open_claimants(s: State) -> tuple[int, ...]:
    """:func:`pending_claimants` of a state being built (never memoised): the seats
    :func:`claim_refusal` refuses nothing, in seat order."""
    if s.phase is not DRAW_PHASE:
        return ()
    return tuple([seat for seat in range(len(s.names)) if claim_refusal(s, seat) is None])


def to_act(state: State, now: float | None = None) -> tuple[int, ...]:
    """The seats that must decide now, in the order a table asks them: the seats that may
    still answer the upcard, clockwise from the seat on turn, then the actor (none once
    the game is over). With ``now``, claimants whose window has closed at ``now`` are left
    out: exactly the seats with a legal move at ``now`` (a property test holds them equal)."""
    if state.phase is FINISHED_PHASE:
        return ()
    pending = pending_claimants(state)
    if not pending or window_closed(state, now):
        return (state.actor,)
    turn = state.turn
    if pending[-1] < turn or pending[0] > turn:  # (seat order is already clockwise from the turn)
        return (*pending, state.actor)
    after = next(i for i, p in enumerate(pending) if p > turn)  # seat order, from the turn on
    return pending[after:] + pending[:after] + (state.actor,)


def claim_problem(s: State, seat: int, now: float | None) -> str | None:
    """Why ``seat`` may not claim or pass now (``"offer_seat"``: the first upcard is offered
    to another seat; ``"closed"``: the window's clock ran out; or a reason of
    :func:`claim_refusal`), or ``None``. The one place this is decided: :func:`claim_error`
    words it and :func:`~mayi_engine.legal.legal_moves` lists a claim and a pass when it is ``None``."""
    if s.phase is OFFER_PHASE:
        return "offer_seat" if seat != s.actor else None
    reason = claim_refusal(s, seat)
    if (reason is None or reason == "answered") and window_closed(s, now):
        return "closed"
    return reason


def claim_error(s: State, seat: int, what: str, now: float | None) -> IllegalMoveError | None:
    """Why ``seat`` may not claim or pass (``what``) now, or ``None``: the first-upcard
    offer's seat, the claim window's eligibility, and its clock."""
    reason = claim_problem(s, seat, now)
    if reason is None:
        return None
    if reason == "offer_seat":
        return IllegalMoveError(
            "not_your_turn", f"The first upcard is offered to seat {s.actor} now, not to seat {seat}"
        )
    if reason == "closed":
        closes = s.claim_closes_at or 0.0
        return IllegalMoveError(
            "claim_not_allowed",
            f"Claim not allowed: the claim window on the {card_name(s.discard[-1])} closed at {closes:g} "
            f"({(now or 0.0) - closes:.1f} s ago): an unanswered claim is a pass",
            closes_at=closes,
        )
    code, text = _CLAIM_REFUSALS[reason]
    return IllegalMoveError(code, text.format(what=what, title=s.rules.title, limit=s.rules.claim_limit, turn=s.turn))


def verify_claim(s: State, seat: int, move: Claim, now: float | None) -> Pending:
    """Refuse a claim ("May I", a buy, or taking the first upcard offered) by ``seat``."""
    return _verify_answer(s, seat, "claim", now)


def verify_pass(s: State, seat: int, move: Pass, now: float | None) -> Pending:
    """Refuse a pass on the upcard (or on the first upcard offered) by ``seat``."""
    return _verify_answer(s, seat, "pass", now)


def _verify_answer(s: State, seat: int, what: str, now: float | None) -> Pending:
    error = claim_error(s, seat, what, now)
    if error is not None:
        raise error
    known: tuple[int, ...] | None = s._legal.get("pending")
    return None if known is None else tuple([p for p in known if p != seat])


def claim(s: State, seat: int, move: Claim, pending: Pending, now: float, events: list[Event]) -> None:
    """Apply a verified claim: take the first upcard offered, or claim the upcard."""
    if s.phase is OFFER_PHASE:
        card = s.discard[-1]
        s.discard = s.discard[:-1]
        give(s, seat, card)
        s.held = card
        events.append(TookUpcard(seat, card, first_upcard=True, discard_top=s.discard[-1] if s.discard else None))
        s.actor = seat
        set_turn_deadline(s, now)
        s.phase = PLAY_PHASE if seat == s.turn else FIRST_DISCARD_PHASE
        return
    s.claims = (*s.claims, seat)
    events.append(Claimed(seat, s.discard[-1]))
    _remember(s, pending)


def pass_upcard(
    s: State, seat: int, move: Pass | None, pending: Pending, now: float, events: list[Event], timeout: bool = False
) -> None:
    """Apply a verified pass; ``timeout``: the service passes for a seat out of time (a
    timeout toward absence: an unanswered claim is a pass)."""
    if s.phase is OFFER_PHASE:
        events.append(Passed(seat, s.discard[-1], first_upcard=True, timeout=timeout))
        nxt = (seat + 1) % s.players
        if nxt == s.turn:
            # Nobody wanted it: the first player draws from the stock and plays on.
            s.actor = s.turn
            s.phase = PLAY_PHASE
            set_turn_deadline(s, now)
            stock_to(s, s.turn, now, events)
        else:
            s.actor = nxt
            set_turn_deadline(s, now)
        _remember(s, pending)
        return
    s.passes = (*s.passes, seat)
    events.append(Passed(seat, s.discard[-1], timeout=timeout))
    if timeout:
        count_timeout(s, seat, events)
    _remember(s, pending)


def _remember(s: State, pending: Pending) -> None:
    """Memoise the claimants a verified answer left (nothing else that decides them changed)."""
    if pending is not None and s.phase is DRAW_PHASE:
        s._legal["pending"] = pending
