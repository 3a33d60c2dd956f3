"""May I, rule by rule (RULES-SPEC §3-§7 as May I plays them), as stacked scenarios.

The first-upcard offer, "May I" claims with their penalty card, contracts, one
joker per meld, lay-offs (never on the go-down turn), joker displacement as in the
seed's Leigh and Kayla example, the hold rule, going out by discarding or by laying
down the last card, and round 7's three runs with every card.
"""

from __future__ import annotations

import pytest
from mayi_scenarios import (
    act,
    acts,
    card,
    cards,
    discard,
    down,
    drawn,
    hand_of,
    kinds,
    lay,
    lay_parts,
    of_kind,
    part,
    pass_all,
    refused,
    table,
)

from mayi_engine import legal_moves, pending_claimants
from mayi_engine.cards import card_codes
from mayi_engine.errors import IllegalMoveError
from mayi_engine.melds import RUN, Meld, lay_off_card, lay_off_options
from mayi_engine.moves import Claim, DrawStock, GoDown, LayOff, Pass, TakeDiscard
from mayi_engine.rules import MAY_I
from mayi_engine.state import Phase, State
from mayi_engine.views import player_view


def everybody_passes(s: State) -> State:
    """Nobody takes the first upcard: the first player draws from the stock."""
    for _ in range(s.players):
        s, _ = act(s, s.actor, Pass())
    return s


# ---------------------------------------------------------------------------
# §6 The first upcard of a round


def test_first_upcard_is_offered_to_the_first_player_first() -> None:
    s = table(MAY_I, 3, upcard="9S", stock="4D")
    assert s.phase is Phase.FIRST_OFFER and s.turn == s.actor == 0
    assert legal_moves(s, 0) == (Claim(), Pass()) and legal_moves(s, 1) == legal_moves(s, 2) == ()
    window = player_view(s, 1)["claim_window"]
    assert window["card"] == "9S" and window["pending"] == [0] and window["passes"] == []
    refused(s, 1, Claim(), "not_your_turn", "offered to seat 0")
    refused(s, 2, Pass(), "not_your_turn", "offered to seat 0")
    refused(s, 0, TakeDiscard(), "wrong_phase", "first upcard is being offered")
    refused(s, 0, DrawStock(), "wrong_phase", "first upcard is being offered")


def test_first_player_taking_the_first_upcard_is_their_draw() -> None:
    s = table(MAY_I, 3, upcard="9S", stock="4D")
    stock = s.stock
    s, events = act(s, 0, Claim())
    assert [(e["type"], e["seat"], e["data"]) for e in events] == [
        ("took_upcard", 0, {"card": "9S", "first_upcard": True, "discard_top": None})
    ]
    assert s.phase is Phase.PLAY and s.actor == 0 and len(s.hands[0]) == 11
    assert s.stock == stock and s.discard == ()  # no penalty card; the pile is empty
    s, _ = act(s, 0, discard("9S"))
    assert s.phase is Phase.DRAW and s.turn == 1 and s.upcard == card("9S")


def test_another_player_takes_the_first_upcard_without_penalty_and_discards_at_once() -> None:
    s = table(MAY_I, 3, hands={1: "QD"}, upcard="9S", stock="4D 5D")
    stock = s.stock
    s, _ = act(s, 0, Pass())
    assert s.actor == 1 and player_view(s)["claim_window"]["passes"] == [0]
    s, events = act(s, 1, Claim())
    assert kinds(events) == ["took_upcard"]
    assert s.phase is Phase.FIRST_DISCARD and s.actor == 1 and s.turn == 0
    assert len(s.hands[1]) == 11 and "9S" in hand_of(s, 1) and s.stock == stock
    assert legal_moves(s, 1) == tuple(discard(c) for c in sorted(set(hand_of(s, 1)), key=card))
    refused(s, 1, down("3C 3D 3H", "4C 4D 4H"), "wrong_phase", "discard one card now")
    refused(s, 0, DrawStock(), "not_your_turn", "seat 1's turn")
    refused(s, 2, Claim(), "wrong_phase", "no upcard on offer")
    s, _ = act(s, 1, discard("QD"))
    # The first player's turn starts normally, the new discard on offer.
    assert s.phase is Phase.DRAW and s.turn == s.actor == 0
    assert s.upcard == card("QD") and s.discarder == 1 and len(s.hands[1]) == 10
    assert pending_claimants(s) == (2,)
    refused(s, 1, Claim(), "claim_not_allowed", "may not claim your own discard")
    s, _ = act(s, 2, Claim())
    s, events = act(s, 0, DrawStock())
    assert drawn(events) == [(2, "4D", True), (0, "5D", False)]
    assert "QD" in hand_of(s, 2) and len(s.hands[2]) == 12


