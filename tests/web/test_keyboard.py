"""The table by keyboard: the first Tab reaches a skip link to the hand and the moves; the
arrow keys go from card to card, Space selects one; a move's shortcut key makes it (D draw,
P pass, X discard the selected card ...: listed on the page); after a move the focus stays
in the action area, never falling back to the page. The service's default clocks; the test
plays the other seats through the API."""

from __future__ import annotations

from typing import Any

import requests
from playwright.sync_api import Page, expect
from web_helpers import act, round_one_table, settle, view


def focus_in_moves(page: Page) -> None:
    """The focus is on a control of the hand or the moves."""
    expect(page.locator("#dock :focus")).to_have_count(1)


def test_the_table_by_keyboard(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id, tokens, page = round_one_table(url, new_page)
    for seat in range(4):  # the first upcard: nobody takes it; Ann is dealt 9H
        act(url, game_id, tokens[seat], "claims", {"claim": False})
    expect(page.locator(".hand h2")).to_contain_text("Your hand (11)")

    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to your hand and moves")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    cards = page.locator(".hand-cards button.card")
    expect(cards.first).to_be_focused()
    # Sorted by suit, K♣ is the fourth card: three presses of the right arrow, Space, X.
    assert cards.nth(3).get_attribute("data-card") == "KC"
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(cards.nth(3)).to_be_focused()
    page.keyboard.press("Space")
    expect(page.get_by_role("button", name="Discard K♣")).to_be_enabled()
    page.keyboard.press("x")
    expect(page.locator("#discard-top")).to_have_attribute("data-card", "KC")
    focus_in_moves(page)

    # Bob's discard is offered to Ann: P passes it; the focus stays in the moves.
    settle(url, game_id, tokens)
    act(url, game_id, tokens[1], "turn/draw", {"source": "stock"})
    act(url, game_id, tokens[1], "turn/discard", {"card": "2C"})
    expect(page.get_by_role("button", name="Pass on 2♣")).to_be_visible()
    page.keyboard.press("p")
    expect(page.get_by_role("button", name="Pass on 2♣")).to_have_count(0)
    focus_in_moves(page)
    passed = [
        e for e in view_events(url, game_id) if e["type"] == "passed" and e["seat"] == 0 and e["data"]["card"] == "2C"
    ]
    assert passed and not passed[0].get("timeout"), passed

    for seat in (2, 3):  # Cy and Di play; then D draws for Ann
        settle(url, game_id, tokens)
        act(url, game_id, tokens[seat], "turn/draw", {"source": "stock"})
        legal = view(url, game_id, tokens[seat])["legal"]
        act(
            url,
            game_id,
            tokens[seat],
            "turn/discard",
            {"card": next(m["card"] for m in legal if m["type"] == "discard")},
        )
        if seat == 2:
            expect(page.get_by_role("button", name="Pass on")).to_be_visible()
            page.keyboard.press("p")
            expect(page.get_by_role("button", name="Pass on")).to_have_count(0)
    settle(url, game_id, tokens)
    draw = page.get_by_role("button", name="Draw from the stock")
    expect(draw).to_be_visible()
    expect(draw).to_have_attribute("aria-keyshortcuts", "D")
    page.keyboard.press("d")
    expect(page.locator(".hand h2")).to_contain_text("Your hand (11)")
    focus_in_moves(page)
    page.get_by_text("Keyboard shortcuts").click()
    expect(page.locator(".shortcuts")).to_contain_text("D Draw from the stock")
    shots(page, "keyboard")


def view_events(url: str, game_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = requests.get(
        f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30
    ).json()["events"]
    return events
