"""The bot framework in-process: ``Bot`` hooks, ``play_local``, the helpers (no server)."""

from __future__ import annotations

import itertools
import logging
import sys
from typing import Any

import pytest

from mayi_sdk import Bot, GameView, LegalMove, helpers, play_local
from mayi_sdk.bot import as_legal_move


class Greedyish(Bot):
    """Claims nothing, takes the upcard never, goes down and lays off whenever listed."""

    name = "plain"


class Recorder(Bot):
    def __init__(self) -> None:
        self.views: list[GameView] = []

    def decide(self, view: GameView) -> LegalMove | dict[str, Any]:
        self.views.append(view)
        assert view.legal, "a bot is only asked when it has a legal move"
        return super().decide(view)


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_a_default_bot_finishes_a_game_of_each_variant(variant: str) -> None:
    recorder = Recorder()
    game = play_local(recorder, ["greedy", Greedyish()], variant, seed=1)
    assert game.view.status == "finished"
    assert game.failures == [0, 0, 0]
    assert len(game.totals) == 3 and sorted(game.places)[0] == 1
    assert game.rounds == game.view.round.of if game.view.round else False
    seen = recorder.views
    assert seen and all(v.seat == 0 and v.hand is not None for v in seen)
    # Every kind of decision reached the bot.
    kinds = {m.type for v in seen for m in v.legal}
    assert {"draw", "discard", "go_down"} <= kinds


def test_the_same_seed_plays_the_same_game() -> None:
    one = play_local(Bot(), ["greedy", "random"], "may_i", seed="same")
    two = play_local(Bot(), ["greedy", "random"], "may_i", seed="same")
    other = play_local(Bot(), ["greedy", "random"], "may_i", seed="other")
    assert (one.totals, one.decisions) == (two.totals, two.decisions)
    assert (one.totals, one.decisions) != (other.totals, other.decisions)


def test_hooks_change_the_play() -> None:
    class Claimer(Bot):
        def claim(self, view: GameView) -> bool:
            return True

        def draw_from(self, view: GameView) -> str:
            return "discard"

    asked: list[str] = []

    class Watching(Claimer):
        def decide(self, view: GameView) -> LegalMove | dict[str, Any]:
            move = as_legal_move(super().decide(view))
            if move.type in ("claim", "draw"):
                asked.append(f"{move.type}:{move.body}")
            return move

    game = play_local(Watching(), ["greedy", "greedy"], "may_i", seed=3)
    assert game.view.status == "finished" and game.failures == [0, 0, 0]
    assert any(a.startswith("claim:{'claim': True}") for a in asked)
    assert any("'source': 'discard'" in a for a in asked)


def test_a_bot_may_answer_a_moves_json_form() -> None:
    class AsDicts(Bot):
        def decide(self, view: GameView) -> dict[str, Any]:
            move = as_legal_move(super().decide(view))
            return {"type": move.type, **move.body}

    game = play_local(AsDicts(), ["greedy", "random"], "shanghai", seed=4)
    assert game.view.status == "finished" and game.failures == [0, 0, 0]


def test_a_failing_decide_is_logged_and_the_clock_plays(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(Bot):
        def decide(self, view: GameView) -> LegalMove:
            raise RuntimeError("my bug")

    class Illegal(Bot):
        def decide(self, view: GameView) -> dict[str, Any]:
            return {"type": "discard", "card": "ZZ"}

    with caplog.at_level(logging.WARNING, logger="mayi_sdk.local"):
        game = play_local(Broken(), [Illegal(), "greedy"], "may_i", seed=5)
    assert game.view.status == "finished"
    assert game.failures[0] > 0 and game.failures[1] > 0 and game.failures[2] == 0
    assert any("my bug" in e for e in game.errors) and any("ZZ" in e for e in game.errors)
    assert "decide failed, the clock plays" in caplog.text


def test_bad_arguments_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="opponents: unknown bot 'smart'"):
        play_local(Bot(), ["smart"], "may_i", seed=1)
    with pytest.raises(TypeError, match="decide must return a LegalMove"):
        as_legal_move("discard QS")  # type: ignore[arg-type]


def test_without_the_engine_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mayi_engine", None)  # import mayi_engine now raises ImportError
    with pytest.raises(helpers.EngineMissing, match="mayi-game-service"):
        play_local(Bot(), ["greedy"], "may_i", seed=1)
    with pytest.raises(helpers.EngineMissing, match="mayi_engine"):
        helpers.find_contract(["7C", "7D", "7H"], books=1, runs=0)
    # Card points by a variant's name need it too (they are the variant's, not a table of the SDK's).
    with pytest.raises(helpers.EngineMissing, match=r"Client\.list_variants"):
        helpers.card_points("4D", "shanghai")


def test_helpers_agree_with_the_engine() -> None:
    assert helpers.hand_points(["JK", "AS", "7H"]) == 77
    assert helpers.meld_problem(["7C", "8D", "9H"]) is not None
    assert helpers.meld_problem(["5S", "6S", "JK", "8S"]) is None
    assert helpers.find_contract(["KD", "2H"], books=1, runs=0) is None


