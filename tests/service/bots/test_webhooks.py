"""Service-side webhooks: the bot's webhook URL and secret over HTTP, the delivery jobs (run by
a real RQ worker, in-process, on the real Redis), their signatures (checked with the
``standardwebhooks`` reference package), retries, the delivery log, and the SSRF rules.
Receivers are real HTTP servers on loopback (with ``MAYI_WEBHOOK_ALLOW_PRIVATE`` on)."""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from bot_support import (
    Receiver,
    allow_loopback_webhooks,
    auth,
    bot_must_act,
    bot_of,
    deliveries,
    register,
    run_jobs,
    seated_game,
)
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from mayi_service.api.app import create_app
from mayi_service.bots import transport, webhooks
from mayi_service.bots.addresses import RefusedURL, Target, address_problem, resolve
from mayi_service.config import Settings
from mayi_service.service import worker_service

# -- the webhook URL and the secret over HTTP --------------------------------------------


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return allow_loopback_webhooks(settings)


def test_registration_returns_the_secret_and_the_url(client: Any, receiver: Receiver) -> None:
    bot = register(client, receiver.url)
    assert bot["webhook_url"] == receiver.url and bot["webhook_secret"].startswith("whsec_")
    assert len(base64.b64decode(bot["webhook_secret"].removeprefix("whsec_"))) == 32
    me = client.get("/v1/bots/me", headers=auth(bot["token"])).get_json()
    assert me["webhook_url"] == receiver.url
    plain = register(client, None, "poller")
    assert plain["webhook_url"] is None and plain["webhook_secret"].startswith("whsec_")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://bot.example/hook", "https://"),
        ("bot.example/hook", "https://"),
        ("https://user:pw@bot.example/hook", "no user name or password"),
        ("https:///hook", "with a host"),
        ("https://bot.example/" + "x" * 2100, "at most 2048 characters"),
        ("https://bot.example/a b", "no spaces"),
        ("https://bot.example:0/", "port"),
        ("https://bot.example:99999/", "not a valid URL"),
    ],
)
def test_a_bad_webhook_url_is_refused_naming_the_field(client: Any, url: str, says: str) -> None:
    response = client.post("/v1/bots", json={"name": "bad", "webhook_url": url})
    assert response.status_code == 422, response.get_json()
    problem = response.get_json()
    assert problem["code"] == "validation_error" and problem["errors"][0].startswith("webhook_url: ")
    assert says in problem["detail"], problem["detail"]


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/"],
)
def test_a_literal_private_address_is_refused_at_registration_unless_allowed(
    settings: Settings, client: Any, url: str
) -> None:
    strict = create_app(replace(settings, webhook_allow_private=False)).test_client()
    response = strict.post("/v1/bots", json={"name": "inside", "webhook_url": url})
    assert response.status_code == 422 and "webhook_url: " in response.get_json()["detail"], response.get_json()
    assert "the service does not call it" in response.get_json()["detail"]
    assert client.post("/v1/bots", json={"name": "inside", "webhook_url": url}).status_code == 201  # allowed


def test_the_webhook_url_is_set_and_cleared_later(client: Any, receiver: Receiver) -> None:
    bot = register(client, None)
    headers = auth(bot["token"])
    changed = client.patch("/v1/bots/me", json={"webhook_url": receiver.url}, headers=headers)
    assert changed.status_code == 200 and changed.get_json()["webhook_url"] == receiver.url
    bad = client.patch("/v1/bots/me", json={"webhook_url": "gopher://x"}, headers=headers)
    assert bad.status_code == 422 and bad.get_json()["errors"][0].startswith("webhook_url: ")
    missing = client.patch("/v1/bots/me", json={}, headers=headers)
    assert missing.status_code == 422 and "webhook_url" in missing.get_json()["detail"]
    cleared = client.patch("/v1/bots/me", json={"webhook_url": None}, headers=headers)
    assert cleared.status_code == 200 and cleared.get_json()["webhook_url"] is None
    assert client.get("/v1/bots/me", headers=headers).get_json()["webhook_url"] is None
    assert client.patch("/v1/bots/me", json={"webhook_url": None}).status_code == 401


# -- deliveries -----------------------------------------------------------------------------


