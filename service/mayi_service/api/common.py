"""Helpers shared by the blueprints."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn, TypeVar

import flask
import orjson
from flask import current_app, request
from flask_smorest import Blueprint, abort
from marshmallow import RAISE, missing
from webargs.flaskparser import FlaskParser, is_json_request
from werkzeug.exceptions import RequestEntityTooLarge

from mayi_service.api.problems import CONTENT_TYPE, PROBLEM_TYPE, Problem, ServiceError, for_status
from mayi_service.api.schemas import ProblemSchema
from mayi_service.service import Service

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


def services() -> Service:
    """The app's :class:`~mayi_service.service.Service` (what the views use)."""
    found: Service = current_app.extensions["mayi"]
    return found


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


def _once(data: bytes, body: dict[str, Any]) -> bool:
    """Whether each key of ``body`` (as orjson read ``data``: the last of keys named twice)
    is written once in ``data``, so the body had no key twice; ``False`` (not known) for a
    body with escapes, which could spell a key another way."""
    return b"\\" not in data and all(data.count(b'"%s"' % key.encode()) == 1 for key in body)


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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: One instance of each request schema class, reused (webargs would build one a request).
        self._schemas: dict[type, Any] = {}

    def _get_schema(self, argmap: Any, req: flask.Request) -> Any:
        if isinstance(argmap, type):
            found = self._schemas.get(argmap)
            if found is None:
                found = self._schemas[argmap] = super()._get_schema(argmap, req)
            return found
        return super()._get_schema(argmap, req)

    def _raw_load_json(self, req: flask.Request) -> Any:
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
    """The project's Blueprint: schemas' ``unknown=RAISE`` holds for every location with a body
    or query, and the decorators that only document (``doc``, ``alt_response``) add no layer
    that runs on every request (flask-smorest's wrap the view in a function of their own)."""

    ARGUMENTS_PARSER = StrictParser()

    def doc(self, **kwargs: Any) -> Callable[[F], F]:
        return _doc_only(super().doc(**kwargs))

    def alt_response(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        return _doc_only(super().alt_response(*args, **kwargs))

    def documented_arguments(self, schema: Any, **kwargs: Any) -> Callable[[F], F]:
        """``arguments`` for the documentation only: the view reads its body itself, with
        :func:`read_arguments` (no webargs and flask-smorest layers around the view)."""
        return _doc_only(super().arguments(schema, **kwargs))

    def documented_response(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        """``response`` for the documentation only, for a view that returns a ``Response``
        itself (flask-smorest's wrapper would only pass it through)."""
        return _doc_only(super().response(*args, **kwargs))


def read_arguments(schema: type, accept: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """The JSON body of the request as ``schema`` loads it, read leanly: a body that ``accept``
    says is already what the schema would load it into (the common, valid shapes: strings
    and booleans only) is taken as orjson reads it; any other body, or one orjson refuses,
    goes through the strict JSON reader and the schema (webargs), whose errors name the field
    (and which refuses a key written twice)."""
    parser: StrictParser = StrictBlueprint.ARGUMENTS_PARSER
    req = request._get_current_object()  # type: ignore[attr-defined]
    _readable(req)
    if accept is not None and is_json_request(req):
        data = read_body(req)
        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError:
            body = None
        if type(body) is dict and accept(body) and _once(data, body):
            return body
    loaded: dict[str, Any] = parser.parse(schema, req, location="json")
    return loaded


def _doc_only(decorator: Callable[[Any], Any]) -> Callable[[F], F]:
    """``decorator`` applied for the documentation it writes: the view keeps that
    documentation (``_apidoc``) and is not wrapped."""

    def apply(func: F) -> F:
        def stand_in() -> None:  # pragma: no cover - never called
            raise NotImplementedError

        stand_in._apidoc = getattr(func, "_apidoc", {})  # type: ignore[attr-defined]
        func._apidoc = decorator(stand_in)._apidoc  # type: ignore[attr-defined]
        return func

    return apply


#: A blueprint never registered: its ``alt_response`` only writes documentation.
_DOC = StrictBlueprint("mayi-doc", __name__)
