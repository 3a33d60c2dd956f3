"""Every endpoint of the HTTP API, through the real HTTP stack (a loopback socket).

Action tests use stacked test tables: the ``test`` block fixes the seed and the
top of the stock of a round, so the hands are known. The deal takes the stacked
cards one at a time clockwise from the first player (seat ``(round - 1) % n``);
the next card is the upcard, and the stock draws continue from there.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import requests
from decks import BIG_CLOCKS, MAYI_FINAL_DECK, MAYI_FINAL_HANDS, SEED, stack
from werkzeug.serving import make_server

from mayi_service.api.app import create_app
from mayi_service.config import Settings

TIMEOUT = 10


# ---------------------------------------------------------------------------
# Helpers


class Http:
    """A small client over ``requests`` for one server."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.session = requests.Session()

    @staticmethod
    def _headers(token: str | None, headers: dict[str, str] | None) -> dict[str, str]:
        out = dict(headers or {})
        if token is not None:
            out["Authorization"] = f"Bearer {token}"
        return out

    def get(self, path: str, token: str | None = None, **kw: Any) -> requests.Response:
        headers = self._headers(token, kw.pop("headers", None))
        return self.session.get(self.base + path, headers=headers, timeout=kw.pop("timeout", TIMEOUT), **kw)

    def post(self, path: str, body: Any = None, token: str | None = None, **kw: Any) -> requests.Response:
        headers = self._headers(token, kw.pop("headers", None))
        if body is not None:
            kw["json"] = body
        return self.session.post(self.base + path, headers=headers, timeout=kw.pop("timeout", TIMEOUT), **kw)

    def request(self, method: str, path: str, **kw: Any) -> requests.Response:
        return self.session.request(method, self.base + path, timeout=TIMEOUT, **kw)

    def create(self, **body: Any) -> dict[str, Any]:
        response = self.post("/v1/games", body)
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created


@contextmanager
def serve(app: Any) -> Iterator[Http]:
    """``app`` on a real loopback socket (like conftest's ``live_server``, but quick to stop)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    client = Http(f"http://127.0.0.1:{server.server_port}")
    try:
        yield client
    finally:
        client.session.close()
        server.shutdown()
        thread.join(5)


@pytest.fixture
def http(app: Any) -> Iterator[Http]:
    with serve(app) as client:
        yield client


def assert_problem(response: requests.Response, status: int, code: str, *words: str) -> dict[str, Any]:
    """``response`` is an RFC 9457 problem with ``status`` and ``code``, its detail naming ``words``."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/problem+json"), response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["code"] == code, body
    assert body["type"].endswith(code) and body["title"] and body["detail"]
    for word in words:
        assert word.lower() in body["detail"].lower(), (word, body["detail"])
    return body


# Shanghai, 3 seats, round 1 (2 books, distinct ranks): seat 0 can go down at once.
SHANGHAI_HANDS = [
    ["7H", "7S", "7D", "9C", "9D", "9H", "7C", "KS", "QS", "2D"],
    ["3C", "3D", "4C", "5C", "6C", "8H", "TD", "JD", "QD", "2C"],
    ["4H", "4S", "5H", "5S", "6H", "6S", "8C", "8D", "TC", "JC"],
]
SHANGHAI_STOCK = ["5D", "AH", "AC", "AD", "AS", "3H"]
SHANGHAI_DECK = stack(SHANGHAI_HANDS, "KH", SHANGHAI_STOCK)


def shanghai_table(http: Http) -> tuple[str, list[str], dict[str, Any]]:
    created = http.create(
        variant="shanghai",
        seats=3,
        options=BIG_CLOCKS,
        players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
        test={"seed": SEED, "stacked_decks": [SHANGHAI_DECK]},
    )
    return created["game_id"], [s["token"] for s in created["seats"]], created["game"]


def view(http: Http, game_id: str, token: str | None = None) -> dict[str, Any]:
    response = http.get(f"/v1/games/{game_id}", token)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def events(http: Http, game_id: str, token: str | None = None, after: int = 0) -> list[dict[str, Any]]:
    response = http.get(f"/v1/games/{game_id}/events", token, params={"after": after})
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["events"]
    return found


# ---------------------------------------------------------------------------
# Creating, listing and seating


