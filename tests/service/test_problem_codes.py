"""Every problem code any part of the server can send (the engine's errors, the app's
``ServiceError``\\ s and ``problem`` calls, the status codes of werkzeug's errors, and
gunicorn's own answers) is in the OpenAPI document's ``Problem.code`` enum, which is
``mayi_service.schemas.PROBLEM_CODES``, and has its own exception in the SDK."""

from __future__ import annotations

import ast
from pathlib import Path

from documented import spec

from mayi_engine import ErrorCode
from mayi_sdk import errors
from mayi_service.problems import HTTP_CODES
from mayi_service.schemas import PROBLEM_CODES
from mayi_service.server import GUNICORN_ERRORS

SERVICE = Path(__file__).resolve().parents[2] / "service" / "mayi_service"


def codes_in_the_source() -> set[str]:
    """The code (a string literal) of every ``ServiceError(status, code, ...)`` and
    ``problem(status, code, ...)`` call in the service's source."""
    found: set[str] = set()
    for path in SERVICE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2):
                continue
            func = node.func
            if isinstance(func, ast.Name):
                name = func.id
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "problems":
                name = func.attr  # problems.problem(...), problems.ServiceError(...)
            else:
                continue  # say the worker's self.problem(status, reason, detail): gunicorn's, below
            code = node.args[1]
            if name in ("ServiceError", "problem") and isinstance(code, ast.Constant) and isinstance(code.value, str):
                found.add(code.value)
    return found


def every_code_sent() -> set[str]:
    return (
        {code.value for code in ErrorCode}
        | codes_in_the_source()
        | set(HTTP_CODES.values())
        | set(GUNICORN_ERRORS.values())
        | {"error"}  # problems.py: an HTTP status without a code of its own
    )


def test_the_source_scan_finds_the_services_codes() -> None:
    assert {"seat_taken", "bot_already_seated", "validation_error", "busy"} <= codes_in_the_source()


def test_every_code_the_server_sends_is_in_the_documents_enum() -> None:
    enum = spec()["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
    assert enum == list(PROBLEM_CODES)  # the committed document is the declared codes
    missing = every_code_sent() - set(enum)
    assert not missing, f"Problem.code lacks {sorted(missing)}"


def test_gunicorns_own_answers_are_declared() -> None:
    assert {"uri_too_long", "headers_too_large", "request_timeout", "not_implemented"} <= set(PROBLEM_CODES)


def test_every_code_the_server_sends_has_an_sdk_exception() -> None:
    missing = every_code_sent() - set(errors.BY_CODE)
    assert not missing, f"mayi_sdk.errors.BY_CODE lacks {sorted(missing)}"
