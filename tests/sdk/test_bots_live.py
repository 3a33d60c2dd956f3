"""Bot accounts, bot tokens taking seats, the decisions long-poll and ``run_polling``,
against the real service on a loopback socket (real Redis behind it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import requests
from servers import LiveServer, PollingBots
from werkzeug.serving import make_server

from mayi_sdk import WAIT, Bot, Client, Decision, GameView, LegalMove, errors

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
SEED = "b0b5" * 8
#: The longest a whole game may take on a loaded CI machine (a cap, not a timing).
GAME_CAP = 600.0


@pytest.fixture
def base(live_server: LiveServer) -> str:
    return live_server.url


def _bot(base: str, name: str) -> Client:
    with Client(base) as anon:
        account = anon.register_bot(name)
    assert account.token.startswith("mayi_bot_") and account.bot_id
    return Client(base, account.token)


def _table(base: str, variant: str, seats: int, options: dict[str, Any] = SLOW, **test: Any) -> str:
    with Client(base) as anon:
        return anon.create_game(variant, seats, options=options, test={"seed": SEED, **test}).game_id


#: The last two rounds of each variant: a round ends, the next is dealt and the game ends
#: (the whole game from round 1 took minutes on CI; the earlier rounds add nothing here).
LAST_TWO = {"may_i": 6, "shanghai": 7}


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_polling_bots_finish_a_whole_game_of_each_variant(base: str, runners: PollingBots, variant: str) -> None:
    start = LAST_TWO[variant]
    game_id = _table(base, variant, 3, start_round=start)
    clients = [_bot(base, f"poller{i}") for i in range(3)]
    for i, client in enumerate(clients):
        taken = client.take_seat(game_id, f"poller{i}")
        assert taken.seat == i and taken.token == client.token  # the bot acts with its own token
    bots = [Asked() for _ in clients]
    for bot, client in zip(bots, clients, strict=True):
        runners.start(bot, client)
    runners.join(GAME_CAP)
    final = clients[0].get_game(game_id)
    assert final.status == "finished" and final.places  # type: ignore[union-attr]
    assert [r.round for r in final.results] == list(range(start, final.round.of + 1)) == [start, start + 1]  # type: ignore[union-attr]
    assert sum(s.moves for s in runners.stats) > 20
    assert all(s.failures == 0 and s.refused == 0 for s in runners.stats)
    assert all(c.get_my_bot().games == [] for c in clients)
    for bot in bots:  # no decision shown twice (a decision the bot waited on included)
        assert len(bot.asked) == len(set(bot.asked)) > 0


def test_the_decisions_long_poll_wakes_on_the_move_that_makes_the_bot_decide(base: str) -> None:
    game_id = _table(base, "may_i", 3)
    bot = _bot(base, "waiter")
    with Client(base) as anon:
        people = [Client(base, anon.take_seat(game_id, f"P{i}").token) for i in range(2)]
    assert bot.take_seat(game_id, "waiter").seat == 2
    profile = bot.get_my_bot()
    assert profile.name == "waiter" and [(g.game_id, g.seats) for g in profile.games] == [(game_id, [2])]
    for _ in range(10):  # if the deal makes the bot act first, answer until it need not act
        page = bot.get_decisions()
        if not page.decisions:
            break
        first = page.decisions[0]
        bot.play(game_id, _simple(first.view), if_match=first.version)
    view = people[0].get_game(game_id)
    assert bot.get_decisions().decisions == []
    answered: list[GameView] = []

    def play_people() -> None:  # the two people play until the bot must act
        time.sleep(0.3)  # let the bot's long-poll start waiting first (not required for correctness)
        for _ in range(40):
            current = people[0].get_game(game_id)
            pending = current.claim_window.pending if current.claim_window else []
            seat = next((p for p in pending if p != 2), current.actor)
            if seat == 2 or 2 in pending:
                return
            mine = people[seat or 0].get_game(game_id)
            answered.append(people[seat or 0].play(game_id, _simple(mine)))

    thread = threading.Thread(target=play_people)
    thread.start()
    try:
        page = bot.get_decisions(wait=60)
    finally:
        thread.join(60)
    assert page.games == 1 and len(page.decisions) == 1
    decision = page.decisions[0]
    assert decision.game_id == game_id and decision.seat == 2 and decision.view.legal
    assert decision.view.hand and decision.version >= view.version
    # Answered: never listed again.
    bot.play(game_id, _simple(decision.view), if_match=decision.version)
    again = bot.get_decisions().decisions
    assert all((d.game_id, d.seat, d.version) != (game_id, 2, decision.version) for d in again)


def _simple(view: GameView) -> LegalMove:
    move = Bot().decide(view)
    return move if isinstance(move, LegalMove) else view.legal[0]


def _bot_in_seat_3(base: str, game_id: str) -> tuple[Client, list[Client]]:
    """A bot in seat 3 of a 4-seat table, and the people in seats 0-2."""
    bot = _bot(base, "patient")
    with Client(base) as anon:
        people = [Client(base, anon.take_seat(game_id, f"P{i}").token) for i in range(3)]
    assert bot.take_seat(game_id, "patient").seat == 3
    return bot, people


def _play_until_the_bot_is_asked(
    game_id: str, bot: Client, people: list[Client], wanted: Callable[[GameView], bool]
) -> Decision | None:
    """Play the table (the bot answering what it must, the people too) until the bot's
    decision is one ``wanted`` picks; ``None`` if none comes in 400 moves."""
    for _ in range(400):
        page = bot.get_decisions()
        mine = page.decisions[0] if page.decisions else None
        if mine and wanted(mine.view):
            return mine
        if mine:
            bot.play(game_id, _simple(mine.view), if_match=mine.version)
            continue
        view = people[0].get_game(game_id)
        window = view.claim_window
        seat = window.pending[0] if window and window.pending else view.actor
        assert seat is not None and seat != 3
        person = people[seat]
        person.play(game_id, _simple(person.get_game(game_id)))
    return None


def test_a_decision_the_bot_waits_on_is_skipped_until_its_choices_change(base: str, app: Any) -> None:
    """The bot sits in seat 3 of 4; it is on turn while seats 0 and 1 may still answer the
    upcard, so it may only take it. It waits (skip its key): one person's pass leaves its
    choices (and key) as they were, and the poll goes on waiting; the other's makes the
    stock legal, and the poll answers with the new decision."""
    game_id = _table(base, "may_i", 4)
    bot, people = _bot_in_seat_3(base, game_id)
    waited = _play_until_the_bot_is_asked(
        game_id,
        bot,
        people,
        lambda view: view.phase == "draw" and view.actor == 3 and len(view.claim_window.pending) == 2,  # type: ignore[union-attr]
    )
    assert waited is not None, "the bot never came to draw while two seats could answer the upcard"
    assert [m.body for m in waited.view.legal] == [{"source": "discard"}] and Bot().decide(waited.view) is WAIT
    key = waited.key
    assert key and bot.get_decisions().decisions[0].key == key  # the same decision, the same key
    skipped = bot.get_decisions(skip=[key])
    assert skipped.decisions == [] and skipped.skipped == [key] and skipped.games == 1
    # The window's clock would change its choices with no commit: a waiting poll looks
    # again when the window closes (here in 600 s), not only when woken by a commit.
    page = app.extensions["mayi"].bots.page(bot.get_my_bot().bot_id, skip=frozenset([key]))
    assert page.decisions == [] and page.changes_at == waited.view.claim_window.closes_at  # type: ignore[union-attr]

    first, second = waited.view.claim_window.pending  # type: ignore[union-attr]
    found: list[Any] = []

    def poll() -> None:
        found.append(bot.get_decisions(wait=60, skip=[key]))

    thread = threading.Thread(target=poll)
    thread.start()
    try:
        passed = people[first].pass_upcard(game_id)
        assert bot.get_decisions().decisions[0].key == key  # a pass left the bot's choices as they were
        last = people[second].pass_upcard(game_id)
    finally:
        thread.join(60)
    assert passed.version < last.version
    [page] = found
    [decision] = page.decisions
    assert decision.key != key and page.skipped == []
    assert decision.version == last.version  # it waited past the first pass, for the change
    assert sorted(m.body["source"] for m in decision.view.legal) == ["discard", "stock"]
    assert Bot().decide(decision.view) == LegalMove("draw", {"source": "stock"})


class Asked(Bot):
    """The default bot, noting every (game, seat, version) it is asked about."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int | None, int]] = []

    def decide(self, view: GameView) -> Any:
        self.asked.append((view.id, view.seat, view.version))
        return super().decide(view)


