"""Errors at the web table are shown next to the action that met them, in view, in words: a
go-down the rules refuse shows the problem's detail beside the Go down button (not at the top
of the page, scrolled out of sight), and an action the server does not answer says so in words
("The server is not answering; retrying", never a raw "TypeError: Failed to fetch") and goes
through once the server answers again (the same Idempotency-Key makes the retry safe)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Route, expect
from web_helpers import OTHERS, PERSON, SEED, STOCK, create, hold_seat, pass_claim, press_card, stack

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

    # A meld the rules refuse: the problem's detail, beside the button, on screen.
    stage(page, ["7C", "9C", "KC"])
    go_down = page.get_by_role("button", name="Go down")
    with page.expect_response(lambda r: r.url.endswith("/melds")) as answer:
        go_down.click()
    assert answer.value.status == 422
    problem = page.locator("#action-error")
    expect(problem.locator(".error-text")).to_have_text(answer.value.json()["detail"])
    expect(problem).to_be_in_viewport()
    near(problem.bounding_box(), go_down.bounding_box())
    shots(page, "error-beside-go-down")

    # The server does not answer (the connection is refused): words, in view, while retrying.
    page.get_by_role("button", name="Take back").click()
    stage(page, ["7C", "7D", "7S"])
    stage(page, ["9C", "9D", "9S"])

    def refuse(route: Route) -> None:
        route.abort("connectionrefused")

    page.route("**/melds", refuse)
    page.get_by_role("button", name="Go down").click()
    expect(problem).to_contain_text("The server is not answering; retrying")
    expect(problem).to_be_in_viewport()
    assert "Failed to fetch" not in page.inner_text("body")
    assert "TypeError" not in page.inner_text("body")
    shots(page, "server-not-answering")
    page.unroute("**/melds", refuse)  # the server answers again: the retry goes down
    expect(page.locator(".melds .meld")).to_have_count(2)
    expect(page.locator(".seat[data-seat='0'] .badge.down")).to_be_visible()
    expect(problem).to_have_count(0)


def near(box: Any, other: Any) -> None:
    """The two boxes (the error, the button it is about) lie within a few lines of each other."""
    assert box is not None and other is not None
    gap = max(box["y"] - (other["y"] + other["height"]), other["y"] - (box["y"] + box["height"]), 0)
    assert gap < 200, (box, other)
