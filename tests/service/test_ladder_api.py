"""The ladder's HTTP API, over a real socket with the SDK: entering and leaving, the
leaderboard, recent matches (with their replays) and a bot's rating history, around a
match in which an external bot plays through the API (its decisions, long-polled)."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest
from ladder_workers import make_ladder

from mayi_bots import NAMES, RandomBot
from mayi_sdk import Client, errors, run_polling

VARIANT = "may_i"


def test_a_bot_enters_plays_through_the_api_and_reads_its_ladder(app: Any, live_server: Any, settings: Any) -> None:
    url = live_server.url
    with Client(url) as anon:
        account = anon.register_bot("Polly")
        bot = anon.with_token(account.token)
        entry = bot.enter_ladder(VARIANT, max_games=3)
        assert (entry.variant, entry.bot_id, entry.name, entry.max_games) == (VARIANT, account.bot_id, "Polly", 3)
        assert bot.enter_ladder(VARIANT, max_games=1).max_games == 1  # entering again changes the limit
        board = anon.get_leaderboard(VARIANT)
        (row,) = board.standings
        assert (row.bot_id, row.games, row.provisional, row.mean_score, row.rank) == (account.bot_id, 0, True, None, 1)
        assert row.rating == pytest.approx(row.mu - 3 * row.sigma, abs=1e-3)

        # A match with two house bots, played in-process here; the bot answers through the API.
        long_clocks = {"ladder_turn_seconds": 600.0, "ladder_claim_seconds": 600.0}  # a loaded machine never times out
        ladder = make_ladder(replace(settings, ladder_start_round=7, ladder_players=("3",), **long_clocks))
        ladder.queue = None
        ladder.enter_house(VARIANT, copies=2)
        (match_id,) = ladder.matchmake(VARIANT)
        assert anon.list_ladder_matches(VARIANT, status="playing")[0].match_id == match_id
        stop = threading.Event()
        runner = threading.Thread(target=run_polling, args=(RandomBot(seed=1), bot), kwargs={"stop": stop, "wait": 5})
        runner.start()
        try:
            assert ladder.run_match(VARIANT, match_id) == "finished"
        finally:
            stop.set()
            runner.join(60)

        (match,) = anon.list_ladder_matches(VARIANT)
        assert match.match_id == match_id and match.status == "finished" and match.standings is not None
        replay = anon.get_replay(match.game_id)
        assert [s["score"] for s in match.standings] == replay.totals
        seat = next(s["seat"] for s in match.standings if s["bot_id"] == account.bot_id)
        events = replay.events
        assert not [e for e in events if e.seat == seat and e.timeout]  # it played every decision itself
        (point,) = bot.get_rating_history(account.bot_id, VARIANT)
        assert point.match_id == match_id and point.game_id == match.game_id and point.players == 3
        board = anon.get_leaderboard(VARIANT)
        assert len(board.standings) == 1 + 2 * len(NAMES)
        mine = next(r for r in board.standings if r.bot_id == account.bot_id)
        assert mine.games == 1 and mine.rating == pytest.approx(point.rating, abs=1e-3)
        assert mine.mean_score == point.score
        house = next(r for r in board.standings if r.house and r.games == 1)
        assert anon.get_rating_history(house.bot_id, VARIANT)[0].match_id == match_id

        bot.leave_ladder(VARIANT)
        with pytest.raises(errors.NotFound) as again:
            bot.leave_ladder(VARIANT)
        assert again.value.code == "not_entered" and "variant" in again.value.detail
        assert account.bot_id not in {r.bot_id for r in anon.get_leaderboard(VARIANT).standings}
        # Its history stays.
        assert len(anon.get_rating_history(account.bot_id, VARIANT)) == 1
