"""Retention: tables that never fill and finished games expire, by Redis TTLs on every
key of the game, and the sweeper drops them from the listing.

Real Redis; the TTLs are read back from Redis (and one is left to run out, polled
with a cap, never timed).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import redis
from decks import BIG_CLOCKS, MAYI_FINAL_DECK, SEED
from serving import wait_until

from mayi_service.api.app import create_app
from mayi_service.config import Settings
from mayi_service.play.clock import Clock

WAITING_TTL = 600
FINISHED_TTL = 7 * 24 * 3600


@pytest.fixture
def retained(settings: Settings) -> Any:
    app = create_app(replace(settings, waiting_ttl=WAITING_TTL, finished_ttl=FINISHED_TTL))
    return app, app.test_client()


def _keys(r: redis.Redis, prefix: str, game_id: str) -> dict[str, int]:
    """Every key of the game, with its TTL in seconds (-1: none)."""
    return {k.decode(): int(r.ttl(k)) for k in r.scan_iter(match=f"{prefix}:{{{game_id}}}:*")}


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_waiting_table_expires_unless_it_fills(retained, redis_client, settings) -> None:
    _, client = retained
    created = client.post("/v1/games", json={"variant": "may_i", "seats": 3, "players": [{"name": "Ann"}]})
    assert created.status_code == 201
    game_id = created.get_json()["game_id"]
    keys = _keys(redis_client, settings.key_prefix, game_id)
    assert {k.rsplit(":", 1)[1] for k in keys} == {"game", "tokens"}
    assert all(0 < ttl <= WAITING_TTL for ttl in keys.values()), keys

    redis_client.expire(f"{settings.key_prefix}:{{{game_id}}}:game", 5)  # as if it had waited long
    assert client.post(f"/v1/games/{game_id}/seats", json={"name": "Bob"}).status_code == 201
    keys = _keys(redis_client, settings.key_prefix, game_id)
    assert all(WAITING_TTL - 60 < ttl <= WAITING_TTL for ttl in keys.values()), "a seat taken restarts the hour"

    assert client.post(f"/v1/games/{game_id}/seats", json={"name": "Cy"}).status_code == 201
    keys = _keys(redis_client, settings.key_prefix, game_id)
    assert {k.rsplit(":", 1)[1] for k in keys} == {"game", "tokens", "events"}
    assert set(keys.values()) == {-1}, f"a game in play is kept until it ends: {keys}"


def test_a_finished_game_and_its_replay_are_kept_for_finished_ttl(retained, redis_client, settings) -> None:
    _, client = retained
    created = client.post(
        "/v1/games",
        json={
            "variant": "may_i",
            "seats": 3,
            "options": BIG_CLOCKS,
            "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
            "test": {"seed": SEED, "stacked_decks": [None] * 6 + [MAYI_FINAL_DECK], "start_round": 7},
        },
    ).get_json()
    game_id, token = created["game_id"], created["seats"][0]["token"]
    base = f"/v1/games/{game_id}"
    assert set(_keys(redis_client, settings.key_prefix, game_id).values()) == {-1}
    headers = {**_auth(token), "Idempotency-Key": "take-it"}
    assert client.post(f"{base}/claims", json={"claim": True}, headers=headers).status_code == 200
    runs = [["3C", "4C", "5C", "6C"], ["8D", "9D", "TD", "JD"], ["2H", "3H", "4H", "5H"]]
    assert client.post(f"{base}/melds", json={"melds": runs}, headers=_auth(token)).status_code == 200
    headers = {**_auth(token), "Idempotency-Key": "out"}
    out = client.post(f"{base}/turn/discard", json={"card": "KD"}, headers=headers)
    assert out.get_json()["status"] == "finished"

    keys = _keys(redis_client, settings.key_prefix, game_id)
    kinds = {k.rsplit(":", 1)[1] if ":idem:" not in k else "idem" for k in keys}
    assert kinds == {"game", "tokens", "archive", "idem"}, keys
    for key, ttl in keys.items():
        if ":idem:" in key:
            assert 0 < ttl <= settings.idempotency_ttl, (key, ttl)
        else:
            assert FINISHED_TTL - 3600 < ttl <= FINISHED_TTL, (key, ttl)
    assert client.get(f"{base}/replay").status_code == 200


def test_expired_tables_leave_the_listing(settings, redis_client) -> None:
    app = create_app(replace(settings, waiting_ttl=1, finished_ttl=FINISHED_TTL))
    client = app.test_client()
    game_id = client.post("/v1/games", json={"variant": "shanghai", "seats": 4}).get_json()["game_id"]
    assert client.get("/v1/games?status=waiting").get_json()["total"] == 1

    assert wait_until(lambda: client.get(f"/v1/games/{game_id}").status_code == 404, 60), "the table did not expire"
    assert _keys(redis_client, settings.key_prefix, game_id) == {}
    svc = app.extensions["mayi"]
    Clock(svc.games.repo, None).sweep(svc.games)  # the sweeper of every worker does this now and then
    listed = client.get("/v1/games?status=waiting").get_json()
    assert (listed["total"] == 0 and listed["games"] == []) or listed.get("items") == []
    assert redis_client.zcard(f"{settings.key_prefix}:{{index}}:games:waiting:shanghai") == 0


def test_zero_keeps_games_for_ever(settings, redis_client) -> None:
    client = create_app(replace(settings, waiting_ttl=0)).test_client()
    game_id = client.post("/v1/games", json={"variant": "may_i", "seats": 3}).get_json()["game_id"]
    assert set(_keys(redis_client, settings.key_prefix, game_id).values()) == {-1}


def test_pruning_looks_past_games_that_are_old_but_alive(retained, redis_client, settings) -> None:
    """Candidates are picked by creation time; one still alive does not hide expired ones."""
    app, client = retained
    repo = app.extensions["mayi"].games.repo
    alive, gone = (client.post("/v1/games", json={"variant": "may_i", "seats": 3}).get_json()["game_id"] for _ in "ab")
    index = f"{settings.key_prefix}:{{index}}:games:waiting"
    redis_client.zadd(index, {alive: 1000.0, gone: 2000.0})  # both created long ago; alive listed first
    for key in redis_client.scan_iter(match=f"{settings.key_prefix}:{{{gone}}}:*"):
        redis_client.delete(key)
    from mayi_engine.rules import VARIANTS

    assert repo.prune_indexes(10_000.0, VARIANTS, batch=1) == 1
    assert [g.decode() for g in redis_client.zrange(index, 0, -1)] == [alive]
    assert [g.decode() for g in redis_client.zrange(f"{index}:may_i", 0, -1)] == [alive]