def test_bot_tokens_rotate_and_errors_name_the_problem(base: str) -> None:
    bot = _bot(base, "rotor")
    game_id = _table(base, "may_i", 2)
    bot.take_seat(game_id, "rotor")
    with pytest.raises(errors.BotAlreadySeated) as twice:
        bot.take_seat(game_id, "rotor again")
    assert twice.value.code == "bot_already_seated" and game_id in twice.value.detail
    old = Client(base, bot.token)
    bot.rotate_bot_token()
    assert bot.token != old.token
    with pytest.raises(errors.Unauthorized) as stale:
        old.get_my_bot()
    assert "bot token" in stale.value.detail
    with pytest.raises(errors.Forbidden):  # the old token holds no seat any more
        old.get_game(game_id)
    with Client(base) as anon:
        other = anon.take_seat(game_id, "person")
    view = bot.get_game(game_id)  # the new token holds the bot's seat
    assert view.seat == 0 and view.hand
    with pytest.raises(errors.Unauthorized) as seat_token:
        Client(base, other.token).get_decisions()
    assert "bot token" in seat_token.value.detail
    with pytest.raises(errors.Unauthorized):
        Client(base).get_my_bot()
    with pytest.raises(errors.ValidationError) as bad:
        Client(base).register_bot("")
    assert any("name" in e for e in bad.value.errors)


