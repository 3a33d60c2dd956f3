"""Every problem code the service declares (``mayi_service.problem_types.Problem``, the
OpenAPI document's enum) and every code docs/api.md documents has its own SDK exception,
raised for that code at the registered status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mayi_sdk import Client, LegalMove, errors
from mayi_sdk.models import MOVE_PATHS
from mayi_service.problem_types import PROBLEM_CODES, Problem

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def documented() -> dict[str, int]:
    """The codes of docs/api.md's table of errors, with their status."""
    text = API_DOC.read_text()
    table = text[text.index("## Errors") :]
    table = table[: table.index("\n## ", 5)]
    found: dict[str, int] = {}
    for line in table.splitlines():
        row = re.match(r"\| (\d{3}) \| ([^|]+) \|", line)
        if row:
            for code in re.findall(r"`([a-z_]+)`", row.group(2)):
                found[code] = int(row.group(1))
    return found


def statuses() -> dict[str, int]:
    """The status of each code, as the service's problem registry gives it."""
    return {p.code: p.status for p in Problem if p.status is not None}


def test_the_documented_codes_are_the_declared_ones() -> None:
    assert len(documented()) > 20
    assert set(documented()) <= set(PROBLEM_CODES)


@pytest.mark.parametrize("code", PROBLEM_CODES)
def test_every_code_has_an_exception_of_its_own(code: str) -> None:
    cls = errors.BY_CODE.get(code)
    assert cls is not None, f"mayi_sdk.errors has no exception for {code!r}"
    assert [c for c, k in errors.BY_CODE.items() if k is cls] == [code]  # no other code shares it
    status = statuses().get(code, 418)  # "error": any status without a code of its own
    raised = errors.error_for(status, {"code": code, "detail": f"the detail of {code}"})
    assert type(raised) is cls and raised.code == code and raised.status_code == status
    assert str(raised) == f"the detail of {code}"
    if cls.status:
        assert cls.status == status


def test_a_code_this_sdk_does_not_know_raises_the_class_of_its_status() -> None:
    raised = errors.error_for(409, {"code": "some_new_rule", "detail": "no"})
    assert type(raised) is errors.Conflict and raised.code == "some_new_rule"


def test_play_with_an_unknown_move_type_names_it_and_the_known_ones() -> None:
    with Client("http://127.0.0.1:9") as client, pytest.raises(ValueError) as caught:  # no request is sent
        client.play("g1", LegalMove("jump", {"card": "TH"}))
    message = str(caught.value)
    assert "'jump'" in message and all(known in message for known in MOVE_PATHS)
    assert not isinstance(caught.value, KeyError)
