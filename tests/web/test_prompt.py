"""The table's prompt says what is the person's to do, and only that: "Your move" (and the
tab's title "Your turn") on their turn; while another seat is to draw and the person may
still answer the upcard, it says they may call May I, and whose turn it is, never "Your
move". Two seats with one name are told apart on the page by their seat numbers."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import act, hold_seat, pass_claim, view
from web_helpers import create as create_table


def discard_any(url: str, game_id: str, token: str) -> None:
    """The seat (on turn, after its draw) discards its first legal discard."""
    legal = view(url, game_id, token)["legal"]
    act(url, game_id, token, "turn/discard", {"card": next(m["card"] for m in legal if m["type"] == "discard")})


def test_the_prompt_is_yours_only_when_the_move_is(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create_table(url, 3, ["Ann", "Bob", "Ann"])
    page = new_page()
    hold_seat(page, url, game_id, tokens[2], 2)  # the second Ann, seat 3 on the page
    page.goto(f"{url}/#/game/{game_id}")
    turn = page.locator("#turn")
    expect(page.locator(".seat .name")).to_have_text(["Ann (seat 1)", "Bob", "Ann (seat 3) (you)"])
    expect(page.locator(".role")).to_have_text("You are Ann (seat 3)")
    for seat in range(3):  # the first upcard: nobody takes it; Ann (seat 1) draws and discards
        pass_claim(url, game_id, tokens[seat])
    discard_any(url, game_id, tokens[0])

    # Bob is to draw; the person may still call May I on Ann's discard: not their move.
    expect(turn).to_contain_text("Bob to draw")
    expect(turn).to_contain_text("You may call May I on")
    expect(turn).not_to_contain_text("Your move")
    expect(turn).to_have_attribute("data-you", "answer")
    expect(page).not_to_have_title("Your turn · May I: the web table")

    page.get_by_role("button", name="Pass on").click()
    expect(turn).not_to_have_attribute("data-you", "answer")  # the pass has landed: Bob may draw
    act(url, game_id, tokens[1], "turn/draw", {"source": "stock"})
    discard_any(url, game_id, tokens[1])
    pass_claim(url, game_id, tokens[0])
    # The person's turn now: the prompt, and the tab's title, say so.
    expect(turn).to_contain_text("Your move: draw")
    expect(turn).to_have_attribute("data-you", "turn")
    expect(page).to_have_title("Your turn · May I: the web table")
