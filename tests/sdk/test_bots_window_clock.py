"""A decisions long-poll that waits on a skipped decision is answered when the claim
window's clock changes that decision, with no commit at all (live server, real Redis;
no clock jobs run here, so nothing commits the window's end)."""

from __future__ import annotations

import threading
import time
from typing import Any

from servers import LiveServer

from mayi_sdk import WAIT, Bot, Client, GameView, LegalMove

#: A claim window short enough to wait out, long enough for the set-up's moves.
WINDOW = {"claim_seconds": 8, "turn_seconds": 600}
#: The poll's wait: far longer than the window.
POLL_WAIT = 60


def _simple(view: GameView) -> LegalMove:
    move = Bot().decide(view)
    return move if isinstance(move, LegalMove) else view.legal[0]


def test_a_poll_waiting_on_a_skipped_draw_is_answered_when_the_window_closes_on_the_clock(
    live_server: LiveServer,
) -> None:
    base = live_server.url
    with Client(base) as anon:
        game_id = anon.create_game("may_i", 4, options=WINDOW, test={"seed": "c10c" * 8}).game_id
        people = [Client(base, anon.take_seat(game_id, f"P{i}").token) for i in range(3)]
        bot = Client(base, anon.register_bot("patient").token)
    assert bot.take_seat(game_id, "patient").seat == 3
    waited = None
    for _ in range(400):  # play (the bot answering what it must) until it is on turn in a window
        page = bot.get_decisions()
        mine = page.decisions[0] if page.decisions else None
        sources = [m.body.get("source") for m in mine.view.legal] if mine else []
        if mine and mine.view.phase == "draw" and mine.view.actor == 3 and "stock" not in sources:
            waited = mine
            break
        if mine:
            bot.play(game_id, _simple(mine.view), if_match=mine.version)
            continue
        view = people[0].get_game(game_id)
        window = view.claim_window
        seat = window.pending[0] if window and window.pending else view.actor
        assert seat is not None and seat != 3
        person = people[seat]
        person.play(game_id, _simple(person.get_game(game_id)))
    assert waited is not None, "the bot never came to draw while others could answer the upcard"
    assert Bot().decide(waited.view) is WAIT
    key = waited.key
    closes_at = waited.view.claim_window.closes_at  # type: ignore[union-attr]
    skipped = bot.get_decisions(skip=[key])
    assert skipped.decisions == [] and skipped.skipped == [key]  # the window is still open

    found: list[Any] = []
    thread = threading.Thread(target=lambda: found.append(bot.get_decisions(wait=POLL_WAIT, skip=[key])))
    sent = time.monotonic()
    thread.start()
    thread.join(POLL_WAIT + 30)
    assert not thread.is_alive()
    # Answered when the window closed (8 s after it opened), not when the wait ran out
    # (at the end of its wait a poll answers with whatever is there, which would be the
    # same decision): the margin is the 50 s between the two.
    assert time.monotonic() - sent < POLL_WAIT - 10
    [page] = found
    [decision] = page.decisions
    # The window closed on its clock: the seat may now draw from the stock, a new decision
    # (a new key) of the same version: no move was committed while the poll waited.
    assert decision.key != key and page.skipped == []
    assert decision.version == waited.version
    assert decision.view.claim_window is None or decision.view.claim_window.closes_at == closes_at
    assert "stock" in [m.body.get("source") for m in decision.view.legal]
    assert Bot().decide(decision.view) == LegalMove("draw", {"source": "stock"})
    assert people[0].get_game(game_id).version == waited.version
