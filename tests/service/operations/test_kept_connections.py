"""``MAYI_REDIS_KEPT_CONNECTIONS``: the request path's scripts and the event hub's reads on
kept connections of a single Redis (the default), or through redis-py's client and pool."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest
from http_moves import auth, move_request

from mayi_service.api.app import create_app
from mayi_service.config import Settings


@pytest.mark.parametrize("kept", [True, False])
def test_a_game_is_played_and_followed_either_way(settings: Settings, kept: bool) -> None:
    app = create_app(replace(settings, redis_kept_connections=kept))
    repo = app.extensions["mayi"].games.repo
    assert (repo.run.kept is not None) is kept and (repo.hub.pool is not None) is kept
    client = app.test_client()
    body = {"variant": "may_i", "seats": 3, "players": [{"name": n} for n in ("Ann", "Bob", "Cy")]}
    created = client.post("/v1/games", json=body).get_json()
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    last = client.get(f"/v1/games/{game_id}/events?after=0").get_json()["last"]
    waited: list[Any] = []
    waiter = threading.Thread(
        target=lambda: waited.append(client.get(f"/v1/games/{game_id}/events?after={last}&wait=30").get_json())
    )
    waiter.start()
    actor = client.get(f"/v1/games/{game_id}").get_json()["actor"]
    view = client.get(f"/v1/games/{game_id}", headers=auth(tokens[actor])).get_json()
    path, move = move_request(view["legal"][0])
    assert client.post(f"/v1/games/{game_id}/{path}", json=move, headers=auth(tokens[actor])).status_code == 200
    waiter.join(60)
    assert waited and waited[0]["events"], "the long-poll was not woken by the move"


def test_the_setting_is_read_from_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.from_env().redis_kept_connections is True
    monkeypatch.setenv("MAYI_REDIS_KEPT_CONNECTIONS", "false")
    assert Settings.from_env().redis_kept_connections is False