def test_the_first_player_may_take_the_discard_of_the_player_who_took_the_first_upcard() -> None:
    s = table(MAY_I, 3, hands={2: "QD"}, upcard="9S")
    s, _ = acts(s, (0, Pass()), (1, Pass()), (2, Claim()), (2, discard("QD")))
    assert s.turn == 0 and s.upcard == card("QD")
    s, events = act(s, 0, TakeDiscard())
    assert kinds(events) == ["took_upcard"] and "QD" in hand_of(s, 0)


def test_nobody_takes_the_first_upcard_so_the_first_player_draws_from_the_stock() -> None:
    s = table(MAY_I, 3, upcard="9S", stock="4D")
    s, _ = acts(s, (0, Pass()), (1, Pass()))
    s, events = act(s, 2, Pass())
    assert [(e["type"], e["seat"]) for e in events] == [("passed", 2), ("drew", 0)]
    assert drawn(events) == [(0, "4D", False)]
    assert s.phase is Phase.PLAY and s.actor == 0 and len(s.hands[0]) == 11
    assert card_codes(s.discard) == ["9S"] and s.upcard is None  # under the next discard


def test_two_players_first_upcard() -> None:
    s = table(MAY_I, 2, hands={1: "QD"}, upcard="9S", stock="4D")
    s, _ = acts(s, (0, Pass()), (1, Claim()), (1, discard("QD")))
    assert s.turn == 0 and pending_claimants(s) == ()  # nobody may claim: the stock is open at once
    s, events = act(s, 0, DrawStock())
    assert drawn(events) == [(0, "4D", False)]


# ---------------------------------------------------------------------------
# §6 "May I": claims, priority, the penalty card, the claim window


def after_first_discard(players: int = 3, now: float = 0.0, **kw) -> State:
    """Round 1: nobody takes the first upcard; seat 0 draws 2S and discards QS."""
    hands = {0: "QS", **kw.pop("hands", {})}
    s = table(MAY_I, players, hands=hands, upcard="9S", stock="2S " + kw.pop("stock", ""), now=now, **kw)
    s = everybody_passes(s)
    s, _ = act(s, 0, discard("QS"), now)
    return s


def test_claim_penalty_card_comes_before_the_turn_players_draw() -> None:
    s = after_first_discard(stock="4D 5D")
    assert s.turn == 1 and pending_claimants(s) == (2,)
    s, events = act(s, 2, Claim())
    assert [(e["type"], e["seat"], e["data"]) for e in events] == [("claimed", 2, {"card": "QS"})]
    s, events = act(s, 1, DrawStock())
    assert kinds(events) == ["claim_won", "drew", "drew"]
    assert events[0]["data"] == {"card": "QS", "penalty": 1, "claimants": [2], "discard_top": "9S"}
    # The claimant's penalty card first (4D), then the player on turn draws (5D).
    assert drawn(events) == [(2, "4D", True), (1, "5D", False)]
    assert "QS" in hand_of(s, 2) and "4D" in hand_of(s, 2) and len(s.hands[2]) == 12
    assert "5D" in hand_of(s, 1) and len(s.hands[1]) == 11
    assert s.phase is Phase.PLAY and s.actor == 1 and s.claims == ()
    assert s.claims_used == (0, 0, 1) and player_view(s)["seats"][2]["claims_left"] is None


@pytest.mark.parametrize("arrival", [(3, 2), (2, 3)])
def test_first_claimant_clockwise_from_the_turn_wins_whatever_the_arrival(arrival) -> None:
    s = after_first_discard(players=4, stock="4D 5D")
    assert s.turn == 1 and pending_claimants(s) == (2, 3)
    s, _ = acts(s, (arrival[0], Claim()), (arrival[1], Claim()))
    before = s.hands[3]
    s, events = act(s, 1, DrawStock())
    won = of_kind(events, "claim_won")[0]
    assert won["seat"] == 2 and won["data"]["claimants"] == list(arrival)
    assert drawn(events) == [(2, "4D", True), (1, "5D", False)]
    assert s.hands[3] == before  # the losing claim costs nothing
    assert s.claims_used == (0, 0, 1, 0)


def test_may_i_has_no_claim_limit() -> None:
    s = after_first_discard(players=3)
    for k in range(4):
        # Seat 2 claims the discard of seat 0 every time round.
        assert s.turn == 1 and pending_claimants(s) == (2,)
        s, _ = act(s, 2, Claim())
        s, _ = act(s, 1, DrawStock())
        s, _ = act(s, 1, discard(hand_of(s, 1)[0]))
        s = pass_all(s)
        s, _ = acts(s, (2, DrawStock()), (2, discard(hand_of(s, 2)[0])))
        s = pass_all(s)
        s, _ = acts(s, (0, DrawStock()), (0, discard(hand_of(s, 0)[0])))
        assert s.claims_used[2] == k + 1
    assert player_view(s)["seats"][2]["claims_used"] == 4


