"""Rules shared by both variants (RULES-SPEC §1, §2, §7 stock, §8, §9), as scenarios.

Deal and dealer rotation, card codes, scoring tables, totals and standings, the
stock rebuild and its safeguard, the end of a round with nobody out, the end of the
game, and the clocks of §9.
"""

from __future__ import annotations

import pytest
from mayi_scenarios import (
    act,
    acts,
    as_json,
    card,
    cards,
    discard,
    down,
    drawn,
    hand_of,
    kinds,
    lay,
    of_kind,
    pass_all,
    refused,
    stack_for,
    table,
    with_stock,
)

from mayi_engine import (
    deadline,
    legal_moves,
    new_game,
    pending_claimants,
    standings,
    start_game,
    timeout_discard,
)
from mayi_engine.cards import JOKER, build_decks, card_code, card_codes, parse_card, parse_cards
from mayi_engine.errors import ConfigError, InvalidMoveError
from mayi_engine.moves import Claim, DrawStock, Pass, TakeDiscard, Timeout, move_from_json, move_to_json
from mayi_engine.rules import MAY_I, SHANGHAI, get_rules
from mayi_engine.state import Phase, State
from mayi_engine.views import player_view

VARIANTS = [pytest.param(MAY_I, id="may_i"), pytest.param(SHANGHAI, id="shanghai")]


def start_play(state: State, now: float = 0.0) -> State:
    """Get the first player of a fresh round to the play phase by a stock draw
    (May I: everybody passes the first upcard; Shanghai: everybody passes, then draw)."""
    if state.phase is Phase.FIRST_OFFER:
        for _ in range(state.players):
            state, _ = act(state, state.actor, Pass(), now)
        assert state.phase is Phase.PLAY
        return state
    state = pass_all(state, now)
    state, _ = act(state, state.turn, DrawStock(), now)
    return state


# ---------------------------------------------------------------------------
# §1 Cards and notation


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("TH", "TH"),
        ("10H", "TH"),
        ("10h", "TH"),
        ("th", "TH"),
        (" as ", "AS"),
        ("jk", "JK"),
        ("Jk", "JK"),
        ("2c", "2C"),
    ],
)
def test_card_codes_are_case_insensitive_and_accept_10(text: str, code: str) -> None:
    assert card_code(parse_card(text)) == code


@pytest.mark.parametrize("bad", ["1H", "TX", "11S", "", "JKR", "H10", 10, None])
def test_a_bad_card_code_is_invalid_and_named(bad: object) -> None:
    with pytest.raises(InvalidMoveError) as info:
        parse_card(bad)
    assert info.value.code == "bad_card"
    assert repr(bad) in str(info.value)


def test_output_is_always_canonical() -> None:
    move = move_from_json({"type": "discard", "card": "10d"})
    assert move_to_json(move) == {"type": "discard", "card": "TD"}
    melds = move_from_json({"type": "go_down", "melds": [["10h", "jh", "qh", "kh"], ["as", "ad", "Ah"]]})
    assert move_to_json(melds)["melds"] == [["TH", "JH", "QH", "KH"], ["AS", "AD", "AH"]]
    with pytest.raises(InvalidMoveError) as info:
        move_from_json({"type": "discard", "card": "ZZ"})
    assert info.value.code == "bad_card" and "'ZZ'" in str(info.value)


def test_a_deck_is_52_cards_and_2_jokers() -> None:
    deck = build_decks(1)
    assert len(deck) == 54 and deck.count(JOKER) == 2
    assert len(set(card_codes(deck))) == 53


def test_identical_cards_from_different_decks_are_interchangeable() -> None:
    # Two 7H in hand: discarding "7H" takes one of them; the other stays.
    s = table(SHANGHAI, 3, hands=["7H 7H 2C"], upcard="9S")
    s = start_play(s)
    s, _ = act(s, 0, discard("7H"))
    assert hand_of(s, 0).count("7H") == 1
    assert card_codes(s.discard)[-1] == "7H"


def test_events_speak_in_canonical_codes() -> None:
    _, events = start_game(MAY_I, ["A", "B"], bytes(32), stacked=[cards("10h 10h")])
    events = as_json(events)
    assert events[0]["type"] == "round_started"
    dealt = [e for e in events if e["type"] == "dealt"]
    assert dealt[0]["private"]["hand"].count("TH") == 1 and dealt[1]["private"]["hand"].count("TH") == 1


# ---------------------------------------------------------------------------
# §2 Table set-up


