"""The API's status for every engine error code comes from the engine's ErrorCode."""

from __future__ import annotations

import pytest

from mayi_engine import ErrorCode, IllegalMoveError, InvalidMoveError
from mayi_service.problems import ENGINE_STATUS, from_engine


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_engine_code_has_the_status_its_kind_says(code: ErrorCode) -> None:
    expected = 422 if code.invalid else 409
    assert ENGINE_STATUS[code.value] == expected == code.http_status
    for error in (IllegalMoveError, InvalidMoveError):
        problem = from_engine(error(code, f"{code} happened"))
        assert problem.code == code.value
        # An invalid code is 422 whatever the class; an illegal one is 409 unless raised as invalid input.
        assert problem.status == (422 if code.invalid or error is InvalidMoveError else 409)


def test_illegal_discard_is_422_as_docs_api_promises() -> None:
    """It was missing from the hand-kept map and answered 409."""
    problem = from_engine(IllegalMoveError("illegal_discard", "In Shanghai you may never discard your last card"))
    assert problem.status == 422 and problem.code == "illegal_discard"


def test_the_map_holds_exactly_the_engine_codes() -> None:
    assert set(ENGINE_STATUS) == {code.value for code in ErrorCode}