def _windows(variant: str, seed: int, count: int) -> list[tuple[Any, int]]:
    """Engine states where the seat on turn may take the upcard while others may still
    answer it (so the stock is not legal yet), with that seat: the first ``count`` of a
    game where every claimant passes and the seat on turn then draws from the stock."""
    from mayi_engine import Pass, get_rules, legal_moves, new_game, pending_claimants, play

    state = new_game(get_rules(variant), ["a", "b", "c", "d"], bytes([seed]) * 32)
    found: list[tuple[Any, int]] = []
    while len(found) < count and not state.finished:
        pending = pending_claimants(state)
        if pending and state.phase.name == "DRAW" and (not found or found[-1][0] is not state):
            found.append((state, state.turn))
        if pending:
            state, _ = play(state, pending[0], Pass(), 0.0)
            continue
        moves = legal_moves(state, state.actor, 0.0)
        draws = [m for m in moves if type(m).__name__ == "DrawStock"]
        state, _ = play(state, state.actor, draws[0] if draws else moves[-1], 0.0)
    assert len(found) == count
    return found


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_the_seat_on_turn_waits_for_the_stock_rather_than_take_an_upcard_it_does_not_want(variant: str) -> None:
    import mayi_bots
    from mayi_engine import legal_moves
    from mayi_sdk import WAIT
    from mayi_sdk.local import seat_view

    for state, seat in _windows(variant, 3, 12):
        assert [type(m).__name__ for m in legal_moves(state, seat, 0.0)] == ["TakeDiscard"]
        closed = state.claim_closes_at + 1  # the window's clock has run out: the stock is legal too
        assert len(legal_moves(state, seat, closed)) == 2
        now, later = seat_view(state, seat, 0.0), seat_view(state, seat, closed)
        assert Bot().decide(now) is WAIT  # the default wants the stock: it waits for it
        for name in ("greedy", "strong"):
            wanted = as_legal_move(mayi_bots.make(name).decide(later)).body.get("source")
            answer = mayi_bots.make(name).decide(now)
            if wanted == "stock":
                assert answer is WAIT, name
            else:  # the upcard: taken at once, as before
                assert as_legal_move(answer).body == {"source": "discard"}, name


class Waiter(Bot):
    """Never answers an upcard (waits on every claim decision); records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[GameView] = []
        self.waited = 0

    def decide(self, view: GameView) -> Any:
        self.asked.append(view)
        if view.legal_of("claim"):
            from mayi_sdk import WAIT

            self.waited += 1
            return WAIT
        return super().decide(view)


def _choices(view: GameView) -> tuple[Any, ...]:
    legal = [(m.type, sorted(m.body.items(), key=str)) for m in view.legal]
    return (view.round.number if view.round else 0, view.phase, tuple(view.hand), legal)


def test_a_bot_that_waits_still_finishes_its_game_and_is_not_asked_the_same_decision_twice() -> None:
    waiter = Waiter()
    game = play_local(waiter, [Bot(), Bot(), "greedy"], "may_i", seed=8)
    assert game.view.status == "finished" and game.failures == [0, 0, 0, 0]
    assert waiter.waited > 0  # its claim decisions were left to the window's clock
    # After a wait, the next question to the bot differs (its choices changed).
    for before, after in itertools.pairwise(waiter.asked):
        if before.legal_of("claim"):
            assert _choices(before) != _choices(after) or before.claim_window != after.claim_window


def test_the_runner_and_the_receiver_let_a_waited_decision_pass_without_a_request() -> None:
    from mayi_sdk import Client, Decision, RunStats
    from mayi_sdk.runners import play_decision
    from mayi_sdk.webhooks import WebhookReceiver

    state, seat = _windows("may_i", 4, 1)[0]
    from mayi_sdk.local import seat_view

    view = seat_view(state, seat, 0.0, version=7)
    stats = RunStats()
    client = Client("http://127.0.0.1:9")  # nothing listens there: a request would fail the test
    assert play_decision(Bot(), client, "g1", view, stats) is view
    assert (stats.waits, stats.sent, stats.moves, stats.failures) == (1, 0, 0, 0)

    asked: list[int] = []

    class Counting(Bot):
        def decide(self, view: GameView) -> Any:
            asked.append(view.version)
            return super().decide(view)

    receiver = WebhookReceiver(Counting(), client, "whsec_" + "A" * 44)
    receiver._play(Decision("g1", seat, 7, None, view, key="k1"))
    receiver._play(Decision("g1", seat, 8, None, seat_view(state, seat, 0.0, version=8), key="k1"))
    assert asked == [7]  # the same key at a newer version (another seat answered): not asked again
    receiver._play(Decision("g1", seat, 9, None, seat_view(state, seat, 0.0, version=9), key="k2"))
    assert asked == [7, 9]  # a new key: its choices changed


def test_as_an_engine_policy_a_waiting_bot_gets_its_first_legal_move_played() -> None:
    """An in-process driver (mayi simulate, the engine's property walks) asks for a move now."""
    from mayi_engine import legal_moves
    from mayi_sdk.local import bot_policy

    state, seat = _windows("may_i", 5, 1)[0]
    legal = legal_moves(state, seat, 0.0)
    assert bot_policy(Bot())(state, seat, legal, None) == legal[0]  # taking the upcard, its one legal move
