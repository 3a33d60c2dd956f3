"""A variant registered with the engine (``register_variant``) before the app is created is
playable over HTTP: the API takes its variant list and its options schema from the engine's
registry, not from a list of its own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import requests
from http_moves import auth, move_request
from registered_variants import serving_variant

from mayi_engine import MAY_I, Contract, OptionSpec, RoundSpec
from mayi_service.config import Settings

TIMEOUT = 30
MAX_ACTIONS = 2000

#: A short variant: two rounds of seven cards, and an option (the claim penalty) no built-in
#: variant offers, so that the options schema must come from the registry too.
MINI = replace(
    MAY_I,
    name="mini_test",
    title="Mini",
    min_players=2,
    max_players=4,
    rounds=(RoundSpec(Contract(books=1, runs=0), 7), RoundSpec(Contract(books=2, runs=0), 7)),
    option_specs=(*MAY_I.option_specs, OptionSpec("claim_penalty", int, "Stock cards a claimant takes", 0, 3)),
)


@pytest.fixture
def mini_server(settings: Settings) -> Iterator[str]:
    """The app, created after ``MINI`` is registered, on a real socket; the registry is
    restored afterwards."""
    with serving_variant(MINI, settings) as url:
        yield url


def _acting_seat(view: dict[str, Any]) -> int:
    window = view.get("claim_window")
    if view["phase"] == "draw" and window and window["pending"]:
        return int(window["pending"][0])
    return int(view["actor"])


def _choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Go down or lay off when listed; pass claims; draw from the stock; else the first discard."""
    for kind in ("go_down", "lay_off"):
        for move in legal:
            if move["type"] == kind:
                return move
    for move in legal:
        if move["type"] == "claim" and move["claim"] is False:
            return move
        if move["type"] == "draw" and move["source"] == "stock":
            return move
    return legal[0]


def test_a_registered_variant_is_listed_created_and_played_to_the_end(mini_server: str) -> None:
    base = mini_server
    with requests.Session() as http:
        body = {
            "variant": "mini_test",
            "seats": 3,
            "options": {"claim_seconds": 3600, "turn_seconds": 3600, "max_turns": 10, "claim_penalty": 2},
            "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
            "test": {"seed": "ab" * 16},
        }
        created = http.post(f"{base}/v1/games", json=body, timeout=TIMEOUT)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        tokens = {seat["seat"]: seat["token"] for seat in created.json()["seats"]}
        game = created.json()["game"]
        assert game["variant"] == "mini_test" and game["status"] == "playing"
        assert game["options"]["claim_penalty"] == 2
        assert game["round"]["of"] == 2

        listed = http.get(f"{base}/v1/games", params={"variant": "mini_test"}, timeout=TIMEOUT).json()
        assert [g["id"] for g in listed["games"]] == [game_id]

        views = {
            seat: http.get(f"{base}/v1/games/{game_id}", headers=auth(token), timeout=TIMEOUT).json()
            for seat, token in tokens.items()
        }
        view = views[0]
        for _ in range(MAX_ACTIONS):
            if view["status"] == "finished":
                break
            seat = _acting_seat(view)
            legal = views[seat]["legal"] if views[seat]["version"] == view["version"] else None
            if legal is None:
                views[seat] = http.get(f"{base}/v1/games/{game_id}", headers=auth(tokens[seat]), timeout=TIMEOUT).json()
                legal = views[seat]["legal"]
            path, move_body = move_request(_choose(legal))
            answer = http.post(
                f"{base}/v1/games/{game_id}/{path}", json=move_body, headers=auth(tokens[seat]), timeout=TIMEOUT
            )
            assert answer.status_code == 200, answer.text
            view = views[seat] = answer.json()
        assert view["status"] == "finished"
        assert [r["round"] for r in view["results"]] == [1, 2]


@pytest.mark.parametrize(
    ("variant", "options", "status", "words"),
    [
        ("mini_test", {"claim_penalty": 9}, 422, ["options.claim_penalty:"]),  # the spec's range, in the schema
        ("mini_test", {"claim_penalty": "2"}, 422, ["options.claim_penalty:"]),  # its type
        ("may_i", {"claim_penalty": 2}, 422, ["claim_penalty", "May I"]),  # not an option of May I
        ("gin", {}, 422, ["variant", "mini_test"]),  # the known variants are named
    ],
)
def test_the_options_of_a_registered_variant_are_checked_by_its_spec(
    mini_server: str, variant: str, options: dict[str, Any], status: int, words: list[str]
) -> None:
    body = {"variant": variant, "seats": 3, "options": options}
    answer = requests.post(f"{mini_server}/v1/games", json=body, timeout=TIMEOUT)
    assert answer.status_code == status, answer.text
    problem = answer.json()
    assert problem["code"] == "validation_error"
    for word in words:
        assert word in problem["detail"], (word, problem["detail"])
