"""The other seats' moves are drawn one at a time, at a pace a person can follow: against three
house bots on the default server (default clocks: a 15 s claim window, a 60 s turn), each bot's
draw, its discard (the card on the pile) and its melds are drawn as a state of their own, with
their line in the log beside them, in the order they were played; never three bots' turns
landing in one redraw."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import requests
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect
from web_helpers import act, create, hand_on_page, hold_seat, pass_claim, press_card, settle, view

#: Each redraw of the page, as the browser drew it: the pile's top card, the log's newest line,
#: the seats' card counts (a MutationObserver, installed before the page's own script runs).
RECORD_FRAMES = """
window.__frames = [];
new MutationObserver(() => {
  const top = document.querySelector('#discard-top');
  const newest = document.querySelector('.events li');
  const counts = [...document.querySelectorAll('.seat .count')].map((c) => c.dataset.handCount);
  const frame = { top: top ? top.dataset.card : null, seq: newest ? Number(newest.dataset.seq) : 0, counts };
  const last = window.__frames[window.__frames.length - 1];
  if (!last || JSON.stringify(last) !== JSON.stringify(frame)) window.__frames.push(frame);
}).observe(document, { childList: true, subtree: true, attributes: true });
"""
#: The moves that change what the table shows.
SHOWN = {"drew", "took_upcard", "claim_won", "discarded", "went_down", "laid_off"}


def seat_with_house_bots(url: str) -> tuple[str, str]:
    """A May I table of 4 on the default clocks: Ann in seat 0, three greedy house bots."""
    game_id, (token,) = create(url, 4, ["Ann"], options=None)  # default clocks; waits out a 429 as a client does
    for _ in range(3):
        taken = requests.post(f"{url}/v1/games/{game_id}/seats", json={"house_bot": "greedy"}, timeout=30)
        assert taken.status_code == 201, taken.text
    return game_id, token


def test_other_seats_moves_are_drawn_one_at_a_time(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id, token = seat_with_house_bots(url)
    page = new_page()
    page.add_init_script(RECORD_FRAMES)
    hold_seat(page, url, game_id, token, 0)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#live")).to_have_text("live")
    draw = page.get_by_role("button", name="Draw from the stock")
    passing = page.get_by_role("button", name="Pass on")
    to_discard = page.locator("#turn.yours", has_text="discard")
    for _ in range(10):  # Ann's part until she has discarded once: pass the upcards, draw, discard
        expect(draw.or_(passing).or_(to_discard).first).to_be_visible()
        if to_discard.is_visible():
            card = hand_on_page(page)[0]
            press_card(page, card)
            page.get_by_role("button", name="Discard").click()
            expect(page.locator(".events")).to_contain_text("Ann discards")
            break
        with suppress(PlaywrightTimeout):  # an upcard a bot takes meanwhile is gone: fine
            (passing if passing.is_visible() else draw).click(timeout=5_000)
    so_far = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()["events"]
    mine = next(e["seq"] for e in so_far if e["type"] == "discarded" and e["seat"] == 0)

    # The three bots play their turns; Ann passes on each upcard she is offered, until her turn.
    for _ in range(20):
        with suppress(PlaywrightTimeout):
            expect(draw.or_(passing).first).to_be_visible()
        if draw.is_visible():
            break
        # As a person does: Ann answers an upcard once the table has drawn it on the pile.
        window = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()["claim_window"]
        with suppress(PlaywrightTimeout):
            if window:
                expect(page.locator("#discard-top")).to_have_attribute("data-card", window["card"], timeout=10_000)
            passing.click(timeout=5_000)
    expect(draw).to_be_visible()
    expect(page.locator(".events li").first).to_have_attribute(
        "data-seq", str(requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()["last_event"])
    )
    shots(page, "after-the-bots")

    events = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": mine}, timeout=30).json()["events"]
    moves = [e for e in events if e["type"] in SHOWN and e["seat"] != 0]
    assert len(moves) >= 6, (mine, events, hand_on_page(page), card)  # three bots drew and discarded at least
    frames = page.evaluate("() => window.__frames")
    at = -1
    for move in moves:
        # The move's own state: drawn, with its log line the newest, after the one before it.
        drawn = [i for i, f in enumerate(frames) if f["seq"] == move["seq"]]
        assert drawn, f"{move['type']} of seat {move['seat']} (event {move['seq']}) never drawn on its own: {frames}"
        assert drawn[0] > at, (move, frames)
        at = drawn[0]
        if move["type"] == "discarded":
            assert frames[at]["top"] == move["data"]["card"], (move, frames[at])
        if move["type"] == "drew" and at > 0:  # the drawer's new card is counted before its discard is shown
            # A stock draw leaves the pile as it was. (Not "the top is not the card it discards
            # next": with two decks that card can be the twin of the top, the same code.)
            assert frames[at]["top"] == frames[at - 1]["top"], (move, frames[at - 1], frames[at])


def test_a_seat_taking_the_upcard_shows_the_card_under_it(served: Any, new_page: Any) -> None:
    """The pile's top after another seat takes the upcard comes from the event (``discard_top``),
    also when the page never saw that card on top: never an empty pile in between."""
    url = served.url
    game_id, tokens = create(url, 3, ["Ann", "Bob", "Cy"])
    for seat in range(3):  # nobody takes the first upcard: Ann, first to play, has drawn
        pass_claim(url, game_id, tokens[seat])
    first_upcard = view(url, game_id)["discard_top"]
    discard = next(m["card"] for m in view(url, game_id, tokens[0])["legal"] if m["type"] == "discard")
    act(url, game_id, tokens[0], "turn/discard", {"card": discard})  # the pile: the first upcard, then Ann's
    page = new_page()
    page.add_init_script(RECORD_FRAMES)
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#discard-top")).to_have_attribute("data-card", discard)
    expect(page.locator("#live")).to_have_text("live")
    settle(url, game_id, tokens)  # Cy passes; Bob takes Ann's discard as his draw
    act(url, game_id, tokens[1], "turn/draw", {"source": "discard"})
    expect(page.locator(".events li").first).to_contain_text("Bob takes the upcard")
    expect(page.locator("#discard-top")).to_have_attribute("data-card", first_upcard)
    tops = [f["top"] for f in page.evaluate("() => window.__frames")]
    shown = tops[tops.index(discard) :]
    assert None not in shown, shown  # the paced state showed the card under it, not an empty pile
    assert shown[-1] == first_upcard, shown
