"""The problem registry (``mayi_service.problem_types.Problem``) is the one list of error
codes and their statuses: every error the server sends takes its code and status from it
(no status written beside a code in the service's source), and the four things derived
from it or kept by hand beside it agree with it, code for code and status for status: the
OpenAPI document's ``Problem.code`` enum, the SDK's exceptions (``mayi_sdk.errors.BY_CODE``),
the tables of docs/api.md, and nginx's own problem answers (deploy/nginx.conf)."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

from documented import spec
from gunicorn.workers.base import Worker

from mayi_engine import ErrorCode
from mayi_sdk import errors
from mayi_service.problem_types import BY_CODE, PROBLEM_CODES, PROBLEM_TYPE, Problem, for_status

ROOT = Path(__file__).resolve().parents[3]
SERVICE = ROOT / "service" / "mayi_service"
API_DOC = ROOT / "docs" / "api.md"

#: What raises or answers an error: each takes the ``Problem`` first.
CONSTRUCTORS = ("ServiceError", "problem", "Refused")


def registry() -> dict[str, int | None]:
    return {p.code: p.status for p in Problem}


def the_documents_enum() -> list[str]:
    enum: list[str] = spec()["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
    return enum


def the_sdks() -> dict[str, int | None]:
    """The status of each code's SDK exception (``None``: any status, ``OtherError``)."""
    return {code: cls.status or None for code, cls in errors.BY_CODE.items()}


def documented() -> dict[str, set[int | None]]:
    """The statuses of each code in docs/api.md's tables of errors (``| status | code | when |``)."""
    found: dict[str, set[int | None]] = {}
    in_table = False
    for line in API_DOC.read_text().splitlines():
        if line.startswith("| status | code |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
        row = re.match(r"\| (\d{3}|any) \| ([^|]+) \|", line) if in_table else None
        if row:
            status = None if row.group(1) == "any" else int(row.group(1))
            for code in re.findall(r"`([a-z_]+)`", row.group(2)):
                found.setdefault(code, set()).add(status)
    return found


def calls_in_the_source() -> list[tuple[str, int, str, ast.expr]]:
    """Each ``ServiceError(...)``, ``problem(...)`` and ``Refused(...)`` call of the service's
    source, with its first argument."""
    found = []
    for path in sorted(SERVICE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name in CONSTRUCTORS:
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.lineno, name, node.args[0]))
    return found


def problems_named(expr: ast.expr) -> list[str]:
    """The ``Problem.<NAME>`` members an expression names."""
    return [
        node.attr
        for node in ast.walk(expr)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Problem"
    ]


# -- the registry -------------------------------------------------------------------


def test_each_code_is_declared_once_and_every_engine_code_has_a_status() -> None:
    assert len(BY_CODE) == len(Problem) == len(PROBLEM_CODES)
    assert {code.value for code in ErrorCode} <= set(BY_CODE)
    assert all(BY_CODE[code.value].status in (409, 422) for code in ErrorCode)
    assert [p for p in Problem if p.status is None] == [Problem.ERROR]
    assert all(p.title and p.title[0].isupper() for p in Problem)


def test_an_http_error_without_a_code_of_its_own_takes_its_statuss() -> None:
    assert for_status(412) is Problem.VERSION_CONFLICT and for_status(422) is Problem.VALIDATION_ERROR
    assert for_status(418) is Problem.ERROR
    assert all(for_status(p.status) is p for p in (Problem.BAD_REQUEST, Problem.CONFLICT, Problem.UNAVAILABLE))


# -- the sources take it --------------------------------------------------------------


def test_the_source_scan_finds_the_services_errors() -> None:
    named = {name for _, _, _, first in calls_in_the_source() for name in problems_named(first)}
    assert {"SEAT_TAKEN", "BOT_ALREADY_SEATED", "VALIDATION_ERROR", "BUSY", "REQUEST_TIMEOUT"} <= named


def test_no_status_is_written_beside_a_code() -> None:
    """Every error the service raises or answers names its ``Problem`` (which gives the
    status), never an HTTP status of its own."""
    literal = [
        where
        for where, _, _, first in calls_in_the_source()
        if isinstance(first, ast.Constant) and isinstance(first.value, int)
    ]
    assert not literal, f"a status written by hand at {literal}: name the Problem instead"
    unknown = [
        (where, name)
        for where, _, _, first in calls_in_the_source()
        for name in problems_named(first)
        if name not in Problem.__members__
    ]
    assert not unknown, f"no such Problem: {unknown}"


def test_the_http_servers_own_answers_have_codes_of_their_own() -> None:
    """Every status gunicorn answers by itself (its ``handle_error``), and each refusal of
    mayi_service.server.deadlines, is the problem of its status: the worker answers them by status."""
    statuses = {int(s) for s in re.findall(r"status_int = (\d{3})", inspect.getsource(Worker.handle_error))}
    assert {400, 414, 431, 501} <= statuses
    assert all(for_status(status) is not Problem.ERROR for status in statuses), {s: for_status(s) for s in statuses}
    refusals = [
        (where, name)
        for where, _, kind, first in calls_in_the_source()
        if kind == "Refused"
        for name in problems_named(first)
    ]
    assert len(refusals) >= 6
    wrong = [(where, name) for where, name in refusals if for_status(Problem[name].status or 0) is not Problem[name]]
    assert not wrong, f"a refusal whose problem is not its status's own: {wrong}"


# -- what is derived from it or kept beside it agrees with it ------------------------------


def test_the_documents_enum_is_the_registry() -> None:
    assert the_documents_enum() == list(PROBLEM_CODES) == sorted(registry())


def test_the_sdks_exceptions_are_the_registry() -> None:
    assert the_sdks() == registry()


def test_the_docs_tables_are_the_registry() -> None:
    found = documented()
    assert len(found) > 30
    assert set(found) == set(registry()), (
        f"docs/api.md lacks {sorted(set(registry()) - set(found))}, and names {sorted(set(found) - set(registry()))}"
    )
    wrong = {code: statuses for code, statuses in found.items() if statuses != {registry()[code]}}
    assert not wrong, f"docs/api.md gives these codes other statuses than their Problem's: {wrong}"


def test_nginxs_own_answers_are_registered_problems() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    bodies = [json.loads(body) for body in re.findall(r"return \d{3} '(\{.*\})';", conf)]
    assert len(bodies) >= 2
    for body in bodies:
        kind = BY_CODE[body["code"]]
        assert (body["status"], body["title"], body["type"]) == (kind.status, kind.title, PROBLEM_TYPE + kind.code)
