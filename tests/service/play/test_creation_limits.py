"""Creating tables: its own rate limit per client address, and a bound on the open
tables (waiting or playing) of one address. Real Redis, the limits on."""

from __future__ import annotations

import dataclasses

import pytest

from mayi_service.api.app import create_app

TABLE = {"variant": "may_i", "seats": 3}


@pytest.fixture
def create_limited(settings):
    """3 tables a minute per address; everything else far from its limit."""
    return create_app(
        dataclasses.replace(
            settings,
            rate_limits_enabled=True,
            rate_limit_create="3 per minute",
            max_open_tables_per_address=0,
        )
    ).test_client()


@pytest.fixture
def open_bounded(settings):
    """At most 2 open tables per address; no creation rate limit to speak of."""
    return create_app(
        dataclasses.replace(
            settings,
            rate_limits_enabled=True,
            rate_limit_create="1000 per minute",
            max_open_tables_per_address=2,
        )
    ).test_client()


def test_table_creation_has_its_own_limit_per_address(create_limited):
    statuses = [create_limited.post("/v1/games", json=TABLE).status_code for _ in range(3)]
    assert statuses == [201, 201, 201]
    refused = create_limited.post("/v1/games", json=TABLE)
    assert refused.status_code == 429 and refused.content_type == "application/problem+json"
    body = refused.get_json()
    assert body["code"] == "rate_limited"
    assert "3 per minute" in body["detail"] and "MAYI_RATE_LIMIT_CREATE" in body["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 120
    assert f"Try again in {refused.headers['Retry-After']} s" in body["detail"]  # the wait, in words
    # Other requests of the same address are not held back by it.
    assert create_limited.get("/v1/games").status_code == 200
    # Another address has its own count.
    other = create_limited.post("/v1/games", json=TABLE, environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 201


def test_open_tables_per_address_are_bounded(open_bounded):
    first = open_bounded.post("/v1/games", json=TABLE)
    second = open_bounded.post("/v1/games", json=TABLE)
    assert first.status_code == second.status_code == 201
    refused = open_bounded.post("/v1/games", json=TABLE)
    assert refused.status_code == 409 and refused.content_type == "application/problem+json"
    body = refused.get_json()
    assert body["code"] == "too_many_open_tables" and body["limit"] == 2
    assert "MAYI_MAX_OPEN_TABLES_PER_ADDRESS" in body["detail"] and "2 open tables" in body["detail"]
    assert open_bounded.get("/v1/games?status=waiting").get_json()["total"] == 2, "nothing was created"

    # Another address is not affected.
    assert open_bounded.post("/v1/games", json=TABLE, environ_base={"REMOTE_ADDR": "10.9.9.9"}).status_code == 201


def test_a_finished_or_expired_table_no_longer_counts(open_bounded, redis_client, settings):
    ids = [open_bounded.post("/v1/games", json=TABLE).get_json()["game_id"] for _ in range(2)]
    assert open_bounded.post("/v1/games", json=TABLE).status_code == 409
    # One table expires (its keys are gone): the address may open another.
    for key in redis_client.scan_iter(match=f"{settings.key_prefix}:{{{ids[0]}}}:*"):
        redis_client.delete(key)
    assert open_bounded.post("/v1/games", json=TABLE).status_code == 201
    assert open_bounded.post("/v1/games", json=TABLE).status_code == 409