def test_a_bot_that_raises_in_decide_still_finishes_its_game_by_the_clock(
    base: str, app: Any, runners: PollingBots
) -> None:
    class Broken(Bot):
        def decide(self, view: GameView) -> LegalMove:
            raise RuntimeError("a bug in my bot")

    fast = {"claim_seconds": 1, "turn_seconds": 1}
    game_id = _table(base, "may_i", 3, options=fast, start_round=7)
    clients = [_bot(base, f"b{i}") for i in range(3)]
    for i, client in enumerate(clients):
        client.take_seat(game_id, f"b{i}")
    runners.start(Broken(), clients[0])
    runners.start(Bot(), clients[1])
    runners.start(Bot(), clients[2])
    # The test plays the worker's part: the clock job of a game is Games.run_clock.
    tables = app.extensions["mayi"].games
    end = time.monotonic() + GAME_CAP
    while tables.load(game_id).status != "finished" and time.monotonic() < end:
        tables.run_clock(game_id)
        time.sleep(0.2)
    runners.join(60)
    assert tables.load(game_id).status == "finished"
    broken = next(s for s in runners.stats if s.failures)
    assert broken.moves == 0 and broken.failures > 0


def test_a_polling_bot_survives_a_server_restart(app: Any, runners: PollingBots) -> None:
    """The server goes away mid-game and comes back on the same address: the runners
    retry with a growing pause, then resume and finish the game."""
    first = LiveServer(app)
    port = first.server.server_port
    second: Any = None
    try:
        base = first.url
        game_id = _table(base, "may_i", 3, start_round=7)
        clients = [_bot(base, f"r{i}") for i in range(3)]
        for i, client in enumerate(clients):
            client.take_seat(game_id, f"r{i}")
        for client in clients:
            runners.start(Bot(), client)
        tables = app.extensions["mayi"].games
        end = time.monotonic() + GAME_CAP
        while tables.load(game_id).version < 10 and time.monotonic() < end:
            time.sleep(0.05)
        first.stop()
        first.server.server_close()
        time.sleep(1.0)  # the runners find nobody answering
        version = tables.load(game_id).version
        second = make_server("127.0.0.1", port, app, threaded=True)
        threading.Thread(target=second.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        runners.join(GAME_CAP)
        assert tables.load(game_id).status == "finished" and tables.load(game_id).version > version
        assert all(s.failures == 0 for s in runners.stats)
    finally:
        first.stop()
        if second is not None:
            second.shutdown()
            second.server_close()


def test_a_move_sent_with_its_decisions_key_is_not_refused_for_another_seats_answer(base: str) -> None:
    """If-Match: key:<key>. Four bots; seat 3 on turn, seats 0 and 1 may answer the upcard.
    Both claimants read their decisions at the same version; the first one's pass moves the
    game on, yet the second's pass with its decision's key is applied (with the version,
    412). The seat on turn's old key is refused once the last pass changed its choices."""
    game_id = _table(base, "may_i", 4)
    clients = [_bot(base, f"keyed{i}") for i in range(4)]
    for i, client in enumerate(clients):
        assert client.take_seat(game_id, f"keyed{i}").seat == i
    for _ in range(400):  # play until seat 3 draws while seats 0 and 1 may answer the upcard
        view = clients[0].get_game(game_id)
        window = view.claim_window
        if view.phase == "draw" and view.actor == 3 and window and window.pending == [0, 1]:
            break
        seat = window.pending[0] if window and window.pending else view.actor
        assert seat is not None
        [decision] = clients[seat].get_decisions().decisions
        clients[seat].play(game_id, _simple(decision.view), if_match=decision.version)
    else:
        raise AssertionError("seat 3 never came to draw while seats 0 and 1 could answer the upcard")
    [first] = clients[0].get_decisions().decisions
    [second] = clients[1].get_decisions().decisions
    [on_turn] = clients[3].get_decisions().decisions
    assert first.version == second.version == on_turn.version
    assert len({first.key, second.key, on_turn.key}) == 3  # each seat's decision has its own key
    passed = clients[0].play(game_id, LegalMove("claim", {"claim": False}), if_key=first.key)
    assert passed.version == first.version + 1
    with pytest.raises(errors.VersionConflict):  # by the version: the game has moved on
        clients[1].play(game_id, LegalMove("claim", {"claim": False}), if_match=second.version)
    with pytest.raises(errors.VersionConflict):  # another seat's key is never this seat's
        clients[1].play(game_id, LegalMove("claim", {"claim": False}), if_key=on_turn.key)
    # By its key: its choices are what they were, so its answer stands.
    after = clients[1].play(game_id, LegalMove("claim", {"claim": False}), if_key=second.key)
    assert after.version == first.version + 2
    assert after.claim_window is None or not after.claim_window.pending
    # The seat on turn's choices changed (the stock is legal now): its old key is refused.
    with pytest.raises(errors.VersionConflict) as stale:
        clients[3].play(game_id, LegalMove("draw", {"source": "discard"}), if_key=on_turn.key)
    assert "seat 3's decision has changed" in stale.value.detail
    [now] = clients[3].get_decisions().decisions
    assert now.key != on_turn.key and now.version == after.version
    drawn = clients[3].play(game_id, LegalMove("draw", {"source": "stock"}), if_key=now.key)
    assert drawn.phase == "play" and drawn.version == now.version + 1
    bad = requests.post(
        f"{base}/v1/games/{game_id}/turn/discard",
        json={"card": drawn.hand[0]},
        headers={"Authorization": f"Bearer {clients[3].token}", "If-Match": "key:" + "x" * 65},
        timeout=30,
    )
    assert bad.status_code == 422 and "If-Match" in bad.json()["detail"]


#: A claim window short enough to wait out, long enough for the set-up's moves.
WINDOW = {"claim_seconds": 8, "turn_seconds": 600}
#: The poll's wait: far longer than the window.
POLL_WAIT = 60


def test_a_poll_waiting_on_a_skipped_draw_is_answered_when_the_window_closes_on_the_clock(base: str) -> None:
    """No clock jobs run here, so nothing commits the window's end: the waiting poll is
    answered by its own timer, with the new decision and no new version."""
    game_id = _table(base, "may_i", 4, options=WINDOW)
    bot, people = _bot_in_seat_3(base, game_id)

    def on_turn_without_the_stock(view: GameView) -> bool:
        sources = [m.body.get("source") for m in view.legal]
        return view.phase == "draw" and view.actor == 3 and "stock" not in sources

    waited = _play_until_the_bot_is_asked(game_id, bot, people, on_turn_without_the_stock)
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
