"""The OpenAPI document is exact: what the service sends matches it, and it says no more than that.

Every test's responses are checked against the document by the ``app`` fixture
(tests/support/service_fixtures.py, with tests/service/documented.py). These tests check the checker,
check every event type the engine makes against the document's ``Event`` union
(clock moves, absences, rebuilt and exhausted stocks, turn limits included), and
hold the document to the engine's vocabulary (codes, event types, legal moves).
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import pytest
from documented import Sent, component_problems, problems, spec

from mayi_bots import make
from mayi_engine import (
    MAY_I,
    SHANGHAI,
    ErrorCode,
    Event,
    Phase,
    Rules,
    Timeout,
    deadline,
    event_to_json,
    legal_moves,
    move_to_json,
    play,
    seat_returns,
    start_game,
)
from mayi_engine.policies import random_policy
from mayi_engine.rng import KeyedRandom
from mayi_engine.simulate import next_seat
from mayi_sdk.local import bot_policy
from mayi_service.api.schemas.events import EVENT_TYPES, EVENTS_PAGE
from mayi_service.play.views import visible
from mayi_service.problem_types import PROBLEM_CODES
from mayi_service.storage.repository import GameRepository

GAME = "/v1/games/{game_id}"
#: The reference greedy bot (mayi_bots) as an engine policy.
GREEDY = bot_policy(make("greedy"))


def _sent(body: dict[str, Any], status: int = 200, ctype: str = "application/json", method: str = "get") -> Sent:
    path = GAME if method == "get" else f"{GAME}/turn/draw"
    return Sent(method, path, status, ctype, json.dumps(body).encode())


def _waiting_view() -> dict[str, Any]:
    return {
        "id": "g",
        "version": 1,
        "status": "waiting",
        "variant": "may_i",
        "options": {"claim_seconds": 15.0, "turn_seconds": 60.0, "max_reshuffles": 3, "max_turns": 500},
        "rated": True,
        "created_at": 1.0,
        "last_event": 0,
        "seats": [{"seat": 0, "name": None, "taken": False}],
        "seat": None,
    }


# -- the checker ----------------------------------------------------------------


def test_the_checker_accepts_a_view_as_sent() -> None:
    assert problems(_sent(_waiting_view())) == []


@pytest.mark.parametrize(
    ("change", "wrong"),
    [
        (lambda v: v.update(bogus=1), "undeclared field"),
        (lambda v: v.pop("seat"), "missing required field"),
        (lambda v: v.update(status="paused"), "status outside the enum"),
        (lambda v: v.update(version="1"), "wrong type"),
        (lambda v: v.update(phase="draw"), "a waiting view has no phase"),
        (lambda v: v["seats"][0].update(hand_count=3), "undeclared nested field"),
    ],
)
def test_the_checker_refuses_what_the_document_does_not_say(change: Any, wrong: str) -> None:
    view = _waiting_view()
    change(view)
    assert problems(_sent(view)), wrong


def test_the_checker_refuses_an_undocumented_status_or_content_type() -> None:
    assert problems(_sent(_waiting_view(), status=201))
    assert problems(_sent(_waiting_view(), ctype="text/html"))
    assert problems(Sent("get", "/v1/nothing", 200, "application/json", b"{}"))


def test_a_problem_is_closed_and_its_code_one_of_the_enum() -> None:
    body = {"type": "t", "title": "Conflict", "status": 409, "detail": "d", "code": "claims_open", "retry_after": 2.5}
    problem = "application/problem+json"
    assert problems(_sent(body, 409, problem, "post")) == []
    assert problems(_sent({**body, "code": "no_such_code"}, 409, problem, "post"))
    assert problems(_sent({**body, "hint": "x"}, 409, problem, "post"))
    assert problems(_sent(body, 405, problem, "post")) == []  # any other status: the default response


# -- the document against the engine's and the service's vocabulary ---------------


def test_problem_codes_are_the_engines_and_the_services() -> None:
    codes = set(spec()["components"]["schemas"]["Problem"]["properties"]["code"]["enum"])
    assert {code.value for code in ErrorCode} <= codes
    assert set(PROBLEM_CODES) == codes


def test_legal_moves_are_the_request_bodies_with_their_type() -> None:
    """Each member of ``LegalMove`` is the body schema of its endpoint with ``type`` required,
    and that body declares ``type`` (optional, the move's): a legal entry is a valid body."""
    schemas = spec()["components"]["schemas"]
    union = schemas["LegalMove"]
    assert union["discriminator"]["propertyName"] == "type"
    paths = {
        "draw": "turn/draw",
        "claim": "claims",
        "discard": "turn/discard",
        "go_down": "melds",
        "lay_off": "lay-offs",
    }
    for kind, ref in union["discriminator"]["mapping"].items():
        member = schemas[ref.rsplit("/", 1)[1]]
        body_ref = spec()["paths"][f"{GAME}/{paths[kind]}"]["post"]["requestBody"]["content"]["application/json"]
        assert member["allOf"][0] == body_ref["schema"] and member["allOf"][1]["required"] == ["type"]
        assert member["allOf"][1]["properties"]["type"]["enum"] == [kind]
        body = schemas[body_ref["schema"]["$ref"].rsplit("/", 1)[1]]
        assert body["properties"]["type"]["enum"] == [kind] and "type" not in body.get("required", [])
        assert body["additionalProperties"] is False


def test_every_operation_has_a_verb_noun_operation_id() -> None:
    ids = [
        op["operationId"]
        for item in spec()["paths"].values()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+", i) for i in ids), ids


def test_the_event_union_has_every_event_type() -> None:
    mapping = spec()["components"]["schemas"]["Event"]["discriminator"]["mapping"]
    assert set(mapping) == set(EVENT_TYPES)


# -- every event type the engine makes matches the document ------------------------


def _stamp(events: list[Event], seq: int, now: float) -> list[dict[str, Any]]:
    return [{"seq": seq + i, "time": now, **event_to_json(e)} for i, e in enumerate(events, start=1)]


def _play_out(rules: Rules, players: int, seed: int, sleepy: int) -> list[dict[str, Any]]:
    """One game with random moves; seat ``sleepy`` lets its clock run out for a while, then acts again.

    The service's order: a seat that acts first returns (``seat_returns``), then the timeouts due are played."""
    rng = KeyedRandom(bytes([seed]) * 32, "test")
    state, events = start_game(rules, [f"p{i}" for i in range(players)], bytes([seed]) * 32)
    out = _stamp(events, 0, 0.0)
    now = 0.0
    for step in range(20_000):
        if state.phase is Phase.FINISHED:
            break
        seat = next_seat(state)
        if seat == sleepy and step < 2_000:
            due = deadline(state)
            assert due is not None
            now = max(now, due)
            state, events = play(state, None, Timeout(), now)
        else:
            state, events = seat_returns(state, seat)
            legal = legal_moves(state, seat, now)
            move = random_policy(state, seat, legal, rng)
            state, more = play(state, seat, move, now)
            events += more
        out += _stamp(events, out[-1]["seq"] if out else 0, now)
    assert state.phase is Phase.FINISHED
    return out


def test_every_event_type_matches_the_document_as_each_viewer_sees_it() -> None:
    seen: dict[str, int] = {}
    games = [
        (MAY_I.with_options({"max_turns": 10, "turn_seconds": 5, "claim_seconds": 2}), 3, 1, 0),
        (MAY_I.with_options({"max_reshuffles": 0, "max_turns": 2000}), 4, 2, 1),
        (MAY_I, 5, 3, 2),
        (SHANGHAI.with_options({"free_goal_order": True, "bury_joker_upcard": True}), 4, 4, 3),
        (SHANGHAI.with_options({"max_reshuffles": 1}), 3, 5, 1),
    ]
    for rules, players, seed, sleepy in games:
        for event in _play_out(rules, players, seed, sleepy):
            seen[event["type"]] = seen.get(event["type"], 0) + 1
            for viewer in (None, *range(players)):
                found = component_problems("Event", visible(event, viewer))
                assert not found, (event, found)
            assert not component_problems("Event", event), event  # the replay shows every private part
    assert set(seen) == set(EVENT_TYPES), f"not made: {sorted(set(EVENT_TYPES) - set(seen))}"


def test_legal_moves_of_every_phase_match_the_document() -> None:
    rng = KeyedRandom(bytes(32), "legal")
    for rules in (MAY_I, SHANGHAI):
        state, _ = start_game(rules, ["a", "b", "c"], bytes(32))
        while state.phase is not Phase.FINISHED:
            seat = next_seat(state)
            legal = legal_moves(state, seat)
            for move in legal:
                assert not component_problems("LegalMove", move_to_json(move)), move_to_json(move)
            state, _ = play(state, seat, GREEDY(state, seat, legal, rng))


def test_the_documented_events_page_is_what_the_repository_reads() -> None:
    events = spec()["components"]["schemas"]["EventList"]["properties"]["events"]
    assert events["maxItems"] == EVENTS_PAGE
    assert inspect.signature(GameRepository.events_after).parameters["count"].default == EVENTS_PAGE
    assert inspect.signature(GameRepository.wait_events).parameters["count"].default == EVENTS_PAGE
