"""Shanghai, rule by rule (RULES-SPEC §3-§7 as Shanghai plays them), as stacked scenarios.

Buying with two penalty cards after the turn player's draw, two buys per round,
the discarder's lowest-priority buy-back, books of different ranks, unlimited
jokers that keep a natural, lay-offs on the go-down turn, no hold rule, never
going out by discard (nor keeping a single card), and the house options.
"""

from __future__ import annotations

import pytest
from mayi_scenarios import (
    act,
    acts,
    card,
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
    with_stock,
)

from mayi_engine import legal_moves, pending_claimants
from mayi_engine.cards import JOKER, card_codes
from mayi_engine.errors import ConfigError
from mayi_engine.moves import Claim, Discard, DrawStock, GoDown, LayOff, Pass, TakeDiscard
from mayi_engine.rules import SHANGHAI
from mayi_engine.state import Phase, State
from mayi_engine.views import player_view

# ---------------------------------------------------------------------------
# §6 The first upcard: a plain choice, and buying as after any discard


def test_the_first_player_chooses_between_the_upcard_and_the_stock() -> None:
    s = table(SHANGHAI, 3, upcard="9S", stock="4D")
    assert s.phase is Phase.DRAW and s.turn == s.actor == 0 and s.discarder == -1
    assert pending_claimants(s) == (1, 2)
    assert legal_moves(s, 0) == (TakeDiscard(),)
    assert legal_moves(s, 0, now=15.0) == (TakeDiscard(), DrawStock())
    taken, events = act(s, 0, TakeDiscard())
    assert kinds(events) == ["took_upcard"] and "9S" in hand_of(taken, 0) and taken.phase is Phase.PLAY
    s = pass_all(s)
    s, events = act(s, 0, DrawStock())
    assert drawn(events) == [(0, "4D", False)] and card_codes(s.discard) == ["9S"]


def test_buying_the_first_upcard() -> None:
    s = table(SHANGHAI, 3, upcard="9S", stock="4D 5D 6D 7D")
    s, _ = acts(s, (2, Claim()), (1, Pass()))
    window = player_view(s, 0)["claim_window"]
    assert window["claims"] == [2] and window["passes"] == [1] and window["discarder"] is None
    s, events = act(s, 0, DrawStock())
    assert kinds(events) == ["claim_won", "drew", "drew", "drew"]
    assert events[0]["data"] == {"card": "9S", "penalty": 2, "claimants": [2], "discard_top": None}
    # The player on turn draws first, then the buyer's two.
    assert drawn(events) == [(0, "4D", False), (2, "5D", True), (2, "6D", True)]
    assert len(s.hands[0]) == 11 and len(s.hands[2]) == 13
    assert {"9S", "5D", "6D"} <= set(hand_of(s, 2))
    assert s.claims_used == (0, 0, 1) and player_view(s)["seats"][2]["claims_left"] == 1
    assert s.discard == ()


# ---------------------------------------------------------------------------
# §6 Buying after a discard


def after_first_discard(players: int = 3, **kw) -> State:
    """Seat 0 draws 2S from the stock and discards QS."""
    hands = {0: "QS", **kw.pop("hands", {})}
    s = table(SHANGHAI, players, hands=hands, upcard="9S", stock="2S " + kw.pop("stock", ""), **kw)
    s = pass_all(s)
    s, _ = acts(s, (0, DrawStock()), (0, discard("QS")))
    return s


def test_penalty_cards_come_after_the_turn_players_draw() -> None:
    s = after_first_discard(stock="4D 5D 6D")
    assert s.turn == 1 and pending_claimants(s) == (0, 2)  # the discarder may buy it back
    s, events = acts(s, (2, Claim()), (0, Pass()), (1, DrawStock()))
    assert drawn(events) == [(1, "4D", False), (2, "5D", True), (2, "6D", True)]


