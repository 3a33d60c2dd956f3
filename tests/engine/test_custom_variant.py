"""A third contract-rummy game is only a new :class:`Rules` value (STYLE 6).

"Three Step" has three rounds with contracts of its own, its own deal sizes and
scoring, two jokers per meld with two naturals, buys with one penalty card drawn
after the turn player, and going out by discard. It is registered by name, played to
the end by the greedy policy with the invariants checked after every move, and its
states round-trip through JSON by that name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mayi_scenarios import act, acts, discard, down, drawn, lay, of_kind, refused, table

from mayi_bots import policy_makers
from mayi_engine import new_game, pending_claimants
from mayi_engine.cards import parse_cards
from mayi_engine.moves import Claim, DrawStock, Pass
from mayi_engine.rules import VARIANTS, Contract, RoundSpec, Rules, get_rules, register_variant
from mayi_engine.simulate import play_game
from mayi_engine.state import Phase, dumps, loads

THREE_STEP = Rules(
    name="three_step",
    title="Three Step",
    min_players=2,
    max_players=4,
    decks=((2, 1), (4, 2)),
    rounds=(
        RoundSpec(Contract(books=1, runs=0), 7),
        RoundSpec(Contract(books=0, runs=1), 8),
        RoundSpec(Contract(books=1, runs=1), 9),
    ),
    joker_limit=2,
    min_naturals=2,
    distinct_book_ranks=True,
    claim_penalty=1,
    claim_limit=3,
    discarder_may_claim=False,
    penalty_before_draw=False,
    first_upcard_offer=False,
    bury_joker_upcard=True,
    lay_off_on_go_down_turn=True,
    hold_rule=True,
    out_by_discard=True,
    # joker 30; A 11; 2-9 5; 10 J Q K 10.
    scores=(30, 11, 5, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10),
    max_reshuffles=2,
)


@pytest.fixture
def three_step() -> Iterator[Rules]:
    register_variant(THREE_STEP)
    yield THREE_STEP
    VARIANTS.pop(THREE_STEP.name, None)


def test_register_a_custom_variant(three_step: Rules) -> None:
    assert get_rules("three_step") is three_step
    assert get_rules("three_step", {"turn_seconds": 30}).turn_seconds == 30.0
    assert [r.contract.describe() for r in three_step.rounds] == ["1 book", "1 run", "1 book and 1 run"]


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 3)])
def test_the_greedy_policy_plays_a_custom_variant_to_the_end(three_step: Rules, players: int, seed: int) -> None:
    state, actions, problems = play_game(three_step, ["greedy"] * players, bytes([seed]) * 32, players=policy_makers())
    assert problems == []
    assert state.phase is Phase.FINISHED and actions > 0
    assert [r.round for r in state.results] == [1, 2, 3]
    assert len(state.results) == 3
    assert any(r.out >= 0 for r in state.results)  # the policy meets the custom contracts
    assert state.totals == tuple(sum(r.scores[i] for r in state.results) for i in range(players))
    for result in state.results:
        if result.out >= 0:
            assert result.scores[result.out] == 0
    assert loads(dumps(state)).totals == state.totals


def test_a_custom_variant_deals_and_scores_by_its_own_rules(three_step: Rules) -> None:
    s = new_game(three_step, ["A", "B", "C"], bytes(32))
    assert [len(h) for h in s.hands] == [7, 7, 7]
    assert len(s.stock) + len(s.discard) + 21 == 108  # 2 decks for 3 players
    assert three_step.hand_score(parse_cards(["JK", "AS", "9D", "TC"])) == 30 + 11 + 5 + 10
    assert loads(dumps(s)).rules is three_step


def test_a_custom_variant_applies_its_own_rules_in_play(three_step: Rules) -> None:
    # Round 1 (1 book, deal 7): buys take one penalty card after the turn player's draw;
    # a meld holds up to two jokers but keeps two naturals.
    s = table(three_step, 3, hands=["5C 5D JK JK 9S QS KS", "AC"], upcard="2H", stock="4D 6D")
    s, _ = acts(s, (2, Claim()), (1, Pass()))
    s, events = act(s, 0, DrawStock())
    assert drawn(events) == [(0, "4D", False), (2, "6D", True)]
    refused(s, 0, down("5C JK JK"), "illegal_meld", "at least 2 natural cards", "5C JK JK has 1")
    s, events = act(s, 0, down("5C 5D JK JK"))
    assert of_kind(events, "went_down")[0]["data"]["melds"][0]["cards"] == ["5C", "5D", "JK", "JK"]
    refused(s, 0, lay(0, "JK"), "card_not_in_hand", "JK")
    s, _ = act(s, 0, discard("KS"))
    assert s.turn == 1 and pending_claimants(s) == (2,)  # the discarder may not claim
