"""The person's turn: the card they were just dealt from the stock is outlined in their hand
(and said in words beside it) until their turn ends, and the log names it for them (the event
stream, without a token, carries no private part: the page knows it from the hand). The
service's default clocks; the test plays the other seats through the API."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import act, press_card, round_one_table, settle, turn


def test_the_drawn_card_is_outlined_and_named_for_its_owner(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id, tokens, page = round_one_table(url, new_page)
    fresh = page.locator(".hand-cards button.card.drawn")
    expect(fresh).to_have_count(0)
    for seat in range(4):  # the first upcard: nobody takes it; Ann is dealt the stock's 9H
        act(url, game_id, tokens[seat], "claims", {"claim": False})
    expect(fresh).to_have_count(1)  # one of her two nines of hearts: the new one
    expect(fresh).to_have_attribute("data-card", "9H")
    expect(page.locator("#fresh-note")).to_have_text("New in your hand: 9♥ (outlined).")
    expect(page.locator(".events li[data-type='drew']").first).to_have_text("Ann draws from the stock (9♥).")
    shots(page, "drawn-card")

    press_card(page, "KC")
    page.get_by_role("button", name="Discard K♣").click()
    expect(fresh).to_have_count(0)  # her turn is over
    for seat in (1, 2, 3):
        turn(url, game_id, tokens, seat)
    settle(url, game_id, tokens)
    page.get_by_role("button", name="Draw from the stock").click()
    expect(fresh).to_have_attribute("data-card", "6S")
    expect(page.locator(".events li[data-type='drew'][data-seq]").first).to_have_text("Ann draws from the stock (6♠).")
    # Another seat's draw is never named.
    expect(page.locator(".events")).to_contain_text("Bob draws from the stock.")
    act(url, game_id, tokens[0], "turn/discard", {"card": "6S"})
