"""Normal play is never throttled, and no move of a polling bot is refused for a race.

A bot playing at full speed through the SDK's ``run_polling`` against three house bots,
on a real ``mayi serve`` with the settings a user gets (rate limits on, clock jobs on,
its job worker): whole games of both variants, with the answers the server sent counted
at the server (its ``/metrics``) and in the SDK (``RunStats``).
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator

import pytest
import requests
from serving import Served, mayi_serve

from mayi_sdk import Bot, Client, RunStats, errors, run_polling
from mayi_sdk.bot import as_legal_move, is_wait

#: The longest a whole game may take on a loaded CI machine (a cap, not a timing).
GAME_CAP = 300.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Served]:
    """A default ``mayi serve``: only the Redis is the suite's (and clock jobs are on, as
    they are by default; the helper turns them off unless told)."""
    env = {"MAYI_REDIS_URL": redis_url, "MAYI_SCHEDULE_CLOCK_JOBS": "true"}
    with mayi_serve(tmp_path_factory.mktemp("play-limits"), env, worker=True) as server:
        server.wait_ready()
        yield server


def _answers(url: str) -> dict[str, float]:
    """Responses the server sent so far, by status (from ``mayi_http_requests_total``)."""
    text = requests.get(f"{url}/metrics", timeout=30).text
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("mayi_http_requests_total{"):
            status = re.search(r'status="(\d+)"', line)
            assert status is not None, line
            found[status.group(1)] = found.get(status.group(1), 0.0) + float(line.rsplit(" ", 1)[1])
    return found


def _play(url: str, variant: str) -> tuple[RunStats, dict[str, float], int]:
    """A whole game of ``variant``: a polling bot (the SDK's default ``Bot``) in seat 0 and
    three house bots; the runner's stats, the answers the server sent meanwhile, and how
    many times another seat took the upcard (each closes a claim window at once)."""
    with Client(url) as anon:
        account = anon.register_bot(f"full-speed-{variant}")
        game_id = anon.create_game(variant, 4).game_id
        client = Client(url, account.token)
        client.take_seat(game_id, "full speed")
        before = _answers(url)
        for name in ("greedy", "greedy", "strong"):
            anon.take_seat(game_id, house_bot=name)
    with client:
        stats = run_polling(Bot(), client, wait=30, until_idle=True)
        end = time.monotonic() + GAME_CAP
        while client.get_game(game_id).status != "finished":  # until_idle returns once it has ended
            assert time.monotonic() < end, f"game {game_id} did not finish within {GAME_CAP} s"
            time.sleep(0.5)
    after = _answers(url)
    takes, seq = 0, 0
    with Client(url) as anon:
        while page := anon.get_events(game_id, seq).events:
            takes += sum(1 for e in page if e.type == "took_upcard" and e.seat != 0)
            seq = page[-1].seq
    return stats, {status: after.get(status, 0.0) - before.get(status, 0.0) for status in after}, takes


def test_a_polling_bot_against_three_house_bots_is_never_throttled_in_may_i(served: Served) -> None:
    stats, answers, _ = _play(served.url, "may_i")
    assert stats.moves > 100, stats  # a whole game was played
    assert answers.get("429", 0) == 0, f"answers 429 during normal play: {answers}"
    assert stats.rate_limited == 0, stats
    # No move refused but those the rules refuse to anyone late: a claim or pass that
    # arrived after the seat on turn took the upcard (its claim window had closed).
    assert stats.refused == stats.too_late == answers.get("412", 0) and stats.version_conflicts == 0, stats


def test_a_polling_bot_in_shanghai_has_no_move_refused_for_a_race(served: Served) -> None:
    """The seat's claim on its own discard (Shanghai lets the discarder buy it back) follows
    its discard at once, while the house bots answer the same upcard: sent under the key the
    discard's answer carries, another seat's answer does not refuse it. (Only a claim that
    arrives after the seat on turn took the upcard is refused, as it would be to anyone:
    ``too_late``.)"""
    stats, answers, takes = _play(served.url, "shanghai")
    assert stats.moves > 100, stats
    assert answers.get("429", 0) == 0, f"answers 429 during normal play: {answers}"
    assert stats.version_conflicts == 0, stats
    assert answers.get("412", 0) == stats.too_late == stats.refused, (answers, stats)
    # Each refused claim answered a window that another seat's take of the upcard closed
    # first (the bot answers in milliseconds, long before a window's clock): at most one a take.
    assert stats.too_late <= takes, f"refused claims beyond the windows the seat on turn closed: {takes}, {stats}"


def test_many_requests_at_once_in_their_limit_calls_are_all_answered(served: Served) -> None:
    """190 spectators open their event streams at once (from 48 addresses, four each: the
    default cap per client; the server here serves 200 connections at once): every one is
    answered 200 (the limits' Redis pool refused the 101st connection at once: those got
    a 500)."""
    with Client(served.url) as anon:
        game_id = anon.create_game("may_i", 2).game_id
    sockets = []
    try:
        for i in range(190):
            source = (f"127.3.{i // 4 // 250}.{i // 4 % 250 + 1}", 0)
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=60, source_address=source)
            sock.sendall(f"GET /v1/games/{game_id}/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            sockets.append(sock)
        statuses = [sock.recv(64).split(b"\r\n", 1)[0] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
    assert statuses == [b"HTTP/1.1 200 OK"] * 190, sorted(set(statuses))
    assert "Traceback" not in served.stderr() + served.stdout()


def test_a_person_following_the_table_by_its_events_is_never_throttled(served: Served) -> None:
    """A person's client at a table with three house bots, as docs/api.md describes a game:
    it follows the events (long-polls), reads its view after each, and answers its
    decisions at once (at a bot's speed, faster than any person), to the game's end."""
    with Client(served.url) as anon:
        game_id = anon.create_game("may_i", 4).game_id
        seat = anon.take_seat(game_id, "person")
        before = _answers(served.url)
        for name in ("greedy", "greedy", "strong"):
            anon.take_seat(game_id, house_bot=name)
    bot, after, reads, refused = Bot(), 0, 0, []
    end = time.monotonic() + GAME_CAP
    with Client(served.url, seat.token, max_retries=0) as person:  # a 429 would raise
        while True:
            assert time.monotonic() < end, f"game {game_id} did not finish within {GAME_CAP} s"
            page = person.get_events(game_id, after, wait=30)
            after = page.events[-1].seq if page.events else after
            view = person.get_game(game_id)
            reads += 2
            if view.status == "finished":
                break
            while view.legal:
                answer = bot.decide(view)
                if is_wait(answer):
                    break
                try:
                    view = person.play(game_id, as_legal_move(answer), if_key=view.key)
                except errors.VersionConflict as exc:  # a pass the seat on turn beat: the rules'
                    refused.append(exc)
                    break
    answers = _answers(served.url)
    assert reads > 200, reads  # a whole game was followed
    assert answers.get("429", 0) - before.get("429", 0) == 0