def test_the_stock_draw_waits_for_every_claimant_or_the_window() -> None:
    s = after_first_discard(players=4, now=100.0)
    assert s.claim_closes_at == 115.0 and pending_claimants(s) == (2, 3)
    exc = refused(s, 1, DrawStock(), "claims_open", "claims are still open", "queen of spades", "2, 3", now=105.0)
    assert exc.extra == {"retry_after": 10.0, "closes_at": 115.0}
    assert legal_moves(s, 1, now=105.0) == (TakeDiscard(),)
    assert legal_moves(s, 1, now=115.0) == (TakeDiscard(), DrawStock())
    s2, _ = act(s, 2, Pass(), now=106.0)
    exc = refused(s2, 1, DrawStock(), "claims_open", "3 may still answer", now=107.0)
    assert exc.extra["retry_after"] == 8.0
    # Every eligible player answered: the stock is open at once.
    s3, _ = act(s2, 3, Pass(), now=108.0)
    s3, events = act(s3, 1, DrawStock(), now=108.0)
    assert kinds(events) == ["drew"]
    # Or the window expired: an unanswered claim is a pass.
    _, events = act(s2, 1, DrawStock(), now=115.0)
    assert [(e["type"], e["seat"], e.get("timeout")) for e in events] == [("passed", 3, True), ("drew", 1, None)]


def test_taking_the_discard_voids_every_claim() -> None:
    s = after_first_discard(players=4)
    s, _ = act(s, 3, Claim())
    stock, hand = s.stock, s.hands[3]
    s, events = act(s, 1, TakeDiscard())  # no need to wait for seat 2
    assert [(e["type"], e["data"]) for e in events] == [
        ("took_upcard", {"card": "QS", "voided_claims": [3], "discard_top": "9S"})
    ]
    assert s.stock == stock and s.hands[3] == hand and s.claims_used == (0,) * 4
    assert "QS" in hand_of(s, 1) and s.held == card("QS")


def test_claim_refusals() -> None:
    s = after_first_discard(players=3)
    refused(s, 0, Claim(), "claim_not_allowed", "may not claim your own discard")
    refused(s, 0, Pass(), "claim_not_allowed", "may not claim your own discard")
    assert legal_moves(s, 0) == ()
    refused(s, 1, Claim(), "claim_not_allowed", "you are on turn", "draw from the discard pile")
    s, _ = act(s, 2, Claim())
    refused(s, 2, Claim(), "claim_not_allowed", "already answered")
    refused(s, 2, Pass(), "claim_not_allowed", "already answered")
    s, _ = act(s, 1, DrawStock())
    refused(s, 2, Claim(), "claim_not_allowed", "claim window closed when seat 1 drew")


def test_cards_gained_out_of_turn_change_nothing_else() -> None:
    s = after_first_discard(players=3)
    s, _ = acts(s, (2, Claim()), (1, DrawStock()))
    assert s.turn == s.actor == 1 and s.phase is Phase.PLAY
    assert s.held == -1  # the player on turn drew from the stock


# ---------------------------------------------------------------------------
# §3 Contracts: going down with exactly the contract


def draw_first(hand: str, round: int = 1, upcard: str = "KD") -> State:
    """Seat ``(round - 1) % 3`` holds ``hand`` and has taken the first upcard ``upcard``."""
    first = (round - 1) % 3
    s = table(MAY_I, 3, round=round, hands={first: hand}, upcard=upcard)
    s, _ = act(s, first, Claim())
    return s


def test_going_down_needs_exactly_the_contract_melds() -> None:
    s = draw_first("3C 3D 3H 4C 4D 4H 5C 5D 5H 9S")
    refused(s, 0, down("3C 3D 3H", "4C 4D 4H", "5C 5D 5H"), "illegal_meld", "2 books", "exactly 2 melds, not 3")
    refused(s, 0, down("3C 3D 3H"), "illegal_meld", "round 1's contract is 2 books", "not 1")
    s, events = act(s, 0, down("3C 3D 3H", "4C 4D 4H"))
    went = of_kind(events, "went_down")[0]["data"]
    assert went["contract"]["text"] == "2 books" and [m["cards"] for m in went["melds"]] == [
        ["3C", "3D", "3H"],
        ["4C", "4D", "4H"],
    ]
    assert s.down == (True, False, False) and s.went_down and len(s.hands[0]) == 5
    refused(s, 0, down("5C 5D 5H", "5C 5D 5H"), "illegal_meld", "down already")


def test_going_down_with_the_wrong_kinds_of_meld() -> None:
    s = draw_first("3C 3D 3H 4C 4D 4H 5H 6H 7H 8H", round=2)
    refused(s, 1, down("3C 3D 3H", "4C 4D 4H"), "illegal_meld", "1 book and 1 run", "you laid down 2 books and 0 runs")
    refused(s, 1, down("5H 6H 7H 8H", "3C 3D 3H 4C"), "illegal_meld", "3C 3D 3H 4C", "mixes")
    s, _ = act(s, 1, down("3C 3D 3H", "5H 6H 7H 8H"))
    assert [m.kind for m in s.melds] == ["book", "run"]


