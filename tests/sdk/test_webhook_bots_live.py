"""Webhook bots finish whole games (with a house bot) against a live ``mayi serve`` (gunicorn, its RQ job
worker sending the deliveries, an embedded Redis): each bot is the SDK's
``WebhookReceiver`` on a loopback port, answering through the ``Client``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import Served, ready_server
from standardwebhooks import Webhook

from mayi_sdk import Bot, Client
from mayi_sdk.webhooks import WebhookReceiver, make_webhook_server

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
SEED = "70ab" * 8
#: The last two rounds of each variant (a round ends, the next is dealt, the game ends).
LAST_TWO = {"may_i": 6, "shanghai": 7}
#: The longest a whole game may take on a loaded CI machine (a cap, not a timing).
GAME_CAP = 600.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    env = {
        "MAYI_WEBHOOK_ALLOW_PRIVATE": "true",
        "MAYI_RATE_LIMITS_ENABLED": "false",
        "MAYI_SCHEDULE_CLOCK_JOBS": "true",  # the worker plays the house bots through jobs
    }
    with ready_server(tmp_path, env, worker=True) as server:
        yield server


class _Receivers:
    """Webhook servers on loopback, stopped however the test ends."""

    def __init__(self) -> None:
        self.servers: list[Any] = []
        self.threads: list[threading.Thread] = []

    def start(self, bot: Bot, client: Client, secret: str) -> tuple[str, WebhookReceiver]:
        server = make_webhook_server(bot, client, secret, "127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        self.servers.append(server)
        self.threads.append(thread)
        return f"http://127.0.0.1:{server.server_port}/mayi", server.get_app()

    def stop(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()
        for thread in self.threads:
            thread.join(10)


@pytest.fixture
def receivers() -> Iterator[_Receivers]:
    found = _Receivers()
    try:
        yield found
    finally:
        found.stop()


class _Recording(Bot):
    """The SDK's default bot, remembering nothing but that it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    def decide(self, view: Any) -> Any:
        self.asked += 1
        return super().decide(view)


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_webhook_bots_finish_a_whole_game_of_each_variant_with_a_house_bot(
    served: Served, receivers: _Receivers, variant: str
) -> None:
    base = served.url
    start = LAST_TWO[variant]
    with Client(base) as anon:
        game_id = anon.create_game(variant, 3, options=SLOW, test={"seed": SEED, "start_round": start}).game_id
    clients: list[Client] = []
    apps: list[WebhookReceiver] = []
    bots: list[_Recording] = []
    for i in range(2):
        with Client(base) as anon:
            account = anon.register_bot(f"hook{i}")
        client = Client(base, account.token)
        bot = _Recording()
        url, app = receivers.start(bot, client, account.webhook_secret)
        profile = client.update_my_bot(url)  # set after registration, the way a bot behind a tunnel would
        assert profile.webhook_url == url
        clients.append(client)
        apps.append(app)
        bots.append(bot)
    for i, client in enumerate(clients):
        assert client.take_seat(game_id, f"hook{i}").seat == i
    with Client(base) as anon:
        assert anon.take_seat(game_id, house_bot="greedy").seat == 2  # the worker plays it
    end = time.monotonic() + GAME_CAP
    while clients[0].get_game(game_id).status != "finished" and time.monotonic() < end:
        time.sleep(0.5)
    final = clients[0].get_game(game_id)
    assert final.status == "finished", f"the game did not finish within the cap:\n{served.stderr()[-3000:]}"
    assert [r.round for r in final.results] == [start, start + 1]
    # Only the webhooks played the bots' seats (no polling; clocks of ten minutes: none ran out).
    assert sum(a.stats.moves for a in apps) > 10 and all(b.asked > 0 for b in bots)
    events: list[Any] = []
    while page := clients[0].get_events(game_id, after=events[-1].seq if events else 0).events:
        events += page
    assert events[-1].type == "game_ended" and not [e for e in events if e.timeout]
    # No move refused but by the game's own races (412: RunStats.too_late, .version_conflicts).
    assert all(
        a.stats.failures == 0 and a.stats.refused == a.stats.too_late + a.stats.version_conflicts for a in apps
    ), [a.stats for a in apps]
    log = clients[0].get_deliveries()
    assert log and all(d.delivered and d.status == 204 for d in log)
    assert len({d.webhook_id for d in log}) == len(log)  # one delivery per decision point
    assert all(c.get_decisions().games == 0 for c in clients)  # nothing left to decide anywhere


def test_deliveries_from_the_live_worker_verify_with_standardwebhooks(served: Served, receivers: _Receivers) -> None:
    """The worker's deliveries, as a receiver that is not the SDK sees them."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    got: list[tuple[dict[str, str], bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            got.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        with Client(base := served.url) as anon:
            account = anon.register_bot("plain", webhook_url=f"http://127.0.0.1:{server.server_port}/x")
            game_id = anon.create_game("may_i", 2, options=SLOW, test={"seed": SEED}).game_id
        bot = Client(base, account.token)
        bot.take_seat(game_id, "plain")
        with Client(base) as anon:
            anon.take_seat(game_id, "person")
        end = time.monotonic() + GAME_CAP
        while not got and time.monotonic() < end:
            time.sleep(0.2)
        assert got, f"no delivery within the cap:\n{served.stderr()[-3000:]}"
        headers, body = got[0]
        assert Webhook(account.webhook_secret).verify(body, headers) == json.loads(body)
        assert json.loads(body)["game_id"] == game_id
        end = time.monotonic() + GAME_CAP
        while not bot.get_deliveries() and time.monotonic() < end:
            time.sleep(0.2)
        entry = bot.get_deliveries()[0]
        assert entry.webhook_id == headers["webhook-id"] and entry.status == 204 and entry.delivered
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
