"""What the SDK tells a bot author about throttling and refused moves: each 429 it waits
out is logged (one line naming the limit and the wait) and counted; ``RunStats`` counts
every refused move. Against the real service on a loopback socket (real Redis)."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Any

import pytest
from servers import LiveServer

from mayi_sdk import Bot, Client, GameView, LegalMove, RunStats, run_polling
from mayi_service.api.app import create_app
from mayi_service.config import Settings

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
#: The longest a step below may take on a loaded CI machine (a cap, not a timing).
CAP = 60.0


def test_each_429_waited_out_is_logged_naming_the_limit_and_counted(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    # Tight on purpose: 2 counted requests a second per token, so that the client must wait.
    app = create_app(
        dataclasses.replace(
            settings, rate_limits_enabled=True, rate_limit_token="2 per second", rate_limit_address="1000 per second"
        )
    )
    server = LiveServer(app)
    try:
        with Client(server.url, max_retries=5) as client, caplog.at_level(logging.WARNING, "mayi_sdk.client"):
            pages = [client.list_games().total for _ in range(6)]  # idle reads: counted
        assert len(pages) == 6
        assert client.rate_limited >= 1
        waits = [r for r in caplog.records if r.name == "mayi_sdk.client"]
        assert len(waits) == client.rate_limited
        for record in waits:
            line = record.getMessage()
            assert "\n" not in line and "'token'" in line and "GET /v1/games" in line, line
            assert "waiting" in line and " s " in line, line
    finally:
        server.stop()


class _Sneaky(Bot):
    """Before answering its first stock draw, draws through another client (as a second
    process of the same bot might): the runner's move then answers a decision that changed."""

    def __init__(self, other: Client) -> None:
        self.other = other
        self.done = threading.Event()

    def decide(self, view: GameView) -> Any:
        stock = [m for m in view.legal_of("draw") if m.body.get("source") == "stock"]
        if stock and not self.done.is_set():
            self.other.play(view.id, stock[0])
            self.done.set()
            return stock[0]
        return super().decide(view)


def _person_move(view: GameView) -> LegalMove:
    for kind, body in (("draw", {"source": "stock"}), ("claim", {"claim": False})):
        found = [m for m in view.legal_of(kind) if all(m.body.get(k) == v for k, v in body.items())]
        if found:
            return found[0]
    return view.legal_of("discard")[0] if view.legal_of("discard") else view.legal[0]


def _person_plays_until(person: Client, game_id: str, done: threading.Event, never: str) -> None:
    """The person answers each of its decisions until ``done`` is set (``never``: the failure
    if it is not within :data:`CAP` seconds)."""
    end = time.monotonic() + CAP
    while not done.is_set():
        assert time.monotonic() < end, never
        view = person.get_game(game_id)
        if view.legal:
            person.play(game_id, _person_move(view), if_key=view.key)
        else:
            time.sleep(0.05)


def test_run_polling_counts_every_refused_move(live_server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mayi_sdk.runners")
    url = live_server.url
    with Client(url) as anon:
        account = anon.register_bot("sneaky")
        game_id = anon.create_game("may_i", 2, options=SLOW).game_id
    bot_client, other = Client(url, account.token), Client(url, account.token)
    bot_client.take_seat(game_id, "sneaky")
    person = Client(url, Client(url).take_seat(game_id, "person").token)
    bot = _Sneaky(other)
    stop = threading.Event()
    found: list[RunStats] = []
    runner = threading.Thread(target=lambda: found.append(run_polling(bot, bot_client, wait=1, stop=stop)))
    runner.start()
    try:
        _person_plays_until(person, game_id, bot.done, "the bot was never asked to draw from the stock")
    finally:  # the runner finishes the decision it is on (its refused draw), then stops
        stop.set()
        runner.join(CAP)
        for client in (bot_client, other, person):
            client.close()
    stats = found[0]
    # The runner's draw answered a decision the seat no longer had: refused with 412; the
    # seat had another decision by then (its discard), so it is a version conflict.
    assert stats.refused == 1 and stats.version_conflicts == 1 and stats.too_late == 0, stats
    assert stats.sent == stats.moves + stats.refused, stats
    # The seat still had a decision: a race of play, told once at INFO, no warning.
    told = [r for r in caplog.records if r.name == "mayi_sdk.runners" and "changed meanwhile" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.INFO], caplog.text
    assert "\n" not in told[0].getMessage() and "draw" in told[0].getMessage(), told[0].getMessage()
    assert not [r for r in caplog.records if r.name == "mayi_sdk.runners" and r.levelno >= logging.WARNING]


class _Jumper(Bot):
    """Answers its first decision with a move type no endpoint has, then plays as the base bot."""

    def __init__(self) -> None:
        self.jumped = threading.Event()

    def decide(self, view: GameView) -> Any:
        if not self.jumped.is_set():
            self.jumped.set()
            return {"type": "jump"}
        return super().decide(view)


def test_a_move_of_no_known_type_is_a_failure_and_the_runner_goes_on(
    live_server: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = live_server.url
    with Client(url) as anon:
        account = anon.register_bot("jumper")
        game_id = anon.create_game("may_i", 2, options=SLOW).game_id
    bot_client = Client(url, account.token)
    bot_client.take_seat(game_id, "jumper")
    person = Client(url, Client(url).take_seat(game_id, "person").token)
    bot = _Jumper()
    stop = threading.Event()
    found: list[RunStats] = []
    runner = threading.Thread(target=lambda: found.append(run_polling(bot, bot_client, wait=1, stop=stop)))
    with caplog.at_level(logging.WARNING, "mayi_sdk.runners"):
        runner.start()
        try:
            _person_plays_until(person, game_id, bot.jumped, "the bot was never asked a decision")
        finally:
            stop.set()
            runner.join(CAP)
            for client in (bot_client, person):
                client.close()
    assert not runner.is_alive()
    stats = found[0]
    # Nothing was sent for the bad answer: it is the bot's failure, and the runner ended normally.
    assert stats.failures == 1 and stats.sent == stats.moves + stats.refused, stats
    assert any("'jump' is not a move type" in r.getMessage() for r in caplog.records), caplog.text