def test_melds_may_be_longer_than_their_minimum() -> None:
    s = draw_first("3C 3D 3H 3S 3C 4H 5H 6H 7H 8H", round=2)
    s, _ = act(s, 1, down("3C 3D 3H 3S 3C", "4H 5H 6H 7H 8H"))
    assert [len(m.cards) for m in s.melds] == [5, 5]


def test_may_i_books_of_one_contract_may_share_a_rank() -> None:
    s = draw_first("7C 7D 7H 7S 7C 7D 2S 4S 9D JH")
    s, _ = act(s, 0, down("7C 7D 7H", "7S 7C 7D"))
    assert [m.low for m in s.melds] == [7, 7]


def test_runs_of_one_contract_must_be_of_different_suits() -> None:
    s = draw_first("2H 3H 4H 5H 7H 8H 9H TH 7S 8S", round=3)
    refused(s, 2, down("2H 3H 4H 5H", "7H 8H 9H TH"), "illegal_meld", "2 runs", "different suits")


@pytest.mark.parametrize(
    ("run", "ok", "words"),
    [
        ("AH 2H 3H 4H", True, ()),
        ("JH QH KH AH", True, ()),
        ("TH JH QH KH AH", True, ()),
        ("KH AH 2H 3H", False, ("KH AH 2H 3H", "never wrap", "high or low")),
        ("QH KH AH JK", False, ("QH KH AH JK", "never wrap", "high or low")),
        ("JK AH 2H 3H", False, ("JK AH 2H 3H", "never wrap")),
        ("AH 2H 3H", False, ("4 or more", "only 3")),
        ("2H 3H 4H 5S", False, ("mixes suits",)),
        ("5H 4H 3H 2H", False, ("low to high",)),
        ("2H 3H 5H 6H", False, ("a joker where the missing card goes",)),
    ],
)
def test_runs_and_aces(run: str, ok: bool, words: tuple[str, ...]) -> None:
    book = "9C 9D 9S"
    s = draw_first(f"{book} {run}", round=2, upcard="8D")
    move = down(book, run)
    if ok:
        s, _ = act(s, 1, move)
        assert s.melds[1].kind == RUN
    else:
        refused(s, 1, move, "illegal_meld", *words)


# ---------------------------------------------------------------------------
# §4 Jokers: at most one in any meld, including melds later extended


def test_may_i_allows_one_joker_in_a_meld() -> None:
    s = draw_first("5C 5D JK JK 6C 6D 6H 4H 7H 2S")
    refused(s, 0, down("5C 5D JK JK", "6C 6D 6H"), "illegal_meld", "at most 1 joker", "5C 5D JK JK")
    s2 = draw_first("4H JK JK 7H 9C 9D 9H 2S 3D 5C", round=2)
    refused(s2, 1, down("9C 9D 9H", "4H JK JK 7H"), "illegal_meld", "at most 1 joker", "has 2")
    s, _ = act(s, 0, down("5C 5D JK", "6C 6D 6H"))
    assert s.melds[0].jokers == 1 and player_view(s)["melds"][0]["jokers"] == [{"index": 2, "stands_for": "5"}]


# Lay-offs scenario, round 1 of three players:
#   seat 0 takes the first upcard KD, goes down with 5C 5D JK and 6C 6D 6H, discards KD;
#   seat 1 draws 7D, goes down with 9C 9D 9H and TC TD TH, discards 7D;
#   seat 2 draws 8S and discards it; then seat 0 draws 2D, seat 1 draws 3D.
SEAT_0 = "5C 5D JK 6C 6D 6H 5S 9S 2H 4H"
SEAT_1 = "9C 9D 9H TC TD TH 5H JK 3S 4S"


def lay_offs_table() -> State:
    return table(MAY_I, 3, hands=[SEAT_0, SEAT_1, "QC"], upcard="KD", stock="7D 8S 2D 3D QD")


def seats_0_and_1_down() -> State:
    """Seats 0 and 1 have gone down (melds 0-1 and 2-3) and seat 2 has played a turn:
    seat 0 is to draw again."""
    s = lay_offs_table()
    s, _ = acts(s, (0, Claim()), (0, down("5C 5D JK", "6C 6D 6H")), (0, discard("KD")))
    s = pass_all(s)
    s, _ = acts(s, (1, DrawStock()), (1, down("9C 9D 9H", "TC TD TH")), (1, discard("7D")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard("8S")))
    s = pass_all(s)
    return s


