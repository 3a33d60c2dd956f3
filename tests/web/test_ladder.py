"""The ladder's pages: the leaderboard, a finished match with its replay, and a bot's rating
history, after a real ladder match on a server of its own (a bot plays it through the API,
long-polling its decisions, against the house bots the matchmaking enters)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from web_helpers import SERVER_ENV

from mayi_bots import make
from mayi_sdk import Client, run_polling

#: Short matches: May I's last round, two players, matchmaking every second, may_i only.
LADDER_ENV = {
    **SERVER_ENV,
    "MAYI_LADDER_START_ROUND": "7",
    "MAYI_LADDER_PLAYERS": "2",
    "MAYI_LADDER_EVERY_SECONDS": "1",
    "MAYI_LADDER_VARIANTS": "may_i",
}
MATCH_SECONDS = 120.0  # a cap on waiting for the match (it usually takes seconds)


@pytest.fixture(scope="module")
def ladder_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from serving import ready_server

    with ready_server(tmp_path_factory.mktemp("ladder"), LADDER_ENV, worker=True) as server:
        yield server


def play_one_match(url: str) -> tuple[str, str, str]:
    """Register Polly, enter her, and play until one of her matches is finished (she stays
    entered: the leaderboard lists entrants). Her id, her token and the match's game id."""
    with Client(url) as anon:
        account = anon.register_bot("Polly <3")
        bot = anon.with_token(account.token)
        bot.enter_ladder("may_i", max_games=1)
        stop = threading.Event()
        runner = threading.Thread(
            target=run_polling, args=(make("strong", seed=1), bot), kwargs={"stop": stop, "wait": 2}
        )
        runner.start()
        try:
            end = time.monotonic() + MATCH_SECONDS
            while time.monotonic() < end:
                finished = anon.list_ladder_matches("may_i")
                if finished:
                    print(f"the ladder match took {MATCH_SECONDS - (end - time.monotonic()):.1f} s")
                    return account.bot_id, account.token, finished[0].game_id
                time.sleep(0.5)
            raise AssertionError(f"no ladder match finished within {MATCH_SECONDS} s")
        finally:
            stop.set()
            runner.join(60)


def test_the_ladder_pages(ladder_served: Any, new_page: Any, shots: Any) -> None:
    url = ladder_served.url
    bot_id, token, game_id = play_one_match(url)
    page = new_page()
    page.goto(url + "/")
    page.get_by_role("link", name="Ladder").click()
    board = page.locator(".leaderboard tbody tr")
    expect(board.filter(has_text="Polly <3")).to_have_count(1)  # the name as text
    expect(board.filter(has_text="house")).not_to_have_count(0)
    expect(page.locator(f".matches tr[data-game='{game_id}']")).to_be_visible()
    shots(page, "leaderboard")

    page.locator(f".leaderboard tr[data-bot='{bot_id}'] a").click()
    expect(page.locator("h1")).to_contain_text("Polly <3 · May I ladder")
    replay = page.locator(f".history tbody tr a[href='#/replay/{game_id}']")  # more may have finished since
    expect(replay).to_have_count(1)
    expect(page.locator("svg.sparkline")).to_be_visible()
    # The chart has its axes: the rating up (its lowest and highest values), the matches across.
    expect(page.locator("svg.sparkline .axes line")).to_have_count(2)
    expect(page.locator("svg.sparkline .axis-label")).to_have_text(["match", "rating"])
    expect(page.locator("p.meta")).to_contain_text("Rank ")

    # Once she has left, her page still shows her rating and history (the board no longer lists her).
    with Client(url, token) as polly:
        polly.leave_ladder("may_i")
    page.reload()
    expect(page.locator("p.meta")).to_contain_text("Left this ladder")
    expect(page.locator("p.meta")).to_contain_text(re.compile(r"\d+ games?, \d+ wins?"))
    expect(replay).to_have_count(1)
    shots(page, "bot-after-leaving")
    replay.click()
    expect(page.locator("#step")).to_contain_text("Step 0 of")
    expect(page.locator("h1")).to_contain_text(game_id)
