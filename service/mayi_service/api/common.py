"""Helpers shared by the blueprints."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn, TypeVar

import flask
from flask import request
from flask_smorest import Blueprint, abort
from marshmallow import RAISE, Schema, missing
from webargs.flaskparser import FlaskParser, is_json_request
from werkzeug.exceptions import RequestEntityTooLarge

from mayi_service.api.problems import CONTENT_TYPE, PROBLEM_TYPE, for_status
from mayi_service.api.schemas.problem import ProblemSchema
from mayi_service.problem_types import Problem, ServiceError

F = TypeVar("F", bound=Callable[..., Any])

_ERROR_TEXT = {
    400: "The body is not JSON the service reads (invalid, not UTF-8, nested too deeply)",
    401: "No seat token, or not a bearer token",
    403: "The token holds no seat at this game",
    404: "No such game",
    409: "The rules forbid this now (not your turn, wrong phase, claims still open, ...)",
    412: "If-Match: the game has moved on (version_conflict)",
    413: "The request body is too large",
    422: "The request is malformed, or the game as it is now does not allow this move (names the rule and the cards)",
    429: "Rate limited: retry after Retry-After seconds",
    503: "Busy, or the game store is not reachable: retry after Retry-After seconds "
    "(an action may have been applied: retry with the same Idempotency-Key)",
}

#: The problem of a status's example, where it is not the status's own (:func:`for_status`).
_EXAMPLE = {p.status: p for p in (Problem.NOT_YOUR_TURN, Problem.BUSY)}

#: Statuses whose problems carry a ``Retry-After`` header (409: only ``claims_open``).
_RETRY_AFTER = (409, 429, 503)

#: Where a view notes, in the request's WSGI environ, that the request answers or brings
#: the caller's decision (:func:`answers_decision`).
DECISION = "mayi.decision"


def answers_decision() -> None:
    """Note that this request answers or brings the caller's decision: a move the game
    accepted, a decisions poll that lists one, a seat's view with legal moves. Such a
    request is not counted against the rate limits per token and per address (the game
    allows one decision of a seat at a time): they count what play does not need."""
    request.environ[DECISION] = True


def bearer_token() -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ServiceError(
            Problem.UNAUTHORIZED,
            "Authorization: send 'Bearer <token>' with the token you were given",
            {"WWW-Authenticate": 'Bearer realm="mayi"'},
        )
    return token.strip()


def is_number(text: str) -> bool:
    """A whole number in ASCII digits that fits an event or version number (``str.isdigit``
    also accepts digits like "²" that ``int`` refuses)."""
    return text.isascii() and text.isdigit() and len(text) <= 15


#: The rate limits' header fields (draft-ietf-httpapi-ratelimit-headers-10), as the
#: operations refer to them; every response to a rate-limited request carries them.
RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {"$ref": "#/components/headers/RateLimitPolicy"},
    "RateLimit": {"$ref": "#/components/headers/RateLimit"},
}


def document_errors(*statuses: int) -> Callable[[F], F]:
    """Document problem+json responses for ``statuses`` on an operation."""

    def decorate(func: F) -> F:
        for status in statuses:
            kind = _EXAMPLE.get(status) or for_status(status)
            example = {
                "type": PROBLEM_TYPE + kind.code,
                "title": kind.title,
                "status": status,
                "detail": _ERROR_TEXT[status],
                "code": kind.code,
            }
            headers: dict[str, Any] | None = None
            if status in _RETRY_AFTER:
                headers = {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}
            if status == 429:
                headers = {**(headers or {}), **RATE_LIMIT_HEADERS}
            func = _DOC.alt_response(
                status,
                schema=ProblemSchema,
                content_type=CONTENT_TYPE,
                description=_ERROR_TEXT[status],
                example=example,
                headers=headers,
            )(func)
        return func

    return decorate


#: Deepest nesting of arrays and objects a JSON body may have (the schemas need 4).
MAX_JSON_DEPTH = 16

#: Most digits a JSON number may have (Python refuses integers of more than 4,300).
MAX_NUMBER_DIGITS = 40


def _bad_json(reason: str) -> NoReturn:
    abort(400, messages={"json": [reason]})


def _parse_number(text: str, kind: type[int] | type[float]) -> int | float:
    if len(text) > MAX_NUMBER_DIGITS:
        _bad_json(f"Invalid JSON body: a number of more than {MAX_NUMBER_DIGITS} characters")
    return kind(text)


def _no_constant(name: str) -> NoReturn:
    _bad_json(f"Invalid JSON body: {name} is not a JSON number")


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar: 0), without recursion."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            break
        level.extend((child, depth + 1) for child in children)
    return deepest


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing one that names a key twice: readers disagree on which one
    counts (the last, here; the first, in some proxies and languages)."""
    found = dict(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                _bad_json(f"Invalid JSON body: the key {key[:40]!r} appears more than once in one object")
            seen.add(key)
    return found


def _readable(req: flask.Request) -> None:
    """Refuse (415 ``unsupported_media_type``) a body in a form the service does not read:
    a ``Content-Encoding`` other than ``identity`` (with ``Accept-Encoding: identity``, RFC
    9110 section 15.5.16), or a ``charset`` other than UTF-8 (JSON is UTF-8: RFC 8259)."""
    environ = req.environ
    coding = environ.get("HTTP_CONTENT_ENCODING")
    if coding is not None and coding.strip().lower() not in ("", "identity"):
        raise ServiceError(
            Problem.UNSUPPORTED_MEDIA_TYPE,
            f"Content-Encoding: {coding[:40]!r} is not read: send the body as it is (no Content-Encoding)",
            {"Accept-Encoding": "identity"},
        )
    if ";" in environ.get("CONTENT_TYPE", ""):
        charset = req.mimetype_params.get("charset")
        if charset is not None and charset.strip().lower() != "utf-8":
            raise ServiceError(
                Problem.UNSUPPORTED_MEDIA_TYPE,
                f"Content-Type: charset={charset[:40]!r} is not read: a JSON body is UTF-8 (charset=utf-8, or none)",
            )


def read_body(req: flask.Request) -> bytes:
    """The request body, refusing one over the size limit (413) however it was sent.

    A chunked body has no ``Content-Length``: Werkzeug stops reading it at the limit
    and would hand on the first ``MAX_CONTENT_LENGTH`` bytes as if they were the body.
    """
    data = req.get_data(cache=True)
    limit = req.max_content_length
    chunked = req.content_length is None and limit is not None and len(data) >= limit
    if chunked and req.environ["wsgi.input"].read(1):  # more than the limit was sent
        raise RequestEntityTooLarge()
    return data


class StrictParser(FlaskParser):
    """Refuse unknown query parameters too (a typo like ``?stauts=`` is an error, not ignored);
    read JSON bodies strictly (a 400 that names the problem, never a 500)."""

    DEFAULT_UNKNOWN_BY_LOCATION: ClassVar[dict[str, str | None]] = {
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
        "query": RAISE,
        "querystring": RAISE,
    }

    def load_json(self, req: flask.Request, schema: Schema) -> Any:
        """The JSON body, or ``missing`` for a request without one (not JSON, or empty);
        webargs' documented hook for a parser's own reading of the ``json`` location."""
        _readable(req)
        if not is_json_request(req):
            return missing
        data = read_body(req)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            _bad_json(f"Invalid JSON body: not UTF-8 (byte {exc.start + 1})")
        if not text.strip():
            return missing
        try:
            value = json.loads(
                text,
                parse_int=lambda s: _parse_number(s, int),
                parse_float=lambda s: _parse_number(s, float),
                parse_constant=_no_constant,
                object_pairs_hook=_object,
            )
        except RecursionError:
            _bad_json(f"Invalid JSON body: nested more than {MAX_JSON_DEPTH} levels deep")
        except json.JSONDecodeError as exc:
            _bad_json(f"Invalid JSON body: {exc.msg} at line {exc.lineno} column {exc.colno}")
        if _depth(value) > MAX_JSON_DEPTH:
            _bad_json(f"Invalid JSON body: nested more than {MAX_JSON_DEPTH} levels deep")
        return value


class StrictBlueprint(Blueprint):
    """The project's Blueprint: its parser reads JSON bodies strictly and refuses unknown query
    parameters (:class:`StrictParser`)."""

    ARGUMENTS_PARSER = StrictParser()


#: A blueprint never registered: :func:`document_errors` documents with its ``alt_response``.
_DOC = StrictBlueprint("mayi-doc", __name__)
