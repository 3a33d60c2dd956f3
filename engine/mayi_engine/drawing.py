"""The draw: taking the upcard, or the stock once the claim window is done (which serves the winning claim)."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import card_name
from .claims import pass_upcard, pending_claimants
from .errors import IllegalMoveError
from .events import ClaimWon, Event, TookUpcard
from .moves import DrawStock, TakeDiscard
from .rounds import stock_to
from .state import DRAW_PHASE, PLAY_PHASE, State
from .turns import bump, give, own_turn, set_turn_deadline, turn_error, window_closed


def verify_take_discard(s: State, seat: int, move: TakeDiscard, now: float | None) -> None:
    """Refuse taking the upcard as the draw unless ``seat`` is on turn to draw."""
    own_turn(s, seat, "draw", (DRAW_PHASE,))


def take_discard(s: State, seat: int, move: TakeDiscard, plan: None, now: float, events: list[Event]) -> None:
    """Apply a verified draw of the upcard (it voids the claims on it)."""
    card = s.discard[-1]
    s.discard = s.discard[:-1]
    give(s, seat, card)
    voided = s.claims
    s.claims = ()
    s.held = card
    s.phase = PLAY_PHASE
    s.claim_closes_at = None
    set_turn_deadline(s, now)
    events.append(TookUpcard(seat, card, voided_claims=voided, discard_top=s.discard[-1] if s.discard else None))


def claims_still_open(s: State, now: float | None) -> bool:
    """Whether the stock draw must wait: a seat may still answer the upcard, and the
    window's clock has not run out."""
    return bool(pending_claimants(s)) and not window_closed(s, now)


def draw_stock_error(s: State, seat: int, now: float | None) -> IllegalMoveError | None:
    """Why ``seat`` may not draw from the stock now, or ``None``: its turn to draw, and the
    claim window closed or answered by every eligible seat."""
    error = turn_error(s, seat, "draw", (DRAW_PHASE,))
    if error is not None:
        return error
    if claims_still_open(s, now):
        pending = pending_claimants(s)
        closes = s.claim_closes_at
        at = now if now is not None else 0.0
        wait = max(0.0, (closes if closes is not None else at) - at)
        return IllegalMoveError(
            "claims_open",
            f"Claims are still open on the {card_name(s.discard[-1])}: "
            f"seat{'s' if len(pending) > 1 else ''} {', '.join(map(str, pending))} may still answer "
            f"(the window closes in {wait:.0f} s)",
            retry_after=wait,
            closes_at=closes,
        )
    return None


def verify_draw_stock(s: State, seat: int, move: DrawStock, now: float | None) -> tuple[int, ...]:
    """Refuse a stock draw by ``seat`` (not its turn to draw, or claims still open); else
    the seats still to answer the upcard, whose passes it records."""
    error = draw_stock_error(s, seat, now)
    if error is not None:
        raise error
    return pending_claimants(s)


def draw_stock(
    s: State,
    seat: int,
    move: DrawStock | None,
    pending: Sequence[int],
    now: float,
    events: list[Event],
    timeout: bool = False,
) -> None:
    """Apply a verified stock draw: the seats still ``pending`` are passed (the window has
    closed), the winning claim is served, then the draw."""
    for p in pending:
        pass_upcard(s, p, None, None, now, events, timeout=True)
    s.phase = PLAY_PHASE
    s.claim_closes_at = None
    set_turn_deadline(s, now)
    winner = next((c for c in _clockwise_from(s.turn, s.players) if c in s.claims), None) if s.claims else None
    if winner is None:
        stock_to(s, seat, now, events, timeout=timeout)
        return
    rules = s.rules
    card = s.discard[-1]
    s.discard = s.discard[:-1]
    give(s, winner, card)
    s.claims_used = bump(s.claims_used, winner)
    events.append(ClaimWon(winner, card, rules.claim_penalty, s.claims, s.discard[-1] if s.discard else None))
    if rules.penalty_before_draw:
        order = [winner] * rules.claim_penalty + [seat]
    else:
        order = [seat] + [winner] * rules.claim_penalty
    for taker in order:
        if not stock_to(s, taker, now, events, penalty=taker == winner, timeout=timeout and taker == seat):
            return
    s.claims = ()


def _clockwise_from(seat: int, n: int) -> list[int]:
    return [(seat + k) % n for k in range(1, n)]
