"""The reference bots of ``mayi_bots`` in-process: whole games of both variants with no
illegal move and no exception, a short seeded tournament with the engine's invariants
checked after every move, and ``mayi simulate --bots`` with every name. (Their strength
is measured by ``bench/bots.py``, never asserted here.)"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import mayi_bots
from mayi_bots.plans import assess
from mayi_engine.rules import get_rules
from mayi_engine.simulate import simulate
from mayi_sdk import Bot, play_local
from mayi_service.cli import main

VARIANTS = ["may_i", "shanghai"]


def test_every_name_makes_a_fresh_sdk_bot() -> None:
    assert mayi_bots.NAMES == ("random", "greedy", "strong", "expert")
    for name in mayi_bots.NAMES:
        one, two = mayi_bots.make(name), mayi_bots.make(name, seed=3)
        assert isinstance(one, Bot) and one is not two and one.name == name
    with pytest.raises(ValueError, match="unknown bot 'clever' \\(known: random, greedy, strong, expert\\)"):
        mayi_bots.make("clever")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ["random", "greedy", "strong"])
def test_each_bot_finishes_a_whole_game_with_no_illegal_move(name: str, variant: str) -> None:
    opponents = {"may_i": ["strong", "greedy", "random"], "shanghai": ["greedy", "strong", "random"]}[variant]
    game = play_local(mayi_bots.make(name, seed=5), opponents, variant, seed=f"{name}-{variant}")
    assert game.view.status == "finished"
    assert game.rounds == len(get_rules(variant).rounds)
    assert game.failures == [0, 0, 0, 0], game.errors  # no decide raised, no answer was refused
    assert game.errors == []
    assert len(game.totals) == len(game.places) == 4 and min(game.places) == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_seeded_tournament_plays_legal_complete_games(variant: str) -> None:
    bots = ["strong", "greedy", "random", "strong"]
    runs = [simulate(get_rules(variant), bots, games=2, seed=11, players=mayi_bots.policy_makers()) for _ in range(2)]
    summary = runs[0]
    # bot_policy raises on an answer that is not a legal move: the games got here legally.
    assert summary.games == 2 and summary.violations == 0, summary.violation_examples
    assert summary.rounds == 2 * len(get_rules(variant).rounds)
    assert sum(summary.wins) - sum(summary.shared_wins) + summary.shared_games == 2
    assert runs[0].as_dict() | {"seconds": 0} == runs[1].as_dict() | {"seconds": 0}  # seeded: the same games


def test_mayi_simulate_takes_every_reference_bot_by_name() -> None:
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            "--variant",
            "shanghai",
            "--games",
            "1",
            "--seed",
            "2",
            "--bots",
            "random,greedy,strong",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data["bots"]) == {"0:random", "1:greedy", "2:strong", "3:random"}
    assert data["invariant_violations"] == 0 and data["games"] == 1


def test_the_strong_bots_plan_counts_missing_cards() -> None:
    def cards(*codes: str) -> tuple[int, ...]:
        from mayi_sdk.cards import order

        return tuple(sorted(order(c) for c in codes))

    # Two books: 7s complete, Ks one short -> 1 missing; any king (or a joker) lowers it.
    plan = assess(cards("7C", "7D", "7H", "KS", "KD", "2C"), 2, 0, False, 1, False)
    assert plan.need == 1
    assert set(cards("KC", "KH", "JK")) <= plan.wanted and not set(cards("7S", "2D")) & plan.wanted
    # A joker fills the gap.
    assert assess(cards("7C", "7D", "7H", "KS", "KD", "JK"), 2, 0, False, 1, False).need == 0
    # A run of four: 5-8 of hearts with the 7 missing.
    assert assess(cards("5H", "6H", "8H", "QC"), 0, 1, False, 1, False).need == 1
    # May I's last round: every card in three runs; a stray card of a fourth suit may be the last discard.
    assert (
        assess(
            cards("2C", "3C", "4C", "5C", "6D", "7D", "8D", "9D", "TH", "JH", "QH", "KH", "4S"), 0, 3, True, 1, False
        ).need
        == 0
    )


def test_strong_lengthens_its_melds_when_it_goes_down_and_keeps_books_books() -> None:
    from mayi_bots.strong import StrongBot
    from mayi_sdk import GameView, LegalMove

    def view(hand: list[str], books: int, runs: int) -> GameView:
        contract = {"books": books, "runs": runs, "all_cards": False, "text": ""}
        return GameView.from_json(
            {
                "id": "g",
                "version": 1,
                "status": "playing",
                "variant": "shanghai",
                "options": {},
                "seats": [],
                "round": {"number": 1, "of": 8, "dealer": 3, "first": 0, "contract": contract},
                "hand": hand,
                "legal": [],
            }
        )

    # Found by bench/bots.py: QC JK JK with JC in front reads as a run (J Q K A of clubs),
    # which a 2-book contract refuses. A book takes only cards of its rank.
    hand = ["JK", "JK", "3H", "5C", "JC", "QC", "QD", "KD", "KD", "KH", "KS", "9S"]
    listed = LegalMove("go_down", {"melds": [["QC", "JK", "JK"], ["KD", "KD", "KH"]]})
    answer = StrongBot()._longer(view(hand, 2, 0), listed)
    assert answer == {"type": "go_down", "melds": [["QC", "JK", "JK", "QD"], ["KD", "KD", "KH", "KS"]]}
    # A run grows at either end with its suit's next cards.
    hand = ["4H", "5H", "6H", "7H", "8H", "3H", "2C", "9C", "KD"]
    listed = LegalMove("go_down", {"melds": [["4H", "5H", "6H", "7H"]]})
    answer = StrongBot()._longer(view(hand, 0, 1), listed)
    assert answer == {"type": "go_down", "melds": [["3H", "4H", "5H", "6H", "7H", "8H"]]}
