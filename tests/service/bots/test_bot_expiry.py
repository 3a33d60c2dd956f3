"""Bot accounts that are never used expire (``MAYI_BOT_IDLE_TTL``); using one keeps it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from serving import wait_until

from mayi_service.config import Settings

DAY = 24 * 3600


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, bot_idle_ttl=90 * DAY)


def _register(client: Any) -> dict[str, Any]:
    response = client.post("/v1/bots", json={"name": "idle"})
    assert response.status_code == 201, response.get_json()
    return dict(response.get_json())


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_new_account_expires_after_the_idle_ttl(app: Any, client: Any) -> None:
    bots = app.extensions["mayi"].bots
    bot = _register(client)
    bot_id = bot["bot_id"]
    token_key = bots.store.token_key(_digest(bot["token"]))
    for key in (bots.store.bot_key(bot_id), token_key):
        assert 89 * DAY < bots.store.r.ttl(key) <= 90 * DAY, key


def test_using_the_token_pushes_the_expiry_back(app: Any, client: Any) -> None:
    bots = app.extensions["mayi"].bots
    bot = _register(client)
    bot_id = bot["bot_id"]
    created = client.post("/v1/games", json={"variant": "may_i", "seats": 2}).get_json()
    seat = client.post(f"/v1/games/{created['game_id']}/seats", json={"name": "idle"}, headers=_auth(bot["token"]))
    assert seat.status_code == 201, seat.get_json()
    token_key = bots.store.token_key(_digest(bot["token"]))
    keys = [token_key, bots.store.bot_key(bot_id), bots.store.games_key(bot_id)]
    assert all(bots.store.r.ttl(k) > 89 * DAY for k in keys)
    for key in keys:  # as if the bot had not been heard from for most of the TTL
        bots.store.r.expire(key, 60)
    bots._touched.clear()  # (each process pushes the account's keys back at most once an hour)
    assert client.get("/v1/bots/me", headers=_auth(bot["token"])).status_code == 200
    assert all(bots.store.r.ttl(k) > 89 * DAY for k in keys), [bots.store.r.ttl(k) for k in keys]


def test_an_expired_account_is_gone(app: Any, client: Any) -> None:
    bots = app.extensions["mayi"].bots
    bot = _register(client)
    token_key = bots.store.token_key(_digest(bot["token"]))
    for key in (token_key, bots.store.bot_key(bot["bot_id"])):
        bots.store.r.pexpire(key, 1)
    assert wait_until(lambda: not bots.store.r.exists(token_key, bots.store.bot_key(bot["bot_id"])), 60)
    gone = client.get("/v1/bots/me", headers=_auth(bot["token"]))
    assert gone.status_code == 401 and "not a valid bot token" in gone.get_json()["detail"]


def test_no_expiry_when_the_setting_is_zero(settings: Settings) -> None:
    from mayi_service.api.app import create_app

    app = create_app(replace(settings, bot_idle_ttl=0))
    bots = app.extensions["mayi"].bots
    bot = _register(app.test_client())
    assert bots.store.r.ttl(bots.store.bot_key(bot["bot_id"])) == -1
    assert bots.store.r.ttl(bots.store.token_key(_digest(bot["token"]))) == -1


def _digest(token: str) -> str:
    from mayi_service.play.tables import token_hash

    return token_hash(token)
