"""The bot ladder on real RQ workers (``mayi worker`` processes) and the suite's real Redis.

Matches are played by the workers; the test process reads and arranges through the same
:class:`mayi_service.ladder.matches.Ladder` code on the same keys. Ladder games start at the last
round (``MAYI_LADDER_START_ROUND``) unless a test needs a long match, and waits poll for
a state with a generous cap: nothing here asserts on time.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from ladder_workers import ladder_settings, make_ladder, wait_for, workers
from rq.registry import StartedJobRegistry

import mayi_bots
from mayi_service.config import Settings
from mayi_service.ladder.matches import Ladder
from mayi_service.ladder.matchmaking import HOUSE, house_id

VARIANT = "may_i"


def _finished(ladder: Ladder, count: int) -> list[dict[str, Any]]:
    found = ladder.matches(VARIANT, limit=100)
    return found if len(found) >= count else []


def _house_entrants(ladder: Ladder, want: int) -> list[str]:
    """At least ``want`` house entrants (copies of the reference bots when there are few)."""
    copies = -(-want // len(mayi_bots.NAMES))
    return [e.entrant for e in ladder.enter_house(VARIANT, copies=copies)]


def _check_match(ladder: Ladder, match: dict[str, Any]) -> None:
    """A finished match's standings agree with its game: scores, shared places, the replay."""
    replay = ladder.games.replay(match["game_id"])
    standings = match["standings"]
    assert [s["score"] for s in standings] == replay["totals"]
    for s in standings:
        assert s["place"] == 1 + sum(t < s["score"] for t in replay["totals"])
    assert replay["events"][-1]["type"] == "game_ended"


def test_house_bots_play_ladder_matches_to_completion_and_ratings_move_once_each(
    tmp_path: Path, redis_url: str
) -> None:
    settings = ladder_settings(redis_url, ladder_house_matches=True, ladder_max_matches=2, ladder_players=("3",))
    ladder = make_ladder(settings)
    entrants = _house_entrants(ladder, 4)
    with workers(tmp_path, settings) as start:
        started = [start(), start()]
        matches = wait_for(lambda: _finished(ladder, 6), "six finished matches", logs=started)
    board = ladder.leaderboard(VARIANT)  # read once the workers are stopped: nothing moves any more
    assert {row["bot_id"] for row in board} == set(entrants)
    for match in matches:
        _check_match(ladder, match)
    # Every finished match moved each of its players' ratings once, with one history entry.
    finished = ladder.matches(VARIANT, limit=100)
    played = Counter(s["bot_id"] for m in finished for s in m["seats"])
    for row in board:
        history = ladder.history(VARIANT, row["bot_id"])
        assert row["games"] == played[row["bot_id"]] == len(history)
        assert row["provisional"] == (row["games"] < 10)
        if history:
            assert history[-1]["rating"] == pytest.approx(row["rating"], abs=1e-3)
    # The board is ordered by the conservative rating, ranks 1..n.
    assert [row["rank"] for row in board] == list(range(1, len(board) + 1))
    assert [row["rating"] for row in board] == sorted((row["rating"] for row in board), reverse=True)
    # House-only tables were 3 players, each entrant at most once per table.
    assert all(len({s["bot_id"] for s in m["seats"]}) == len(m["seats"]) == 3 for m in finished)


@pytest.mark.skipif(
    not {"greedy", "strong"} <= set(mayi_bots.NAMES), reason="needs the greedy and strong reference bots"
)
def test_ratings_order_the_reference_bots_strong_above_greedy_above_random(tmp_path: Path, redis_url: str) -> None:
    settings = ladder_settings(
        redis_url, ladder_house_matches=True, ladder_max_matches=2, ladder_players=("3",), ladder_start_round=1
    )
    ladder = make_ladder(settings)
    ladder.enter_house(VARIANT)
    with workers(tmp_path, settings) as start:
        started = [start(), start()]
        wait_for(lambda: _finished(ladder, 20), "twenty finished matches", cap=900, logs=started)
    by_bot = {row["bot_id"]: row for row in ladder.leaderboard(VARIANT)}
    assert by_bot[house_id("strong")]["mu"] > by_bot[house_id("greedy")]["mu"] > by_bot[house_id("random")]["mu"]


#: Keys of an event that say when it happened (or when a clock set then runs out), not what.
TIMES = {"time", "closes_at", "deadline", "turn_deadline"}


def _moves(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in TIMES} for e in events]


def _worker_running(ladder: Ladder, job_id: str) -> int | None:
    """The pid of the RQ worker running ``job_id`` now."""
    from rq import Worker as RQWorker

    assert ladder.queue is not None
    for found in RQWorker.all(queue=ladder.queue):
        if found.get_current_job_id() == job_id:
            return found.pid
    return None