def test_a_waiting_decision_is_delivered_signed_and_verifies_with_standardwebhooks(
    app: Any, client: Any, receiver: Receiver, worker_env: None
) -> None:
    bot = register(client, receiver.url)
    game_id = seated_game(client, bot["token"])
    run_jobs(app)
    assert len(receiver.requests) == 1  # one decision point, one delivery
    headers, body = receiver.requests[0]
    payload = Webhook(bot["webhook_secret"]).verify(body, headers)
    decision = json.loads(body)
    assert payload == decision
    assert decision["game_id"] == game_id and decision["seat"] == 0 and decision["view"]["legal"]
    polled = client.get("/v1/bots/me/decisions", headers=auth(bot["token"])).get_json()["decisions"]
    assert [(d["game_id"], d["seat"], d["version"], d["deadline"]) for d in polled] == [
        (game_id, 0, decision["version"], decision["deadline"])
    ]  # the same decision as the long-poll's
    assert headers["webhook-id"] == f"msg_{game_id}_0_{decision['key']}"
    assert headers["content-type"] == "application/json"
    with pytest.raises(WebhookVerificationError):
        Webhook(register(client, None, "other")["webhook_secret"]).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(bot["webhook_secret"]).verify(body.replace(b'"seat":0', b'"seat":1'), headers)
    log = deliveries(client, bot["token"])
    assert len(log) == 1
    entry = log[0]
    assert entry["webhook_id"] == headers["webhook-id"] and entry["attempt"] == 1 and entry["status"] == 204
    assert entry["error"] is None and entry["next_retry_at"] is None and entry["url"] == receiver.url
    assert entry["game_id"] == game_id and entry["seat"] == 0 and entry["duration_ms"] >= 0
    assert entry["key"] == decision["key"] and entry["version"] == decision["version"]
    # The hook called again for the same commit (as a retried request could) enqueues nothing more.
    hooks = app.extensions["mayi"].webhooks
    assert hooks.enqueue(bot_of(app, game_id), game_id, 0, decision["key"]) is False


def test_failed_deliveries_are_retried_with_backoff_and_the_same_webhook_id(
    app: Any, client: Any, worker_env: None
) -> None:
    flaky = Receiver([500, "hang", 200])
    try:
        bot = register(client, flaky.url)
        seated_game(client, bot["token"])
        run_jobs(app)
        assert len(flaky.requests) == 3
        ids = {h["webhook-id"] for h, _ in flaky.requests}
        assert len(ids) == 1  # the same webhook-id on every attempt
        for headers, body in flaky.requests:
            Webhook(bot["webhook_secret"]).verify(body, headers)  # each attempt signed afresh
        log = deliveries(client, bot["token"])  # newest first
        assert [e["attempt"] for e in log] == [3, 2, 1]
        first, second, third = log[2], log[1], log[0]
        assert first["status"] == 500 and "500" in first["error"]
        assert second["status"] is None and "no answer within 1 s" in second["error"]
        assert third["status"] == 200 and third["error"] is None and third["next_retry_at"] is None
        # Backoff: the next attempt is due 1 s after the end of the first, then 2 s after the second.
        for entry, delay in ((first, 1), (second, 2)):
            ended = entry["at"] + entry["duration_ms"] / 1000
            assert entry["next_retry_at"] == pytest.approx(ended + delay, abs=0.5)
        assert second["at"] >= first["next_retry_at"] - 1 and third["at"] >= second["next_retry_at"] - 1
    finally:
        flaky.stop()


def test_the_retry_schedule_doubles_up_to_a_minute() -> None:
    assert [webhooks.retry_delay(a, 1.0) for a in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]


def test_no_retry_past_the_decisions_deadline(app: Any, client: Any, worker_env: None) -> None:
    failing = Receiver([500] * 10)
    try:
        bot = register(client, failing.url)
        seated_game(client, bot["token"], claim_seconds=1, turn_seconds=1)
        # Whatever the first decision is (an upcard claim or a turn), its deadline is ~1 s away.
        run_jobs(app)
        log = deliveries(client, bot["token"])
        assert log and all(e["status"] == 500 for e in log)
        last = log[0]
        assert last["next_retry_at"] is None and "the decision's deadline comes first" in last["error"]
        assert len(failing.requests) == len(log) <= 2
    finally:
        failing.stop()


