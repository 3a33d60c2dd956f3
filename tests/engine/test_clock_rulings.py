"""Clock rulings at their edges (docs/rules.md, the service clocks: E2 and E22)."""

from __future__ import annotations

from mayi_scenarios import act, as_json, cards, discard, down, hand_of, pass_all, table

from mayi_engine import deadline, play, seat_returns, timeout_discard
from mayi_engine.melds import Meld
from mayi_engine.moves import Claim, DrawStock, Pass, Timeout
from mayi_engine.rules import MAY_I, SHANGHAI
from mayi_engine.state import Phase


def _absent(state, seat):
    state.absent = tuple(a or i == seat for i, a in enumerate(state.absent))
    return state


def test_an_absent_seat_on_turn_is_due_when_the_present_seats_have_answered():
    """With a claim window longer than the turn clock, the absent seat on turn is not
    kept waiting for the window: once every present seat has answered, it is due."""
    state = table(SHANGHAI, 3, options={"claim_seconds": 90, "turn_seconds": 10})
    assert state.phase is Phase.DRAW and state.turn == 0
    state = _absent(state.clone(), 0)
    state, _ = act(state, 1, Pass(), now=1.0)
    state, _ = act(state, 2, Pass(), now=1.0)
    due = deadline(state)
    assert due == 0.0, "due from the moment the draw decision started"
    _, events = play(state, None, Timeout(), now=2.0)
    events = as_json(events)
    assert [e["type"] for e in events][:1] == ["drew"] and events[0].get("timeout")


def test_an_absent_seat_on_turn_still_waits_for_present_claimants():
    state = table(SHANGHAI, 3, options={"claim_seconds": 90, "turn_seconds": 10})
    state = _absent(state.clone(), 0)
    assert deadline(state) == 90.0  # seat 1 and 2 may still answer until the window closes


def test_the_timed_out_discard_on_the_may_i_go_down_turn_may_be_a_card_that_fits():
    """E22: what the seat could lay off is judged by the rules in force on that turn.
    May I forbids laying off on the go-down turn, so the joker (which fits both books)
    is the highest card it could not lay off now, and it goes rather than an ace."""
    state = table(MAY_I, 2, hands=["5C 5D 5H 6C 6D 6H JK AD"], upcard="AS")
    state, _ = act(state, 0, Claim())  # seat 0 takes the first upcard as its draw
    assert state.phase is Phase.PLAY and state.held == cards("AS")[0]
    state, _ = act(state, 0, down("5C 5D 5H", "6C 6D 6H"))
    assert state.went_down and "JK" in hand_of(state, 0)
    assert timeout_discard(state, 0) == cards("JK")[0]
    _, events = play(state, None, Timeout(), now=state.turn_deadline or 0.0)
    events = as_json(events)
    discarded = [e for e in events if e["type"] == "discarded"]
    assert discarded[0]["seat"] == 0 and discarded[0]["data"]["card"] == "JK" and discarded[0].get("timeout")


def test_the_timed_out_discard_keeps_a_card_that_fits_on_a_later_turn():
    """Down on an earlier turn, the seat could lay off the ace: it keeps it."""
    state = table(MAY_I, 2, hands=["AC AD AS 9C 9D 9S AH 2D 3C 4H"], stock="6D KS")
    state, _ = act(state, 0, Pass())
    state, _ = act(state, 1, Pass())  # nobody takes the first upcard: seat 0 draws 6D
    state, _ = act(state, 0, down("AC AD AS", "9C 9D 9S"))
    state, _ = act(state, 0, discard("6D"))
    state = pass_all(state)
    state, _ = act(state, 1, DrawStock())
    state, _ = act(state, 1, discard(hand_of(state, 1)[0]))
    state = pass_all(state)
    state, _ = act(state, 0, DrawStock())
    assert not state.went_down and "AH" in hand_of(state, 0)
    assert timeout_discard(state, 0) != cards("AH")[0]


def test_the_timed_out_discard_may_be_the_held_card_though_it_fits():
    """E22 and the hold rule: the card just taken from the pile cannot be laid off this
    turn, so it counts as a card the seat could not lay off."""
    state = table(MAY_I, 2, hands=["AC AD AS 9C 9D 9S 2D 3C 4H 5S"], upcard="AH")
    state, _ = act(state, 0, Claim())  # seat 0 takes the AH as its draw
    assert state.held == cards("AH")[0]
    state = state.clone()  # as if seat 0 were down already with a book of aces
    state.down = (True, False)
    state.melds = (Meld(0, 0, "book", cards("AC AD AS"), 1),)
    assert timeout_discard(state, 0) == cards("AH")[0]
    state.held = -1  # the same hand without the hold rule's card: the AH could be laid off
    assert timeout_discard(state, 0) != cards("AH")[0]


def test_three_timeouts_counting_unanswered_claims_make_a_may_i_seat_absent():
    """E2: an unanswered claim is a pass and a timeout toward absence, like turn decisions."""
    state = table(MAY_I, 3, upcard="9S")
    state, _ = act(state, 0, Pass())
    state, _ = act(state, 1, Pass())
    state, _ = act(state, 2, Pass())  # seat 0 draws from the stock
    state, _ = act(state, 0, discard(hand_of(state, 0)[0]), now=1.0)  # seat 1's turn, claims open
    state, events = play(state, None, Timeout(), now=16.0)  # seat 2's claim times out: 1
    events = as_json(events)
    assert [(e["type"], e["seat"]) for e in events] == [("passed", 2)] and state.timeouts == (0, 0, 1)
    state, _ = act(state, 1, DrawStock(), now=17.0)
    state, _ = act(state, 1, discard(hand_of(state, 1)[0]), now=18.0)  # seat 2's turn
    state, _ = act(state, 0, Pass(), now=18.0)
    state, _ = play(state, None, Timeout(), now=78.0)  # seat 2 draws: 2
    assert state.timeouts == (0, 0, 2) and not state.absent[2]
    state, events = play(state, None, Timeout(), now=138.0)  # seat 2 discards: 3, absent
    events = as_json(events)
    assert ("seat_absent", 2) in [(e["type"], e["seat"]) for e in events]
    assert state.absent == (False, False, True)


def test_seat_returns_clears_absence_and_timeouts_with_an_event():
    state = table(MAY_I, 2)
    state = _absent(state.clone(), 1)
    state.timeouts = (0, 3)
    back, events = seat_returns(state, 1)
    events = as_json(events)
    assert back.absent == (False, False) and back.timeouts == (0, 0)
    assert [e["type"] for e in events] == ["seat_returned"]
    same, none = seat_returns(back, 1)
    assert same is back and none == []
    assert state.absent[1], "the state given is not changed"


def test_a_draw_is_refused_before_claims_are_answered_but_not_for_an_absent_claimant():
    """An absent claimant is passed at once by the clock; the stock draw then goes ahead."""
    state = table(SHANGHAI, 3)
    state = _absent(state.clone(), 2)
    state, _ = act(state, 1, Pass(), now=1.0)
    assert deadline(state) == 0.0
    state, events = play(state, None, Timeout(), now=1.0)
    events = as_json(events)
    assert any(e["type"] == "passed" and e["seat"] == 2 and e.get("timeout") for e in events)
    state, _ = act(state, 0, DrawStock(), now=1.0)
    assert state.phase is Phase.PLAY