@pytest.mark.parametrize(("arrival", "winner"), [((3, 2), 2), ((2, 3), 2), ((0, 3), 3), ((3, 0), 3), ((0,), 0)])
def test_buy_priority_is_clockwise_from_the_turn_and_the_discarder_is_last(arrival, winner) -> None:
    s = after_first_discard(players=4, stock="4D 5D 6D")
    assert s.turn == 1 and pending_claimants(s) == (0, 2, 3)
    for seat in arrival:
        s, _ = act(s, seat, Claim())
    s = pass_all(s)
    s, events = act(s, 1, DrawStock())
    won = of_kind(events, "claim_won")[0]
    assert won["seat"] == winner and won["data"]["claimants"] == list(arrival)
    assert drawn(events) == [(1, "4D", False), (winner, "5D", True), (winner, "6D", True)]
    assert "QS" in hand_of(s, winner)
    assert s.claims_used == tuple(1 if seat == winner else 0 for seat in range(4))


def test_two_buys_per_player_per_round() -> None:
    s = table(SHANGHAI, 3, upcard="9S", options={"max_reshuffles": 0})
    # Buy 1: the first upcard.
    s, _ = acts(s, (2, Claim()), (1, Pass()), (0, DrawStock()))
    s, _ = act(s, 0, discard(hand_of(s, 0)[0]))
    # Buy 2: seat 0 (the discarder) claims too, but seat 2 comes first clockwise; a lost claim costs nothing.
    s, _ = acts(s, (0, Claim()), (2, Claim()), (1, DrawStock()))
    assert s.claims_used == (0, 0, 2)
    s, _ = act(s, 1, discard(hand_of(s, 1)[0]))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard(hand_of(s, 2)[0])))
    # Seat 2 discarded and has used both buys: it is no longer asked.
    assert s.turn == 0 and pending_claimants(s) == (1,)
    refused(s, 2, Claim(), "claim_not_allowed", "Shanghai allows 2 buys per player in a round")
    assert legal_moves(s, 2) == ()
    assert player_view(s)["seats"][2]["claims_left"] == 0
    s, _ = act(s, 1, Pass())
    s, _ = act(s, 0, DrawStock())  # nobody else to wait for
    # The next round starts afresh (here the stock runs out to end this one).
    s, _ = act(s, 0, discard(hand_of(s, 0)[0]))
    s = with_stock(pass_all(s), keep=0)
    s, _ = act(s, 1, DrawStock())
    assert s.round == 2 and s.claims_used == (0, 0, 0)
    assert 2 in pending_claimants(s)


def test_the_stock_draw_waits_for_the_discarder_too() -> None:
    s = after_first_discard(now=0.0)
    s, _ = act(s, 2, Pass())
    exc = refused(s, 1, DrawStock(), "claims_open", "claims are still open", "queen of spades", "0 may still answer")
    assert exc.extra == {"retry_after": 15.0, "closes_at": 15.0}
    s, events = act(s, 1, DrawStock(), now=15.0)
    assert [(e["type"], e["seat"]) for e in events] == [("passed", 0), ("drew", 1)]


def test_taking_the_discard_voids_every_buy() -> None:
    s = after_first_discard()
    s, _ = acts(s, (0, Claim()), (2, Claim()))
    stock = s.stock
    s, events = act(s, 1, TakeDiscard())
    assert events[0]["data"] == {"card": "QS", "voided_claims": [0, 2], "discard_top": "9S"}
    assert s.stock == stock and s.claims_used == (0, 0, 0) and "QS" in hand_of(s, 1)


def test_buy_refusals() -> None:
    s = after_first_discard()
    refused(s, 1, Claim(), "claim_not_allowed", "you are on turn")
    s, _ = act(s, 0, Claim())
    refused(s, 0, Claim(), "claim_not_allowed", "already answered")
    s, _ = act(s, 2, Pass())
    s, _ = act(s, 1, DrawStock())
    refused(s, 2, Claim(), "claim_not_allowed", "claim window closed when seat 1 drew")


# ---------------------------------------------------------------------------
# §3 Contracts


def draw_first(hand: str, round: int = 1, upcard: str = "KD", players: int = 3) -> State:
    """The round's first player holds ``hand`` and takes the upcard."""
    first = (round - 1) % players
    s = table(SHANGHAI, players, round=round, hands={first: hand}, upcard=upcard)
    s, _ = act(s, first, TakeDiscard())
    return s