def test_lay_offs_only_when_down_and_never_on_the_go_down_turn() -> None:
    s = lay_offs_table()
    s, _ = act(s, 0, Claim())
    refused(
        s,
        0,
        down("5C 5D JK", "6C 6D 6H", lay=[part(0, "5S")]),
        "illegal_lay_off",
        "not lay off on the turn you go down",
    )
    s, _ = act(s, 0, down("5C 5D JK", "6C 6D 6H"))
    refused(s, 0, lay(0, "5S"), "illegal_lay_off", "May I", "not lay off on the turn you go down", "next turn")
    assert not any(isinstance(m, LayOff) for m in legal_moves(s, 0))
    s, _ = act(s, 0, discard("KD"))
    s = pass_all(s)
    s, _ = act(s, 1, DrawStock())
    refused(s, 1, lay(0, "5H"), "illegal_lay_off", "only a player who is down may lay off")
    assert not any(isinstance(m, LayOff) for m in legal_moves(s, 1))
    s, _ = act(s, 1, down("9C 9D 9H", "TC TD TH"))
    refused(s, 1, lay(0, "5H"), "illegal_lay_off", "not lay off on the turn you go down")
    s, _ = act(s, 1, discard("7D"))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard("8S")))
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    # Seat 0, down since its last turn: lay-offs on its own meld and on seat 1's.
    legal = legal_moves(s, 0)
    assert lay(0, "5S") in legal and lay(2, "9S") in legal
    s, events = act(s, 0, lay_parts(part(0, "5S"), part(2, "9S")))
    assert of_kind(events, "laid_off")[0]["data"]["lay_offs"] == [
        {"meld": 0, "cards": ["5S"]},
        {"meld": 2, "cards": ["9S"]},
    ]
    assert card_codes(s.melds[0].cards) == ["5C", "5D", "5S", "JK"]
    assert card_codes(s.melds[2].cards) == ["9C", "9D", "9H", "9S"]
    assert s.melds[2].owner == 1 and len(s.hands[0]) == 3


def test_may_i_joker_limit_holds_for_lay_offs() -> None:
    s = seats_0_and_1_down()
    s, _ = acts(s, (0, DrawStock()), (0, discard("2D")))
    s = pass_all(s)
    s, _ = act(s, 1, DrawStock())
    refused(s, 1, lay(0, "JK"), "illegal_lay_off", "at most 1 joker", "meld 0 (5C 5D JK)")
    assert lay(0, "JK") not in legal_moves(s, 1) and lay(1, "JK") in legal_moves(s, 1)
    # All or nothing: a request with one illegal part changes nothing.
    refused(s, 1, lay_parts(part(0, "5H"), part(0, "JK")), "illegal_lay_off", "at most 1 joker")
    s, _ = act(s, 1, lay_parts(part(0, "5H"), part(1, "JK")))
    assert card_codes(s.melds[1].cards) == ["6C", "6D", "6H", "JK"]
    assert s.melds[0].jokers == 1


def test_lay_off_refusals_name_the_card_and_the_meld() -> None:
    s = seats_0_and_1_down()
    s, _ = act(s, 0, DrawStock())
    refused(s, 0, lay(1, "2H"), "illegal_lay_off", "two of hearts", "meld 1 (6C 6D 6H)", "its own rank")
    refused(s, 0, lay(7, "2H"), "illegal_lay_off", "no meld 7")
    refused(s, 0, lay(1, "6S"), "card_not_in_hand", "6S")


# ---------------------------------------------------------------------------
# §4 Joker displacement: the seed's example, played out
#
# Round 2, seats Max (0), Leigh (1, first), Kayla (2).
#   Leigh takes the first upcard KD and discards it.
#   Kayla draws 4S, goes down with 5C 5D 5S and JC QC KC AC, discards 4S.
#   Max draws 6S and discards it.
#   Leigh draws 2S, goes down with 3C 3D 3S and 3H 4H JK 6H, discards QS (or another card).
#   Kayla draws 5H from the stock: her turn in the seed.

LEIGH = "3C 3D 3S 3H 4H JK 6H QS 9D TC"
KAYLA = "5C 5D 5S JC QC KC AC 8H 7S 9S"


def leigh_and_kayla(leigh_discards: str = "QS", kayla: str = KAYLA, kayla_takes_discard: bool = False) -> State:
    s = table(
        MAY_I, ["Max", "Leigh", "Kayla"], round=2, hands={1: LEIGH, 2: kayla}, upcard="KD", stock="4S 6S 2S 5H 7C"
    )
    s, _ = acts(s, (1, Claim()), (1, discard("KD")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, down("5C 5D 5S", "JC QC KC AC")), (2, discard("4S")))
    s = pass_all(s)
    s, _ = acts(s, (0, DrawStock()), (0, discard("6S")))
    s = pass_all(s)
    s, _ = acts(s, (1, DrawStock()), (1, down("3C 3D 3S", "3H 4H JK 6H")), (1, discard(leigh_discards)))
    assert card_codes(s.melds[3].cards) == ["3H", "4H", "JK", "6H"]
    assert player_view(s)["melds"][3]["jokers"] == [{"index": 2, "stands_for": "5H"}]
    s = pass_all(s)
    s, _ = act(s, 2, TakeDiscard() if kayla_takes_discard else DrawStock())
    return s


