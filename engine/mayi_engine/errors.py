"""The error tree of the engine.

Every rejected move raises a :class:`MayIError` with a stable ``code`` (the API's
problem ``code``) and a message that names the rule and the offending cards in
words a player understands. :class:`InvalidMoveError` is for input that is not a
move at all (a card code that is no card, a meld that is not a list);
:class:`IllegalMoveError` for a well-formed move that the rules forbid now.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every code an engine error may carry, each either *invalid* (the move or set-up
    is malformed or can never be accepted as sent: HTTP 422) or *illegal* (well formed,
    but the rules forbid it now: HTTP 409). See :attr:`invalid`."""

    # Illegal now (409).
    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    CLAIMS_OPEN = "claims_open"
    CLAIM_NOT_ALLOWED = "claim_not_allowed"
    GAME_OVER = "game_over"
    NOT_DUE = "not_due"
    # Invalid as sent (422).
    VALIDATION_ERROR = "validation_error"
    BAD_CARD = "bad_card"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    ILLEGAL_MELD = "illegal_meld"
    ILLEGAL_LAY_OFF = "illegal_lay_off"
    ILLEGAL_DISCARD = "illegal_discard"
    STATE_VERSION = "state_version"

    @property
    def invalid(self) -> bool:
        """True: malformed, never acceptable as sent (422); False: forbidden now (409)."""
        return self in _INVALID

    @property
    def http_status(self) -> int:
        """The HTTP status the API answers with: 422 if :attr:`invalid`, else 409."""
        return 422 if self in _INVALID else 409

    def __repr__(self) -> str:
        return repr(self.value)


_INVALID = frozenset(
    {
        ErrorCode.VALIDATION_ERROR,
        ErrorCode.BAD_CARD,
        ErrorCode.CARD_NOT_IN_HAND,
        ErrorCode.ILLEGAL_MELD,
        ErrorCode.ILLEGAL_LAY_OFF,
        ErrorCode.ILLEGAL_DISCARD,
        ErrorCode.STATE_VERSION,
    }
)


class MayIError(Exception):
    """Base of every engine error: ``code`` (an :class:`ErrorCode`) is stable, ``message``
    is for people. A code that is not an :class:`ErrorCode` is refused (``ValueError``)."""

    code: ErrorCode

    def __init__(self, code: ErrorCode | str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.extra = extra

    def __str__(self) -> str:
        return self.message


class InvalidMoveError(MayIError):
    """The move is malformed: it could never be legal."""


class IllegalMoveError(MayIError):
    """The move is well formed, but the rules forbid it now."""


class ConfigError(MayIError):
    """A table set-up (players, options, stacked decks) is not allowed."""