def test_create_table_with_players_shows_tokens_once(http: Http) -> None:
    created = http.create(variant="may_i", seats=3, players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}])
    game_id = created["game_id"]
    seats = created["seats"]
    assert [(s["seat"], s["name"]) for s in seats] == [(0, "Ann"), (1, "Bob"), (2, "Cy")]
    tokens = [s["token"] for s in seats]
    assert len(set(tokens)) == 3 and all(len(t) >= 32 for t in tokens)
    game = created["game"]
    assert game["id"] == game_id and game["status"] == "playing" and game["variant"] == "may_i"
    assert game["rated"] is True and "hand" not in game and "legal" not in game
    assert game["round"]["number"] == 1 and game["round"]["contract"]["books"] == 2
    assert [s["hand_count"] for s in game["seats"]] == [10, 10, 10]

    # The tokens are never shown again: not in views, lists or events.
    pages = [
        http.get(f"/v1/games/{game_id}").text,
        http.get(f"/v1/games/{game_id}", tokens[0]).text,
        http.get("/v1/games").text,
        http.get(f"/v1/games/{game_id}/events", tokens[1]).text,
    ]
    for text in pages:
        assert not any(t in text for t in tokens)
    assert [e["type"] for e in events(http, game_id)] == ["round_started", "dealt", "dealt", "dealt"]


def test_create_table_without_players_is_waiting(http: Http) -> None:
    created = http.create(variant="shanghai", seats=4, options={"claim_seconds": 20})
    assert created["seats"] == []
    game = created["game"]
    assert game["status"] == "waiting" and game["variant"] == "shanghai" and game["version"] == 1
    # The options it plays by: the ones given over Shanghai's defaults, every one of them.
    assert game["options"]["claim_seconds"] == 20 and game["options"]["turn_seconds"] == 60
    assert game["options"]["bury_joker_upcard"] is True and game["options"]["max_turns"] == 500
    assert [(s["seat"], s["taken"]) for s in game["seats"]] == [(i, False) for i in range(4)]
    assert view(http, created["game_id"])["status"] == "waiting"
    assert events(http, created["game_id"]) == []


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"variant": "may_i"}, ["seats", "missing"]),
        ({"variant": "may_i", "seats": 9}, ["seats"]),
        ({"variant": "may_i", "seats": 7}, ["seats", "2 to 6"]),
        ({"variant": "shanghai", "seats": 2}, ["seats", "3 to 8"]),
        ({"variant": "may_i", "seats": "three"}, ["seats"]),
        ({"variant": "gin", "seats": 3}, ["variant"]),
        ({"seats": 3}, ["variant"]),
        ({"variant": "may_i", "seats": 3, "colour": "red"}, ["colour", "unknown"]),
        ({"variant": "may_i", "seats": 3, "options": {"bogus": 1}}, ["options.bogus"]),
        ({"variant": "may_i", "seats": 3, "options": {"all_out_final": True}}, ["all_out_final", "May I"]),
        ({"variant": "may_i", "seats": 3, "options": {"free_goal_order": True}}, ["free_goal_order", "May I"]),
        ({"variant": "may_i", "seats": 3, "options": {"claim_seconds": 0}}, ["options.claim_seconds"]),
        ({"variant": "may_i", "seats": 2, "players": [{"name": "A"}] * 3}, ["players"]),
        ({"variant": "may_i", "seats": 3, "players": [{"name": ""}]}, ["players", "name"]),
        ({"variant": "may_i", "seats": 3, "test": {"seed": "abc"}}, ["test.seed"]),
        ({"variant": "may_i", "seats": 3, "test": {"start_round": 8}}, ["test.start_round"]),
        ({"variant": "may_i", "seats": 3, "test": {"stacked_decks": [["AS", "AS", "AS"]]}}, ["AS"]),
    ],
)
def test_create_validation_errors_name_the_field(http: Http, body: dict[str, Any], words: list[str]) -> None:
    assert_problem(http.post("/v1/games", body), 422, "validation_error", *words)