def test_books_of_one_contract_must_be_of_different_ranks() -> None:
    s = draw_first("7C 7D 7H 7S 7C 7D 2S 4S 9D JH")
    refused(s, 0, down("7C 7D 7H", "7S 7C 7D"), "illegal_meld", "round 1's contract is 2 books", "different ranks")
    s = draw_first("3C 3D 3H 7S 7C 7D 3S 3S 3D 4D", round=4)
    refused(s, 0, down("3C 3D 3H", "7S 7C 7D", "3S 3S 3D"), "illegal_meld", "3 books", "different ranks")


def test_going_down_with_exactly_the_contract() -> None:
    s = draw_first("3C 3D 3H 4C 4D 4H 5C 5D 5H 9S")
    refused(s, 0, down("3C 3D 3H", "4C 4D 4H", "5C 5D 5H"), "illegal_meld", "exactly 2 melds, not 3")
    s, _ = act(s, 0, down("3C 3D 3H", "4C 4D 4H"))
    assert s.down[0] and len(s.hands[0]) == 5


def test_runs_of_one_contract_must_be_of_different_suits() -> None:
    s = draw_first("2H 3H 4H 5H 7H 8H 9H TH 7S 8S", round=3)
    refused(s, 2, down("2H 3H 4H 5H", "7H 8H 9H TH"), "illegal_meld", "different suits")


def test_round_7_four_books_need_a_buy() -> None:
    # 4 books are 12 cards from a deal of 10: seat 1 buys the first upcard 5H (with 6H KS)
    # and draws 3S on its turn, 14 cards.
    s = table(SHANGHAI, 3, round=7, hands={1: "3C 3D 3H 4C 4D 4H 5C 5D 6C 6D"}, upcard="5H", stock="JH 6H KS 3S")
    assert s.turn == 0
    s, _ = acts(s, (1, Claim()), (2, Pass()), (0, DrawStock()), (0, discard("JH")))
    s = pass_all(s)
    s, _ = act(s, 1, DrawStock())
    assert len(s.hands[1]) == 14
    books = ("3C 3D 3H", "4C 4D 4H", "5C 5D 5H", "6C 6D 6H")
    refused(s, 1, down(*books[:3]), "illegal_meld", "round 7's contract is 4 books", "not 3")
    refused(s, 1, down(*books, lay=[part(0, "3S")]), "illegal_meld", "may not keep just one")
    s, _ = act(s, 1, down(*books))
    assert hand_of(s, 1) == ["3S", "KS"]


@pytest.mark.parametrize(
    ("run", "ok", "words"),
    [
        ("AH 2H 3H 4H", True, ()),
        ("JH QH KH AH", True, ()),
        ("KH AH 2H 3H", False, ("KH AH 2H 3H", "never wrap")),
        ("QH KH AH JK", False, ("never wrap", "high or low")),
        ("JK JK AH 2H", False, ("never wrap",)),
        ("JK JK 3H 4H", True, ()),
        ("JK JK 2H 3H", False, ("JK JK 2H 3H", "never wrap")),
    ],
)
def test_runs_and_aces(run: str, ok: bool, words: tuple[str, ...]) -> None:
    s = draw_first(f"9C 9D 9S {run}", round=2, upcard="8D")
    move = down("9C 9D 9S", run)
    if ok:
        s, _ = act(s, 1, move)
        assert s.melds[1].kind == "run"
    else:
        refused(s, 1, move, "illegal_meld", *words)


# ---------------------------------------------------------------------------
# §4 Jokers: no limit, but every meld keeps a natural card


def test_jokers_are_unlimited_but_a_meld_keeps_a_natural() -> None:
    s = draw_first("JK JK JK JK 4H 6H 7H 5C 5D 2S", round=2)
    refused(s, 1, down("JK JK JK", "4H JK 6H 7H"), "illegal_meld", "at least 1 natural card", "JK JK JK has none")
    s, _ = act(s, 1, down("5C JK JK", "4H JK JK 7H"))
    assert [m.jokers for m in s.melds] == [2, 2]
    assert player_view(s)["melds"][1]["jokers"] == [
        {"index": 1, "stands_for": "5H"},
        {"index": 2, "stands_for": "6H"},
    ]


def test_a_joker_laid_off_on_a_meld_with_jokers() -> None:
    s = draw_first("5C JK JK 9C 9D 9H JK 2S 3D 4S")
    s, _ = act(s, 0, down("5C JK JK", "9C 9D 9H", lay=[part(0, "JK")]))
    assert card_codes(s.melds[0].cards) == ["5C", "JK", "JK", "JK"]


