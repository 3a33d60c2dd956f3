"""The ``expert`` bot (a search over sampled worlds) and the bound on ``greedy``'s hand.

``expert`` plays the same moves for the same seed, finishes games in ``play_local`` and
``mayi simulate``, plays as a house bot of a real ``mayi serve`` (and takes the budget
the service passes), without the rules engine says so in one line, and in May I's last
round dumps points only when it leads and plans it as it is played out (three runs
of four or five cards). ``greedy`` no longer hoards cards in May I's last
round. (Strength: ``bench/bots.py``, never here.)"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from serving import Served, mayi_serve

import mayi_bots
from mayi_bots.expert import ExpertBot
from mayi_bots.greedy import HAND_LIMIT
from mayi_engine import Phase, from_json, get_rules, move_from_json, new_game, play, to_json
from mayi_engine.simulate import next_seat
from mayi_sdk import GameView, play_local
from mayi_sdk.bot import as_legal_move, is_wait
from mayi_sdk.cards import order
from mayi_sdk.local import seat_view
from mayi_service.cli import main

#: Caps on a loaded CI machine (never timings): a house game's last two rounds.
GAME_CAP = 600.0


def _views(variant: str, seat: int, rounds: int) -> list[GameView]:
    """The views ``seat`` gets in the first ``rounds`` rounds of a seeded game of four ``strong`` bots."""
    key = hashlib.blake2b(f"expert-test/{variant}".encode(), digest_size=32).digest()
    state = new_game(get_rules(variant), ["a", "b", "c", "d"], key)
    bots = [mayi_bots.make("strong") for _ in range(4)]
    views = []
    while state.phase is not Phase.FINISHED and state.round <= rounds:
        actor = next_seat(state)
        view = seat_view(state, actor)
        if actor == seat:
            views.append(view)
        answer = as_legal_move(bots[actor].decide(view))
        state, _ = play(state, actor, move_from_json({"type": answer.type, **answer.body}))
    return views


def _answer(answer: Any) -> Any:
    return "wait" if is_wait(answer) else (answer.type, answer.body) if hasattr(answer, "type") else answer


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_expert_answers_the_same_views_the_same_way_for_a_seed(variant: str) -> None:
    views = _views(variant, 1, 2)
    # No time budget: it would let the machine's load cut a search short (the bot's
    # docstring: a seeded bot repeats itself whenever the budget does not stop a search).
    runs = []
    for _ in range(2):
        bot = ExpertBot(seed=7, budget=None, worlds=4)
        runs.append([_answer(bot.decide(v)) for v in views])
        assert bot.searches > 0  # it did search, not only follow strong
    assert runs[0] == runs[1]


def test_expert_searches_discards_with_strong_playouts_when_asked_and_repeats_itself() -> None:
    views = _views("may_i", 2, 1)
    plain = ExpertBot(seed=3, budget=None, worlds=2)
    for v in views:
        plain.decide(v)
    runs, searches = [], []
    for _ in range(2):
        bot = ExpertBot(seed=3, budget=None, worlds=2, discards=True, strong_playouts=True)
        runs.append([_answer(bot.decide(v)) for v in views])
        searches.append(bot.searches)
    assert runs[0] == runs[1]
    assert searches[0] == searches[1] > plain.searches  # the discards searched as well as the claims


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_expert_finishes_a_game_in_play_local_with_no_illegal_move(variant: str) -> None:
    game = play_local(mayi_bots.make("expert", seed=5), ["strong", "greedy", "random"], variant, seed=f"x-{variant}")
    assert game.view.status == "finished" and game.rounds == len(get_rules(variant).rounds)
    assert game.failures == [0, 0, 0, 0], game.errors


def test_mayi_simulate_plays_expert_by_name() -> None:
    args = ["simulate", "--variant", "shanghai", "--games", "1", "--seed", "3", "--bots", "expert,strong", "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data["bots"]) == {"0:expert", "1:strong", "2:expert", "3:strong"}
    assert data["games"] == 1 and data["invariant_violations"] == 0


def test_the_service_passes_its_budget_to_the_searching_bot() -> None:
    from mayi_service.config import Settings
    from mayi_service.ladder.tables import make_bot

    assert Settings.from_env(house_bot_seconds=0.05).house_bot_seconds == 0.05
    bot = make_bot("expert", 3, 0.05)
    assert isinstance(bot, ExpertBot) and bot.budget == 0.05
    assert isinstance(mayi_bots.make("expert"), ExpertBot) and mayi_bots.make("strong", budget=1.0).name == "strong"


@pytest.fixture
def served(tmp_path: Path, redis_url: str) -> Iterator[Served]:
    # The defaults a user gets (rate limits on, clock jobs on); a small house-bot budget.
    env = {"MAYI_REDIS_URL": redis_url, "MAYI_SCHEDULE_CLOCK_JOBS": "true", "MAYI_HOUSE_BOT_SECONDS": "0.1"}
    with mayi_serve(tmp_path, env, worker=True) as server:
        server.wait_ready()
        yield server


def test_expert_plays_as_a_house_bot_of_a_real_server(served: Served) -> None:
    body = {
        "variant": "may_i",
        "seats": 3,
        "options": {"claim_seconds": 600, "turn_seconds": 600},  # no decision left to the clock
        "test": {"start_round": 6},  # the last two rounds: a round ends, the next is dealt, the game ends
    }
    created = requests.post(f"{served.url}/v1/games", json=body, timeout=30)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    for name in ("expert", "strong", "greedy"):
        taken = requests.post(f"{served.url}/v1/games/{game_id}/seats", json={"house_bot": name}, timeout=30)
        assert taken.status_code == 201, taken.text
    end = time.monotonic() + GAME_CAP
    view: dict[str, Any] = {}
    while time.monotonic() < end:
        view = requests.get(f"{served.url}/v1/games/{game_id}", timeout=30).json()
        if view["status"] == "finished":
            break
        time.sleep(1.0)
    assert view.get("status") == "finished", view
    assert view["seats"][0]["name"] == "expert (house bot)"
    events = requests.get(f"{served.url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()
    assert not [e for e in events["events"] if e.get("timeout")]  # every decision the bots' own


def test_python_m_mayi_bots_expert_without_the_engine_says_so_in_one_line() -> None:
    code = (
        "import sys; sys.modules['mayi_engine'] = None; "  # the engine not installed: its import fails
        "from mayi_bots.cli import main; sys.exit(main('expert', ['--server', 'http://127.0.0.1:9']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("python -m mayi_bots.expert: ") and "mayi_engine" in lines[0]
    assert "mayi-game-service" in lines[0]


def test_greedy_no_longer_hoards_cards_in_may_is_last_round() -> None:
    most = 0
    for g in range(2):  # seeded games of four greedy bots from round 7 (the old greedy held 45-67 cards)
        key = hashlib.blake2b(f"hoard/{g}".encode(), digest_size=32).digest()
        state = new_game(get_rules("may_i"), ["a", "b", "c", "d"], key, start_round=7)
        bots = [mayi_bots.make("greedy") for _ in range(4)]
        while state.phase is not Phase.FINISHED:
            most = max(most, *map(len, state.hands))
            seat = next_seat(state)
            answer = as_legal_move(bots[seat].decide(seat_view(state, seat)))
            state, _ = play(state, seat, move_from_json({"type": answer.type, **answer.body}))
    # A claim keeps the hand within the limit; the turn's draw adds one before the discard.
    assert HAND_LIMIT <= most <= HAND_LIMIT + 1


def _last_round_views(totals: list[int], games: int = 3) -> list[list[GameView]]:
    """Seat 0's views in seeded May I round-7 deals of four ``strong`` bots, the totals set to ``totals``."""
    out = []
    for g in range(games):
        key = hashlib.blake2b(f"lead/{g}".encode(), digest_size=32).digest()
        data = to_json(new_game(get_rules("may_i"), ["a", "b", "c", "d"], key, start_round=7))
        state = from_json({**data, "totals": totals})
        bots = [mayi_bots.make("strong") for _ in range(4)]
        views = []
        while state.phase is not Phase.FINISHED:
            seat = next_seat(state)
            view = seat_view(state, seat)
            if seat == 0:
                views.append(view)
            answer = as_legal_move(bots[seat].decide(view))
            state, _ = play(state, seat, move_from_json({"type": answer.type, **answer.body}))
        out.append(views)
    return out


