"""Helpers shared by the blueprints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from flask import current_app, request
from flask_smorest import Blueprint
from marshmallow import RAISE
from webargs.flaskparser import FlaskParser

from ..config import Settings
from ..problems import CONTENT_TYPE, TITLES, ServiceError
from ..schemas import ProblemSchema
from ..tables import Tables

F = TypeVar("F", bound=Callable[..., Any])

_ERROR_TEXT = {
    400: "The body is not JSON",
    401: "No seat token, or not a bearer token",
    403: "The token holds no seat at this game",
    404: "No such game",
    409: "The rules forbid this now (not your turn, wrong phase, claims still open, ...)",
    412: "If-Match: the game has moved on (version_conflict)",
    413: "The request body is too large",
    422: "The request is malformed, or the rules never allow it (names the rule and the cards)",
    429: "Rate limited: retry after Retry-After seconds",
}


@dataclass
class Services:
    """What the views need, built once per app."""

    settings: Settings
    tables: Tables
    redis: Any


def services() -> Services:
    found: Services = current_app.extensions["mayi"]
    return found


def bearer_token() -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ServiceError(
            401,
            "unauthorized",
            "Authorization: send 'Bearer <token>' with the token you were given",
            {"WWW-Authenticate": 'Bearer realm="mayi"'},
        )
    return token.strip()


def document_errors(*statuses: int) -> Callable[[F], F]:
    """Document problem+json responses for ``statuses`` on an operation."""

    def decorate(func: F) -> F:
        for status in statuses:
            example = {
                "type": f"https://mayi.invalid/problems/{'rate_limited' if status == 429 else 'example'}",
                "title": TITLES[status],
                "status": status,
                "detail": _ERROR_TEXT[status],
                "code": {
                    400: "bad_request",
                    401: "unauthorized",
                    403: "forbidden",
                    404: "not_found",
                    409: "not_your_turn",
                    412: "version_conflict",
                    413: "request_too_large",
                    422: "validation_error",
                    429: "rate_limited",
                }[status],
            }
            func = _DOC.alt_response(
                status,
                schema=ProblemSchema,
                content_type=CONTENT_TYPE,
                description=_ERROR_TEXT[status],
                example=example,
            )(func)
        return func

    return decorate


#: A blueprint never registered: its ``alt_response`` only writes documentation.
_DOC = Blueprint("mayi-doc", __name__)


class StrictParser(FlaskParser):
    """Refuse unknown query parameters too (a typo like ``?stauts=`` is an error, not ignored)."""

    DEFAULT_UNKNOWN_BY_LOCATION: ClassVar[dict[str, str | None]] = {
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
        "query": RAISE,
        "querystring": RAISE,
    }


class StrictBlueprint(Blueprint):
    """The project's Blueprint: schemas' ``unknown=RAISE`` holds for every location with a body or query."""

    ARGUMENTS_PARSER = StrictParser()