# ---------------------------------------------------------------------------
# §5 Lay-offs: only when down, on any meld, also on the go-down turn; no hold rule


# Round 1 of three players: seat 0 takes the first upcard KD and goes down with
# 5C 5D 5H and 6C 6D 6H; seat 1 draws 7D and goes down with 9C 9D 9H and TC TD TH.
SEAT_0 = "5C 5D 5H 6C 6D 6H 5S 6S 2H 4H"
SEAT_1 = "9C 9D 9H TC TD TH 5S 9S 3S 4S"


def test_lay_off_on_the_go_down_turn_on_own_and_other_melds() -> None:
    s = table(SHANGHAI, 3, hands=[SEAT_0, SEAT_1], upcard="KD", stock="7D 8S 2D")
    s, _ = act(s, 0, TakeDiscard())
    s, events = act(s, 0, down("5C 5D 5H", "6C 6D 6H", lay=[part(0, "5S")]))
    assert kinds(events) == ["went_down", "laid_off"]
    s, _ = act(s, 0, lay(1, "6S"))  # still the go-down turn
    assert [len(m.cards) for m in s.melds] == [4, 4]
    s, _ = act(s, 0, discard("KD"))
    s = pass_all(s)
    s, _ = act(s, 1, DrawStock())
    refused(s, 1, lay(0, "5S"), "illegal_lay_off", "only a player who is down may lay off")
    s, _ = act(s, 1, down("9C 9D 9H", "TC TD TH", lay=[part(0, "5S"), part(2, "9S")]))
    assert card_codes(s.melds[0].cards) == ["5C", "5D", "5H", "5S", "5S"]
    assert card_codes(s.melds[2].cards) == ["9C", "9D", "9H", "9S"]


def test_no_hold_rule_in_shanghai() -> None:
    s = table(SHANGHAI, 3, hands=[SEAT_0, SEAT_1], upcard="KD", stock="7D")
    s, _ = acts(s, (0, TakeDiscard()), (0, down("5C 5D 5H", "6C 6D 6H")), (0, discard("5S")))
    # Seat 1 takes the 5S and lays it off (with the one it held) the turn it goes down.
    s, _ = act(s, 1, TakeDiscard())
    assert s.held == card("5S") and player_view(s, 1)["held"] == "5S"
    s, _ = act(s, 1, down("9C 9D 9H", "TC TD TH", lay=[part(0, "5S 5S")]))
    assert card_codes(s.melds[0].cards) == ["5C", "5D", "5H", "5S", "5S"]


# ---------------------------------------------------------------------------
# §4 Joker displacement (R for Shanghai)


# Round 2: seat 1 takes the upcard KD, goes down with 3C 3D 3S and 3H 4H JK 6H and discards
# KD; seat 2 draws 2S and goes down with 5C 5D 5S and JC QC KC AC, holding 5H and 8H.
LEIGH = "3C 3D 3S 3H 4H JK 6H QS 9D TC"
KAYLA = "5C 5D 5S JC QC KC AC 5H 8H 7S"


def kayla_to_play() -> State:
    s = table(SHANGHAI, 3, round=2, hands={1: LEIGH, 2: KAYLA}, upcard="KD", stock="2S")
    s, _ = acts(s, (1, TakeDiscard()), (1, down("3C 3D 3S", "3H 4H JK 6H")), (1, discard("KD")))
    s = pass_all(s)
    s, _ = act(s, 2, DrawStock())
    return s


def test_joker_displacement_on_the_go_down_turn() -> None:
    s = kayla_to_play()
    melds = ("5C 5D 5S", "JC QC KC AC")
    refused(s, 2, down(*melds, lay=[part(1, "5H")]), "illegal_lay_off", "choose where the displaced joker goes")
    high, _ = act(s, 2, down(*melds, lay=[part(1, "5H", "high"), part(1, "8H")]))
    assert card_codes(high.melds[1].cards) == ["3H", "4H", "5H", "6H", "JK", "8H"]
    assert player_view(high)["melds"][1]["jokers"] == [{"index": 4, "stands_for": "7H"}]
    refused(
        s, 2, down(*melds, lay=[part(1, "5H", "low"), part(1, "8H")]), "illegal_lay_off", "eight of hearts", "not fit"
    )
    s, _ = act(s, 2, down(*melds))
    legal = legal_moves(s, 2)
    assert lay(1, "5H", "high") in legal and lay(1, "5H", "low") in legal
    s, _ = act(s, 2, lay(1, "5H", "low"))
    assert card_codes(s.melds[1].cards) == ["JK", "3H", "4H", "5H", "6H"]


