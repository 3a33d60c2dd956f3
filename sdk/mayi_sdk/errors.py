"""The SDK's error tree, mapped from the API's problem codes.

::

    ApiError
    ├── TransportError              no answer: connection refused, reset, timed out
    └── ResponseError               the server answered with an error (status_code, code, detail)
        ├── BadRequest              400  bad_request (not JSON, nested too deep, ...)
        ├── Unauthorized            401  unauthorized
        ├── Forbidden               403  forbidden
        ├── NotFound                404  not_found
        │   └── NotEntered               not_entered (leaving a ladder the bot is not entered in)
        ├── MethodNotAllowed        405  method_not_allowed
        ├── NotAcceptable           406  not_acceptable
        ├── Conflict                409  conflict; the rules forbid this now
        │   ├── NotYourTurn              not_your_turn
        │   ├── WrongPhase               wrong_phase
        │   ├── ClaimsOpen               claims_open (retry_after, closes_at)
        │   ├── ClaimNotAllowed          claim_not_allowed
        │   ├── GameOver                 game_over
        │   ├── NotDue                   not_due (no deadline has passed)
        │   ├── GameStarted              game_started
        │   ├── SeatTaken                seat_taken
        │   ├── GameNotFinished          game_not_finished
        │   ├── BotAlreadySeated         bot_already_seated
        │   ├── HouseBotsUnavailable     house_bots_unavailable
        │   └── TooManyOpenTables        too_many_open_tables (limit)
        ├── VersionConflict         412  version_conflict (current_version)
        ├── RequestTooLarge         413  request_too_large
        ├── UnsupportedMediaType    415  unsupported_media_type
        ├── RequestTimeout          408  request_timeout (the HTTP server's own answers: 408, 414, 417, 431, 501)
        ├── UriTooLong              414  uri_too_long
        ├── ExpectationFailed       417  expectation_failed
        ├── HeadersTooLarge         431  headers_too_large
        ├── NotImplementedByServer  501  not_implemented
        ├── Invalid                 422  malformed, or never allowed by the rules
        │   ├── ValidationError          validation_error (errors)
        │   ├── BadCard                  bad_card (a card code that is no card)
        │   ├── CardNotInHand            card_not_in_hand
        │   ├── IllegalMeld              illegal_meld
        │   ├── IllegalLayOff            illegal_lay_off
        │   ├── IllegalDiscard           illegal_discard
        │   ├── StateVersion             state_version (a saved game of another format)
        │   └── IdempotencyKeyReused     idempotency_key_reused
        ├── RateLimited             429  rate_limited (retry_after)
        ├── ServerError             500  internal_error
        ├── Unavailable             503  unavailable; the action may have been applied
        │   ├── Busy                     busy (the game was too busy to commit; retry_after)
        │   └── ServerBusy               server_busy (too many waiting requests on that process)
        └── OtherError              any  error (an HTTP status without a code of its own)

Every problem code the service declares has its own class (:data:`BY_CODE`); a code this
version of the SDK does not know raises the class of its status.

Every :class:`ResponseError` carries the server's ``detail`` (which names the rule
or the field that was wrong) as its message.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """Base of every error of the service or of the way to it. (A call the SDK can tell is
    wrong before sending it, such as :meth:`~mayi_sdk.Client.play` of a move whose ``type``
    is no move type, raises a ``ValueError`` naming what was wrong.)"""


class TransportError(ApiError):
    """The request got no answer (connection refused or reset, a timeout)."""


class ResponseError(ApiError):
    """The server answered with an error (a ``application/problem+json`` body).

    ``status_code`` is the HTTP status, ``code`` the stable problem code, ``detail``
    the server's words for people, ``problem`` the whole problem body.
    """

    status: int = 0

    def __init__(self, status_code: int, code: str, detail: str, problem: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.code = code
        self.detail = detail
        self.problem = problem or {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status_code={self.status_code}, code={self.code!r}, detail={self.detail!r})"

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before trying again, when the server said so."""
        value = self.problem.get("retry_after")
        return float(value) if isinstance(value, int | float) else None


class BadRequest(ResponseError):
    status = 400


class Unauthorized(ResponseError):
    status = 401


class Forbidden(ResponseError):
    status = 403


class NotFound(ResponseError):
    status = 404


class NotEntered(NotFound):
    """The bot is not entered in that variant's ladder."""


class MethodNotAllowed(ResponseError):
    status = 405


class NotAcceptable(ResponseError):
    status = 406


class Conflict(ResponseError):
    """409: the request is well formed, but the rules forbid it now."""

    status = 409


class NotYourTurn(Conflict):
    pass


class WrongPhase(Conflict):
    pass


class ClaimsOpen(Conflict):
    """The stock draw waits for the claim window: ``retry_after`` seconds, until ``closes_at``."""

    @property
    def closes_at(self) -> float | None:
        value = self.problem.get("closes_at")
        return float(value) if isinstance(value, int | float) else None


class ClaimNotAllowed(Conflict):
    pass


class GameOver(Conflict):
    pass


class NotDue(Conflict):
    pass


class GameStarted(Conflict):
    pass


class SeatTaken(Conflict):
    pass


class GameNotFinished(Conflict):
    pass


class BotAlreadySeated(Conflict):
    """The bot already holds a seat at this table (one seat per table)."""


class HouseBotsUnavailable(Conflict):
    """The server runs no job worker, so no house bot could play (``MAYI_SCHEDULE_CLOCK_JOBS`` off)."""


