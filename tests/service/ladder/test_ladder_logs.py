"""A ladder match of an outside bot (the SDK's polling runner, over HTTP) and claiming house
bots, played by a real ``mayi worker``: every decision is the bots' own and no log has a
traceback (the worker's output, and the in-process server and runner through caplog)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from ladder_workers import ladder_settings, make_ladder, wait_for, workers
from servers import LiveServer

from mayi_bots import RandomBot
from mayi_sdk import Client, run_polling
from mayi_service.api.app import create_app
from mayi_service.config import Settings
from mayi_service.ladder.matchmaking import house_id

VARIANT = "may_i"


def test_a_ladder_match_with_an_outside_bot_and_claiming_house_bots_logs_no_traceback(
    tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    # Four seats: the outside bot is a claimant of most discards, so the house bot on turn
    # (greedy, strong: they wait for the stock) is often asked while the window is open.
    # The clocks are long (ladder_settings) so that every move is a bot's own on a loaded
    # machine; the rate limits are the defaults.
    settings = ladder_settings(
        redis_url, rate_limits_enabled=Settings().rate_limits_enabled, ladder_players=("4",), ladder_max_matches=1
    )
    ladder = make_ladder(settings)
    ladder.enter_house(VARIANT, copies=2)
    server = LiveServer(create_app(settings))
    stop = threading.Event()
    runner: threading.Thread | None = None
    try:
        with Client(server.url) as anon:
            account = anon.register_bot("Outsider")
        bot = Client(server.url, account.token)
        bot.enter_ladder(VARIANT, max_games=1)
        seats = [account.bot_id, house_id("greedy"), house_id("strong"), house_id("greedy", 2)]
        match_id = ladder.create_match(VARIANT, seats, "c1a1" * 8)
        assert match_id is not None
        runner = threading.Thread(target=run_polling, args=(RandomBot(seed=7), bot), kwargs={"stop": stop, "wait": 5})
        runner.start()
        with workers(tmp_path, settings) as start:
            worker = start()
            wait_for(
                lambda: (ladder.match(VARIANT, match_id) or {}).get("status") == "finished",
                "the match finished",
                logs=[worker],
            )
            output = worker.output()
    finally:
        stop.set()
        if runner is not None:
            runner.join(60)
        server.stop()
    assert "Traceback" not in output and "Error" not in output, output[-5000:]
    troubles = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not troubles, [r.getMessage() for r in troubles]
    events = ladder.games.replay(match_id)["events"]
    assert events[-1]["type"] == "game_ended"
    assert not [e for e in events if e.get("timeout")]  # no decision was left to a clock
    outsider = seats.index(account.bot_id)
    assert [e for e in events if e.get("seat") == outsider and e["type"] in ("claimed", "passed")]