def test_no_delivery_once_the_decision_was_answered(
    app: Any, client: Any, receiver: Receiver, worker_env: None
) -> None:
    bot = register(client, receiver.url)
    game_id = seated_game(client, bot["token"])
    first = client.get("/v1/bots/me/decisions", headers=auth(bot["token"])).get_json()["decisions"][0]
    move = next(m for m in first["view"]["legal"] if m["type"] in ("pass", "draw_stock", "claim"))
    path, body = _move_request(move)
    moved = client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(bot["token"]))
    assert moved.status_code == 200, moved.get_json()
    run_jobs(app)
    versions = [json.loads(b)["version"] for _, b in receiver.requests]
    assert first["version"] not in versions  # answered before its job ran: not delivered
    record = app.extensions["mayi"].games.load(game_id)
    assert all(v == record.version for v in versions)  # only a decision still waiting now
    assert bot_must_act(app, game_id) == bool(versions)


def test_another_claimants_answer_sends_no_second_delivery(
    app: Any, client: Any, receiver: Receiver, worker_env: None
) -> None:
    """One delivery per decision: when another seat answers the same upcard, the game's
    version moves on but the bot's choices (and its decision's key) do not, so nothing new
    is sent; the bot's answer, made for the first version, still applies (If-Match: key)."""
    from mayi_engine import legal_moves, move_to_json, pending_claimants
    from mayi_service.storage import codec

    bot = register(client, receiver.url)
    created = client.post(
        "/v1/games",
        json={
            "variant": "may_i",
            "seats": 4,
            "options": {"claim_seconds": 600, "turn_seconds": 600},
            "test": {"seed": "cd" * 16},
        },
    )
    game_id = created.get_json()["game_id"]
    tokens = {0: bot["token"]}
    assert (
        client.post(f"/v1/games/{game_id}/seats", json={"name": "hooked"}, headers=auth(bot["token"])).status_code
        == 201
    )
    for i in range(1, 4):
        tokens[i] = client.post(f"/v1/games/{game_id}/seats", json={"name": f"P{i}"}).get_json()["token"]
    games = app.extensions["mayi"].games

    def act(seat: int, move: Any) -> None:
        path, body = _move_request(move_to_json(move))
        done = client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(tokens[seat]))
        assert done.status_code == 200, done.get_json()

    # Play (passing every upcard, drawing from the stock, discarding the first card) until the
    # bot and a person are both offered the same upcard.
    for _ in range(200):
        state = codec.load_state(games.load(game_id).state)
        pending = pending_claimants(state)
        if 0 in pending and len(pending) > 1:
            break
        seat = next((p for p in pending if p != 0), None) if pending else state.actor
        if seat is None:
            seat = 0
        legal = legal_moves(state, seat, time.time())
        pick = next(
            (
                m
                for m in legal
                if move_to_json(m) in ({"type": "claim", "claim": False}, {"type": "draw", "source": "stock"})
            ),
            None,
        )
        act(seat, pick if pick is not None else legal[0])
    else:
        raise AssertionError("the bot and a person were never offered the same upcard")
    person = next(p for p in pending if p != 0)
    run_jobs(app)
    sent = len(receiver.requests)
    first = json.loads(receiver.requests[-1][1])
    assert first["seat"] == 0 and {"type": "claim", "claim": False} in first["view"]["legal"]
    act(person, next(m for m in legal_moves(state, person, time.time()) if move_to_json(m)["claim"] is False))
    run_jobs(app)
    assert len(receiver.requests) == sent  # the same decision: not sent again
    now = client.get("/v1/bots/me/decisions", headers=auth(bot["token"])).get_json()["decisions"]
    assert [(d["key"], d["version"] > first["version"]) for d in now] == [(first["key"], True)]
    answered = client.post(
        f"/v1/games/{game_id}/claims",
        json={"claim": False},
        headers={**auth(bot["token"]), "If-Match": f"key:{first['key']}"},
    )
    assert answered.status_code == 200, answered.get_json()


def test_no_delivery_after_the_deadline(app: Any, client: Any, receiver: Receiver, worker_env: None) -> None:
    bot = register(client, receiver.url)
    game_id = seated_game(client, bot["token"], claim_seconds=1, turn_seconds=1)
    hooks = app.extensions["mayi"].webhooks
    key = client.get("/v1/bots/me/decisions", headers=auth(bot["token"])).get_json()["decisions"][0]["key"]
    assert hooks.decision(game_id, 0, key) is not None
    hooks.clock = lambda: time.time() + 30  # the worker runs the job after the deadline
    try:
        assert hooks.deliver(app.extensions["mayi"].bots, bot_of(app, game_id), game_id, 0, key) is None
    finally:
        hooks.clock = time.time
    assert receiver.requests == [] and deliveries(client, bot["token"]) == []


