"""Whole games over HTTP, checked against the engine playing the same moves.

Each game starts near the end (``test.start_round``, the last round but one) with
a fixed seed, long clocks, and no stock rebuilds (``max_reshuffles: 0``), so it
ends in a few hundred moves. At every step the seat that must act (the seat a
claim window waits for, else the view's ``actor``) picks one of its view's
``legal`` moves with a deterministic choice and sends it to the matching
endpoint. At the end the engine, started with ``new_game`` on the same rules,
names and seed and fed the same moves, must reach the same totals, results,
public view and events.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests
from whole_games import acting_seat, body_of, choose

from mayi_engine import event_to_json, new_game, play, start_game
from mayi_engine.moves import move_from_json
from mayi_engine.rules import get_rules
from mayi_engine.views import player_view

TIMEOUT = 10
NAMES = ["Ann", "Bob", "Cy"]
MAX_MOVES = 3000

#: The endpoint of each kind of legal move, and the body it takes.
ENDPOINTS = {
    "draw": "turn/draw",
    "discard": "turn/discard",
    "claim": "claims",
    "go_down": "melds",
    "lay_off": "lay-offs",
}

#: Fields the service adds to the engine's view.
SERVICE_FIELDS = {"id", "version", "options", "rated", "created_at", "last_event"}


GAMES = [
    # (variant, seed, start round): seeds chosen so that seats go down, lay off and go out.
    pytest.param("may_i", "02" * 16, 6, id="may_i"),
    pytest.param("shanghai", "06" * 16, 7, id="shanghai"),
]


@pytest.mark.parametrize(("variant", "seed", "start_round"), GAMES)
def test_whole_game_over_http_matches_the_engine(live_server: Any, variant: str, seed: str, start_round: int) -> None:
    options = {"claim_seconds": 86400, "turn_seconds": 86400, "max_reshuffles": 0}
    rules = get_rules(variant, options)
    assert start_round == len(rules.rounds) - 1
    http = requests.Session()
    base = live_server.url

    created = http.post(
        f"{base}/v1/games",
        json={
            "variant": variant,
            "seats": 3,
            "options": options,
            "players": [{"name": n} for n in NAMES],
            "test": {"seed": seed, "start_round": start_round},
        },
        timeout=TIMEOUT,
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    tokens = [s["token"] for s in created.json()["seats"]]
    current = created.json()["game"]
    assert current["round"]["number"] == start_round and current["rated"] is False

    moves: list[tuple[int, dict[str, Any]]] = []
    kinds: dict[str, int] = {}
    known: dict[str, Any] | None = None  # the acting seat's own view, when current
    while current["status"] != "finished":
        assert len(moves) < MAX_MOVES, "the game did not end"
        seat = acting_seat(current)
        if known is None or known["seat"] != seat or known["version"] != current["version"]:
            response = http.get(
                f"{base}/v1/games/{game_id}", headers={"Authorization": f"Bearer {tokens[seat]}"}, timeout=TIMEOUT
            )
            assert response.status_code == 200, response.text
            known = response.json()
            assert known["version"] == current["version"]
        move = choose(known, rules)
        response = http.post(
            f"{base}/v1/games/{game_id}/{ENDPOINTS[move['type']]}",
            json=body_of(move),
            headers={"Authorization": f"Bearer {tokens[seat]}"},
            timeout=TIMEOUT,
        )
        assert response.status_code == 200, (move, response.text)
        after = response.json()
        assert after["version"] == current["version"] + 1 and after["seat"] == seat
        moves.append((seat, move))
        kinds[move["type"]] = kinds.get(move["type"], 0) + 1
        current = known = after

    # The chosen seeds make every kind of action happen over HTTP.
    assert set(kinds) == set(ENDPOINTS), kinds
    final = http.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()
    assert final["status"] == "finished" and len(final["results"]) == 2
    assert any(r["out"] is not None for r in final["results"])

    # The engine, fed the same moves from the same seed.
    state = new_game(rules, NAMES, seed=bytes.fromhex(seed), start_round=start_round)
    _, engine_events = start_game(rules, NAMES, bytes.fromhex(seed), start_round=start_round)
    for seat, move in moves:
        state, more = play(state, seat, move_from_json(move), 0.0)
        engine_events += more
    assert state.finished

    assert [s["total"] for s in final["seats"]] == list(state.totals)
    assert final["results"] == [
        {"round": r.round, "out": r.out if r.out >= 0 else None, "scores": list(r.scores)} for r in state.results
    ]
    engine_view = player_view(state, None)
    assert {k: v for k, v in final.items() if k not in SERVICE_FIELDS} == engine_view
    for seat, token in enumerate(tokens):
        mine = http.get(f"{base}/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
        assert mine.json()["hand"] == player_view(state, seat)["hand"]

    replay = http.get(f"{base}/v1/games/{game_id}/replay", timeout=TIMEOUT)
    assert replay.status_code == 200, replay.text
    data = replay.json()
    assert data["seed"] == seed and data["totals"] == list(state.totals) and data["names"] == NAMES
    assert [e["seq"] for e in data["events"]] == list(range(1, len(engine_events) + 1))
    served = [{k: v for k, v in e.items() if k not in ("seq", "time")} for e in data["events"]]
    assert served == [event_to_json(e) for e in engine_events]
    http.close()