def test_a_worker_killed_mid_match_is_resumed_at_once_by_another_playing_the_same_moves(
    tmp_path: Path, redis_url: str
) -> None:
    # Whole games (long enough to kill the worker in the middle of one), the lease and the
    # ladder's clocks as a user gets them (ladder_settings shortens the lease and the clocks).
    defaults = Settings()
    settings = ladder_settings(
        redis_url,
        ladder_start_round=1,
        ladder_every_seconds=defaults.ladder_every_seconds,
        ladder_lease_seconds=defaults.ladder_lease_seconds,
        ladder_turn_seconds=defaults.ladder_turn_seconds,
        ladder_claim_seconds=defaults.ladder_claim_seconds,
    )
    ladder = make_ladder(settings)
    seats = _house_entrants(ladder, 3)[:3]
    seed = "5eed" * 8
    with workers(tmp_path, settings) as start:
        started = {w.proc.pid: w for w in (start(), start())}
        match_id = ladder.create_match(VARIANT, seats, seed)
        assert match_id is not None
        wait_for(
            lambda: (ladder.games.repo.load(match_id) or _Nothing).version >= 200,
            "the match under way",
            logs=started.values(),
        )
        pid = wait_for(lambda: _worker_running(ladder, f"match-{match_id}-1"), "the match's worker")
        started[pid].kill()
        killed_at = ladder.games.repo.load(match_id)
        assert killed_at is not None and killed_at.status == "playing"
        wait_for(
            lambda: (ladder.match(VARIANT, match_id) or {}).get("status") == "finished",
            "the match finished by the other worker",
            logs=started.values(),
        )
    resumed = ladder.match(VARIANT, match_id)
    assert resumed is not None and ladder.store.runs(VARIANT, match_id) >= 2  # the sweep queued a new run
    events = ladder.games.replay(match_id)["events"]
    # Nothing was played by the clocks: every decision was the bots' own.
    assert not [e for e in events if e.get("timeout")]
    # It resumed well within the clocks a table with an outside bot has (behavioural caps:
    # the old lease alone was 30 s, the turn clock's length).
    gap = max(b["time"] - a["time"] for a, b in itertools.pairwise(events))
    assert gap < settings.ladder_turn_seconds / 2, gap
    # The same match played without a crash (here, in-process) plays the same moves.
    again = ladder.create_match(VARIANT, seats, seed)
    assert again is not None
    assert ladder.run_match(VARIANT, again) == "finished"
    uninterrupted = ladder.match(VARIANT, again)
    assert uninterrupted is not None
    assert _moves(events) == _moves(ladder.games.replay(again)["events"])

    def places(match: dict[str, Any]) -> list[tuple[str, int, int]]:
        return [(s["bot_id"], s["score"], s["place"]) for s in match["standings"]]

    assert places(resumed) == places(uninterrupted)
    # The match counted once for each player.
    for bot_id in seats:
        assert [h["match_id"] for h in ladder.history(VARIANT, bot_id)] == [match_id, again]


def _idle(ladder: Ladder) -> bool:
    """No match job is queued or running (and none holds a lease)."""
    assert ladder.queue is not None
    running = StartedJobRegistry(queue=ladder.queue).count
    leases = ladder.store.leases(VARIANT)
    return ladder.queue.count == 0 and running == 0 and not leases


def _any_job(ladder: Ladder, job_ids: list[str]) -> bool:
    from rq.job import Job

    assert ladder.queue is not None
    return any(Job.exists(job_id, connection=ladder.queue.connection) for job_id in job_ids)


class _Nothing:
    version = 0