def test_an_end_that_breaks_the_ace_rule_is_not_offered() -> None:
    s = draw_first("9S 9C 9D JK QH KH AH JH 2C 3D", round=2)
    melds = ("9S 9C 9D", "JK QH KH AH")  # the joker stands for JH
    refused(
        s, 1, down(*melds, lay=[part(1, "JH", "high")]), "illegal_lay_off", "cannot go to the high end", "never both"
    )
    s, _ = act(s, 1, down(*melds, lay=[part(1, "JH")]))  # one end only: no choice needed
    assert card_codes(s.melds[1].cards) == ["JK", "JH", "QH", "KH", "AH"]
    assert player_view(s)["melds"][1]["jokers"] == [{"index": 0, "stands_for": "TH"}]


# ---------------------------------------------------------------------------
# §7 Going out: never by discard, and never keeping a single card


# Seat 0 draws QS, goes down with 5C 5D 5H and 9C 9D 9H laying off 5S 9S 5C at once,
# and discards QS: one card left, 9C. Its next draw is 5D.
GOING_OUT = "5C 5D 5H 9C 9D 9H 5S 9S 5C 9C"


def one_card_left() -> State:
    s = table(SHANGHAI, 3, hands={0: GOING_OUT}, upcard="KD", stock="QS 2D 3D 5D")
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    s, _ = act(s, 0, down("5C 5D 5H", "9C 9D 9H", lay=[part(0, "5S 5C"), part(1, "9S")]))
    s, _ = act(s, 0, discard("QS"))
    assert hand_of(s, 0) == ["9C"]
    s = pass_all(s)
    s, _ = acts(s, (1, DrawStock()), (1, discard("2D")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard("3D")))
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    assert hand_of(s, 0) == ["5D", "9C"]
    return s


def test_a_lay_off_that_keeps_one_card_is_refused() -> None:
    s = one_card_left()
    refused(
        s, 0, lay(1, "9C"), "illegal_lay_off", "never discard your last card", "may not keep just one", "one request"
    )
    lay_offs = [m for m in legal_moves(s, 0) if isinstance(m, LayOff)]
    assert lay_offs and all(len(m.parts) == 2 for m in lay_offs)
    assert lay_parts(part(1, "9C"), part(0, "5D")) in lay_offs


def test_going_out_by_playing_every_card_in_one_request() -> None:
    s = one_card_left()
    s, events = act(s, 0, lay_parts(part(1, "9C"), part(0, "5D")))
    assert "discarded" not in kinds(events)
    ended = of_kind(events, "round_ended")[0]["data"]
    assert ended["out"] == 0 and ended["scores"][0] == 0


def test_with_two_cards_a_discard_keeps_one_and_is_allowed() -> None:
    s = one_card_left()
    s, _ = act(s, 0, discard("5D"))
    assert hand_of(s, 0) == ["9C"]


def test_the_last_card_is_never_discarded() -> None:
    # Reached only by a made-up state: after a draw a Shanghai hand holds at least two cards.
    s = one_card_left().clone()
    s.stock = (s.hands[0][0], *s.stock)  # move the 5D to the bottom of the stock
    s.hands = (s.hands[0][1:], *s.hands[1:])
    assert hand_of(s, 0) == ["9C"]
    refused(s, 0, discard("9C"), "illegal_discard", "never discard your last card", "go out by melding")
    assert not any(isinstance(m, Discard) for m in legal_moves(s, 0))


