"""Rate limits (per token and per address), body size limits and CORS; what the rate limits
count and how each response announces them: tests/service/http/test_rate_limit_policy.py."""

from __future__ import annotations

import dataclasses

import pytest
from http_moves import auth

from mayi_service.api.app import create_app


@pytest.fixture
def limited(settings):
    """An app with tight limits: 5 counted requests a minute per token, 8 per address."""
    return create_app(
        dataclasses.replace(
            settings,
            rate_limits_enabled=True,
            rate_limit_token="5 per minute",
            rate_limit_address="8 per minute",
            cors_origins=("https://table.example",),
        )
    ).test_client()


def _game(client):
    created = client.post("/v1/games", json={"variant": "may_i", "seats": 2, "players": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201
    return created.get_json()


def _idle_seat(client, game):
    """The token of a seat with no decision now (its view lists no legal move), and the other's."""
    tokens = [s["token"] for s in game["seats"]]
    views = [client.get(f"/v1/games/{game['game_id']}", headers=auth(t)).get_json() for t in tokens]
    idle = [t for t, v in zip(tokens, views, strict=True) if not v["legal"]]
    busy = [t for t, v in zip(tokens, views, strict=True) if v["legal"]]
    assert idle and busy, views
    return idle[0], busy[0]


def test_a_token_over_its_limit_gets_429_with_retry_after_and_a_problem(limited):
    game = _game(limited)
    idle, _ = _idle_seat(limited, game)  # reads of the game: not counted by the token
    headers = auth(idle)
    # Listing the tables is counted: five pass, the sixth is refused.
    statuses = [limited.get("/v1/games", headers=headers).status_code for _ in range(7)]
    assert statuses[:5] == [200] * 5
    assert statuses[5:] == [429, 429]
    refused = limited.get("/v1/games", headers=headers)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    body = refused.get_json()
    assert body["code"] == "rate_limited" and body["status"] == 429
    assert "5 per minute" in body["detail"] and "MAYI_RATE_LIMIT_TOKEN" in body["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 120, "the wait until the window lets requests in again"
    assert refused.headers["RateLimit"] == f'"token";r=0;t={refused.headers["Retry-After"]}'


def test_the_address_limit_holds_across_tokens(limited):
    game = _game(limited)  # one request from this address
    idle, busy = _idle_seat(limited, game)  # one more (the busy seat's read is not counted)
    statuses = []
    for _ in range(5):
        statuses.append(limited.get("/v1/games", headers=auth(idle)).status_code)
        statuses.append(limited.get("/v1/games", headers=auth(busy)).status_code)  # a listing is counted
    # 8 per minute per address: 2 were counted, 6 more pass, then every request is refused.
    assert statuses.count(200) == 6 and set(statuses[6:]) == {429}
    refused = limited.get("/v1/games")  # no token: far from its own count (per address), not the address's
    assert "MAYI_RATE_LIMIT_ADDRESS" in refused.get_json()["detail"]
    assert refused.headers["RateLimit"].startswith('"address";r=0;t=')


def test_health_is_never_rate_limited(limited):
    assert {limited.get("/healthz").status_code for _ in range(20)} == {200}


def test_a_body_over_the_limit_is_refused_with_413(client, settings):
    big = {"variant": "may_i", "seats": 2, "players": [{"name": "x" * 40}] * 2, "pad": "y" * settings.max_body_bytes}
    response = client.post("/v1/games", json=big)
    assert response.status_code == 413
    assert response.get_json()["code"] == "request_too_large"


def test_cors_allows_the_configured_origin_only(limited):
    allowed = limited.get("/healthz", headers={"Origin": "https://table.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://table.example"
    other = limited.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    preflight = limited.options(
        "/v1/games",
        headers={"Origin": "https://table.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 200
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
