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
    """Every code an engine error may carry."""

    # A move of this kind is not the seat's to make now.
    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    CLAIMS_OPEN = "claims_open"
    CLAIM_NOT_ALLOWED = "claim_not_allowed"
    GAME_OVER = "game_over"
    NOT_DUE = "not_due"
    # The move (with its cards and melds) or set-up is malformed, or not legal in the game as it is.
    VALIDATION_ERROR = "validation_error"
    BAD_CARD = "bad_card"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    ILLEGAL_MELD = "illegal_meld"
    ILLEGAL_LAY_OFF = "illegal_lay_off"
    ILLEGAL_DISCARD = "illegal_discard"
    STATE_VERSION = "state_version"

    def __repr__(self) -> str:
        return repr(self.value)


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