@pytest.mark.parametrize(
    ("rules", "ok", "bad"),
    [(MAY_I, (2, 6), (1, 7)), (SHANGHAI, (3, 8), (2, 9))],
    ids=["may_i", "shanghai"],
)
def test_player_counts(rules, ok, bad) -> None:
    for n in ok:
        assert new_game(rules, [f"p{i}" for i in range(n)], bytes(32)).players == n
    for n in bad:
        with pytest.raises(ConfigError) as info:
            new_game(rules, [f"p{i}" for i in range(n)], bytes(32))
        assert info.value.code == "validation_error"
        assert f"{rules.min_players} to {rules.max_players} players" in str(info.value)


@pytest.mark.parametrize(
    ("rules", "decks"),
    [
        (MAY_I, {2: 2, 3: 2, 4: 3, 5: 3, 6: 3}),
        (SHANGHAI, {3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 8: 4}),
    ],
    ids=["may_i", "shanghai"],
)
def test_decks_by_player_count(rules, decks) -> None:
    for n, want in decks.items():
        assert rules.decks_for(n) == want
        s = new_game(rules, [f"p{i}" for i in range(n)], bytes(32))
        in_play = sum(len(h) for h in s.hands) + len(s.stock) + len(s.discard)
        assert in_play == 54 * want


@pytest.mark.parametrize(
    ("rules", "deals"),
    [(MAY_I, [10, 10, 10, 10, 12, 12, 12]), (SHANGHAI, [10] * 8)],
    ids=["may_i", "shanghai"],
)
def test_cards_dealt_each_round(rules, deals) -> None:
    assert [spec.deal for spec in rules.rounds] == deals
    for r, deal in enumerate(deals, start=1):
        s = new_game(rules, ["A", "B", "C"], bytes(32), start_round=r)
        assert [len(h) for h in s.hands] == [deal] * 3
        assert len(s.discard) == 1


@pytest.mark.parametrize(
    ("rules", "contracts"),
    [
        (
            MAY_I,
            [(2, 0, False), (1, 1, False), (0, 2, False), (3, 0, False), (2, 1, False), (1, 2, False), (0, 3, True)],
        ),
        (
            SHANGHAI,
            [
                (2, 0, False),
                (1, 1, False),
                (0, 2, False),
                (3, 0, False),
                (2, 1, False),
                (1, 2, False),
                (4, 0, False),
                (0, 3, False),
            ],
        ),
    ],
    ids=["may_i", "shanghai"],
)
def test_contract_table(rules, contracts) -> None:
    got = [(r.contract.books, r.contract.runs, r.contract.all_cards) for r in rules.rounds]
    assert got == contracts
    assert [r.contract.min_cards for r in rules.rounds] == [3 * b + 4 * n for b, n, _ in contracts]


@pytest.mark.parametrize("rules", VARIANTS)
@pytest.mark.parametrize("players", [3, 4])
def test_dealer_and_first_player_rotate_clockwise(rules, players) -> None:
    for r in range(1, len(rules.rounds) + 1):
        s = new_game(rules, [f"p{i}" for i in range(players)], bytes(32), start_round=r)
        assert s.dealer == (r - 2) % players
        assert s.first_player == (r - 1) % players
        assert s.turn == s.first_player == s.actor
        view = player_view(s)
        assert view["round"]["dealer"] == s.dealer and view["round"]["first"] == s.first_player
    assert new_game(rules, [f"p{i}" for i in range(players)], bytes(32)).dealer == players - 1


@pytest.mark.parametrize("rules", VARIANTS)
def test_deal_one_card_at_a_time_clockwise_from_the_first_player(rules) -> None:
    # Round 2 of three players: seat 1 is first, so the stack's cards go 1, 2, 0, 1, 2, 0, ...
    deal = rules.rounds[1].deal
    order = [c for c in build_decks(2) if c != JOKER][: 3 * deal + 3]
    s = new_game(rules, ["A", "B", "C"], bytes(32), stacked=[None, order], start_round=2)
    for k, seat in enumerate((1, 2, 0)):
        assert sorted(s.hands[seat]) == sorted(order[k : 3 * deal : 3])
    assert s.discard == (order[3 * deal],)
    assert s.stock[-1] == order[3 * deal + 1] and s.stock[-2] == order[3 * deal + 2]


def test_stacked_decks_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        new_game(MAY_I, ["A", "B"], bytes(32), stacked=[cards("AS AS AS")])
    assert info.value.code == "validation_error" and "AS" in str(info.value)
    with pytest.raises(ConfigError) as info:
        new_game(MAY_I, ["A", "B"], bytes(32), start_round=8)
    assert "start_round must be 1 to 7" in str(info.value)
    with pytest.raises(ConfigError):
        new_game(MAY_I, ["A", "B"], bytes(32), stacked=[None] * 8)


def test_a_game_without_a_seed_gets_a_fresh_secret_one() -> None:
    a = new_game(MAY_I, ["A", "B"])
    b = new_game(MAY_I, ["A", "B"])
    assert len(a.seed) == 32 and a.seed != b.seed
    assert "seed" not in player_view(a) and "seed" not in player_view(a, 0)