def test_a_match_job_run_twice_records_one_result_and_one_rating_change(tmp_path: Path, redis_url: str) -> None:
    settings = ladder_settings(redis_url)
    ladder = make_ladder(settings)
    seats = _house_entrants(ladder, 3)[:3]
    with workers(tmp_path, settings) as start:
        started = [start(), start()]
        match_id = ladder.create_match(VARIANT, seats, "ab" * 16)
        assert match_id is not None
        ladder.enqueue_run(VARIANT, match_id, 2)  # a second run of the same match at once
        wait_for(lambda: (ladder.match(VARIANT, match_id) or {}).get("status") == "finished", "the match", logs=started)
        ladder.enqueue_run(VARIANT, match_id, 3)  # and a third after it ended
        # Each run's job is deleted once it ran (result_ttl=0); one in the queue, dequeued or
        # running still exists.
        runs = [f"match-{match_id}-{n}" for n in (1, 2, 3)]
        wait_for(lambda: _idle(ladder) and not _any_job(ladder, runs), "both extra runs done", logs=started)
    # Run in-process too: the job and the result step both see the match done.
    assert ladder.run_match(VARIANT, match_id) == "done"
    record = ladder.games.repo.load(match_id)
    assert record is not None
    assert ladder.record_result(VARIANT, match_id, record) is False
    assert ladder.matches(VARIANT) and [m["match_id"] for m in ladder.matches(VARIANT)] == [match_id]
    for row in ladder.leaderboard(VARIANT):
        if row["bot_id"] in seats:
            assert row["games"] == 1
            assert len(ladder.history(VARIANT, row["bot_id"])) == 1
    assert ladder.active(VARIANT) == {}  # each player's count of games at once went back to 0, once
    assert ladder.store.completed(VARIANT) == 1


def test_an_external_bot_that_never_answers_is_played_by_the_clocks_and_its_match_ends(
    tmp_path: Path, redis_url: str
) -> None:
    settings = ladder_settings(
        redis_url, ladder_turn_seconds=1.0, ladder_claim_seconds=1.0, ladder_players=("3",), ladder_max_matches=1
    )
    ladder = make_ladder(settings)
    _house_entrants(ladder, 2)
    silent = ladder.bots.register("Silent Sam", None)["bot_id"]
    ladder.enter_bot(VARIANT, silent, 1)
    with workers(tmp_path, settings) as start:
        started = [start()]
        matches = wait_for(lambda: _finished(ladder, 1), "a finished match with the silent bot", logs=started)
        ladder.leave(VARIANT, silent)
    match = matches[-1]
    seat = next(s["seat"] for s in match["seats"] if s["bot_id"] == silent)
    _check_match(ladder, match)
    events = ladder.games.replay(match["game_id"])["events"]
    played_for = [e for e in events if e.get("seat") == seat and e["type"] in ("discarded", "passed", "drew")]
    assert played_for and all(e.get("timeout") or e["type"] == "drew" for e in played_for)
    assert any(e["type"] == "seat_absent" and e["seat"] == seat for e in events)
    assert [h["match_id"] for h in ladder.history(VARIANT, silent)] == [match["match_id"]]


def test_matchmaking_never_seats_a_bot_in_more_games_than_its_limit(redis_url: str) -> None:
    settings = ladder_settings(redis_url, ladder_max_matches=0, ladder_house_games=3)
    ladder = make_ladder(settings)
    ladder.queue = None  # nothing plays: the matches stay in progress
    _house_entrants(ladder, 4)
    limits = {}
    for n, limit in enumerate((1, 2, 3)):
        bot_id = ladder.bots.register(f"Bot {n}", None)["bot_id"]
        ladder.enter_bot(VARIANT, bot_id, limit)
        limits[bot_id] = limit
    for entry in ladder.entries(VARIANT):
        limits.setdefault(entry.entrant, entry.max_games)
    # Several matchmakers at once (as several workers would run them).
    threads = [threading.Thread(target=make_ladder(settings).matchmake, args=(VARIANT,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    made = ladder.matches(VARIANT, limit=100, status="playing")
    assert made
    seated = Counter(s["bot_id"] for m in made for s in m["seats"])
    assert all(seated[e] <= limits[e] for e in seated), (seated, limits)
    assert ladder.active(VARIANT) == dict(seated)
    # Every external bot is at its limit (capacity is used); none of them sits twice at a table.
    assert all(seated[e] == limits[e] for e in limits if not e.startswith(HOUSE))
    assert all(len({s["bot_id"] for s in m["seats"]}) == len(m["seats"]) for m in made)
    # A bot at its limit is not seated again; once a match ends it may be.
    assert ladder.matchmake(VARIANT) == []


def test_a_bot_that_left_is_not_matched_and_house_only_tables_wait_for_an_external_bot(redis_url: str) -> None:
    settings = ladder_settings(redis_url, ladder_max_matches=0)
    ladder = make_ladder(settings)
    ladder.queue = None
    _house_entrants(ladder, 4)
    assert ladder.matchmake(VARIANT) == []  # house bots alone: no table (settings.ladder_house_matches off)
    bot_id = ladder.bots.register("Leaver", None)["bot_id"]
    ladder.enter_bot(VARIANT, bot_id, 2)
    assert ladder.leave(VARIANT, bot_id)
    assert ladder.matchmake(VARIANT) == []
    house_only = replace(settings, ladder_house_matches=True)
    assert make_ladder(house_only).matchmake(VARIANT)
