"""Joining an open seat from the lobby, then reloading it mid-game: the seat token kept in the
browser's localStorage resumes the seat, and the page follows the game live again (SSE), also
after the connection drops for a while."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import create, hand_on_page, pass_claim, view


def test_join_then_a_reload_resumes_the_seat(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 4, ["Bob", "Cy", "Di"])  # seats 0-2 taken, seat 3 open
    page = new_page()
    page.goto(url + "/")  # the lobby lists the table waiting for a player
    row = page.locator(f"tr[data-game='{game_id}']")
    expect(row.locator(".names")).to_have_text("Bob, Cy, Di, open")
    shots(page, "lobby")
    row.get_by_role("link", name="Join").click()
    expect(page.locator(".waiting h2")).to_contain_text("3 of 4 seated")
    page.get_by_label("Your name").fill("Ann")
    page.get_by_role("button", name="Join").click()

    # The last seat taken starts the game: Ann (seat 4 on the page, seat 3 in the API) sees her hand.
    expect(page.locator(".role")).to_have_text("You are Ann (seat 4)")
    expect(page.locator(".hand h2")).to_contain_text("Your hand (10)")
    hand = hand_on_page(page)
    expect(page.locator("#turn")).to_contain_text("Bob is offered the first upcard")
    pass_claim(url, game_id, tokens[0])
    expect(page.locator("#turn")).to_contain_text("Cy is offered the first upcard")

    page.reload()
    expect(page.locator(".role")).to_have_text("You are Ann (seat 4)")
    expect(page.locator(".hand h2")).to_contain_text("Your hand (10)")
    assert hand_on_page(page) == hand
    expect(page.locator("#live")).to_have_text("live")
    pass_claim(url, game_id, tokens[1])  # live again after the reload
    expect(page.locator("#turn")).to_contain_text("Di is offered the first upcard")

    # The connection drops (the browser goes offline): the page says so, and when the network
    # is back it follows the game again from the last event it saw, with what happened meanwhile.
    page.context.set_offline(True)
    expect(page.locator("#live")).to_have_text("reconnecting…")
    pass_claim(url, game_id, tokens[2])
    page.context.set_offline(False)
    expect(page.locator("#live")).to_have_text("live")
    expect(page.locator(".events")).to_contain_text("Di passes on")
    expect(page.locator("#turn")).to_contain_text("Your move: take the upcard")
    expect(page.locator("#turn")).to_contain_text("Ann is offered the first upcard")
    page.get_by_role("button", name="Take").click()
    expect(page.locator(".hand h2")).to_contain_text("Your hand (11)")
    # Ann took it out of turn: she must discard at once.
    state = view(url, game_id)
    assert state["phase"] == "first_discard" and state["actor"] == 3
    expect(page.get_by_role("button", name="Discard (select one card)")).to_be_disabled()
