"""A claim after the claim window closed answers 409 ``claim_not_allowed`` naming the
closed window, over a real socket (docs/api.md's error table; docs/rules.md E13)."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from http_moves import auth
from servers import LiveServer, Time

from mayi_service.api.app import create_app

TIMEOUT = 30


@pytest.fixture
def served(settings: Any) -> Any:
    app = create_app(settings)
    time = Time(1_900_000_000.0)
    app.extensions["mayi"].games.clock = time
    server = LiveServer(app)
    try:
        yield server.url, time
    finally:
        server.stop()


def test_a_claim_after_the_window_closed_is_claim_not_allowed(served: Any) -> None:
    base, time = served
    http = requests.Session()
    try:
        created = http.post(
            f"{base}/v1/games",
            json={
                "variant": "shanghai",
                "seats": 3,
                "players": [{"name": n} for n in ("Ann", "Bob", "Cy")],
                "options": {"claim_seconds": 10, "turn_seconds": 60},
            },
            timeout=TIMEOUT,
        )
        assert created.status_code == 201, created.text
        game = created.json()
        game_id, tokens = game["game_id"], [s["token"] for s in game["seats"]]
        url = f"{base}/v1/games/{game_id}"
        time.now += 11  # the window on the first upcard closed a second ago
        late = http.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[2]), timeout=TIMEOUT)
        assert late.status_code == 409, late.text
        problem = late.json()
        assert problem["code"] == "claim_not_allowed"
        assert "claim window" in problem["detail"] and "closed at" in problem["detail"]
        assert problem["closes_at"] == 1_900_000_010.0
        drew = http.post(f"{url}/turn/draw", json={"source": "stock"}, headers=auth(tokens[0]), timeout=TIMEOUT)
        assert drew.status_code == 200, drew.text
        after = http.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[1]), timeout=TIMEOUT)
        assert after.status_code == 409 and after.json()["code"] == "claim_not_allowed", after.text
        assert "closed when seat 0 drew" in after.json()["detail"]
    finally:
        http.close()
