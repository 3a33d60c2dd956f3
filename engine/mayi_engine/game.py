"""The moves: each kind registered once with its verify step and its apply step.

A verify step only raises (or returns what applying needs: its *plan*); an apply step
checks nothing and works on a copy of the state. :func:`play` runs both,
:func:`check_move` and :func:`is_legal` only verify, and
:func:`~mayi_engine.legal.legal_moves` is built on the predicates the verify steps
word their errors from (and tested to agree with them on random states). The steps
live with the phase of the turn they belong to: :mod:`.claims` (claim, pass),
:mod:`.drawing`, :mod:`.melding` (go down, lay off), :mod:`.discarding`, and
:mod:`.clocks` (the service's :class:`Timeout`); dealing and the end of a round are
:mod:`.rounds`.

>>> from .rules import MAY_I
>>> from .rounds import new_game
>>> state = new_game(MAY_I, ["Ann", "Bob", "Cy"], seed=bytes(32))
>>> state.phase.value, state.actor
('first_offer', 0)
>>> state = apply_move(state, 0, Pass())
>>> state.actor
1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .claims import claim, pass_upcard, verify_claim, verify_pass
from .clocks import play_timeouts, verify_timeout
from .discarding import discard, verify_discard
from .drawing import draw_stock, take_discard, verify_draw_stock, verify_take_discard
from .errors import IllegalMoveError, InvalidMoveError, MayIError
from .events import Event
from .melding import lay_down, verify_go_down, verify_lay_off
from .moves import Claim, Discard, DrawStock, GoDown, LayOff, Move, Pass, TakeDiscard, Timeout
from .state import FINISHED_PHASE, State
from .turns import clear_timeouts

#: ``(state, seat, move, now) -> plan``: raises the move's error, or returns what applying it needs.
Verify = Callable[[State, Any, Any, float], Any]
#: ``(state being built, seat, move, plan, now, events)``: applies a verified move.
Apply = Callable[[State, Any, Any, Any, float, list[Event]], None]

#: Each kind of move: its verify step and its apply step.
MOVES: dict[type[Move], tuple[Verify, Apply]] = {
    DrawStock: (verify_draw_stock, draw_stock),
    TakeDiscard: (verify_take_discard, take_discard),
    Claim: (verify_claim, claim),
    Pass: (verify_pass, pass_upcard),
    Discard: (verify_discard, discard),
    GoDown: (verify_go_down, lay_down),
    LayOff: (verify_lay_off, lay_down),
    Timeout: (verify_timeout, play_timeouts),
}


def apply_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> State:
    """The state after ``seat`` plays ``move`` at time ``now`` (raises if illegal)."""
    return play(state, seat, move, now)[0]


def check_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> None:
    """Raise the :class:`MayIError` that ``move`` would meet, or return if it is legal.

    Only verifies: nothing is applied (no card moves, no next round is dealt).
    """
    verify_move(state, seat, move, now)


def is_legal(state: State, seat: int | None, move: Move, now: float = 0.0) -> bool:
    """Whether :func:`check_move` accepts ``move``."""
    try:
        verify_move(state, seat, move, now)
    except MayIError:
        return False
    return True


def play(state: State, seat: int | None, move: Move, now: float = 0.0) -> tuple[State, list[Event]]:
    """Apply ``move`` for ``seat`` at ``now``: the new state and the events it made.

    ``seat`` is ``None`` only for :class:`Timeout`, which the service (not a player) plays.
    The move is verified first (its verify step only raises), then applied to a copy
    of the state with no further checks.
    """
    verify, apply = _steps(state, seat, move)
    plan = verify(state, seat, move, now)
    s = state.clone()
    s.moves += 1
    events: list[Event] = []
    apply(s, seat, move, plan, now, events)
    if seat is not None and (s.timeouts[seat] or s.absent[seat]):
        clear_timeouts(s, seat, events)
    return s, events


def verify_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> Any:
    """Raise the :class:`MayIError` that ``move`` meets, or return what applying it needs
    (the melds and hand after a go-down or lay-off, the hand after a discard). Changes nothing."""
    verify, _ = _steps(state, seat, move)
    return verify(state, seat, move, now)


def _steps(state: State, seat: int | None, move: Move) -> tuple[Verify, Apply]:
    """The verify and apply steps of ``move`` (the one dispatch on the kind of move)."""
    if state.phase is FINISHED_PHASE:
        raise IllegalMoveError("game_over", "The game is over")
    steps = MOVES.get(type(move))
    if steps is None:
        raise InvalidMoveError("validation_error", f"{move!r} is not a move")
    if (seat is None or not 0 <= seat < len(state.names)) and type(move) is not Timeout:
        raise IllegalMoveError("not_your_turn", f"seat {seat!r} is not a seat at this table")
    return steps
