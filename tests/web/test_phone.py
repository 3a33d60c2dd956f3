"""On a phone (390×844): the hand and the moves are on screen without scrolling (fixed at the
bottom, the rest of the table scrolls above them), on the person's turn and when an upcard is
offered to them; nothing is wider than the screen: the round's summary, the scores table, the
ladder's leaderboard (whose rows then show each value with its column's name). The service's
default clocks; the test plays the other seats through the API."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect
from web_helpers import act, lay_off_each, round_one_table, settle, turn, view

WIDTH, HEIGHT = 390, 844


def on_screen(page: Page, selector: str) -> int:
    """Every element of ``selector`` is wholly on the screen as it is (unscrolled); how many."""
    elements = page.locator(selector)
    count = elements.count()
    assert count, selector
    for i in range(count):
        expect(elements.nth(i)).to_be_in_viewport(ratio=1)
    return count


def nothing_wider(page: Page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{page.url}: the page is {width} px wide on a {WIDTH} px screen"


def test_a_phone_shows_the_hand_and_the_moves_without_scrolling(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id, tokens, page = round_one_table(url, new_page, size=(WIDTH, HEIGHT))
    pass_button = page.get_by_role("button", name="Pass on 2♠")
    expect(pass_button).to_be_in_viewport(ratio=1)  # the first upcard, offered to Ann
    for seat in range(4):
        act(url, game_id, tokens[seat], "claims", {"claim": False})
    expect(page.locator(".hand h2")).to_contain_text("Your hand (11)")
    assert page.evaluate("() => window.scrollY") == 0
    assert on_screen(page, ".hand-cards button.card") == 11
    on_screen(page, ".actions button")  # make a meld, the suggested melds, go down, discard
    nothing_wider(page)
    shots(page, "phone-your-turn")

    act(url, game_id, tokens[0], "melds", {"melds": [["7C", "7D", "7S"], ["9C", "9D", "9S"]]})
    act(url, game_id, tokens[0], "turn/discard", {"card": "KC"})
    settle(url, game_id, tokens)
    act(url, game_id, tokens[1], "turn/draw", {"source": "stock"})
    act(url, game_id, tokens[1], "turn/discard", {"card": "2C"})
    expect(page.get_by_role("button", name="Pass on 2♣")).to_be_visible()
    on_screen(page, ".actions button")  # May I!, pass
    on_screen(page, ".hand-cards button.card")
    for seat in (2, 3):
        settle(url, game_id, tokens)
        turn(url, game_id, tokens, seat)
    settle(url, game_id, tokens)
    act(url, game_id, tokens[0], "turn/draw", {"source": "stock"})
    hand = view(url, game_id, tokens[0])["hand"]
    lay_off_each(url, game_id, tokens[0], ["7H", "7C", "9H", "9H"])
    act(url, game_id, tokens[0], "turn/discard", {"card": next(c for c in hand if c not in ("7H", "7C", "9H", "9H"))})

    expect(page.locator(".round-summary")).to_be_visible()
    nothing_wider(page)
    shots(page, "phone-round-summary")
    page.get_by_role("button", name="Continue to round 2").click()
    expect(page.locator(".score-table tbody tr")).to_have_count(1)
    nothing_wider(page)
    on_screen(page, ".hand-cards button.card")

    page.goto(f"{url}/#/ladder")
    board = page.locator(".leaderboard tbody tr")
    expect(board.first).to_be_visible()
    nothing_wider(page)
    labels = board.first.locator("td").evaluate_all("tds => tds.map((td) => getComputedStyle(td, '::before').content)")
    assert '"Rating: "' in labels and '"Wins: "' in labels, labels
    shots(page, "phone-ladder")