def _move_request(move: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    from http_moves import move_request

    path, body = move_request(move)
    return str(path), dict(body)


def test_a_secret_rotation_signs_with_both_secrets_for_the_grace_period(
    app: Any, client: Any, receiver: Receiver, worker_env: None
) -> None:
    bot = register(client, receiver.url)
    rotated = client.post("/v1/bots/me/webhook-secret", headers=auth(bot["token"]))
    assert rotated.status_code == 200, rotated.get_json()
    new = rotated.get_json()
    assert new["webhook_secret"].startswith("whsec_") and new["webhook_secret"] != bot["webhook_secret"]
    assert new["previous_secret_valid_until"] == pytest.approx(time.time() + 24 * 3600, abs=60)
    seated_game(client, bot["token"])
    run_jobs(app)
    headers, body = receiver.requests[0]
    assert len(headers["webhook-signature"].split()) == 2  # v1,<new> v1,<old>
    assert Webhook(new["webhook_secret"]).verify(body, headers) == json.loads(body)
    assert Webhook(bot["webhook_secret"]).verify(body, headers) == json.loads(body)
    # After the grace period only the new secret signs.
    registry = app.extensions["mayi"].bots
    registry.store.r.hset(registry.store.bot_key(new["bot_id"]), "old_secret_until", repr(time.time() - 1))
    game_id = seated_game(client, bot["token"])
    run_jobs(app)
    headers, body = next((h, b) for h, b in receiver.requests if json.loads(b)["game_id"] == game_id)
    assert len(headers["webhook-signature"].split()) == 1
    Webhook(new["webhook_secret"]).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(bot["webhook_secret"]).verify(body, headers)
    assert client.post("/v1/bots/me/webhook-secret").status_code == 401


def test_the_delivery_log_is_bounded_newest_first(app: Any, client: Any, receiver: Receiver) -> None:
    bot = register(client, receiver.url)
    hooks = app.extensions["mayi"].webhooks
    bot_id = client.get("/v1/bots/me", headers=auth(bot["token"])).get_json()["bot_id"]
    for i in range(hooks.settings.webhook_deliveries_kept + 5):
        hooks.record(bot_id, {"webhook_id": f"msg_{i}", "game_id": "g", "seat": 0, "version": i, "key": f"k{i}",
                              "attempt": 1,
                              "at": float(i), "url": receiver.url, "status": 204, "error": None,
                              "duration_ms": 1.0, "response_truncated": False, "next_retry_at": None})  # fmt: skip
    log = deliveries(client, bot["token"])
    assert len(log) == 100 and log[0]["webhook_id"] == "msg_104" and log[-1]["webhook_id"] == "msg_5"
    assert client.get("/v1/bots/me/deliveries").status_code == 401


# -- SSRF -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.1.1", "link-local"),
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "metadata"),
        ("fe80::1", "link-local"),
        ("fd12:3456::1", "unique local"),
        ("::ffff:127.0.0.1", "IPv4-mapped"),
        ("::ffff:8.8.8.8", "IPv4-mapped"),
        ("64:ff9b::a00:1", "NAT64"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.1", "private"),
    ],
)
def test_addresses_that_are_not_public_are_refused(address: str, why: str) -> None:
    found = address_problem(address)
    assert found is not None and why in found, found


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "93.184.216.34"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(address) is None


def test_a_host_that_resolves_to_loopback_is_refused_unless_allowed() -> None:
    with pytest.raises(RefusedURL) as refused:
        resolve("http://localhost:8080/hook")
    assert "localhost" in str(refused.value) and "loopback" in str(refused.value)
    assert "MAYI_WEBHOOK_ALLOW_PRIVATE" in str(refused.value)
    with pytest.raises(RefusedURL, match="loopback"):
        resolve("http://[::1]:8080/hook")
    with pytest.raises(RefusedURL, match="metadata"):
        resolve("http://169.254.169.254/latest/meta-data/")
    with pytest.raises(RefusedURL, match="does not resolve"):
        resolve("http://no-such-host.invalid/hook")
    target = resolve("http://localhost:8080/hook?x=1", allow_private=True)
    assert target.address in ("127.0.0.1", "::1") and target.host == "localhost"
    assert target.port == 8080 and target.path == "/hook?x=1"


