"""The API's problem types (RFC 9457), each declared once: its ``code``, HTTP ``status`` and ``title``;
and :class:`ServiceError`, the error every part of the service raises to answer one.

The engine's errors (by their :class:`~mayi_engine.ErrorCode`), the service's own, werkzeug's
and the HTTP server's answers, and the OpenAPI document's ``Problem.code`` enum all take theirs
from :class:`Problem`; tests/service/contract/test_problem_codes.py holds the SDK's exceptions
(``mayi_sdk.errors.BY_CODE``) and the tables of docs/api.md to it.

It imports only the engine's error codes: gunicorn's master process loads it (server/worker.py).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from mayi_engine.errors import ErrorCode, MayIError

PROBLEM_TYPE = "https://mayi.invalid/problems/"
CONTENT_TYPE = "application/problem+json"


class Problem(Enum):
    """A problem type: ``code`` (stable, for programs), the HTTP ``status`` it is answered with
    (``None`` for :attr:`ERROR`: an HTTP error of any status without a code of its own) and its
    ``title`` (the same for every problem of that code)."""

    code: str
    status: int | None
    title: str

    def __init__(self, code: str, status: int | None, title: str) -> None:
        self.code = str(code)
        self.status = status
        self.title = title

    # The code of each HTTP status (:func:`for_status`).
    BAD_REQUEST = ("bad_request", 400, "Bad request")
    UNAUTHORIZED = ("unauthorized", 401, "Unauthorized")
    FORBIDDEN = ("forbidden", 403, "Forbidden")
    NOT_FOUND = ("not_found", 404, "Not found")
    METHOD_NOT_ALLOWED = ("method_not_allowed", 405, "Method not allowed")
    NOT_ACCEPTABLE = ("not_acceptable", 406, "Not acceptable")
    REQUEST_TIMEOUT = ("request_timeout", 408, "Request timeout")
    CONFLICT = ("conflict", 409, "Conflict")
    VERSION_CONFLICT = ("version_conflict", 412, "Version conflict")
    REQUEST_TOO_LARGE = ("request_too_large", 413, "Request too large")
    URI_TOO_LONG = ("uri_too_long", 414, "URI too long")
    UNSUPPORTED_MEDIA_TYPE = ("unsupported_media_type", 415, "Unsupported media type")
    EXPECTATION_FAILED = ("expectation_failed", 417, "Expectation failed")
    VALIDATION_ERROR = (ErrorCode.VALIDATION_ERROR, 422, "Invalid request")
    RATE_LIMITED = ("rate_limited", 429, "Too many requests")
    HEADERS_TOO_LARGE = ("headers_too_large", 431, "Request headers too large")
    INTERNAL_ERROR = ("internal_error", 500, "Internal server error")
    NOT_IMPLEMENTED = ("not_implemented", 501, "Not implemented")
    UNAVAILABLE = ("unavailable", 503, "Service unavailable")
    ERROR = ("error", None, "Error")

    # The engine's (409: a move of this kind is not the seat's now; 422: this move is not legal
    # in the game as it is, or is malformed).
    NOT_YOUR_TURN = (ErrorCode.NOT_YOUR_TURN, 409, "Not your turn")
    WRONG_PHASE = (ErrorCode.WRONG_PHASE, 409, "Wrong phase")
    CLAIMS_OPEN = (ErrorCode.CLAIMS_OPEN, 409, "Claims open")
    CLAIM_NOT_ALLOWED = (ErrorCode.CLAIM_NOT_ALLOWED, 409, "Claim not allowed")
    GAME_OVER = (ErrorCode.GAME_OVER, 409, "Game over")
    NOT_DUE = (ErrorCode.NOT_DUE, 409, "No deadline has passed")
    BAD_CARD = (ErrorCode.BAD_CARD, 422, "Not a card")
    CARD_NOT_IN_HAND = (ErrorCode.CARD_NOT_IN_HAND, 422, "Card not in hand")
    ILLEGAL_MELD = (ErrorCode.ILLEGAL_MELD, 422, "Illegal meld")
    ILLEGAL_LAY_OFF = (ErrorCode.ILLEGAL_LAY_OFF, 422, "Illegal lay-off")
    ILLEGAL_DISCARD = (ErrorCode.ILLEGAL_DISCARD, 422, "Illegal discard")
    STATE_VERSION = (ErrorCode.STATE_VERSION, 422, "Saved game of another format")

    # The service's own.
    NOT_ENTERED = ("not_entered", 404, "Not entered in the ladder")
    GAME_STARTED = ("game_started", 409, "Game started")
    SEAT_TAKEN = ("seat_taken", 409, "Seat taken")
    GAME_NOT_FINISHED = ("game_not_finished", 409, "Game not finished")
    BOT_ALREADY_SEATED = ("bot_already_seated", 409, "Bot already seated")
    HOUSE_BOTS_UNAVAILABLE = ("house_bots_unavailable", 409, "House bots unavailable")
    TOO_MANY_OPEN_TABLES = ("too_many_open_tables", 409, "Too many open tables")
    IDEMPOTENCY_KEY_REUSED = ("idempotency_key_reused", 422, "Idempotency key reused")
    BUSY = ("busy", 503, "Game busy")
    SERVER_BUSY = ("server_busy", 503, "Server busy")

    def __repr__(self) -> str:
        return f"Problem.{self.name}"


#: Every problem code, sorted: the OpenAPI document's ``Problem.code`` enum.
PROBLEM_CODES = tuple(sorted(p.code for p in Problem))

#: The problem of each code.
BY_CODE = {p.code: p for p in Problem}

_BY_STATUS: dict[int | None, Problem] = {
    p.status: p
    for p in (
        Problem.BAD_REQUEST,
        Problem.UNAUTHORIZED,
        Problem.FORBIDDEN,
        Problem.NOT_FOUND,
        Problem.METHOD_NOT_ALLOWED,
        Problem.NOT_ACCEPTABLE,
        Problem.REQUEST_TIMEOUT,
        Problem.CONFLICT,
        Problem.VERSION_CONFLICT,
        Problem.REQUEST_TOO_LARGE,
        Problem.URI_TOO_LONG,
        Problem.UNSUPPORTED_MEDIA_TYPE,
        Problem.EXPECTATION_FAILED,
        Problem.VALIDATION_ERROR,
        Problem.RATE_LIMITED,
        Problem.HEADERS_TOO_LARGE,
        Problem.INTERNAL_ERROR,
        Problem.NOT_IMPLEMENTED,
        Problem.UNAVAILABLE,
    )
}


def for_status(status: int) -> Problem:
    """The problem of an HTTP error that has no code of its own (werkzeug's, gunicorn's):
    the code of its status, else :attr:`Problem.ERROR`."""
    return _BY_STATUS.get(status, Problem.ERROR)


def of_engine(code: ErrorCode) -> Problem:
    """The problem of an engine error code."""
    return BY_CODE[code.value]


class ServiceError(Exception):
    """An error the API reports: its :class:`Problem` (which gives its status and stable
    code), and a detail for people."""

    def __init__(self, kind: Problem, detail: str, headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(detail)
        if kind.status is None:
            raise ValueError(f"{kind!r} has no status of its own")
        self.problem = kind
        self.status: int = kind.status
        self.code = kind.code
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def from_engine(exc: MayIError) -> ServiceError:
    """The API error for an engine error."""
    extra = {k: v for k, v in exc.extra.items() if v is not None}
    headers = {}
    if exc.code == "claims_open" and "retry_after" in extra:
        headers["Retry-After"] = str(max(1, int(-(-extra["retry_after"] // 1))))
    return ServiceError(of_engine(exc.code), exc.message, headers, **extra)