def test_the_seed_example_joker_moves_high_and_the_eight_fits() -> None:
    s = leigh_and_kayla()
    assert "5H" in hand_of(s, 2)
    legal = legal_moves(s, 2)
    assert lay(3, "5H", "high") in legal and lay(3, "5H", "low") in legal
    s, events = act(s, 2, lay(3, "5H", "high"))
    assert card_codes(s.melds[3].cards) == ["3H", "4H", "5H", "6H", "JK"]
    view = player_view(s)["melds"][3]
    assert view["owner"] == 1 and view["jokers"] == [{"index": 4, "stands_for": "7H"}]
    assert of_kind(events, "laid_off")[0]["data"]["lay_offs"] == [{"meld": 3, "cards": ["5H"], "joker_to": "high"}]
    s, _ = act(s, 2, lay(3, "8H"))
    assert card_codes(s.melds[3].cards) == ["3H", "4H", "5H", "6H", "JK", "8H"]


def test_the_seed_example_in_one_request() -> None:
    s = leigh_and_kayla()
    s, _ = act(s, 2, lay_parts(part(3, "5H", "high"), part(3, "8H")))
    assert card_codes(s.melds[3].cards) == ["3H", "4H", "5H", "6H", "JK", "8H"]


def test_the_seed_example_joker_moved_low_leaves_no_room_for_the_eight() -> None:
    s = leigh_and_kayla()
    refused(s, 2, lay_parts(part(3, "5H", "low"), part(3, "8H")), "illegal_lay_off", "eight of hearts", "does not fit")
    s, _ = act(s, 2, lay(3, "5H", "low"))
    assert card_codes(s.melds[3].cards) == ["JK", "3H", "4H", "5H", "6H"]
    assert player_view(s)["melds"][3]["jokers"] == [{"index": 0, "stands_for": "2H"}]
    refused(s, 2, lay(3, "8H"), "illegal_lay_off", "eight of hearts", "meld 3 (JK 3H 4H 5H 6H)", "does not fit")


def test_the_displacing_player_must_choose_the_end() -> None:
    s = leigh_and_kayla()
    refused(s, 2, lay(3, "5H"), "illegal_lay_off", "choose where the displaced joker goes", "high", "low")


def test_jokers_never_return_to_a_hand() -> None:
    s = leigh_and_kayla()
    s, _ = act(s, 2, lay(3, "5H", "high"))
    assert "JK" not in hand_of(s, 2) and s.melds[3].jokers == 1


def test_an_end_that_breaks_the_ace_rule_is_not_offered() -> None:
    run = Meld(0, 1, RUN, cards("JK QH KH AH"), 11, 2)  # the joker stands for JH
    assert lay_off_options(run, card("JH"), MAY_I) == ["low"]
    assert card_codes(lay_off_card(run, card("JH"), None, MAY_I).cards) == ["JK", "JH", "QH", "KH", "AH"]
    run = Meld(0, 1, RUN, cards("JK 2H 3H 4H"), 1, 2)  # the joker stands for AH (low)
    assert lay_off_options(run, card("AH"), MAY_I) == ["high"]


def test_an_end_that_breaks_the_ace_rule_is_refused_in_play() -> None:
    # Seat 1 goes down with 9S 9C 9D and JK QH KH AH (the joker stands for JH); seat 0 lays off JH.
    s = table(
        MAY_I,
        3,
        round=2,
        hands={1: "9S 9C 9D JK QH KH AH 2C 3D 4S", 0: "7C 7D 7H 5S 6S 8S 2D JH TD 4C"},
        upcard="KD",
        stock="TS 7S 5D 6D 3C",
    )
    s, _ = acts(s, (1, Claim()), (1, down("9S 9C 9D", "JK QH KH AH")), (1, discard("KD")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard(hand_of(s, 2)[0])))
    s = pass_all(s)
    s, _ = acts(s, (0, DrawStock()), (0, down("7C 7D 7H", "5S 6S 7S 8S")), (0, discard("2D")))
    s = pass_all(s)
    s, _ = acts(s, (1, DrawStock()), (1, discard("2C")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard(hand_of(s, 2)[0])))
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    refused(s, 0, lay(1, "JH", "high"), "illegal_lay_off", "cannot go to the high end", "high or low, never both")
    lays = [m for m in legal_moves(s, 0) if isinstance(m, LayOff) and m.parts[0].meld == 1]
    assert lays == [lay(1, "JH", "low")]
    s, _ = act(s, 0, lay(1, "JH"))  # one end only: no choice needed
    assert card_codes(s.melds[1].cards) == ["JK", "JH", "QH", "KH", "AH"]
    assert player_view(s)["melds"][1]["jokers"] == [{"index": 0, "stands_for": "TH"}]


