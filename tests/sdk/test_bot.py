"""The bot framework in-process: ``Bot`` hooks, ``play_local``, the helpers (no server)."""

from __future__ import annotations

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
    with pytest.raises(helpers.EngineMissing, match="pip install mayi"):
        play_local(Bot(), ["greedy"], "may_i", seed=1)
    with pytest.raises(helpers.EngineMissing, match="mayi_engine"):
        helpers.find_contract(["7C", "7D", "7H"], books=1, runs=0)
    # Card points (the default discard's order) still work without it.
    assert helpers.card_points("JK") == 50 and helpers.card_points("KS") == 10 and helpers.card_points("7H") == 7


def test_helpers_agree_with_the_engine() -> None:
    assert helpers.hand_points(["JK", "AS", "7H"]) == 77
    assert helpers.meld_problem(["7C", "8D", "9H"]) is not None
    assert helpers.meld_problem(["5S", "6S", "JK", "8S"]) is None
    assert helpers.find_contract(["KD", "2H"], books=1, runs=0) is None