def test_list_tables_filters_and_pages(http: Http) -> None:
    three = [{"name": "A"}, {"name": "B"}, {"name": "C"}]
    playing_mayi = http.create(variant="may_i", seats=3, players=three)["game_id"]
    playing_shanghai = http.create(variant="shanghai", seats=3, players=three)["game_id"]
    waiting = [http.create(variant="may_i", seats=4)["game_id"] for _ in range(3)]

    everything = http.get("/v1/games").json()
    assert everything["total"] == 5 and everything["page"] == 1 and everything["page_size"] == 20
    assert {g["id"] for g in everything["games"]} == {playing_mayi, playing_shanghai, *waiting}
    assert everything["games"][0]["id"] == waiting[-1]  # newest first
    summary = next(g for g in everything["games"] if g["id"] == playing_mayi)
    assert summary == {**summary, "variant": "may_i", "status": "playing", "seats": 3, "names": ["A", "B", "C"]}

    playing = http.get("/v1/games", params={"status": "playing"}).json()
    assert {g["id"] for g in playing["games"]} == {playing_mayi, playing_shanghai} and playing["total"] == 2
    shanghai = http.get("/v1/games", params={"variant": "shanghai"}).json()
    assert [g["id"] for g in shanghai["games"]] == [playing_shanghai] and shanghai["total"] == 1
    both = http.get("/v1/games", params={"variant": "may_i", "status": "waiting"}).json()
    assert {g["id"] for g in both["games"]} == set(waiting)

    pages = [http.get("/v1/games", params={"status": "waiting", "page_size": 2, "page": p}).json() for p in (1, 2, 3)]
    assert [len(p["games"]) for p in pages] == [2, 1, 0]
    assert all(p["total"] == 3 and p["page_size"] == 2 for p in pages)
    assert [p["page"] for p in pages] == [1, 2, 3]
    assert [g["id"] for p in pages for g in p["games"]] == waiting[::-1]

    assert_problem(http.get("/v1/games", params={"status": "over"}), 422, "validation_error", "status")
    assert_problem(http.get("/v1/games", params={"page_size": 0}), 422, "validation_error", "page_size")


def test_take_seats_until_the_game_starts(http: Http) -> None:
    game_id = http.create(variant="may_i", seats=3, options=BIG_CLOCKS)["game_id"]
    path = f"/v1/games/{game_id}/seats"

    first = http.post(path, {"name": "Ann"})
    assert first.status_code == 201, first.text
    assert first.json()["seat"] == 0 and first.json()["token"]
    assert first.json()["game"]["status"] == "waiting" and first.json()["game"]["seat"] == 0

    explicit = http.post(path, {"name": "Cy", "seat": 2})
    assert explicit.status_code == 201 and explicit.json()["seat"] == 2
    assert_problem(http.post(path, {"name": "Dee", "seat": 2}), 409, "seat_taken", "seat 2")
    assert_problem(http.post(path, {"name": "Dee", "seat": 5}), 422, "validation_error", "seat")
    assert_problem(http.post(path, {"seat": 1}), 422, "validation_error", "name")
    assert view(http, game_id)["seats"][2] == {"seat": 2, "name": "Cy", "taken": True}

    last = http.post(path, {"name": "Bob"})
    assert last.status_code == 201 and last.json()["seat"] == 1  # the lowest open seat
    game = last.json()["game"]
    assert game["status"] == "playing" and game["phase"] == "first_offer"
    assert game["seat"] == 1 and len(game["hand"]) == 10
    assert [s["name"] for s in game["seats"]] == ["Ann", "Bob", "Cy"]
    found = events(http, game_id)
    assert [e["type"] for e in found] == ["round_started", "dealt", "dealt", "dealt"]
    assert [e["seat"] for e in found[1:]] == [0, 1, 2]

    tokens = [first.json()["token"], last.json()["token"], explicit.json()["token"]]
    for seat, token in enumerate(tokens):
        assert view(http, game_id, token)["seat"] == seat
    assert_problem(http.post(path, {"name": "Late"}), 409, "game_started")
    assert_problem(http.post("/v1/games/no-such-game/seats", {"name": "X"}), 404, "not_found")
    listed = http.get("/v1/games", params={"status": "playing"}).json()
    assert [g["id"] for g in listed["games"]] == [game_id]


# ---------------------------------------------------------------------------
# Views