def test_a_displacement_with_no_end_open_is_illegal() -> None:
    # A full run (13 cards, ace low) has no end for the displaced joker.
    run = Meld(0, 0, RUN, cards("AH 2H 3H 4H JK 6H 7H 8H 9H TH JH QH KH"), 1, 2)
    assert lay_off_options(run, card("5H"), MAY_I) == []
    with pytest.raises(IllegalMoveError) as info:
        lay_off_card(run, card("5H"), "high", MAY_I)
    assert info.value.code == "illegal_lay_off" and "neither end" in str(info.value)


# ---------------------------------------------------------------------------
# §5 The hold rule


def test_hold_rule_a_discard_taken_cannot_be_laid_off_that_turn() -> None:
    # Leigh discards TC, which fits Kayla's JC QC KC AC; Kayla takes it.
    s = leigh_and_kayla(leigh_discards="TC", kayla_takes_discard=True)
    assert s.held == card("TC") and player_view(s, 2)["held"] == "TC"
    refused(s, 2, lay(1, "TC"), "illegal_lay_off", "hold rule", "ten of clubs", "next turn")
    assert lay(1, "TC") not in legal_moves(s, 2)
    s, _ = act(s, 2, discard("7S"))
    s = pass_all(s)
    s, _ = acts(s, (0, DrawStock()), (0, discard(hand_of(s, 0)[0])))
    s = pass_all(s)
    s, _ = acts(s, (1, DrawStock()), (1, discard(hand_of(s, 1)[0])))
    s = pass_all(s)
    s, _ = act(s, 2, DrawStock())
    assert lay(1, "TC") in legal_moves(s, 2)  # from the next turn on it can
    s, _ = act(s, 2, lay(1, "TC"))
    assert card_codes(s.melds[1].cards) == ["TC", "JC", "QC", "KC", "AC"]


def test_hold_rule_keeps_back_only_the_card_taken() -> None:
    # Kayla already held a ten of clubs: she may lay that one off, keeping the one taken.
    s = leigh_and_kayla(leigh_discards="TC", kayla=KAYLA.replace("9S", "TC"), kayla_takes_discard=True)
    assert hand_of(s, 2).count("TC") == 2
    refused(s, 2, lay(1, "TC TC"), "illegal_lay_off", "hold rule", "ten of clubs")
    s, _ = act(s, 2, lay(1, "TC"))
    assert hand_of(s, 2).count("TC") == 1


def test_a_discard_taken_may_go_down_at_once() -> None:
    # The hold rule is about lay-offs only: going down with the card taken is fine.
    s = table(MAY_I, 3, hands={0: "9S", 1: "3C 3D 3H 9C 9D 2S 4S 6S QH KH"}, upcard="JD")
    s = everybody_passes(s)
    s, _ = acts(s, (0, discard("9S")), (1, TakeDiscard()), (1, down("3C 3D 3H", "9C 9D 9S")))
    assert s.down[1] and s.held == card("9S")


# ---------------------------------------------------------------------------
# §7 Going out


# Seat 0 goes down at once with 5C 5D 5H 5S and 6C 6D 6H 6S, keeping two cards.
def going_out_table(keep: str, draw: str) -> State:
    s = table(MAY_I, 3, hands={0: f"5C 5D 5H 5S 6C 6D 6H 6S {keep}"}, upcard="QS", stock=f"2D 3D {draw}")
    s, _ = acts(s, (0, Claim()), (0, down("5C 5D 5H 5S", "6C 6D 6H 6S")), (0, discard("QS")))
    s = pass_all(s)
    s, _ = acts(s, (1, DrawStock()), (1, discard("2D")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard("3D")))
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    return s


def test_going_out_by_discarding_the_last_card() -> None:
    s = going_out_table(keep="5C KD", draw="6C")
    s, events = act(s, 0, lay_parts(part(0, "5C"), part(1, "6C")))
    assert hand_of(s, 0) == ["KD"]
    s, events = act(s, 0, discard("KD"))
    assert kinds(events)[:2] == ["discarded", "round_ended"]
    ended = events[1]["data"]
    assert ended["out"] == 0 and ended["scores"][0] == 0 and s.round == 2


def test_going_out_by_laying_down_the_last_card() -> None:
    s = going_out_table(keep="5C 6C", draw="6D")
    s, events = act(s, 0, lay_parts(part(0, "5C"), part(1, "6C 6D")))
    assert "discarded" not in kinds(events)
    ended = of_kind(events, "round_ended")[0]["data"]
    assert ended["out"] == 0 and ended["scores"][0] == 0 and s.round == 2


