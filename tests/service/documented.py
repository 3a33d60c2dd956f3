"""Hold the service's responses to the committed OpenAPI document, strictly.

:func:`record` makes an app note every response it sends (method, path, status,
content type, headers, body); :func:`problems` has an off-the-shelf OpenAPI 3.0
validator, openapi-core, check each against the document: an undocumented
operation, status or content type, a field the document does not declare, a
missing required field, a value of the wrong type, a ``null`` where the schema
does not admit one (``nullable`` counts only beside a ``type``, as OpenAPI 3.0.3
says), or a documented header of the wrong form is a problem. The ``app`` fixture
of tests/support/service_fixtures.py records every test's responses and fails the test on any
problem, so the whole suite holds the document to what the service sends. Each
distinct answer is checked once; of a test's 2xx answers of one operation and status,
each of a shape not checked before (:func:`shape`: its fields, and which are null,
empty or of which type, at every depth), and of the rest at most :data:`PER_OPERATION`
spread evenly over the test (a test that hammers one game sends thousands of views of
a few shapes, and openapi-core takes some 30 ms a view), and every error answer.
:func:`component_problems` checks a value against one schema of the document
with the same validator (openapi-schema-validator's ``OAS30Validator``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from openapi_core import Config, OpenAPI
from openapi_core.deserializing.media_types.util import json_loads
from openapi_core.testing import MockRequest, MockResponse
from openapi_schema_validator import OAS30Validator

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"

_RULE_PART = re.compile(r"<(?:[a-z]+:)?([a-z_]+)>")


@dataclass(frozen=True)
class Sent:
    """One response the app sent."""

    method: str
    path: str  # the OpenAPI path template: /v1/games/{game_id}
    status: int
    content_type: str
    body: bytes
    streamed: bool = False
    url_path: str = ""  # the request's path (empty: the template, whose {parts} match as values)
    headers: tuple[tuple[str, str], ...] = ()
    content_type_header: str = ""  # the Content-Type as sent, with its parameters


@cache
def spec() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    return document


@cache
def _openapi() -> OpenAPI:
    # problem+json is JSON (RFC 9457): read as openapi-core reads application/json.
    return OpenAPI.from_dict(
        spec(), config=Config(extra_media_type_deserializers={"application/problem+json": json_loads})
    )


def _messages(error: BaseException) -> list[str]:
    """The words of an openapi-core error, with each schema error it wraps (and where)."""
    found: list[str] = []
    cause: BaseException | None = error
    while cause is not None:
        for schema_error in getattr(cause, "schema_errors", None) or ():
            where = "/".join(str(part) for part in schema_error.absolute_path)
            found.append(f"{schema_error.message} at [{where}]")
        cause = cause.__cause__
    return found or [str(error) or type(error).__name__]


def problems(sent: Sent) -> list[str]:
    """What is wrong with ``sent`` by the document (nothing: ``[]``)."""
    where = f"{sent.method.upper()} {sent.path} {sent.status}"
    operation = spec()["paths"].get(sent.path, {}).get(sent.method)
    if operation is None:
        return [f"{where}: the operation is not in the document"]
    if str(sent.status) not in operation["responses"] and (
        sent.status < 400 or "default" not in operation["responses"]
    ):
        return [f"{where}: the status is not documented"]
    if sent.streamed:  # an event stream: openapi-core reads a body whole, so its content type at least
        content = _content(operation, sent.status)
        ok = content is not None and any(key.split(";")[0] == sent.content_type for key in content)
        return [] if ok else [f"{where}: a stream of {sent.content_type}, not documented"]
    if not sent.body and sent.status not in (204, 304) and _content(operation, sent.status):
        return [f"{where}: no body, but one is documented"]
    if sent.body and not _content(operation, sent.status):
        return [f"{where}: a body ({sent.content_type}), but none is documented"]
    req = MockRequest("http://localhost", sent.method, sent.url_path or sent.path)
    response = MockResponse(
        sent.body,
        status_code=sent.status,
        content_type=(sent.content_type_header or sent.content_type) if sent.body else None,
        headers=dict(sent.headers),
    )
    result = _openapi().unmarshal_response(req, response)
    return [f"{where}: {message}" for error in result.errors for message in _messages(error)]


def _content(operation: dict[str, Any], status: int) -> dict[str, Any] | None:
    responses = operation["responses"]
    response = responses.get(str(status)) or responses.get("default") or {}
    if "$ref" in response:
        response = spec()["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    found: dict[str, Any] | None = response.get("content")
    return found


#: The response header fields the document may describe (the rest are HTTP's own, not the API's).
_API_HEADERS = ("etag", "retry-after", "ratelimit", "ratelimit-policy")


def record(app: Flask) -> list[Sent]:
    """Make ``app`` note every response it sends (streamed bodies are left out) in the list returned."""
    sent: list[Sent] = []

    @app.after_request
    def _note(response: Response) -> Response:
        rule = request.url_rule
        if rule is None or rule.rule in ("/", "/openapi.json") or rule.rule.startswith(("/docs", "/web/")):
            return response  # no route (a 404 of its own), or not an operation of the API
        body = b"" if response.is_streamed else response.get_data()
        sent.append(
            Sent(
                request.method.lower(),
                _RULE_PART.sub(r"{\1}", rule.rule),
                response.status_code,
                response.mimetype or "",
                body,
                response.is_streamed,
                request.path,
                tuple((k, v) for k, v in response.headers.items() if k.lower() in _API_HEADERS),
                response.content_type or "",
            )
        )
        return response

    return sent


#: The 2xx answers of one operation and status a test has checked at most, besides one of
#: each shape (spread evenly: the values the shapes do not tell apart, such as enums).
PER_OPERATION = 40


def shape(value: Any) -> Any:
    """What a JSON value's schema could tell apart: each object's fields and their shapes,
    a list's distinct element shapes (an empty list apart), a scalar's type (null apart)."""
    if isinstance(value, dict):
        return tuple(sorted((key, shape(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("[]", frozenset(shape(item) for item in value))
    return type(value).__name__


def _body_shape(one: Sent) -> Any:
    if one.content_type not in ("application/json", "application/problem+json") or not one.body:
        return (one.content_type, one.body)
    try:
        return shape(json.loads(one.body))
    except ValueError:
        return (one.content_type, one.body)


def all_problems(sent: list[Sent]) -> list[str]:
    """The problems of the answers of one test (see the module's docstring for which)."""
    distinct = list(dict.fromkeys(sent))
    groups: dict[tuple[str, str, int], list[Sent]] = {}
    for one in distinct:
        groups.setdefault((one.method, one.path, one.status), []).append(one)
    checked: list[Sent] = []
    for (_, _, status), group in groups.items():
        if status >= 300 or len(group) <= PER_OPERATION:
            checked.extend(group)
            continue
        step = len(group) / PER_OPERATION
        chosen = {int(i * step) for i in range(PER_OPERATION - 1)} | {len(group) - 1}
        seen: set[Any] = set()
        for at, one in enumerate(group):
            key = (_body_shape(one), tuple(sorted(k.lower() for k, _ in one.headers)))
            if key not in seen or at in chosen:
                seen.add(key)
                checked.append(one)
    return [problem for one in checked for problem in problems(one)]


@cache
def _component_validator(name: str) -> Any:
    root = {"allOf": [{"$ref": f"#/components/schemas/{name}"}], "components": spec()["components"]}
    return OAS30Validator(root)


def component_problems(name: str, value: Any) -> list[str]:
    """What is wrong with ``value`` as the document's schema ``name`` (nothing: ``[]``)."""
    return [f"{name}: {e.message} at {list(e.absolute_path)}" for e in _component_validator(name).iter_errors(value)]