def _discards(bot: Any, views: list[GameView]) -> list[str]:
    """The card ``bot`` throws at each of ``views`` asking for a discard (fed every view in order, as in play)."""
    picked = []
    for view in views:
        answer = bot.decide(view)
        if not is_wait(answer) and as_legal_move(answer).type == "discard":
            picked.append(str(as_legal_move(answer).body["card"]))
    return picked


def test_expert_dumps_points_in_may_is_last_round_only_when_it_leads(monkeypatch: pytest.MonkeyPatch) -> None:
    from mayi_bots import expert as module
    from mayi_bots.cards import points

    changed = 0
    for totals, leads in (([100, 150, 140, 160], True), ([150, 100, 140, 160], False)):
        for views in _last_round_views(totals):
            with monkeypatch.context() as m:  # the same bot, never leading enough to dump points
                m.setattr(module, "LEAD", 10**9)
                calm = _discards(ExpertBot(seed=1, budget=None, worlds=2), views)
            expert = _discards(ExpertBot(seed=1, budget=None, worlds=2), views)
            assert len(expert) == len(calm)
            differ = [(e, s) for e, s in zip(expert, calm, strict=True) if e != s]
            if not leads:
                assert differ == []  # behind: the discards of a bot that never dumps points
            # Leading by 20 or more: where it leaves that discard, it throws more points.
            assert all(points(e, "may_i") > points(s, "may_i") for e, s in differ), differ
            changed += len(differ)
    assert changed > 0