def test_the_connection_goes_to_the_checked_address_with_the_urls_host(receiver: Receiver) -> None:
    port = receiver.server.server_port
    target = Target("http", "bot.example", port, "127.0.0.1", "/hook")  # no lookup of bot.example
    outcome = transport.post(target, b"{}", {"webhook-id": "msg_x"}, 5.0, 5.0, 1000)
    assert outcome.ok and outcome.status == 204
    headers, body = receiver.requests[0]
    assert headers["host"] == f"bot.example:{port}" and body == b"{}"


def test_a_refused_url_is_logged_with_the_reason(
    settings: Settings, app: Any, client: Any, worker_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    bot = register(client, f"http://localhost:{port}/hook")  # a name: nothing to refuse at registration
    seated_game(client, bot["token"])
    hooks = app.extensions["mayi"].webhooks
    hooks.settings = replace(settings, webhook_allow_private=False)
    monkeypatch.setenv("MAYI_WEBHOOK_ALLOW_PRIVATE", "false")
    worker_service.cache_clear()
    run_jobs(app)
    log = deliveries(client, bot["token"])
    assert len(log) == 1 and log[0]["status"] is None and log[0]["next_retry_at"] is None
    assert log[0]["error"].startswith("refused: webhook_url: localhost (") and "loopback" in log[0]["error"]


def test_a_redirect_is_not_followed(app: Any, client: Any, worker_env: None) -> None:
    redirecting = Receiver(["redirect", "redirect"])
    try:
        bot = register(client, redirecting.url)
        seated_game(client, bot["token"])
        run_jobs(app, until=lambda: len(deliveries(client, bot["token"])) >= 2)
        log = deliveries(client, bot["token"])
        assert log[-1]["status"] == 302 and "redirect (302) is not followed" in log[-1]["error"]
        assert all(h["webhook-id"] == redirecting.requests[0][0]["webhook-id"] for h, _ in redirecting.requests)
    finally:
        redirecting.stop()


def test_an_oversize_answer_is_cut(app: Any, client: Any, worker_env: None) -> None:
    big = Receiver(["big"])
    try:
        bot = register(client, big.url)
        seated_game(client, bot["token"])
        run_jobs(app)
        log = deliveries(client, bot["token"])
        assert len(log) == 1 and log[0]["status"] == 200 and log[0]["error"] is None
        assert log[0]["response_truncated"] is True
    finally:
        big.stop()


@pytest.fixture
def tls_server(tmp_path: Any) -> Iterator[tuple[Receiver, str, list[str]]]:
    """A receiver behind TLS with a self-signed certificate for ``bot.example``; the names
    clients asked for (SNI) are recorded."""
    import ssl
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=bot.example",
         "-addext", "subjectAltName=DNS:bot.example", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    names: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,misc]
    receiver = Receiver()
    receiver.server.socket = context.wrap_socket(receiver.server.socket, server_side=True)
    try:
        yield receiver, str(cert), names
    finally:
        receiver.stop()


def test_https_goes_to_the_checked_address_with_sni_and_the_certificate_checked_for_the_urls_host(
    tls_server: tuple[Receiver, str, list[str]],
) -> None:
    import ssl

    receiver, cert, names = tls_server
    port = receiver.server.server_port
    trusting = ssl.create_default_context(cafile=cert)
    target = Target("https", "bot.example", port, "127.0.0.1", "/hook")  # no lookup of bot.example
    outcome = transport.post(target, b"{}", {"webhook-id": "msg_tls"}, 5.0, 5.0, 1000, trusting)
    assert outcome.ok, outcome
    assert names == ["bot.example"] and receiver.requests[0][0]["host"] == f"bot.example:{port}"
    # A certificate for another name, or one no authority signed, fails the attempt.
    other = Target("https", "evil.example", port, "127.0.0.1", "/hook")
    mismatch = transport.post(other, b"{}", {}, 5.0, 5.0, 1000, trusting)
    assert not mismatch.ok and "could not connect" in (mismatch.error or "")
    untrusted = transport.post(target, b"{}", {}, 5.0, 5.0, 1000)
    assert not untrusted.ok and "CERTIFICATE_VERIFY_FAILED" in (untrusted.error or "")
    assert len(receiver.requests) == 1