def test_going_down_and_laying_off_together_to_go_out() -> None:
    s = table(SHANGHAI, 3, hands=["5C 5D 5H 5S 5C 6C 6D 6H 6S 6D", "QC"], upcard="6C")
    s, _ = act(s, 0, TakeDiscard())
    refused(s, 0, down("5C 5D 5H 5S 5C", "6C 6D 6H 6S 6D"), "illegal_meld", "may not keep just one")
    refused(s, 0, down("5C 5D 5H 5S", "6C 6D 6H 6S 6D 6C"), "illegal_meld", "may not keep just one")
    s, events = act(s, 0, down("5C 5D 5H 5S", "6C 6D 6H 6S 6D", lay=[part(0, "5C"), part(1, "6C")]))
    assert kinds(events)[:3] == ["went_down", "laid_off", "round_ended"]
    assert events[2]["data"]["out"] == 0


def test_the_listed_go_down_never_keeps_a_single_card() -> None:
    # Round 5 (2 books and 1 run, 10 cards) after a draw: 11 cards. The bare contract would keep
    # one card, so the legal move lists the melds that take all 11.
    s = draw_first("5C 5D 5H 9C 9D 9H 2H 3H 4H 5H", round=5, upcard="6H")
    refused(s, 1, down("5C 5D 5H", "9C 9D 9H", "2H 3H 4H 5H"), "illegal_meld", "may not keep just one")
    downs = [m for m in legal_moves(s, 1) if isinstance(m, GoDown)]
    assert len(downs) == 1 and sum(len(m) for m in downs[0].melds) == 11
    s, events = act(s, 1, downs[0])
    assert of_kind(events, "round_ended")[0]["data"]["out"] == 1


# ---------------------------------------------------------------------------
# House options

# Round 8 (3 runs): seat 0 buys the first upcard (4C, with 5C 5D), draws 6D: 14 cards.
FINAL = {0: "AC 2C 3C 2D 3D 4D 2H 3H 4H 5H"}


def final_round(options: dict | None = None) -> State:
    s = table(SHANGHAI, 3, round=8, hands=FINAL, upcard="4C", stock="JH 5C 5D JD 6D", options=options)
    s, _ = acts(s, (0, Claim()), (2, Pass()), (1, DrawStock()), (1, discard("JH")))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard("JD")))
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    assert len(s.hands[0]) == 14
    return s


def test_all_out_final_house_option() -> None:
    s = final_round({"all_out_final": True})
    contract = player_view(s)["round"]["contract"]
    assert contract["all_cards"] and contract["text"] == "3 runs, using all your cards"
    refused(
        s,
        0,
        down("AC 2C 3C 4C", "2D 3D 4D 5D", "2H 3H 4H 5H"),
        "illegal_meld",
        "only by going out",
        "with none left over",
        "keep 2 cards",
    )
    refused(s, 0, down("AC 2C 3C 4C 5C", "2D 3D 4D 5D", "2H 3H 4H 5H"), "illegal_meld", "keep 1 card")
    s, events = act(s, 0, down("AC 2C 3C 4C 5C", "2D 3D 4D 5D 6D", "2H 3H 4H 5H"))
    assert of_kind(events, "round_ended")[0]["data"]["out"] == 0 and s.phase is Phase.FINISHED


def test_without_all_out_final_the_last_round_may_go_down_early() -> None:
    s = final_round()
    assert not player_view(s)["round"]["contract"]["all_cards"]
    s, _ = act(s, 0, down("AC 2C 3C 4C", "2D 3D 4D 5D", "2H 3H 4H 5H"))
    assert s.down[0] and hand_of(s, 0) == ["5C", "6D"]


def test_bury_joker_upcard_house_option_off_keeps_the_joker_up() -> None:
    rules = SHANGHAI.with_options({"bury_joker_upcard": False})
    assert rules.table_options() == {"bury_joker_upcard": False}
    s = table(SHANGHAI, 3, upcard="JK", stock="7D", options={"bury_joker_upcard": False})
    assert s.discard == (JOKER,) and s.upcard == JOKER
    s, _ = act(s, 0, TakeDiscard())
    assert "JK" in hand_of(s, 0)


def test_house_option_defaults_and_refusals() -> None:
    assert SHANGHAI.option("all_out_final") is False and SHANGHAI.option("bury_joker_upcard") is True
    assert (
        SHANGHAI.option("free_goal_order") is False and SHANGHAI.with_options({"free_goal_order": True}).free_goal_order
    )
    with pytest.raises(ConfigError) as info:
        SHANGHAI.with_options({"all_out_final": "yes"})
    assert "true or false" in str(info.value)