def test_view_with_and_without_token_and_etag(http: Http) -> None:
    game_id, tokens, _ = shanghai_table(http)
    public = http.get(f"/v1/games/{game_id}")
    assert public.status_code == 200
    body = public.json()
    for key in ("id", "variant", "status", "version", "round", "phase", "turn", "upcard", "stock_count"):
        assert key in body
    for key in ("discard_count", "claim_window", "seats", "melds", "deadline", "results"):
        assert key in body
    assert "hand" not in body and "legal" not in body and body.get("seat") is None
    assert body["upcard"] == "KH" and body["claim_window"]["pending"] == [1, 2]

    mine = view(http, game_id, tokens[0])
    assert mine["seat"] == 0 and sorted(mine["hand"]) == sorted(SHANGHAI_HANDS[0])
    assert {"type": "draw", "source": "discard"} in mine["legal"]
    assert {"type": "draw", "source": "stock"} not in mine["legal"]  # claims are open
    theirs = view(http, game_id, tokens[1])
    assert sorted(theirs["hand"]) == sorted(SHANGHAI_HANDS[1])
    assert theirs["legal"] == [{"type": "claim", "claim": True}, {"type": "claim", "claim": False}]
    assert all("hand" not in s for s in mine["seats"])  # only counts of the other hands

    etag = public.headers["ETag"]
    seat_etag = http.get(f"/v1/games/{game_id}", tokens[0]).headers["ETag"]
    assert etag and seat_etag and etag != seat_etag
    again = http.get(f"/v1/games/{game_id}", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.headers["ETag"] == etag and again.content == b""
    assert http.get(f"/v1/games/{game_id}", headers={"If-None-Match": '"stale"'}).status_code == 200

    assert http.post(f"/v1/games/{game_id}/claims", {"claim": False}, tokens[1]).status_code == 200
    moved = http.get(f"/v1/games/{game_id}", headers={"If-None-Match": etag})
    assert moved.status_code == 200 and moved.headers["ETag"] != etag
    assert moved.json()["version"] == body["version"] + 1


def test_auth_errors(http: Http) -> None:
    game_id, tokens, _ = shanghai_table(http)
    other_id, other_tokens, _ = shanghai_table(http)
    draw = f"/v1/games/{game_id}/turn/draw"

    response = http.post(draw, {"source": "stock"})
    assert_problem(response, 401, "unauthorized", "token")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    response = http.post(draw, {"source": "stock"}, headers={"Authorization": f"Basic {tokens[0]}"})
    assert_problem(response, 401, "unauthorized")
    assert_problem(http.post(draw, {"source": "stock"}, other_tokens[0]), 403, "forbidden", game_id)
    assert_problem(http.get(f"/v1/games/{game_id}", other_tokens[0]), 403, "forbidden")
    assert_problem(http.get(f"/v1/games/{game_id}/events", "mayi_seat_made_up"), 403, "forbidden")
    assert view(http, other_id, other_tokens[0])["version"] == 1  # nothing moved


# ---------------------------------------------------------------------------
# Actions on a stacked table


def test_refusals_before_the_draw(http: Http) -> None:
    game_id, tokens, _ = shanghai_table(http)
    base = f"/v1/games/{game_id}"

    assert_problem(http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[1]), 409, "not_your_turn", "seat 0")
    assert_problem(http.post(f"{base}/turn/discard", {"card": "KS"}, tokens[0]), 409, "wrong_phase", "draw first")
    assert_problem(http.post(f"{base}/claims", {"claim": True}, tokens[0]), 409, "claim_not_allowed", "on turn")

    response = http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[0])
    body = assert_problem(response, 409, "claims_open", "seats 1, 2")
    assert 3500 <= body["retry_after"] <= 3600
    assert int(response.headers["Retry-After"]) == pytest.approx(body["retry_after"], abs=1)
    assert body["closes_at"] > time.time()

    assert_problem(http.post(f"{base}/turn/draw", {"source": "pile"}, tokens[0]), 422, "validation_error", "source")
    assert_problem(http.post(f"{base}/claims", {"claim": "maybe"}, tokens[1]), 422, "validation_error", "claim")
    assert view(http, game_id)["version"] == 1  # refusals change nothing