def _last_round_draw(hand: str, upcard: str) -> GameView:
    """Seat 2's view of a May I round-7 draw: ``hand`` held, ``upcard`` on offer, the others passed."""
    key = hashlib.blake2b(b"last-round-plan", digest_size=32).digest()
    data = to_json(new_game(get_rules("may_i"), ["a", "b", "c", "d"], key, start_round=7))
    data["hands"][2] = hand
    data.update(discard=upcard, phase="draw", discarder=1, passes=[0, 3])
    return seat_view(from_json(data), 2)


def test_expert_plans_may_is_last_round_as_three_runs_of_four_or_five() -> None:
    from mayi_bots.plans import last_round_plan

    hand = "3H4H5H6HKH9STSJSQS3C4C5C"  # three runs but a club, with a king of hearts to throw
    cards = tuple(sorted(order(hand[i : i + 2]) for i in range(0, len(hand), 2)))
    plan = last_round_plan(cards, 3, 1, 12)
    assert plan.need == 1 and plan.wanted == {order("2C"), order("6C"), 0}
    # strong reads the hearts as one run from 3 to K, six short, so the 9H "helps" it.
    take = ("draw", {"source": "discard"})
    stock = ("draw", {"source": "stock"})
    view = _last_round_draw(hand, "9H")
    assert _answer(mayi_bots.make("strong").decide(view)) == take
    assert _answer(ExpertBot(seed=1, budget=None).decide(view)) == stock
    view = _last_round_draw(hand, "2C")  # the card that puts it out: both take it
    assert _answer(mayi_bots.make("strong").decide(view)) == take
    assert _answer(ExpertBot(seed=1, budget=None).decide(view)) == take


def _cards(text: str) -> tuple[int, ...]:
    return tuple(sorted(order(text[i : i + 2]) for i in range(0, len(text), 2)))


