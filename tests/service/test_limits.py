"""Rate limits (per token and per address), body size limits and CORS."""

from __future__ import annotations

import dataclasses

import pytest

from mayi_service.app import create_app


@pytest.fixture
def limited(settings):
    """An app with tight limits: 5 requests a minute per token, 8 per address."""
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


def test_a_token_over_its_limit_gets_429_with_retry_after_and_a_problem(limited):
    game = _game(limited)
    token = game["seats"][0]["token"]
    headers = {"Authorization": f"Bearer {token}"}
    statuses = [limited.get(f"/v1/games/{game['game_id']}", headers=headers).status_code for _ in range(7)]
    assert statuses[:5] == [200] * 5
    assert statuses[5] == 429
    refused = limited.get(f"/v1/games/{game['game_id']}", headers=headers)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    body = refused.get_json()
    assert body["code"] == "rate_limited" and body["status"] == 429
    assert "5 per 1 minute" in body["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 120, "the wait until the window lets requests in again"


def test_the_address_limit_holds_across_tokens(limited):
    game = _game(limited)  # one request from this address
    tokens = [s["token"] for s in game["seats"]]
    statuses = []
    for i in range(10):
        headers = {"Authorization": f"Bearer {tokens[i % 2]}"}
        statuses.append(limited.get(f"/v1/games/{game['game_id']}", headers=headers).status_code)
    # 8 per minute per address: the 1st request created the game, 7 more pass.
    assert statuses.count(200) == 7 and statuses[7:] == [429, 429, 429]


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