def test_draw_meld_lay_off_discard_and_claims(http: Http) -> None:
    game_id, tokens, _ = shanghai_table(http)
    base = f"/v1/games/{game_id}"

    # Both other seats pass the upcard; then seat 0 may draw from the stock.
    passed = http.post(f"{base}/claims", {"claim": False}, tokens[1])
    assert passed.status_code == 200 and passed.json()["claim_window"]["passes"] == [1]
    assert passed.json()["seat"] == 1 and passed.json()["legal"] == []
    assert http.post(f"{base}/claims", {"claim": False}, tokens[2]).status_code == 200
    assert_problem(http.post(f"{base}/claims", {"claim": False}, tokens[2]), 409, "claim_not_allowed", "already")

    drawn = http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[0])
    assert drawn.status_code == 200, drawn.text
    me = drawn.json()
    assert me["phase"] == "play" and "5D" in me["hand"] and len(me["hand"]) == 11
    assert me["stock_count"] == view(http, game_id)["stock_count"]
    assert_problem(http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[0]), 409, "wrong_phase", "drawn")

    assert_problem(http.post(f"{base}/turn/discard", {"card": "AS"}, tokens[0]), 422, "card_not_in_hand", "AS")
    assert_problem(http.post(f"{base}/turn/discard", {"card": "XX"}, tokens[0]), 422, "bad_card", "XX")
    assert_problem(
        http.post(f"{base}/melds", {"melds": [["7H", "7S", "7D"]]}, tokens[0]),
        422,
        "illegal_meld",
        "contract is 2 books",
        "exactly 2 melds",
    )
    assert_problem(
        http.post(f"{base}/melds", {"melds": [["7H", "7S", "7D"], ["7C", "9C", "9D"]]}, tokens[0]),
        422,
        "illegal_meld",
    )
    assert_problem(
        http.post(f"{base}/melds", {"melds": [["7H", "7S", "7D"], ["AS", "AS", "AS"]]}, tokens[0]),
        422,
        "card_not_in_hand",
        "AS",
    )
    assert_problem(
        http.post(f"{base}/lay-offs", {"lay_offs": [{"meld": 0, "cards": ["7C"]}]}, tokens[0]),
        422,
        "illegal_lay_off",
        "down",
    )
    assert view(http, game_id)["version"] == 4

    down = http.post(f"{base}/melds", {"melds": [["7H", "7S", "7D"], ["9C", "9D", "9H"]]}, tokens[0])
    assert down.status_code == 200, down.text
    me = down.json()
    assert [(m["id"], m["owner"], m["type"]) for m in me["melds"]] == [(0, 0, "book"), (1, 0, "book")]
    assert me["seats"][0]["down"] is True and len(me["hand"]) == 5
    assert {"type": "lay_off", "lay_offs": [{"meld": 0, "cards": ["7C"]}]} in me["legal"]

    laid = http.post(f"{base}/lay-offs", {"lay_offs": [{"meld": 0, "cards": ["7c"]}]}, tokens[0])
    assert laid.status_code == 200, laid.text
    assert sorted(laid.json()["melds"][0]["cards"]) == ["7C", "7D", "7H", "7S"]
    assert "7C" not in laid.json()["hand"]
    assert_problem(
        http.post(f"{base}/lay-offs", {"lay_offs": [{"meld": 1, "cards": ["KS"]}]}, tokens[0]),
        422,
        "illegal_lay_off",
    )

    discarded = http.post(f"{base}/turn/discard", {"card": "KS"}, tokens[0])
    assert discarded.status_code == 200, discarded.text
    after = discarded.json()
    assert after["turn"] == 1 and after["phase"] == "draw" and after["upcard"] == "KS"
    assert after["claim_window"]["pending"] == [0, 2]  # in Shanghai the discarder may claim too

    # Seat 2 buys the king (Shanghai: two penalty cards); seat 0 passes; seat 1 draws.
    claimed = http.post(f"{base}/claims", {"claim": True}, tokens[2])
    assert claimed.status_code == 200 and claimed.json()["claim_window"]["claims"] == [2]
    assert http.post(f"{base}/claims", {"claim": False}, tokens[0]).status_code == 200
    drew = http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[1])
    assert drew.status_code == 200, drew.text
    assert "AH" in drew.json()["hand"]
    seats = view(http, game_id)["seats"]
    assert [s["hand_count"] for s in seats] == [3, 11, 13]
    assert seats[2]["claims_used"] == 1 and seats[2]["claims_left"] == 1
    hand2 = view(http, game_id, tokens[2])["hand"]
    assert {"KS", "AC", "AD"} <= set(hand2)
    tail = [(e["type"], e["seat"]) for e in events(http, game_id)][-6:]
    assert tail == [("claimed", 2), ("passed", 0), ("claim_won", 2), ("drew", 1), ("drew", 2), ("drew", 2)]


