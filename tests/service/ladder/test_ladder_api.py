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
from mayi_sdk import Client, LadderResult, LadderSeat, errors, run_polling

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
        assert all(isinstance(s, LadderSeat) for s in match.seats)
        assert all(isinstance(s, LadderResult) for s in match.standings)
        assert [s.score for s in match.standings] == replay.totals
        assert [(s.seat, s.bot_id, s.name, s.house) for s in match.standings] == [
            (s.seat, s.bot_id, s.name, s.house) for s in match.seats
        ]
        seat = next(s.seat for s in match.standings if s.bot_id == account.bot_id)
        assert next(s.house for s in match.seats if s.seat == seat) is None
        assert all(s.rating_after != s.rating_before for s in match.standings)
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

        page = anon.get_ladder_bot(account.bot_id, VARIANT)
        assert (page.entered, page.rank, page.max_games, page.games) == (True, mine.rank, 1, 1)

        bot.leave_ladder(VARIANT)
        with pytest.raises(errors.NotEntered) as again:
            bot.leave_ladder(VARIANT)
        assert again.value.code == "not_entered" and "variant" in again.value.detail
        # The leaderboard lists the bots entered now; one that left keeps its rating and history.
        assert account.bot_id not in {r.bot_id for r in anon.get_leaderboard(VARIANT).standings}
        page = anon.get_ladder_bot(account.bot_id, VARIANT)
        assert (page.bot_id, page.name, page.house, page.entered, page.rank, page.max_games) == (
            account.bot_id,
            "Polly",
            False,
            False,
            None,
            None,
        )
        assert (page.games, page.wins, page.mean_score) == (mine.games, mine.wins, mine.mean_score)
        assert page.rating == pytest.approx(point.rating, abs=1e-3)
        assert len(anon.get_rating_history(account.bot_id, VARIANT)) == 1
        # Entering again resumes them.
        bot.enter_ladder(VARIANT, max_games=2)
        back = next(r for r in anon.get_leaderboard(VARIANT).standings if r.bot_id == account.bot_id)
        assert (back.games, back.rating, back.max_games) == (1, mine.rating, 2)
        page = anon.get_ladder_bot(account.bot_id, VARIANT)
        assert (page.entered, page.rank, page.max_games) == (True, back.rank, 2)
        with pytest.raises(errors.NotFound) as never:
            anon.get_ladder_bot("b_never_entered", VARIANT)
        assert never.value.code == "not_found" and "bot_id" in never.value.detail