def test_may_i_may_lay_off_down_to_one_card() -> None:
    s = going_out_table(keep="5C KD", draw="6C")
    s, _ = act(s, 0, lay(0, "5C"))
    s, _ = act(s, 0, lay(1, "6C"))
    assert hand_of(s, 0) == ["KD"] and s.phase is Phase.PLAY


def test_going_out_by_going_down_with_every_card() -> None:
    s = table(MAY_I, 3, hands={0: "5C 5D 5H 5S 5C 6C 6D 6H 6S 6D"}, upcard="6C")
    s, _ = act(s, 0, Claim())
    s, events = act(s, 0, down("5C 5D 5H 5S 5C", "6C 6D 6H 6S 6D 6C"))
    assert of_kind(events, "round_ended")[0]["data"]["out"] == 0


# ---------------------------------------------------------------------------
# §7 Round 7: three runs using every card, no going down early

ROUND_7 = "AC 2C 3C 4C 2D 3D 4D 5D 2H 3H 4H 5H"


def test_round_7_three_runs_with_every_card() -> None:
    s = table(MAY_I, 3, round=7, hands={0: ROUND_7}, upcard="5C")
    s, _ = act(s, 0, Claim())
    s, events = act(s, 0, down("AC 2C 3C 4C 5C", "2D 3D 4D 5D", "2H 3H 4H 5H"))
    assert of_kind(events, "went_down")[0]["data"]["contract"]["text"] == "3 runs, using all your cards"
    assert of_kind(events, "round_ended")[0]["data"]["out"] == 0


def test_round_7_all_but_one_then_discarded() -> None:
    s = table(MAY_I, 3, round=7, hands={0: ROUND_7}, upcard="KS")
    s, _ = act(s, 0, Claim())
    legal = [m for m in legal_moves(s, 0) if isinstance(m, GoDown)]
    assert len(legal) == 1
    s, _ = act(s, 0, down("AC 2C 3C 4C", "2D 3D 4D 5D", "2H 3H 4H 5H"))
    assert hand_of(s, 0) == ["KS"] and s.phase is Phase.PLAY
    s, events = act(s, 0, discard("KS"))
    assert kinds(events)[:2] == ["discarded", "round_ended"]
    assert events[1]["data"]["out"] == 0 and s.phase is Phase.FINISHED


def test_round_7_runs_must_be_of_different_suits() -> None:
    s = table(MAY_I, 3, round=7, hands={0: "AC 2C 3C 4C 6C 7C 8C 9C 2H 3H 4H 5H"}, upcard="KS")
    s, _ = act(s, 0, Claim())
    refused(s, 0, down("AC 2C 3C 4C", "6C 7C 8C 9C", "2H 3H 4H 5H"), "illegal_meld", "different suits")


def test_round_7_no_going_down_early() -> None:
    # Seat 2 claims seat 0's discard (2S, with the penalty card 6D) and draws 6H on its turn:
    # 15 cards. Three runs of four would leave three: refused. All but one: allowed.
    hand = "AC 2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H"
    s = table(MAY_I, 3, round=7, hands={0: "2S", 2: hand}, upcard="KS", stock="9H 6D TS 5H")
    s = everybody_passes(s)
    s, _ = act(s, 0, discard("2S"))
    s, _ = acts(s, (2, Claim()), (1, DrawStock()), (1, discard("TS")))
    s = pass_all(s)
    s, _ = act(s, 2, DrawStock())
    assert len(s.hands[2]) == 15
    refused(
        s,
        2,
        down("AC 2C 3C 4C", "2D 3D 4D 5D", "2H 3H 4H 5H"),
        "illegal_meld",
        "round 7's contract is 3 runs, using all your cards",
        "only by going out",
        "keep 3 cards",
    )
    s, _ = act(s, 2, down("AC 2C 3C 4C 5C", "2D 3D 4D 5D 6D", "2H 3H 4H 5H"))
    assert hand_of(s, 2) == ["2S"]
    refused(s, 2, lay(0, "2S"), "illegal_lay_off", "not lay off on the turn you go down")
    s, events = act(s, 2, discard("2S"))
    assert of_kind(events, "round_ended")[0]["data"]["out"] == 2


def test_round_7_going_down_without_all_cards_is_not_a_legal_move() -> None:
    s = table(MAY_I, 3, round=7, hands={0: "AC 2C 3C 4C 2D 3D 4D 5D 2H 3H 4H QS"}, upcard="KS")
    s, _ = act(s, 0, Claim())
    assert not any(isinstance(m, GoDown) for m in legal_moves(s, 0))
    refused(s, 0, down("AC 2C 3C 4C", "2D 3D 4D 5D", "2H 3H 4H"), "illegal_meld", "only 3")