def test_first_upcard_offer_then_going_out_and_replay(http: Http) -> None:
    created = http.create(
        variant="may_i",
        seats=3,
        options=BIG_CLOCKS,
        players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
        test={"seed": SEED, "stacked_decks": [None] * 6 + [MAYI_FINAL_DECK], "start_round": 7},
    )
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    assert created["game"]["rated"] is False and created["game"]["round"]["number"] == 7
    base = f"/v1/games/{game_id}"
    assert_problem(http.get(f"{base}/replay"), 409, "game_not_finished", "not over")

    assert_problem(http.post(f"{base}/claims", {"claim": True}, tokens[1]), 409, "not_your_turn", "seat 0")
    assert_problem(http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[0]), 409, "wrong_phase", "offer")
    took = http.post(f"{base}/claims", {"claim": True}, tokens[0])
    assert took.status_code == 200, took.text
    assert took.json()["phase"] == "play" and "KD" in took.json()["hand"] and took.json()["held"] == "KD"

    runs = [["3C", "4C", "5C", "6C"], ["8D", "9D", "TD", "JD"], ["2H", "3H", "4H", "5H"]]
    assert_problem(
        http.post(f"{base}/melds", {"melds": runs[:2]}, tokens[0]), 422, "illegal_meld", "3 runs", "exactly 3 melds"
    )
    down = http.post(f"{base}/melds", {"melds": runs}, tokens[0])
    assert down.status_code == 200, down.text
    assert down.json()["hand"] == ["KD"]
    out = http.post(f"{base}/turn/discard", {"card": "KD"}, tokens[0])
    assert out.status_code == 200, out.text
    final = out.json()
    assert final["status"] == "finished" and final["phase"] == "finished" and final["legal"] == []
    scores = [0, 20 + 2 + 3 + 7 + 8 + 9 + 10 * 3 + 7 + 8 + 9, 2 + 2 + 5 + 6 + 6 + 7 + 10 * 6]
    assert final["results"] == [{"round": 7, "out": 0, "scores": scores}]
    assert [s["total"] for s in final["seats"]] == scores and final["places"] == [1, 3, 2]
    assert_problem(http.post(f"{base}/turn/draw", {"source": "stock"}, tokens[1]), 409, "game_over")

    replay = http.get(f"{base}/replay")
    assert replay.status_code == 200, replay.text
    data = replay.json()
    assert data["seed"] == SEED and data["totals"] == scores and data["names"] == ["Ann", "Bob", "Cy"]
    dealt = {e["seat"]: e["private"]["hand"] for e in data["events"] if e["type"] == "dealt"}
    assert {seat: sorted(hand) for seat, hand in dealt.items()} == {
        i: sorted(h) for i, h in enumerate(MAYI_FINAL_HANDS)
    }
    kinds = [e["type"] for e in data["events"]]
    assert kinds[0] == "round_started" and kinds[-2:] == ["round_ended", "game_ended"]
    assert [e["seq"] for e in data["events"]] == list(range(1, len(kinds) + 1))


# ---------------------------------------------------------------------------
# Errors of the HTTP layer


def test_unknown_game_and_path_are_problems(http: Http) -> None:
    assert_problem(http.get("/v1/games/no-such-game"), 404, "not_found", "no-such-game")
    assert_problem(http.get("/v1/games/no-such-game/events"), 404, "not_found")
    assert_problem(http.get("/v1/games/no-such-game/replay"), 404, "not_found")
    assert_problem(http.post("/v1/games/no-such-game/claims", {"claim": False}, "tok"), 404, "not_found")
    assert_problem(http.get("/v1/nothing-here"), 404, "not_found", "/v1/nothing-here")


def test_wrong_method(http: Http) -> None:
    response = http.request("DELETE", "/v1/games")
    assert_problem(response, 405, "method_not_allowed")
    assert {"GET", "POST"} <= {m.strip() for m in response.headers["Allow"].split(",")}
    assert_problem(http.get("/v1/games/abc/turn/draw"), 405, "method_not_allowed")
    assert_problem(http.request("PUT", "/v1/games/abc"), 405, "method_not_allowed")


def test_body_over_the_limit(http: Http, settings: Settings) -> None:
    padding = "x" * settings.max_body_bytes
    body = json.dumps({"variant": "may_i", "seats": 3, "players": [{"name": padding}]})
    response = http.post("/v1/games", data=body, headers={"Content-Type": "application/json"})
    assert_problem(response, 413, "request_too_large")
    assert http.get("/v1/games").json()["total"] == 0


@pytest.mark.parametrize(
    ("data", "status"),
    [("{bad json", 400), ('{"variant": "may_i", "seats": 3', 400), ("[1, 2]", 422), ("null", 422), ('"x"', 422)],
)
def test_malformed_json_is_a_problem(http: Http, data: str, status: int) -> None:
    response = http.post("/v1/games", data=data, headers={"Content-Type": "application/json"})
    assert 400 <= response.status_code < 500
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/problem+json")
    assert response.json()["status"] == status and response.json()["detail"]