def test_expert_plans_every_may_i_contract_as_melds_of_the_cards_it_holds() -> None:
    from mayi_bots.plans import assess, contract_plan

    # One book and one run: three 8s make the book, but then the run 5H-8H lacks its 8H
    # (two held, both in the book): two cards short with the joker. strong counts the
    # 8H once in each meld and reads one short.
    hand = _cards("JK2C5H7C8C8H8HJDQCQH")
    assert contract_plan(hand, 1, 1, 1).need == 2
    assert assess(hand, 1, 1, False, 1, False).need == 1
    # Every card that lowers the need is wanted, and none that does not.
    for text in ("JK2C5H7C8C8H8HJDQCQH", "AS5H7DTHJDQHQSKSKSKS", "2H3H9H9D9C5S6S8SKDKC"):
        hand = _cards(text)
        for books, runs in ((2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2)):
            plan = contract_plan(hand, books, runs, 1)
            for card in [0, *range(4, 56)]:
                lowers = contract_plan(tuple(sorted((*hand, card))), books, runs, 1).need < plan.need
                assert (card in plan.wanted) == lowers, (text, books, runs, card)


def _go_down_view(round_: int, hand: str, melds: list[list[Any]], down: list[int]) -> tuple[Any, GameView]:
    """The state and seat 2's view of it after its draw in a May I round ``round_``:
    ``hand`` held, ``melds`` on the table, ``down`` the seats down."""
    key = hashlib.blake2b(b"go-down-melds", digest_size=32).digest()
    data = to_json(new_game(get_rules("may_i"), ["a", "b", "c", "d"], key, start_round=round_))
    data["hands"][2] = hand
    data.update(phase="play", turn=2, actor=2, discard="KD", melds=melds, down=down)
    state = from_json(data)
    return state, seat_view(state, 2)


def _go_down(state: Any, answer: Any) -> list[list[str]]:
    """The melds of a go-down answer, which the engine accepts."""
    move = as_legal_move(answer)
    assert move.type == "go_down"
    play(state, 2, move_from_json({"type": move.type, **move.body}))
    return [list(m) for m in move.body["melds"]]


def test_expert_goes_down_with_the_melds_that_leave_it_least_to_shed(monkeypatch: pytest.MonkeyPatch) -> None:
    from mayi_bots import expert as module

    monkeypatch.setattr(module._Planner, "choose_melds", True)
    # Two books of the 2s, 7s or 9s: the 7s left over keep two cards that fit nowhere
    # (the 7C goes on the clubs' run), the 2s three. strong lays down the solver's 7s.
    state, view = _go_down_view(1, "2H2D2S7C7H7S9D9H9SKDKS", [[1, "r", "8C9CTCJC", 8, 0]], [0, 1, 0, 0])
    strong = _go_down(state, mayi_bots.make("strong").decide(view))
    assert sorted(map(sorted, strong)) == [["7C", "7H", "7S"], ["9D", "9H", "9S"]]
    expert = _go_down(state, ExpertBot(seed=1, budget=None).decide(view))
    assert sorted(map(sorted, expert)) == [["2D", "2H", "2S"], ["9D", "9H", "9S"]]
    # A spare joker goes down in a run rather than staying in the hand (50 points) a turn.
    state, view = _go_down_view(3, "3H4H5H6H4D5D6D7D8DJKKS", [], [0, 0, 0, 0])
    assert all("JK" not in m for m in _go_down(state, mayi_bots.make("strong").decide(view)))
    assert ["JK", "4D", "5D", "6D", "7D", "8D"] in _go_down(state, ExpertBot(seed=1, budget=None).decide(view))
    # Off, it goes down as strong does.
    monkeypatch.setattr(module._Planner, "choose_melds", False)
    assert _go_down(state, ExpertBot(seed=1, budget=None).decide(view)) == _go_down(
        state, mayi_bots.make("strong").decide(view)
    )
