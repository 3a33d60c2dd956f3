"""The error tree of the engine.

Every rejected move raises a :class:`MayIError` with a stable ``code`` (the API's
problem ``code``) and a message that names the rule and the offending cards in
words a player understands. :class:`InvalidMoveError` is for input that is not a
move at all (a card code that is no card, a meld that is not a list);
:class:`IllegalMoveError` for a well-formed move that the rules forbid now.
"""

from __future__ import annotations

from typing import Any


class MayIError(Exception):
    """Base of every engine error: ``code`` is stable, ``message`` is for people."""

    code: str = "illegal_move"

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
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