class TooManyOpenTables(Conflict):
    """This address has as many waiting or playing tables as the service allows (``limit``)."""


class VersionConflict(ResponseError):
    """412: ``If-Match`` named a version the game has moved past (``current_version``), or
    a decision key the seat's decision no longer has (``current_key``: its key now, ``None``
    when the seat has no decision now)."""

    status = 412

    @property
    def current_version(self) -> int | None:
        value = self.problem.get("current_version")
        return int(value) if isinstance(value, int) else None

    @property
    def current_key(self) -> str | None:
        value = self.problem.get("current_key")
        return value if isinstance(value, str) else None


class RequestTooLarge(ResponseError):
    status = 413


class UnsupportedMediaType(ResponseError):
    status = 415


class RequestTimeout(ResponseError):
    """The request's body did not arrive whole in time (the HTTP server's own answer)."""

    status = 408


class ExpectationFailed(ResponseError):
    """An ``Expect`` header the HTTP server does not meet."""

    status = 417


class UriTooLong(ResponseError):
    """The request line (method, path and query string) is over the HTTP server's limit."""

    status = 414


class HeadersTooLarge(ResponseError):
    """Too many header fields, or one too long, for the HTTP server."""

    status = 431


class NotImplementedByServer(ResponseError):
    """The request uses HTTP the server does not implement (say a ``Transfer-Encoding`` other than chunked)."""

    status = 501


class Invalid(ResponseError):
    """422: malformed, or a move the rules never allow."""

    status = 422


class ValidationError(Invalid):
    @property
    def errors(self) -> list[str]:
        """Each problem with the request, naming its field."""
        found = self.problem.get("errors")
        return [str(e) for e in found] if isinstance(found, list) else [self.detail]


class BadCard(Invalid):
    pass


class CardNotInHand(Invalid):
    pass


class IllegalMeld(Invalid):
    pass


class IllegalLayOff(Invalid):
    pass


class IllegalDiscard(Invalid):
    pass


class StateVersion(Invalid):
    pass


class IdempotencyKeyReused(Invalid):
    pass


class RateLimited(ResponseError):
    status = 429


class ServerError(ResponseError):
    status = 500


class Unavailable(ResponseError):
    """503: the service could not answer now (its store is unreachable, or the game is
    too busy). An action answered 503 may still have been applied: the SDK retries it
    with the same Idempotency-Key, which can never apply it twice."""

    status = 503


class Busy(Unavailable):
    """The game was too busy to commit after many retries: retry after ``retry_after``."""


class ServerBusy(Unavailable):
    """The server process holds as many event streams and waiting long-polls as it may."""


class OtherError(ResponseError):
    """An HTTP error without a code of its own (code ``error``; any status)."""


#: The exception of each problem code (each code its own class).
BY_CODE: dict[str, type[ResponseError]] = {
    "bad_request": BadRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "not_entered": NotEntered,
    "method_not_allowed": MethodNotAllowed,
    "not_acceptable": NotAcceptable,
    "conflict": Conflict,
    "not_your_turn": NotYourTurn,
    "wrong_phase": WrongPhase,
    "claims_open": ClaimsOpen,
    "claim_not_allowed": ClaimNotAllowed,
    "game_over": GameOver,
    "not_due": NotDue,
    "game_started": GameStarted,
    "seat_taken": SeatTaken,
    "game_not_finished": GameNotFinished,
    "bot_already_seated": BotAlreadySeated,
    "house_bots_unavailable": HouseBotsUnavailable,
    "too_many_open_tables": TooManyOpenTables,
    "version_conflict": VersionConflict,
    "request_too_large": RequestTooLarge,
    "unsupported_media_type": UnsupportedMediaType,
    "request_timeout": RequestTimeout,
    "expectation_failed": ExpectationFailed,
    "uri_too_long": UriTooLong,
    "headers_too_large": HeadersTooLarge,
    "not_implemented": NotImplementedByServer,
    "validation_error": ValidationError,
    "bad_card": BadCard,
    "card_not_in_hand": CardNotInHand,
    "illegal_meld": IllegalMeld,
    "illegal_lay_off": IllegalLayOff,
    "illegal_discard": IllegalDiscard,
    "state_version": StateVersion,
    "idempotency_key_reused": IdempotencyKeyReused,
    "rate_limited": RateLimited,
    "internal_error": ServerError,
    "unavailable": Unavailable,
    "busy": Busy,
    "server_busy": ServerBusy,
    "error": OtherError,
}

_BY_STATUS: dict[int, type[ResponseError]] = {
    cls.status: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        NotAcceptable,
        Conflict,
        VersionConflict,
        RequestTooLarge,
        UnsupportedMediaType,
        RequestTimeout,
        ExpectationFailed,
        UriTooLong,
        HeadersTooLarge,
        NotImplementedByServer,
        Invalid,
        RateLimited,
        ServerError,
        Unavailable,
    )
}


def error_for(status_code: int, problem: dict[str, Any]) -> ResponseError:
    """The exception for an error response: by its problem ``code``, else by its status."""
    code = str(problem.get("code") or "")
    detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status_code}")
    cls = BY_CODE.get(code)
    if cls is None or (cls.status and cls.status != status_code):
        cls = _BY_STATUS.get(status_code, ServerError if status_code >= 500 else ResponseError)
    return cls(status_code, code, detail, problem)
