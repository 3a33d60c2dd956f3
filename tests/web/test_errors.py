"""Errors at the web table are shown next to the action that met them, in view, in words: a
go-down the service refuses shows the problem's detail (its card codes as the page shows cards)
beside the Go down button (not at the top
of the page, scrolled out of sight), and an action the server does not answer says so in words
("The server is not answering; retrying", never a raw "TypeError: Failed to fetch") and goes
through once the server answers again (the same Idempotency-Key makes the retry safe)."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Route, expect
from web_helpers import OTHERS, PERSON, SEED, STOCK, act, create, hold_seat, pass_claim, press_card, stack

#: A laptop's screen: the hand and the moves lie below the fold, so the page scrolls to them.
WIDTH, HEIGHT = 1366, 900


def stage(page: Any, cards: list[str]) -> None:
    for card in cards:
        press_card(page, card)
    page.get_by_role("button", name="Make a meld of the selected cards").click()


def test_errors_show_next_to_the_action_in_view_and_in_words(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    deck = stack([PERSON, *OTHERS], "2S", STOCK)
    game_id, tokens = create(url, 4, ["Ann", "Bob", "Cy", "Di"], {"seed": SEED, "stacked_decks": [deck]})
    page = new_page(WIDTH, HEIGHT)
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#live")).to_have_text("live")
    for seat in range(4):  # every seat passes the first upcard: Ann draws and plays
        pass_claim(url, game_id, tokens[seat])
    expect(page.locator(".go-down .contract-status")).to_have_attribute("data-met", "true")

    # A go-down the service refuses (Ann went down meanwhile, from another device: the API,
    # just before the page's request reaches it): the problem's detail in the page's words
    # (cards as it shows them), beside the button, on screen.
    stage(page, ["7C", "7D", "7S"])
    stage(page, ["9C", "9D", "9S"])
    go_down = page.get_by_role("button", name="Go down")

    def down_first(route: Route) -> None:
        act(url, game_id, tokens[0], "melds", {"melds": [["7C", "7D", "7S"], ["9C", "9D", "9S"]]})
        route.continue_()

    page.route("**/melds", down_first, times=1)
    where = go_down.bounding_box()  # (once Ann is down, the page offers no go-down: the error stays there)
    with page.expect_response(lambda r: r.url.endswith("/melds")) as answer:
        go_down.click()
    assert answer.value.status in (409, 422), answer.value.text()
    problem = page.locator("#action-error")
    expect(problem.locator(".error-text")).to_have_text(in_page_words(answer.value.json()["detail"]))
    expect(problem).to_be_in_viewport()
    near(problem.bounding_box(), where)
    shots(page, "error-beside-go-down")
    # A detail that names cards names them as the page shows them.
    written = page.evaluate(
        "() => import('/web/js/cards.js').then((c) => c.withCardText('A run needs 4; 7C 9C KC TH JK has 5'))"
    )
    assert written == "A run needs 4; 7♣ 9♣ K♣ 10♥ Joker has 5" == in_page_words("A run needs 4; 7C 9C KC TH JK has 5")

    # The server does not answer (the connection is refused): words, in view, while retrying.
    expect(page.locator(".seat[data-seat='0'] .badge.down")).to_be_visible()

    def refuse(route: Route) -> None:
        route.abort("connectionrefused")

    page.route("**/turn/discard", refuse)
    press_card(page, "KC")
    discard = page.get_by_role("button", name="Discard K♣")
    discard.click()
    problem = page.locator("#action-error")
    expect(problem).to_contain_text("The server is not answering; retrying")
    expect(problem).to_be_in_viewport()
    near(box(problem), box(discard))
    assert "Failed to fetch" not in page.inner_text("body")
    assert "TypeError" not in page.inner_text("body")
    shots(page, "server-not-answering")
    page.unroute("**/turn/discard", refuse)  # the server answers again: the retry discards
    expect(page.locator("#discard-top")).to_have_attribute("data-card", "KC")
    expect(problem).to_have_count(0)


def in_page_words(detail: str) -> str:
    """``detail`` with its card codes as the page shows cards (``7C`` as ``7♣``)."""
    symbols = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
    return re.sub(
        r"\b(?:[2-9TJQKA][CDHS]|JK)\b",
        lambda m: "Joker" if m[0] == "JK" else ("10" if m[0][0] == "T" else m[0][0]) + symbols[m[0][1]],
        detail,
    )


def box(locator: Any) -> Any:
    """The element's box, as drawn now: a redraw (each retry redraws the error) may replace
    the element between finding it and measuring it, so it is found again and measured."""
    for _ in range(20):
        found = locator.bounding_box()
        if found is not None:
            return found
    raise AssertionError(f"{locator} has no box")


def near(first: Any, second: Any) -> None:
    """The two boxes (the error, the button it is about) lie within a few lines of each other."""
    assert first is not None and second is not None
    gap = max(first["y"] - (second["y"] + second["height"]), second["y"] - (first["y"] + first["height"]), 0)
    assert gap < 200, (first, second)
