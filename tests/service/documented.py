"""Hold the service's responses to the committed OpenAPI document, strictly.

:func:`record` makes an app note every response it sends (method, path template,
status, content type, body); :func:`problems` checks each against the schema the
document gives for its operation and status: an undocumented status, a content
type or a field the document does not declare, a missing required field or a
value of the wrong type is a problem. The ``app`` fixture of tests/conftest.py
records every test's responses and fails the test on any problem, so the whole
suite holds the document to what the service sends.

The document is OpenAPI 3.0 (``nullable``); :func:`json_schema` turns a schema
of it into JSON Schema (draft 7) for ``jsonschema_rs``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
from flask import Flask, Response, request

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


@cache
def spec() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    return document


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: ``nullable: true`` admits null; the rest is the same."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: json_schema(value) for key, value in node.items() if key not in ("nullable", "discriminator")}
    if not node.get("nullable"):
        return out
    if "type" in out and "enum" not in out:
        out["type"] = [out["type"], "null"]
        return out
    return {"anyOf": [out, {"type": "null"}]}


def _response(response: dict[str, Any]) -> dict[str, Any]:
    """A response object, its ``$ref`` (to ``components/responses``) followed."""
    if "$ref" in response:
        found: dict[str, Any] = spec()["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        return found
    return response


@cache
def _validator(method: str, path: str, status: str, content_type: str) -> Any:
    response = _response(spec()["paths"][path][method]["responses"][status])
    schema = response["content"][content_type]["schema"]
    root = {"allOf": [json_schema(schema)], "components": {"schemas": json_schema(spec()["components"]["schemas"])}}
    return jsonschema_rs.Draft7Validator(root)


def problems(sent: Sent) -> list[str]:
    """What is wrong with ``sent`` by the document (nothing: ``[]``)."""
    where = f"{sent.method.upper()} {sent.path} {sent.status}"
    operation = spec()["paths"].get(sent.path, {}).get(sent.method)
    if operation is None:
        return [f"{where}: the operation is not in the document"]
    responses = operation["responses"]
    status = str(sent.status)
    if status not in responses:
        if sent.status < 400 or "default" not in responses:
            return [f"{where}: the status is not documented"]
        status = "default"
    content = _response(responses[status]).get("content")
    if sent.streamed:  # an event stream: its content type at least
        ok = content is not None and any(key.split(";")[0] == sent.content_type for key in content)
        return [] if ok else [f"{where}: a stream of {sent.content_type}, not documented"]
    if not sent.body:
        return [] if content is None or sent.status in (204, 304) else [f"{where}: no body, but one is documented"]
    if content is None:
        return [f"{where}: a body ({sent.content_type}), but none is documented"]
    media = {key.split(";")[0].strip(): key for key in content}  # text/plain; version=1.0.0 -> text/plain
    if sent.content_type not in media:
        return [f"{where}: content type {sent.content_type} is not documented (only {sorted(content)})"]
    if not sent.content_type.endswith("json"):
        return []
    body = json.loads(sent.body)
    validator = _validator(sent.method, sent.path, status, media[sent.content_type])
    return [f"{where}: {error.message} at {list(error.instance_path)}" for error in validator.iter_errors(body)]


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
            )
        )
        return response

    return sent


def all_problems(sent: list[Sent]) -> list[str]:
    return [problem for one in sent for problem in problems(one)]


@cache
def _component_validator(name: str) -> Any:
    root = {
        "allOf": [{"$ref": f"#/components/schemas/{name}"}],
        "components": {"schemas": json_schema(spec()["components"]["schemas"])},
    }
    return jsonschema_rs.Draft7Validator(root)


def component_problems(name: str, value: Any) -> list[str]:
    """What is wrong with ``value`` as the document's schema ``name`` (nothing: ``[]``)."""
    return [f"{name}: {e.message} at {list(e.instance_path)}" for e in _component_validator(name).iter_errors(value)]