def test_malformed_action_bodies(http: Http) -> None:
    game_id, tokens, _ = shanghai_table(http)
    base = f"/v1/games/{game_id}"
    bad = http.post(f"{base}/claims", data="{", token=tokens[1], headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["code"] == "bad_request" and "JSON" in bad.json()["detail"]
    assert_problem(
        http.post(f"{base}/claims", {"claim": False, "extra": 1}, tokens[1]), 422, "validation_error", "extra"
    )
    assert_problem(http.post(f"{base}/melds", {"melds": "7H 7S 7D"}, tokens[0]), 422, "validation_error", "melds")
    assert_problem(http.post(f"{base}/lay-offs", {"lay_offs": []}, tokens[0]), 422, "validation_error", "lay_offs")
    assert view(http, game_id)["version"] == 1


# ---------------------------------------------------------------------------
# Events


def test_events_long_poll(http: Http) -> None:
    game_id, tokens, _ = shanghai_table(http)
    path = f"/v1/games/{game_id}/events"

    started = time.monotonic()
    first = http.get(path, params={"after": 0, "wait": 20})
    assert first.status_code == 200 and time.monotonic() - started < 5  # events exist: no waiting
    body = first.json()
    assert [e["seq"] for e in body["events"]] == [1, 2, 3, 4] and body["last"] == 4
    assert [e["type"] for e in body["events"]] == ["round_started", "dealt", "dealt", "dealt"]
    assert all({"seq", "type", "seat", "time", "data"} <= e.keys() for e in body["events"])

    # Private data goes to its own seat only.
    assert all("private" not in e for e in body["events"])
    for seat, token in enumerate(tokens):
        dealt = [e for e in events(http, game_id, token) if e["type"] == "dealt"]
        assert [("private" in e) for e in dealt] == [e["seat"] == seat for e in dealt]
        mine = next(e for e in dealt if e["seat"] == seat)
        assert sorted(mine["private"]["hand"]) == sorted(SHANGHAI_HANDS[seat])

    empty = http.get(path, params={"after": 4, "wait": 0.2})
    assert empty.json() == {"events": [], "last": 4}

    result: dict[str, Any] = {}

    def poll() -> None:
        response = http.get(path, token=tokens[0], params={"after": 4, "wait": 20}, timeout=30)
        result["done_at"] = time.monotonic()
        result["body"] = response.json()

    waiter = threading.Thread(target=poll)
    waiter.start()
    time.sleep(0.5)
    assert "body" not in result  # still waiting
    mover = Http(http.base)
    moved_at = time.monotonic()
    assert mover.post(f"/v1/games/{game_id}/claims", {"claim": False}, tokens[1]).status_code == 200
    waiter.join(25)
    assert not waiter.is_alive()
    assert moved_at <= result["done_at"] < moved_at + 10  # answered by the move, well before the wait ran out
    assert [(e["seq"], e["type"], e["seat"]) for e in result["body"]["events"]] == [(5, "passed", 1)]
    assert result["body"]["last"] == 5

    # The stock draw is private to the seat that drew.
    assert mover.post(f"/v1/games/{game_id}/claims", {"claim": False}, tokens[2]).status_code == 200
    assert mover.post(f"/v1/games/{game_id}/turn/draw", {"source": "stock"}, tokens[0]).status_code == 200
    drew = [e for e in events(http, game_id, tokens[0], after=5) if e["type"] == "drew"]
    assert drew and drew[0]["private"] == {"card": "5D"}
    assert all("private" not in e for e in events(http, game_id, tokens[1], after=5))
    assert all("private" not in e for e in events(http, game_id, None, after=5))
    assert_problem(http.get(path, params={"wait": 61}), 422, "validation_error", "wait")
    assert_problem(http.get(path, params={"after": -1}), 422, "validation_error", "after")


SSE_SECONDS = 2


@pytest.fixture
def sse_http(settings: Settings) -> Iterator[Http]:
    """An app whose SSE streams close after ``SSE_SECONDS``, over a real socket."""
    app = create_app(dataclasses.replace(settings, sse_max_seconds=SSE_SECONDS, sse_heartbeat_seconds=1))
    with serve(app) as client:
        yield client


def read_sse(response: requests.Response, want: int | None = None) -> list[dict[str, Any]]:
    """Server-Sent Events from ``response``: ``want`` of them, or all until the server closes."""
    found: list[dict[str, Any]] = []
    fields: dict[str, str] = {}
    for line in response.iter_lines(decode_unicode=True):
        if line:
            if not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
            continue
        if "data" in fields:
            found.append({"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])})
            if want is not None and len(found) >= want:
                break
        fields = {}
    return found


def test_sse_stream_and_resume(sse_http: Http) -> None:
    game_id, tokens, _ = shanghai_table(sse_http)
    path = f"/v1/games/{game_id}/events/stream"

    with sse_http.get(path, tokens[1], stream=True, timeout=(5, 5)) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        first = read_sse(response, want=4)
    assert [(e["id"], e["event"]) for e in first] == [(1, "round_started"), (2, "dealt"), (3, "dealt"), (4, "dealt")]
    assert all(e["data"]["seq"] == e["id"] for e in first)
    assert [("private" in e["data"]) for e in first] == [False, False, True, False]  # seat 1 sees its own hand
    assert sorted(first[2]["data"]["private"]["hand"]) == sorted(SHANGHAI_HANDS[1])

    for token in tokens[1:]:
        assert sse_http.post(f"/v1/games/{game_id}/claims", {"claim": False}, token).status_code == 200

    started = time.monotonic()
    headers = {"Last-Event-ID": "4"}
    with sse_http.get(path, tokens[1], headers=headers, stream=True, timeout=(5, 5)) as response:
        later = read_sse(response)  # until the server closes the stream
    elapsed = time.monotonic() - started
    assert [(e["id"], e["event"], e["data"]["seat"]) for e in later] == [(5, "passed", 1), (6, "passed", 2)]
    assert SSE_SECONDS - 0.5 <= elapsed < SSE_SECONDS + 5

    with sse_http.get(path, stream=True, params={"after": 5}, timeout=(5, 5)) as response:
        assert [e["id"] for e in read_sse(response, want=1)] == [6]
    bad = sse_http.get(path, headers={"Last-Event-ID": "four"})
    assert_problem(bad, 422, "validation_error", "Last-Event-ID")
    assert_problem(sse_http.get("/v1/games/nope/events/stream"), 404, "not_found")


# ---------------------------------------------------------------------------
# Health, metrics and documentation


def test_healthz(http: Http) -> None:
    response = http.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "redis": True}


def test_metrics(http: Http) -> None:
    http.create(variant="may_i", seats=3, players=[{"name": "A"}, {"name": "B"}, {"name": "C"}])
    http.create(variant="may_i", seats=3)
    http.get("/v1/games/nope")
    response = http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    assert response.headers["Content-Type"].count("charset") == 1
    text = response.text
    assert "# TYPE mayi_http_requests_total counter" in text
    assert re.search(r'mayi_http_requests_total\{endpoint="/v1/games",method="POST",status="201"\} \d', text)
    assert re.search(r'mayi_http_requests_total\{[^}]*status="404"[^}]*\} \d', text)
    assert "# TYPE mayi_games gauge" in text
    assert 'mayi_games{status="playing"} 1.0' in text
    assert 'mayi_games{status="waiting"} 1.0' in text
    assert 'mayi_games{status="finished"} 0.0' in text


def test_openapi_and_docs(http: Http) -> None:
    spec = http.get("/openapi.json")
    assert spec.status_code == 200 and spec.headers["Content-Type"].startswith("application/json")
    document = spec.json()
    assert document["openapi"].startswith("3.")
    paths = document["paths"]
    for path, method in [
        ("/v1/games", "post"),
        ("/v1/games", "get"),
        ("/v1/games/{game_id}", "get"),
        ("/v1/games/{game_id}/seats", "post"),
        ("/v1/games/{game_id}/turn/draw", "post"),
        ("/v1/games/{game_id}/turn/discard", "post"),
        ("/v1/games/{game_id}/claims", "post"),
        ("/v1/games/{game_id}/melds", "post"),
        ("/v1/games/{game_id}/lay-offs", "post"),
        ("/v1/games/{game_id}/events", "get"),
        ("/v1/games/{game_id}/events/stream", "get"),
        ("/v1/games/{game_id}/replay", "get"),
        ("/healthz", "get"),
        ("/metrics", "get"),
    ]:
        assert method in paths.get(path, {}), (method, path)

    docs = http.get("/docs/")
    assert docs.status_code == 200 and docs.headers["Content-Type"].startswith("text/html")
    html = docs.text
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/docs/swagger-ui-bundle.js" in assets
    assert all(not re.match(r"(https?:)?//", a) for a in assets), assets
    assert "https://" not in html and not re.search(r"unpkg|jsdelivr|cdnjs", html)
    assert "/openapi.json" in html
    bundle = http.get("/docs/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and "javascript" in bundle.headers["Content-Type"]
    assert len(bundle.content) > 100_000
    assert http.get("/docs/swagger-ui.css").status_code == 200
    assert http.get("/docs", allow_redirects=True).url.endswith("/docs/")
    home = http.get("/", allow_redirects=False)  # the web table, which links the reference
    assert home.status_code == 200 and 'href="/docs/"' in home.text