def test_a_shuffled_deal_depends_only_on_the_seed() -> None:
    a = new_game(SHANGHAI, ["A", "B", "C"], bytes(32))
    b = new_game(SHANGHAI, ["A", "B", "C"], bytes(32))
    c = new_game(SHANGHAI, ["A", "B", "C"], bytes([1] * 32))
    assert a.hands == b.hands and a.stock == b.stock
    assert a.hands != c.hands


@pytest.mark.parametrize("rules", VARIANTS)
def test_a_joker_turned_up_is_buried_at_the_bottom(rules) -> None:
    s, events = start_game(
        rules, ["A", "B", "C"], bytes(32), stacked=[stack_for(rules, 3, upcard="JK", stock="JK 7D 9S")]
    )
    assert card_codes(s.discard) == ["7D"]
    assert s.stock[0] == JOKER and s.stock[1] == JOKER  # the bottom of the stock
    assert s.stock[-1] == card("9S")  # the top
    events = as_json(events)
    assert events[0]["data"]["upcard"] == "7D" and events[0]["data"]["jokers_buried"] == 2


def test_may_i_has_no_option_to_keep_a_joker_upcard() -> None:
    with pytest.raises(ConfigError) as info:
        MAY_I.with_options({"bury_joker_upcard": False})
    assert info.value.code == "validation_error" and "bury_joker_upcard" in str(info.value)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"claim_seconds": 0}, "claim_seconds"),
        ({"turn_seconds": True}, "turn_seconds"),
        ({"max_reshuffles": -1}, "max_reshuffles"),
        ({"max_reshuffles": 1.5}, "max_reshuffles"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_table_options_are_checked(options, words) -> None:
    with pytest.raises(ConfigError) as info:
        get_rules("shanghai", options)
    assert info.value.code == "validation_error" and words in str(info.value)


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        get_rules("canasta")
    assert "canasta" in str(info.value) and "may_i" in str(info.value)


# ---------------------------------------------------------------------------
# §5 Turn basics shared by both variants


@pytest.mark.parametrize("rules", VARIANTS)
def test_draw_from_the_stock_or_the_discard_pile(rules) -> None:
    s = table(rules, 3, upcard="9S", stock="4D 5D")
    s = start_play(s)
    assert "4D" in hand_of(s, 0) and s.phase is Phase.PLAY
    s, _ = act(s, 0, discard("4D"))
    assert s.turn == 1 and s.upcard == card("4D") and s.discarder == 0
    s, events = act(s, 1, TakeDiscard())
    assert "4D" in hand_of(s, 1) and kinds(events) == ["took_upcard"]
    assert s.phase is Phase.PLAY and s.held == card("4D")


@pytest.mark.parametrize("rules", VARIANTS)
def test_moves_out_of_turn_or_phase_are_refused(rules) -> None:
    s = start_play(table(rules, 3, hands=["QS"]))
    refused(s, 1, discard("QS"), "not_your_turn", "seat 0's turn")
    refused(s, 0, DrawStock(), "wrong_phase", "drawn already")
    refused(s, 0, discard("QD"), "card_not_in_hand", "QD")
    s, _ = act(s, 0, discard("QS"))
    refused(s, 1, discard(hand_of(s, 1)[0]), "wrong_phase", "draw first")
    refused(s, 1, down("3C 3D 3H", "4C 4D 4H"), "wrong_phase", "draw first")
    refused(s, 1, lay(0, "3C"), "wrong_phase", "draw first")
    refused(s, 2, DrawStock(), "not_your_turn", "seat 1's turn")
    refused(s, 7, DrawStock(), "not_your_turn", "not a seat")


# ---------------------------------------------------------------------------
# §8 Scoring


MAY_I_POINTS = {"2C": 2, "3D": 3, "4H": 4, "5S": 5, "6C": 6, "7D": 7, "8H": 8, "9S": 9, "TC": 10, "JD": 10,
                "QH": 10, "KS": 10, "AC": 20, "JK": 50}  # fmt: skip
SHANGHAI_POINTS = {"2C": 5, "3D": 5, "4H": 5, "5S": 5, "6C": 5, "7D": 5, "8H": 5, "9S": 10, "TC": 10, "JD": 10,
                   "QH": 10, "KS": 10, "AC": 15, "JK": 25}  # fmt: skip


@pytest.mark.parametrize(
    ("rules", "points"), [(MAY_I, MAY_I_POINTS), (SHANGHAI, SHANGHAI_POINTS)], ids=["may_i", "shanghai"]
)
def test_scoring_table(rules, points) -> None:
    for code, value in points.items():
        assert rules.card_score(parse_card(code)) == value, code
    assert rules.hand_score(parse_cards(list(points))) == sum(points.values())


def go_out_at_once(s: State, seat: int, melds: tuple[str, ...], last: str | None = None) -> tuple[State, list]:
    """``seat``, first to play, takes the upcard and melds every card (May I may keep
    ``last`` back and discard it)."""
    if s.rules is MAY_I:
        s, events = act(s, seat, Claim())  # the first upcard, as the first player's draw
    else:
        s = pass_all(s)
        s, events = act(s, seat, TakeDiscard())
    s, more = act(s, seat, down(*melds))
    events += more
    if last is not None:
        s, more = act(s, seat, discard(last))
        events += more
    return s, events


@pytest.mark.parametrize("rules", VARIANTS)
def test_round_score_counts_hands_not_the_table(rules) -> None:
    # Seat 0 goes out at once: two long books (May I keeps the upcard back and discards it).
    other = "AC AD JK 2C 3C 4C 7C 8C 9C TC"
    s = table(rules, 3, hands=["5C 5D 5H 5S 5C 6C 6D 6H 6S 6D", other, "KD KH QS"], upcard="6C")
    if rules is MAY_I:
        s, events = go_out_at_once(s, 0, ("5C 5D 5H 5S 5C", "6C 6D 6H 6S 6D"), last="6C")
    else:
        s, events = go_out_at_once(s, 0, ("5C 5D 5H 5S 5C", "6C 6D 6H 6S 6D 6C"))
    ended = of_kind(events, "round_ended")[0]["data"]
    assert ended["out"] == 0 and ended["hands"][0] == []
    assert ended["scores"][1] == {"may_i": 133, "shanghai": 100}[rules.name]
    assert ended["scores"] == [0, rules.hand_score(cards(other)), rules.hand_score(cards(ended["hands"][2]))]
    assert s.results[0].scores == tuple(ended["scores"]) and s.totals == tuple(ended["scores"])
    assert s.round == 2 and s.melds == () and s.down == (False,) * 3  # the next round, a clean table


@pytest.mark.parametrize("rules", VARIANTS)
def test_totals_carry_over_and_the_next_round_rotates(rules) -> None:
    r1 = stack_for(rules, 3, hands=["5C 5D 5H 5S 5C 6C 6D 6H 6S 6D"], upcard="6C")
    r2 = stack_for(rules, 3, round=2, hands={1: "9C 9D 9H 9S 2H 3H 4H 5H 6H 7H"}, upcard="8H")
    s = new_game(rules, ["A", "B", "C"], bytes(32), stacked=[r1, r2])
    books = ("5C 5D 5H 5S 5C", "6C 6D 6H 6S 6D") if rules is MAY_I else ("5C 5D 5H 5S 5C", "6C 6D 6H 6S 6D 6C")
    s, _ = go_out_at_once(s, 0, books, last="6C" if rules is MAY_I else None)
    first = s.totals
    assert s.round == 2 and s.turn == s.actor == 1 and s.dealer == 0
    assert first[0] == 0 and first[1] > 0 and first[2] > 0
    # Round 2: seat 1 goes out by laying down its last card (a book of four and a run of seven).
    s, events = go_out_at_once(s, 1, ("9C 9D 9H 9S", "2H 3H 4H 5H 6H 7H 8H"))
    assert of_kind(events, "round_ended")[0]["data"]["out"] == 1
    second = s.results[1].scores
    assert second[1] == 0 and second[0] > 0
    assert s.totals == tuple(a + b for a, b in zip(first, second, strict=True))
    assert s.round == 3 and s.turn == 2
    assert [seat["total"] for seat in player_view(s)["seats"]] == list(s.totals)


def test_standings_share_places_on_equal_totals() -> None:
    s = new_game(SHANGHAI, ["A", "B", "C", "D"], bytes(32))
    for totals, places in [
        ((10, 10, 30, 5), [2, 2, 4, 1]),
        ((0, 0, 0, 0), [1, 1, 1, 1]),
        ((7, 3, 3, 9), [3, 1, 1, 4]),
    ]:
        s.totals = totals
        assert standings(s) == places


# Two hands of equal points (100 in May I, 75 in Shanghai) for a tie on second place.
TIED = ["6S 7S 8S 9S TS JS QS KS 6D 7D", "6C 7C 8C 9C TC JC QC KC 6H 7H"]


def test_the_last_round_ends_the_game_with_shared_places_may_i() -> None:
    # Round 7, seat 0 first: it takes the first upcard and lays all 13 cards down in three runs.
    hands = ["AC 2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H", TIED[0] + " 8D 9D", TIED[1] + " 8H 9H"]
    s = table(MAY_I, 3, round=7, hands=hands, upcard="5H")
    s, events = go_out_at_once(s, 0, ("AC 2C 3C 4C 5C", "2D 3D 4D 5D", "2H 3H 4H 5H"))
    assert_game_over(s, events, out=0, scores=[0, 100, 100], places=[1, 2, 2])


def test_the_last_round_ends_the_game_with_shared_places_shanghai() -> None:
    # Round 8 (3 runs, 12 cards from a deal of 10): seat 0 buys the first upcard (4C + 5C 5D),
    # draws 6D on its turn and lays all 14 cards down. Seats 1 and 2 discard what they draw.
    hands = {0: "AC 2C 3C 2D 3D 4D 2H 3H 4H 5H", 1: TIED[0], 2: TIED[1]}
    s = table(SHANGHAI, 3, round=8, hands=hands, upcard="4C", stock="JH 5C 5D JD 6D")
    assert s.turn == 1
    s, _ = acts(s, (0, Claim()), (2, Pass()), (1, DrawStock()))
    assert len(s.hands[0]) == 13
    s, _ = act(s, 1, discard("JH"))
    s = pass_all(s)
    s, _ = acts(s, (2, DrawStock()), (2, discard("JD")))
    s = pass_all(s)
    s, _ = act(s, 0, DrawStock())
    s, events = act(s, 0, down("AC 2C 3C 4C 5C", "2D 3D 4D 5D 6D", "2H 3H 4H 5H"))
    assert_game_over(s, events, out=0, scores=[0, 75, 75], places=[1, 2, 2])


def assert_game_over(s: State, events: list, out: int, scores: list[int], places: list[int]) -> None:
    assert s.phase is Phase.FINISHED and s.finished
    assert of_kind(events, "round_ended")[0]["data"]["out"] == out
    assert list(s.results[-1].scores) == scores and list(s.totals) == scores
    ended = of_kind(events, "game_ended")[0]["data"]
    assert ended["places"] == places == standings(s) and ended["totals"] == scores
    view = player_view(s, 0)
    assert view["status"] == "finished" and view["places"] == places and view["legal"] == []
    assert deadline(s) is None and all(legal_moves(s, seat) == () for seat in range(3))
    refused(s, 1, DrawStock(), "game_over", "over")
    refused(s, None, Timeout(), "game_over", "over")


# ---------------------------------------------------------------------------
# §7 Stock exhausted: rebuild, and the safeguard that ends a round with nobody out


@pytest.mark.parametrize("rules", VARIANTS)
def test_an_empty_stock_is_rebuilt_from_the_discards_under_the_top_one(rules) -> None:
    s = with_stock(table(rules, 3, upcard="9S"), keep=0)
    below = len(s.discard) - 1
    s = start_play(s)  # the first player's stock draw needs a rebuild
    assert s.reshuffles == 1
    assert card_codes(s.discard) == ["9S"]  # the top discard stays
    assert len(s.stock) == below - 1
    assert player_view(s)["reshuffles"] == 1


def test_the_rebuild_keeps_the_upcard_on_offer() -> None:
    s = with_stock(table(SHANGHAI, 3, upcard="9S"), keep=0)
    s = pass_all(s)
    s, events = act(s, 0, DrawStock())
    assert kinds(events) == ["stock_rebuilt", "drew"]
    assert events[0]["data"] == {"cards": len(s.stock) + 1, "rebuilds": 1}
    assert card_codes(s.discard) == ["9S"]


@pytest.mark.parametrize("rules", VARIANTS)
def test_max_reshuffles_ends_the_round_with_nobody_out(rules) -> None:
    s = with_stock(table(rules, 3, options={"max_reshuffles": 0}, upcard="9S"), keep=0)
    hands = s.hands
    if rules is MAY_I:
        s, _ = acts(s, (0, Pass()), (1, Pass()))
        s, events = act(s, 2, Pass())  # nobody takes it: the stock draw finds no stock
        events = events[1:]
    else:
        s = pass_all(s)
        s, events = act(s, 0, DrawStock())
    assert kinds(events)[:2] == ["stock_exhausted", "round_ended"]
    assert events[0]["data"]["reason"] == "the stock may be rebuilt at most max_reshuffles=0 times in a round"
    ended = events[1]["data"]
    assert ended["out"] is None and events[1]["seat"] is None
    assert ended["scores"] == [rules.hand_score(h) for h in hands]
    assert s.results[0].out == -1 and s.totals == tuple(ended["scores"])
    assert s.round == 2 and player_view(s)["results"][0]["out"] is None


def test_the_default_safeguard_allows_three_rebuilds() -> None:
    assert SHANGHAI.max_reshuffles == 3 and MAY_I.max_reshuffles == 3
    s = pass_all(with_stock(table(SHANGHAI, 3), keep=0))
    s.reshuffles = 2
    third, events = act(s, 0, DrawStock())
    assert third.reshuffles == 3 and kinds(events) == ["stock_rebuilt", "drew"]
    s.reshuffles = 3
    fourth, events = act(s, 0, DrawStock())
    assert kinds(events)[:2] == ["stock_exhausted", "round_ended"]
    assert events[0]["data"]["reason"] == "the stock may be rebuilt at most max_reshuffles=3 times in a round"
    assert fourth.results[0].out == -1


def test_an_empty_stock_with_one_discard_ends_the_round() -> None:
    s = pass_all(table(SHANGHAI, 3, upcard="9S"))
    s = s.clone()
    s.hands = (s.hands[0], s.hands[1], tuple(sorted(s.hands[2] + s.stock)))  # every stock card is held
    s.stock = ()
    s, events = act(s, 0, DrawStock())
    assert kinds(events)[:2] == ["stock_exhausted", "round_ended"]
    assert events[0]["data"]["reason"] == "only one discard left"
    assert s.results[0].out == -1


def test_a_buy_that_empties_the_stock_ends_the_round_after_the_upcard_moved() -> None:
    s = table(SHANGHAI, 3, options={"max_reshuffles": 0}, upcard="9S", stock="4D")
    s = with_stock(s, keep=1)
    s, events = acts(s, (1, Claim()), (2, Pass()), (0, DrawStock()))
    assert drawn(events) == [(0, "4D", False)]  # the turn player's draw; no card left for the buyer
    assert "stock_exhausted" in kinds(events) and s.round == 2
    assert s.results[0].out == -1
    ended = of_kind(events, "round_ended")[0]["data"]
    assert "9S" in ended["hands"][1] and "4D" in ended["hands"][0]


# ---------------------------------------------------------------------------
# §9 Clocks


def test_an_unanswered_claim_is_a_pass_at_the_deadline() -> None:
    s = table(SHANGHAI, 3, upcard="9S")
    assert s.claim_closes_at == 15.0 and deadline(s) == 15.0
    refused(s, None, Timeout(), "not_due", "no deadline", now=14.9)
    s, _ = act(s, 1, Claim(), now=3.0)
    s, events = act(s, None, Timeout(), now=15.0)
    assert [(e["type"], e["seat"], e.get("timeout")) for e in events] == [("passed", 2, True)]
    assert s.timeouts == (0, 0, 1)  # an unanswered claim is a timeout toward absence
    assert s.phase is Phase.DRAW and pending_claimants(s) == () and deadline(s) == 60.0
    s, events = act(s, 0, DrawStock(), now=16.0)
    assert of_kind(events, "claim_won")[0]["seat"] == 1


def test_a_claim_after_the_window_closed_is_refused() -> None:
    s = table(SHANGHAI, 3, upcard="9S")
    refused(s, 1, Claim(), "claim_not_allowed", "window on the nine of spades closed at 15", now=15.0)
    s, _ = act(s, 1, Claim(), now=14.0)
    assert s.claims == (1,)


def test_a_claim_after_the_clock_passed_for_the_seat_says_the_window_closed() -> None:
    """The service plays the due timeouts before a late claim: the seat has been passed
    by the clock, and the answer names the closed window (not "already answered")."""
    s = table(SHANGHAI, 3, upcard="9S")
    s, _ = act(s, None, Timeout(), now=16.0)
    assert s.passes == (1, 2)
    refused(s, 2, Claim(), "claim_not_allowed", "claim window on the nine of spades closed at 15", now=16.0)
    s, _ = act(s, 0, DrawStock(), now=17.0)
    refused(s, 2, Claim(), "claim_not_allowed", "claim window closed when seat 0 drew", now=18.0)


def test_an_undrawn_turn_draws_from_the_stock() -> None:
    s = table(SHANGHAI, 3, upcard="9S", stock="4D")
    s = pass_all(s)
    assert deadline(s) == 60.0
    refused(s, None, Timeout(), "not_due", now=59.0)
    s, events = act(s, None, Timeout(), now=60.0)
    assert [(e["type"], e["seat"], e.get("timeout")) for e in events] == [("drew", 0, True)]
    assert "4D" in hand_of(s, 0) and card_codes(s.discard) == ["9S"]
    assert s.phase is Phase.PLAY and s.timeouts == (1, 0, 0) and deadline(s) == 120.0


def test_an_undrawn_turn_also_closes_the_claim_window() -> None:
    s = table(SHANGHAI, 3, upcard="9S", stock="4D 5D 6D")
    s, _ = act(s, 2, Claim(), now=1.0)
    s, events = act(s, None, Timeout(), now=60.0)  # seat 1 never answered; seat 0 never drew
    assert [(e["type"], e["seat"]) for e in events if e["type"] != "drew"] == [("passed", 1), ("claim_won", 2)]
    assert drawn(events) == [(0, "4D", False), (2, "5D", True), (2, "6D", True)]


# Seat 0 goes down in round 1 of Shanghai with aces and nines, keeping AS (which fits its
# book of aces), KD, 3C and 2C: out of time, it discards KD, not the higher AS.
TIMEOUT_HAND = "AC AD AH 9C 9D 9H AS KD 3C 2C"


def test_an_undiscarded_turn_discards_the_highest_card_it_could_not_lay_off() -> None:
    s = table(SHANGHAI, 3, hands=[TIMEOUT_HAND], upcard="4H", stock="5D")
    s = pass_all(s)
    s, _ = acts(s, (0, DrawStock()), (0, down("AC AD AH", "9C 9D 9H")), now=10.0)
    assert s.turn_deadline == 70.0 and deadline(s) == 70.0
    assert timeout_discard(s, 0) == card("KD")
    s, events = act(s, None, Timeout(), now=70.0)
    assert [(e["type"], e["seat"], e["data"], e.get("timeout")) for e in events] == [
        ("discarded", 0, {"card": "KD"}, True)
    ]
    assert s.turn == 1 and s.timeouts == (1, 0, 0)


def test_the_timeout_discard_of_a_seat_not_down_is_its_highest_card() -> None:
    s = start_play(table(SHANGHAI, 3, hands=[TIMEOUT_HAND], upcard="4H", stock="5D"))
    assert timeout_discard(s, 0) == card("AS")  # AC AD AH AS all score 15; the tie goes to the highest code
    s = start_play(table(MAY_I, 3, hands=["JK 2C 3C 4C 5C 6C 7C 8C 9C TC"], upcard="4H", stock="5D"))
    assert timeout_discard(s, 0) == JOKER


def test_the_timeout_discard_when_every_card_fits_is_the_highest() -> None:
    s = table(SHANGHAI, 3, hands=["AC AD AH 9C 9D 9H AS 9S 9S AS"], upcard="4H", stock="AD")
    s = pass_all(s)
    s, _ = acts(s, (0, DrawStock()), (0, down("AC AD AH", "9C 9D 9H")))
    assert hand_of(s, 0) == ["9S", "9S", "AD", "AS", "AS"]
    assert timeout_discard(s, 0) == card("AS")


def test_three_timeouts_in_a_row_make_a_seat_absent_and_acting_again_clears_it() -> None:
    """Turn decisions and unanswered claims both count: an unanswered claim is a pass,
    and a timeout toward absence (docs/rules.md, E2)."""
    s = table(SHANGHAI, 3, hands=["KS QS"], upcard="9S")
    s, _ = act(s, None, Timeout(), now=15.0)  # claims: seats 1 and 2 pass: 1 each
    assert s.timeouts == (0, 1, 1)
    s, _ = act(s, None, Timeout(), now=60.0)  # seat 0 draws: 1
    s, _ = act(s, None, Timeout(), now=120.0)  # seat 0 discards: 2
    assert s.timeouts == (2, 1, 1) and s.absent == (False,) * 3
    s, _ = act(s, 2, Pass(), now=121.0)  # seat 2 acts: its count starts again
    assert s.timeouts == (2, 1, 0)
    s, events = act(s, None, Timeout(), now=135.0)  # seat 0's claim on its own discard: the third
    assert [(e["type"], e["seat"]) for e in events] == [("passed", 0), ("seat_absent", 0)]
    assert events[0].get("timeout")
    assert s.absent == (True, False, False) and s.timeouts == (3, 1, 0)
    assert player_view(s)["seats"][0]["absent"] is True
    # An absent claimant is passed at once.
    s, _ = acts(s, (1, DrawStock()), (1, discard(hand_of(s, 1)[0])), now=214.0)
    assert pending_claimants(s) == (0, 1) and deadline(s) == 214.0
    s, events = act(s, None, Timeout(), now=214.0)
    assert [(e["type"], e["seat"], e.get("timeout")) for e in events] == [("passed", 0, True)]
    s, _ = act(s, 1, Pass(), now=215.0)
    # On its own turn it is played as soon as the present seats have answered the upcard.
    s, _ = acts(s, (2, DrawStock()), (2, discard(hand_of(s, 2)[0])), now=216.0)
    assert s.turn == 0 and pending_claimants(s) == (1, 2)
    assert deadline(s) == 231.0  # their claim window comes first (RULES-SPEC §6)
    refused(s, None, Timeout(), "not_due", now=220.0)
    s = pass_all(s, now=217.0)
    assert deadline(s) == 216.0  # then at once
    s, events = act(s, None, Timeout(), now=217.0)
    assert [(e["type"], e["seat"]) for e in events] == [("drew", 0), ("discarded", 0), ("passed", 0)]
    assert s.timeouts[0] == 7 and s.absent[0]
    # Acting again clears it.
    s, _ = act(s, 2, Pass(), now=218.0)
    s, _ = acts(s, (1, DrawStock()), (1, discard(hand_of(s, 1)[0])), now=219.0)
    s, events = act(s, 0, Pass(), now=220.0)
    assert [(e["type"], e["seat"]) for e in events] == [("passed", 0), ("seat_returned", 0)]
    assert s.absent == (False,) * 3 and s.timeouts == (0, 0, 0)
    assert deadline(s) == 234.0  # seat 1 may still answer: its window, not "at once"


def test_acting_resets_the_timeout_count() -> None:
    s = table(SHANGHAI, 3, upcard="9S")
    s = pass_all(s)
    s, _ = act(s, None, Timeout(), now=60.0)
    assert s.timeouts == (1, 0, 0)
    s, events = act(s, 0, discard(hand_of(s, 0)[0]), now=61.0)
    assert s.timeouts == (0, 0, 0) and "seat_returned" not in kinds(events)


def test_a_timed_out_first_upcard_offer_is_a_pass() -> None:
    s = table(MAY_I, 3, upcard="9S", stock="4D")
    assert deadline(s) == 60.0
    s, events = act(s, None, Timeout(), now=60.0)
    assert [(e["type"], e["seat"], e["data"].get("first_upcard")) for e in events] == [("passed", 0, True)]
    assert s.actor == 1 and s.timeouts == (1, 0, 0) and deadline(s) == 120.0
    s, _ = act(s, None, Timeout(), now=120.0)
    s, events = act(s, None, Timeout(), now=180.0)
    # Nobody took it: the first player draws from the stock and plays on.
    assert kinds(events) == ["passed", "drew"]
    assert s.phase is Phase.PLAY and s.actor == 0 and "4D" in hand_of(s, 0)
    assert s.timeouts == (1, 1, 1)


def test_a_timed_out_discard_of_a_first_upcard_taken_out_of_turn() -> None:
    s = table(MAY_I, 3, hands={1: "JK 2C 3C"}, upcard="9S")
    s, _ = acts(s, (0, Pass(), 1.0), (1, Claim(), 2.0))
    assert s.phase is Phase.FIRST_DISCARD and deadline(s) == 62.0
    s, events = act(s, None, Timeout(), now=62.0)
    assert [(e["type"], e["seat"], e["data"], e.get("timeout")) for e in events] == [
        ("discarded", 1, {"card": "JK"}, True)
    ]
    assert s.phase is Phase.DRAW and s.turn == 0 and s.timeouts == (0, 1, 0)


def test_deadline_is_the_next_decision_due() -> None:
    s = table(SHANGHAI, 3, upcard="9S", options={"claim_seconds": 5, "turn_seconds": 30}, now=100.0)
    assert (s.claim_closes_at, s.turn_deadline, deadline(s)) == (105.0, 130.0, 105.0)
    assert player_view(s)["deadline"] == 105.0
    s = pass_all(s, now=101.0)
    assert deadline(s) == 130.0  # nobody left to answer: only the turn clock
    s, _ = act(s, 0, DrawStock(), now=102.0)
    assert deadline(s) == 132.0  # the play phase has a fresh turn clock
    s, _ = act(s, 0, discard(hand_of(s, 0)[0]), now=110.0)
    assert (s.claim_closes_at, deadline(s)) == (115.0, 115.0)


def test_an_absent_claimant_is_passed_at_once() -> None:
    s = table(SHANGHAI, 3, upcard="9S")
    s = s.clone()
    s.absent = (False, False, True)
    assert deadline(s) == 0.0  # the window's opening time: due at once
    s, events = act(s, None, Timeout(), now=0.0)
    assert [(e["type"], e["seat"]) for e in events] == [("passed", 2)]
    assert pending_claimants(s) == (1,) and deadline(s) == 15.0


# ---------------------------------------------------------------------------
# Views: a seat sees its own hand only


@pytest.mark.parametrize("rules", VARIANTS)
def test_a_view_never_shows_other_hands_or_the_stock(rules) -> None:
    s = table(rules, 3, hands=["KS QS", "2H 3H", "7C 8C"], upcard="9S")
    spectator = player_view(s)
    assert "hand" not in spectator and "legal" not in spectator
    mine = player_view(s, 0)
    assert sorted(mine["hand"]) == hand_of(s, 0)
    text = repr(mine)
    for seat in (1, 2):
        hidden = [c for c in hand_of(s, seat) if c not in hand_of(s, 0) and c != "9S"]
        assert not any(f"'{c}'" in text for c in hidden)
    assert "seed" not in mine and "stock" not in mine
    assert mine["stock_count"] == len(s.stock) and mine["upcard"] == "9S"
    assert [seat["hand_count"] for seat in mine["seats"]] == [len(h) for h in s.hands]
