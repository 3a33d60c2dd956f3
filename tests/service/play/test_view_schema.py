"""Views are sent as the engine builds them: they must match the documented GameView, strictly
(every field declared, every required field there, in each status and phase)."""

from __future__ import annotations

from typing import Any

from documented import component_problems

from mayi_engine import legal_moves
from mayi_engine.moves import move_to_json
from mayi_engine.state import loads


def _check(view: dict[str, Any]) -> None:
    found = component_problems("GameView", view)
    assert not found, f"the view does not match the documented GameView: {found}"


def test_views_of_every_phase_match_the_schema(client, app):
    created = client.post(
        "/v1/games",
        json={"variant": "shanghai", "seats": 3, "players": [{"name": n} for n in "abc"], "test": {"start_round": 8}},
    ).get_json()
    game_id = created["game_id"]
    tokens = [s["token"] for s in created["seats"]]
    _check(created["game"])
    repo = app.extensions["mayi"].games.repo
    phases = set()
    for _ in range(400):
        state = loads(repo.load(game_id).state)
        if state.finished:
            break
        for token in tokens:
            view = client.get(f"/v1/games/{game_id}", headers={"Authorization": f"Bearer {token}"}).get_json()
            _check(view)
            phases.add(view["phase"])
        _check(client.get(f"/v1/games/{game_id}").get_json())
        seat = next((p for p in range(3) if legal_moves(state, p) and p != state.actor), state.actor)
        move = move_to_json(legal_moves(state, seat)[-1])
        path = {"draw": "turn/draw", "discard": "turn/discard", "claim": "claims", "go_down": "melds"}
        kind = move.pop("type")
        response = client.post(
            f"/v1/games/{game_id}/{path.get(kind, 'lay-offs')}",
            json=move,
            headers={"Authorization": f"Bearer {tokens[seat]}"},
        )
        assert response.status_code == 200, response.get_json()
        _check(response.get_json())
    assert {"draw", "play"} <= phases
