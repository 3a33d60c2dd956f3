"""Bots' test helpers: a webhook receiver on loopback, the settings and worker the webhook
tests run with, registering and seating a bot, and a polling bot's table."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests
from http_moves import auth, move_request
from rq import Queue, SimpleWorker
from whole_games import choose

from mayi_engine.rules import get_rules
from mayi_service.config import Settings

#: Caps of the waits (a loaded CI machine); never assertions on speed.
CAP = 120.0


def allow_loopback_webhooks(settings: Settings) -> Settings:
    """``settings`` with webhooks allowed on loopback and short timeouts (the webhook tests'
    receivers listen on loopback)."""
    return replace(settings, webhook_allow_private=True, webhook_read_seconds=1.0, webhook_max_response_bytes=1000)


class Receiver:
    """A real HTTP server on loopback that records each request (headers and body in
    :attr:`requests`, the time it arrived in :attr:`arrivals`, :attr:`arrived` set) and
    answers from a script: an int (that status), ``"hang"`` (no answer for 3 s), ``"hold"``
    (no answer until :attr:`release` is set), ``"redirect"``, ``"big"``; 204 once it is done."""

    def __init__(self, script: list[Any] | None = None) -> None:
        self.script = list(script or [])
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.arrivals: list[float] = []
        self.lock = threading.Lock()
        self.arrived = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    receiver.arrivals.append(time.time())
                    what = receiver.script.pop(0) if receiver.script else 204
                receiver.arrived.set()
                if what == "hold":
                    receiver.release.wait(120)
                    self.close_connection = True
                    return
                if what == "hang":
                    time.sleep(3)
                    what = 204
                if what == "redirect":
                    self.send_response(302)
                    self.send_header("Location", "http://127.0.0.1:1/elsewhere")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if what == "big":
                    self.send_response(200)
                    self.send_header("Content-Length", str(1 << 20))
                    self.end_headers()
                    try:
                        for _ in range(64):
                            self.wfile.write(b"x" * (1 << 14))
                    except OSError:
                        pass  # the service stopped reading: as it should
                    return
                self.send_response(int(what))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


def run_jobs(app: Any, until: Any = None) -> None:
    """Run the webhook jobs with a real RQ worker (burst, in-process), and the dispatcher that
    enqueues the attempts falling due, until no delivery is left undone (or until
    ``until()``), with a long cap."""
    hooks = app.extensions["mayi"].webhooks
    queue: Queue = hooks.queue
    end = time.monotonic() + CAP
    while time.monotonic() < end:
        hooks.dispatch()
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
        if until is not None and until():
            return
        if until is None and queue.count == 0 and hooks.due() == 0:
            return
        time.sleep(0.2)
    raise AssertionError("the webhook jobs did not finish within the cap")


def register(client: Any, url: str | None, name: str = "hooked") -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if url is not None:
        body["webhook_url"] = url
    response = client.post("/v1/bots", json=body)
    assert response.status_code == 201, response.get_json()
    return dict(response.get_json())


def seated_game(client: Any, bot_token: str, seats: int = 2, **options: Any) -> str:
    """A game (slow clocks unless given) where the bot holds seat 0 and people the others."""
    body = {
        "variant": "may_i",
        "seats": seats,
        "options": {"claim_seconds": 600, "turn_seconds": 600, **options},
        "test": {"seed": "ab" * 16},
    }
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.get_json()
    game_id = str(created.get_json()["game_id"])
    taken = client.post(f"/v1/games/{game_id}/seats", json={"name": "hooked"}, headers=auth(bot_token))
    assert taken.status_code == 201 and taken.get_json()["seat"] == 0, taken.get_json()
    for i in range(1, seats):
        other = client.post(f"/v1/games/{game_id}/seats", json={"name": f"P{i}"})
        assert other.status_code == 201, other.get_json()
    return game_id


def deliveries(client: Any, token: str) -> list[dict[str, Any]]:
    response = client.get("/v1/bots/me/deliveries", headers=auth(token))
    assert response.status_code == 200, response.get_json()
    return list(response.get_json()["deliveries"])


def bot_must_act(app: Any, game_id: str) -> bool:
    found, _ = app.extensions["mayi"].bots.decisions(bot_of(app, game_id))
    return any(d["game_id"] == game_id and d["seat"] == 0 for d in found)


def bot_of(app: Any, game_id: str) -> str:
    record = app.extensions["mayi"].games.load(game_id)
    return str(dict(record.meta.bot_ids)[0])


#: A decisions poll's own HTTP timeout beyond its wait, and the clocks of a table that waits.
TIMEOUT = 30
LONG = {"claim_seconds": 86400, "turn_seconds": 86400}


def polling_table(url: str, bot_token: str, seed: str) -> tuple[str, str]:
    """A two-seat May I table where the bot holds a seat and a person the other, played by
    the person until the bot has a decision: the game and the person's token."""
    created = requests.post(
        f"{url}/v1/games",
        json={"variant": "may_i", "seats": 2, "options": LONG, "test": {"seed": seed, "start_round": 7}},
        timeout=TIMEOUT,
    ).json()
    game_id = created["game_id"]
    seated = requests.post(
        f"{url}/v1/games/{game_id}/seats", json={"name": "bot"}, headers=auth(bot_token), timeout=TIMEOUT
    )
    assert seated.status_code == 201, seated.text
    person = requests.post(f"{url}/v1/games/{game_id}/seats", json={"name": "person"}, timeout=TIMEOUT).json()["token"]
    rules = get_rules("may_i", LONG)
    for _ in range(20):
        if poll_decisions(url, bot_token, wait=0).json()["decisions"]:
            return game_id, person
        view = requests.get(f"{url}/v1/games/{game_id}", headers=auth(person), timeout=TIMEOUT).json()
        path, body = move_request(choose(view, rules))
        moved = requests.post(f"{url}/v1/games/{game_id}/{path}", json=body, headers=auth(person), timeout=TIMEOUT)
        assert moved.status_code == 200, moved.text
    raise AssertionError("the bot never had a decision")


def poll_decisions(url: str, token: str, wait: float, skip: list[str] = ()) -> requests.Response:  # type: ignore[assignment]
    params: dict[str, Any] = {"wait": wait, "skip": list(skip)}
    return requests.get(f"{url}/v1/bots/me/decisions", params=params, headers=auth(token), timeout=TIMEOUT + wait)
