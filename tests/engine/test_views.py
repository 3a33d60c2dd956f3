"""The views: every field the API shows, for a seat and for a spectator.

``views.player_view`` builds the body of ``GET /games/{id}`` (the service adds
``id``, ``version`` and its own metadata). Required fields: ``variant``,
``status``, ``round`` (``number``, ``contract``, ``dealer``), ``phase``, ``turn``,
``upcard``, ``stock_count``, ``discard_count``, ``claim_window`` (``card``,
``claims``, ``passes``, ``closes_at``), ``seats`` (``name``, ``hand_count``,
``down``, ``total``, ``claims_used``, ``absent``), ``melds`` (``id``, ``owner``,
``type``, ``cards``, ``jokers`` with what each stands for), ``deadline``,
``results``; for a seat also ``hand`` and ``legal``. That nothing hidden leaks
is a property in ``test_properties.test_views_leak_nothing``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from players import POLICIES

from mayi_engine import apply_move, deadline, legal_moves, new_game, pending_claimants
from mayi_engine.cards import card_code, card_codes, parse_cards
from mayi_engine.melds import Meld
from mayi_engine.moves import Claim, DrawStock, Pass, Timeout, move_from_json, move_to_json
from mayi_engine.rng import KeyedRandom
from mayi_engine.rules import MAY_I, SHANGHAI, Rules
from mayi_engine.simulate import next_seat
from mayi_engine.state import Phase, State
from mayi_engine.views import player_view

TOP = {
    "variant",
    "status",
    "round",
    "phase",
    "turn",
    "upcard",
    "stock_count",
    "discard_count",
    "claim_window",
    "seats",
    "melds",
    "deadline",
    "results",
}
SEAT_ONLY = {"hand", "legal"}
SEAT_FIELDS = {"name", "hand_count", "down", "total", "claims_used", "absent"}
WINDOW_FIELDS = {"card", "claims", "passes", "closes_at"}
MELD_FIELDS = {"id", "owner", "type", "cards", "jokers"}
CARD_CODES = {"JK"} | {r + s for r in "A23456789TJQK" for s in "CDHS"}


def playout(rules: Rules, players: int, seed: bytes, steps: int = 100_000) -> list[State]:
    state = new_game(rules, [f"p{i}" for i in range(players)], seed)
    rng = KeyedRandom(seed, "views")
    states = [state]
    while not state.finished and len(states) <= steps:
        seat = next_seat(state)
        bot = "greedy" if seat % 2 == 0 else "random"
        state = apply_move(state, seat, POLICIES[bot](state, seat, legal_moves(state, seat), rng))
        states.append(state)
    return states


@pytest.fixture(scope="module", params=[MAY_I, SHANGHAI], ids=lambda r: r.name)
def game(request: pytest.FixtureRequest) -> list[State]:
    """Every fifth state of a whole game, and its end."""
    states = playout(request.param, 4, bytes(range(7, 39)))
    assert states[-1].finished
    return states[::5] + states[-1:]


def as_json(view: dict[str, Any]) -> dict[str, Any]:
    """The view as a client receives it; it must be plain JSON data."""
    out: dict[str, Any] = json.loads(json.dumps(view))
    assert out == view, "a view holds something that is not plain JSON (a tuple, an enum ...)"
    return out


def check_public(view: dict[str, Any], state: State) -> None:
    assert set(view) >= TOP
    assert "id" not in view and "version" not in view  # the service adds them
    assert view["variant"] == state.rules.name
    assert view["status"] == ("finished" if state.finished else "playing")
    assert view["phase"] == state.phase.value
    assert view["turn"] == state.turn
    rnd = view["round"]
    assert {"number", "contract", "dealer"} <= set(rnd)
    assert rnd["number"] == state.round and rnd["dealer"] == (state.round - 2) % state.players
    contract = state.rules.rounds[state.round - 1].contract
    assert rnd["contract"]["books"] == contract.books and rnd["contract"]["runs"] == contract.runs
    assert isinstance(rnd["contract"]["text"], str)
    assert view["stock_count"] == len(state.stock)
    assert view["discard_count"] == len(state.discard)
    if state.phase in (Phase.DRAW, Phase.FIRST_OFFER):
        assert view["upcard"] == card_code(state.discard[-1])
        window = view["claim_window"]
        assert set(window) >= WINDOW_FIELDS
        assert window["card"] == view["upcard"]
        if state.phase is Phase.DRAW:
            assert window["claims"] == list(state.claims)
            assert window["passes"] == list(state.passes)
            assert window["closes_at"] == state.claim_closes_at
            assert window["pending"] == list(pending_claimants(state))
    else:
        assert view["upcard"] is None
        assert view["claim_window"] is None
    assert len(view["seats"]) == state.players
    for i, seat in enumerate(view["seats"]):
        assert set(seat) >= SEAT_FIELDS
        assert seat["name"] == state.names[i]
        assert seat["hand_count"] == len(state.hands[i])
        assert seat["down"] is state.down[i]
        assert seat["total"] == state.totals[i]
        assert seat["claims_used"] == state.claims_used[i]
        assert seat["absent"] is state.absent[i]
    assert [m["id"] for m in view["melds"]] == list(range(len(state.melds)))
    for meld, data in zip(state.melds, view["melds"], strict=True):
        assert set(data) >= MELD_FIELDS
        assert data["owner"] == meld.owner
        assert data["type"] == meld.kind
        assert data["cards"] == card_codes(meld.cards)
        assert [j["index"] for j in data["jokers"]] == [i for i, c in enumerate(data["cards"]) if c == "JK"]
    assert view["deadline"] == deadline(state)
    assert (view["deadline"] is None) == state.finished
    assert len(view["results"]) == len(state.results)
    for result, data in zip(state.results, view["results"], strict=True):
        assert data["round"] == result.round
        assert data["scores"] == list(result.scores)
        assert data["out"] == (None if result.out < 0 else result.out)


def test_the_spectator_view_has_every_public_field_and_no_hand(game: list[State]) -> None:
    for state in game:
        view = as_json(player_view(state, None))
        check_public(view, state)
        assert not (SEAT_ONLY | {"held", "seat"}) & set(view)


def test_a_seat_view_adds_its_hand_and_legal_moves(game: list[State]) -> None:
    for state in game:
        spectator = player_view(state, None)
        for seat in range(state.players):
            view = as_json(player_view(state, seat))
            check_public(view, state)
            assert view["seat"] == seat
            assert view["hand"] == card_codes(state.hands[seat])
            assert set(view["hand"]) <= CARD_CODES
            assert view["legal"] == [move_to_json(m) for m in legal_moves(state, seat)]
            assert [move_from_json(m) for m in view["legal"]] == list(legal_moves(state, seat))
            # The seat's view is the spectator's plus its own part.
            assert {k: v for k, v in view.items() if k not in SEAT_ONLY | {"held", "seat"}} == spectator


def test_the_end_of_a_game_shows_places(game: list[State]) -> None:
    end = game[-1]
    view = player_view(end, 0)
    assert view["status"] == "finished"
    assert view["legal"] == []
    assert view["deadline"] is None
    assert view["places"] == [1 + sum(t < mine for t in end.totals) for mine in end.totals]
    assert len(view["results"]) == len(end.rules.rounds)


def test_jokers_say_what_they_stand_for() -> None:
    state = new_game(MAY_I, ["a", "b", "c"], bytes(32)).clone()
    state.melds = (
        Meld(0, 1, "run", parse_cards(["JK", "5C", "6C", "7C"]), 4, 0),
        Meld(1, 2, "book", parse_cards(["7H", "7S", "JK"]), 7),
        Meld(2, 0, "run", parse_cards(["JH", "QH", "KH", "JK"]), 11, 2),
    )
    melds = player_view(state, None)["melds"]
    assert melds[0] == {
        "id": 0,
        "owner": 1,
        "type": "run",
        "cards": ["JK", "5C", "6C", "7C"],
        "jokers": [{"index": 0, "stands_for": "4C"}],
    }
    assert melds[1]["jokers"] == [{"index": 2, "stands_for": "7"}]  # a book's joker: the rank
    assert melds[2]["jokers"] == [{"index": 3, "stands_for": "AH"}]  # a high ace


def test_the_first_upcard_offer_shows_who_has_passed() -> None:
    state = new_game(MAY_I, ["a", "b", "c", "d"], bytes(32))
    assert state.phase is Phase.FIRST_OFFER
    first = state.turn
    state = apply_move(state, first, Pass())
    window = player_view(state, None)["claim_window"]
    assert window["passes"] == [first]
    assert window["pending"] == [state.actor]
    assert window["claims"] == []
    assert player_view(state, state.actor)["legal"] == [move_to_json(Claim()), move_to_json(Pass())]


def test_the_claim_window_shows_claims_and_passes() -> None:
    state = new_game(SHANGHAI, ["a", "b", "c", "d"], bytes(32), now=100.0)
    assert state.phase is Phase.DRAW
    turn = state.turn
    others = [s for s in range(4) if s != turn]
    state = apply_move(state, others[0], Claim(), 101.0)
    state = apply_move(state, others[1], Pass(), 102.0)
    view = player_view(state, turn, 103.0)
    window = view["claim_window"]
    assert window["claims"] == [others[0]] and window["passes"] == [others[1]]
    assert window["pending"] == [others[2]]
    assert window["closes_at"] == 100.0 + SHANGHAI.claim_seconds
    assert move_to_json(DrawStock()) not in view["legal"]  # claims are still open
    later = player_view(state, turn, window["closes_at"])
    assert move_to_json(DrawStock()) in later["legal"]


def test_an_absent_seat_is_shown_absent() -> None:
    state = new_game(MAY_I, ["a", "b", "c"], bytes(32))
    while not any(state.absent):
        due = deadline(state)
        assert due is not None
        state = apply_move(state, None, Timeout(), due)
    view = player_view(state, None)
    assert [s["absent"] for s in view["seats"]] == list(state.absent)


def test_a_view_is_the_same_however_often_it_is_asked(game: list[State]) -> None:
    for state in game[:20]:
        assert player_view(state, 1) == player_view(state, 1)
        assert json.dumps(player_view(state, None)) == json.dumps(player_view(state, None))
