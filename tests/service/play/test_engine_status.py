"""The API's status for every engine error code comes from the service's problem registry."""

from __future__ import annotations

import pytest

from mayi_engine import ErrorCode, IllegalMoveError, InvalidMoveError
from mayi_service.problem_types import from_engine, of_engine

#: 422: this move (its cards and melds) is not legal in the game as it is, or is malformed.
INVALID = {
    "validation_error",
    "bad_card",
    "card_not_in_hand",
    "illegal_meld",
    "illegal_lay_off",
    "illegal_discard",
    "state_version",
}
#: 409: a move of this kind is not the seat's to make now.
ILLEGAL_NOW = {"not_your_turn", "wrong_phase", "claims_open", "claim_not_allowed", "game_over", "not_due"}


def test_every_engine_code_is_invalid_or_illegal_now() -> None:
    assert {code.value for code in ErrorCode} == INVALID | ILLEGAL_NOW
    assert {code.value for code in ErrorCode if of_engine(code).status == 422} == INVALID
    assert {code.value for code in ErrorCode if of_engine(code).status == 409} == ILLEGAL_NOW


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_engine_code_has_the_status_of_its_problem(code: ErrorCode) -> None:
    expected = 422 if code.value in INVALID else 409
    for error in (IllegalMoveError, InvalidMoveError):
        problem = from_engine(error(code, f"{code} happened"))
        assert problem.code == code.value and problem.problem is of_engine(code)
        assert problem.status == expected  # whichever class raised it: the code decides


def test_illegal_discard_is_422_as_docs_api_promises() -> None:
    """It was missing from the hand-kept map and answered 409."""
    problem = from_engine(IllegalMoveError("illegal_discard", "In Shanghai you may never discard your last card"))
    assert problem.status == 422 and problem.code == "illegal_discard"
