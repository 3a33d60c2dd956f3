"""Standard Webhooks signatures (checked against the reference ``standardwebhooks`` package)
and the SDK's webhook receiver, over real sockets, playing through a live service."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from servers import LiveServer
from standardwebhooks import Webhook

from mayi_sdk import Bot, Client, Decision
from mayi_sdk.webhooks import SignatureError, make_webhook_server, sign, verify
from mayi_service.bots import seats as service_bots

SECRET = service_bots.new_secret()


def _signed(secret: str, body: bytes, msg_id: str = "msg_1", when: datetime | None = None) -> dict[str, str]:
    """Headers signed by the reference package."""
    when = when or datetime.now(tz=UTC)
    signature = Webhook(secret).sign(msg_id, when, body.decode())
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(when.timestamp())), "webhook-signature": signature}


def test_the_services_signatures_verify_with_the_reference_package() -> None:
    assert SECRET.startswith("whsec_")
    body = b'{"game_id": "g", "seat": 1}'
    stamp = int(time.time())
    headers = {
        "webhook-id": "msg_abc",
        "webhook-timestamp": str(stamp),
        "webhook-signature": service_bots.sign(SECRET, "msg_abc", stamp, body),
    }
    assert Webhook(SECRET).verify(body, headers) == {"game_id": "g", "seat": 1}
    # The SDK signs exactly as the service does, and verifies the reference package's signatures.
    assert sign(SECRET, "msg_abc", stamp, body) == headers["webhook-signature"]
    assert verify(SECRET, _signed(SECRET, body, "msg_ref"), body) == "msg_ref"


def test_verify_refuses_tampered_forged_and_stale_deliveries() -> None:
    body = b'{"x": 1}'
    headers = _signed(SECRET, body)
    with pytest.raises(SignatureError, match="tampered"):
        verify(SECRET, headers, b'{"x": 2}')
    with pytest.raises(SignatureError, match="wrong secret"):
        verify(service_bots.new_secret(), headers, body)
    old = _signed(SECRET, body, when=datetime.now(tz=UTC) - timedelta(minutes=10))
    with pytest.raises(SignatureError, match="stale"):
        verify(SECRET, old, body)
    with pytest.raises(SignatureError, match="missing"):
        verify(SECRET, {}, body)
    # During a rotation a delivery carries two signatures; either secret verifies it.
    new = service_bots.new_secret()
    stamp = headers["webhook-timestamp"]
    both = dict(
        headers, **{"webhook-signature": f"{sign(new, 'msg_1', int(stamp), body)} {headers['webhook-signature']}"}
    )
    assert verify(SECRET, both, body) == verify(new, both, body) == "msg_1"


@pytest.fixture
def receiver_url(live_server: LiveServer) -> Iterator[tuple[str, Client, str]]:
    with Client(live_server.url) as anon:
        account = anon.register_bot("hooked")
        game_id = anon.create_game("may_i", 2, options={"claim_seconds": 600, "turn_seconds": 600}).game_id
    bot = Client(live_server.url, account.token)
    server = make_webhook_server(Bot(), bot, SECRET, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/", bot, game_id
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _a_decision(live: str, bot: Client, game_id: str) -> tuple[Decision, dict[str, Any]]:
    """Seat the bot and a person; the person plays until the bot must decide."""
    bot.take_seat(game_id, "hooked")
    with Client(live) as anon:
        person = Client(live, anon.take_seat(game_id, "person").token)
    end = time.monotonic() + 120
    while time.monotonic() < end:
        raw = requests.get(
            f"{live}/v1/bots/me/decisions", headers={"Authorization": f"Bearer {bot.token}"}, timeout=60
        ).json()
        if raw["decisions"]:
            return Decision.from_json(raw["decisions"][0]), raw["decisions"][0]
        view = person.get_game(game_id)
        person.play(game_id, Bot().decide(view))  # type: ignore[arg-type]
    raise AssertionError("the bot never had a decision")


def test_the_receiver_plays_a_verified_delivery_and_refuses_the_rest(
    live_server: LiveServer, receiver_url: tuple[str, Client, str]
) -> None:
    url, bot, game_id = receiver_url
    decision, raw = _a_decision(live_server.url, bot, game_id)
    body = json.dumps(raw).encode()
    headers = _signed(SECRET, body, "msg_play")

    tampered = requests.post(url, data=body.replace(b'"seat"', b'"seat" ', 1), headers=headers, timeout=30)
    assert tampered.status_code == 401 and "tampered" in tampered.text
    forged = requests.post(url, data=body, headers=_signed(service_bots.new_secret(), body, "msg_forged"), timeout=30)
    assert forged.status_code == 401
    stale_when = datetime.now(tz=UTC) - timedelta(hours=1)
    stale = requests.post(url, data=body, headers=_signed(SECRET, body, "msg_stale", stale_when), timeout=30)
    assert stale.status_code == 401 and "stale" in stale.text

    played = requests.post(url, data=body, headers=headers, timeout=30)
    assert played.status_code == 204
    end = time.monotonic() + 120
    while bot.get_game(game_id).version == decision.version and time.monotonic() < end:
        time.sleep(0.05)
    assert bot.get_game(game_id).version > decision.version, "the receiver played the decision"

    replayed = requests.post(url, data=body, headers=headers, timeout=30)
    assert replayed.status_code == 401 and "replay" in replayed.text
