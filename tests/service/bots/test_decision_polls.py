"""The decisions long-poll's waiting slots (``MAYI_MAX_WAITS_PER_CLIENT``), over real HTTP:
only a poll that waits holds one, so a poll that finds a decision at once is never refused;
the (N+1)th waiting poll of a token is refused with 429 and one is accepted again once
others end; a slot is given back when its poll ends, also a poll that answered at once
(after its answer is sent) and one whose client hung up mid-wait. On a single Redis
(under the test server and under gunicorn's gevent workers) and on a Redis Cluster (where
the poll's reads are separate calls)."""

from __future__ import annotations

import dataclasses
import socket
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
import requests
from bot_support import poll_decisions, polling_table
from clusters import cluster_settings
from http_moves import auth, move_request
from servers import LiveServer
from serving import mayi_serve, wait_until
from whole_games import choose

from mayi_engine.rules import get_rules
from mayi_service.api.app import create_app
from mayi_service.config import Settings

LIMIT = 2
TIMEOUT = 30
#: How long a deterministic condition may take to come true on a loaded machine.
CAP = 60.0
LONG = {"claim_seconds": 86400, "turn_seconds": 86400}


def _exercise(url: str, count: Callable[[], int]) -> None:
    """The scenario, against a service at ``url`` with ``MAYI_MAX_WAITS_PER_CLIENT`` = 2;
    ``count()``: the bot's count of waiting polls in Redis."""
    bot = requests.post(f"{url}/v1/bots", json={"name": "poller"}, timeout=TIMEOUT).json()
    token = bot["token"]
    game_id, person = polling_table(url, token, "03" * 16)
    found = poll_decisions(url, token, wait=5)  # finds it at once: the slot its read took is given back
    assert found.status_code == 200 and len(found.json()["decisions"]) == 1, found.text
    key = found.json()["decisions"][0]["key"]
    assert wait_until(lambda: count() == 0, CAP)

    # Two polls wait (the bot skips its decision); a third that would wait is refused.
    answers: list[requests.Response] = []
    waiting = [
        threading.Thread(target=lambda: answers.append(poll_decisions(url, token, 30, [key]))) for _ in range(LIMIT)
    ]
    for thread in waiting:
        thread.start()
    try:
        assert wait_until(lambda: count() == LIMIT, CAP), count()
        refused = poll_decisions(url, token, 30, [key])
        assert refused.status_code == 429, refused.text
        problem = refused.json()
        assert problem["code"] == "rate_limited" and "MAYI_MAX_WAITS_PER_CLIENT" in problem["detail"]
        assert f"at most {LIMIT}" in problem["detail"] and refused.headers["Retry-After"] == "1"
        # At the limit, a poll that need not wait is answered: one with a decision to show...
        at_once = poll_decisions(url, token, 30)
        assert at_once.status_code == 200 and [d["key"] for d in at_once.json()["decisions"]] == [key]
        # ... and one that does not wait (wait=0).
        assert poll_decisions(url, token, 0, [key]).json() == {"decisions": [], "games": 1, "skipped": [key]}
        assert wait_until(lambda: count() == LIMIT, CAP), count()  # the slot of at_once was given back
        # A second table whose first decision is the bot's wakes both waiting polls.
        other, _ = polling_table(url, token, "04" * 16)
    finally:
        for thread in waiting:
            thread.join(TIMEOUT + 30)
    assert [a.status_code for a in answers] == [200] * LIMIT
    assert all({d["game_id"] for d in a.json()["decisions"]} == {other} for a in answers)
    assert wait_until(lambda: count() == 0, CAP), count()
    # The slots are free again: a poll may wait.
    skip = [d["key"] for d in answers[0].json()["decisions"]] + [key]
    again = poll_decisions(url, token, 0.5, skip)
    assert again.status_code == 200 and again.json()["decisions"] == [], again.text

    # A client that hangs up mid-wait holds its slot at most until the poll's wait ends
    # (under gunicorn not even that: test_slot_leases.py).
    host, port = url.removeprefix("http://").split(":")
    query = f"wait=3&skip={skip[0]}&skip={skip[1]}"
    request = (
        f"GET /v1/bots/me/decisions?{query} HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(request)
        assert wait_until(lambda: count() == 1, CAP), count()
    assert wait_until(lambda: count() == 0, CAP), count()
    # One that hangs up before a poll that answers at once is answered: the slot its read
    # took is given back all the same (the server closes the response however it ends).
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
        sock.sendall(request.replace(query.encode(), b"wait=5"))
    assert wait_until(lambda: count() == 0, CAP), count()
    for _ in range(LIMIT):  # and every slot may be taken again
        assert poll_decisions(url, token, 0.2, skip).status_code == 200
    assert requests.get(f"{url}/v1/games/{game_id}", headers=auth(person), timeout=TIMEOUT).status_code == 200


def _served(settings: Settings) -> tuple[Any, LiveServer]:
    app = create_app(dataclasses.replace(settings, max_waits_per_client=LIMIT))
    return app, LiveServer(app)


def _process_slots_free(app: Any) -> bool:
    return bool(app.extensions["mayi"].games.process_slots.count == 0)


def test_waiting_slots_on_a_single_redis(settings: Settings) -> None:
    app, server = _served(settings)
    try:
        _exercise(server.url, lambda: _total(app.extensions["mayi"].bots.store.r, settings.key_prefix))
        assert wait_until(lambda: _process_slots_free(app), CAP)
    finally:
        server.stop()


def test_waiting_slots_under_gunicorn(tmp_path: Path, redis_url: str) -> None:
    """gunicorn's gevent worker closes each response (the slot of a poll that answered at
    once is given back then), also when the client hung up."""
    prefix = f"g{uuid.uuid4().hex[:10]}"
    env = {
        "REDIS_URL": redis_url,
        "MAYI_KEY_PREFIX": prefix,
        "MAYI_RATE_LIMITS_ENABLED": "false",
        "MAYI_MAX_WAITS_PER_CLIENT": str(LIMIT),
    }
    client = redis.Redis.from_url(redis_url)
    try:
        with mayi_serve(tmp_path, env) as served:
            served.wait_ready()
            _exercise(served.url, lambda: _total(client, prefix))
            assert "Traceback" not in served.stderr(), served.stderr()
    finally:
        client.close()


def test_waiting_slots_on_a_cluster(tmp_path: Path) -> None:
    with cluster_settings(tmp_path, rate_limits_enabled=False) as settings:
        app, server = _served(settings)
        try:
            r = app.extensions["mayi"].bots.store.r
            _exercise(server.url, lambda: _total(r, settings.key_prefix))
            assert wait_until(lambda: _process_slots_free(app), CAP)
        finally:
            server.stop()


def _total(client: Any, prefix: str) -> int:
    """Every waiting poll's lease under ``prefix`` (the scenario has one bot)."""
    keys = list(client.scan_iter(match=f"{prefix}:*leases:wait:*", count=1000))
    return sum(int(client.zcard(k)) for k in keys)


def test_a_poll_query_out_of_the_common_shape_is_refused_naming_its_field(live_server: LiveServer) -> None:
    """``wait`` and ``skip`` are read leanly when they have the common shape; anything else
    goes through the schema, whose 422 names the field (as before the lean reading)."""
    url = live_server.url
    token = requests.post(f"{url}/v1/bots", json={"name": "asker"}, timeout=TIMEOUT).json()["token"]

    def refused(query: str, *words: str) -> None:
        answer = requests.get(f"{url}/v1/bots/me/decisions?{query}", headers=auth(token), timeout=TIMEOUT)
        assert answer.status_code == 422 and answer.json()["code"] == "validation_error", answer.text
        assert all(word in answer.json()["detail"] for word in words), answer.json()["detail"]

    refused("wait=61", "wait:")
    refused("wait=-1", "wait:")
    refused("wait=1e3", "wait:")
    refused("wait=soon", "wait:")
    refused("skip=", "skip[0]:")
    refused("skip=" + "a" * 65, "skip[0]:")
    refused("&".join(["skip=k"] * 201), "skip:")
    refused("wait=1&wiat=2", "wiat:")
    for query in ("wait=0.25", "wait=1&wait=0", "skip=k%C3%A9y&wait=0"):  # the last two: by the schema
        answer = requests.get(f"{url}/v1/bots/me/decisions?{query}", headers=auth(token), timeout=TIMEOUT)
        assert answer.status_code == 200 and answer.json() == {"decisions": [], "games": 0, "skipped": []}, query


def test_the_first_poll_after_the_bots_last_game_ended_answers_at_once(live_server: LiveServer) -> None:
    """A poll that finds every game the bot sat in over answers at once with no games, woken
    or not: here the bot itself plays the game to its end (so no wake reaches a waiting poll),
    then asks with a wait twice as long as the client's patience. A poll of a bot with no
    seat at all still waits (for a seat)."""
    url = live_server.url
    token = requests.post(f"{url}/v1/bots", json={"name": "closer"}, timeout=TIMEOUT).json()["token"]
    game_id, person = polling_table(url, token, "0a" * 16)
    rules = get_rules("may_i", LONG)
    for _ in range(3000):
        view = requests.get(f"{url}/v1/games/{game_id}", headers=auth(person), timeout=TIMEOUT).json()
        if view["status"] != "playing":
            break
        for who in (token, person):
            mine = requests.get(f"{url}/v1/games/{game_id}", headers=auth(who), timeout=TIMEOUT).json()
            if mine["status"] == "playing" and mine["legal"]:
                path, body = move_request(choose(mine, rules))
                moved = requests.post(f"{url}/v1/games/{game_id}/{path}", json=body, headers=auth(who), timeout=TIMEOUT)
                assert moved.status_code == 200, moved.text
    assert view["status"] == "finished", view["status"]

    answer = requests.get(
        f"{url}/v1/bots/me/decisions", params={"wait": 60}, headers=auth(token), timeout=TIMEOUT
    )  # (the old code waited the whole minute: the client's timeout, half of it, failed the test)
    assert answer.status_code == 200 and answer.json()["decisions"] == [] and answer.json()["games"] == 0

    # With no game left, a poll waits again, for a seat (here: for its wait).
    started = requests.get(f"{url}/v1/bots/me/decisions", params={"wait": 1}, headers=auth(token), timeout=CAP)
    assert started.status_code == 200 and started.json()["games"] == 0
