"""At a round's end the page shows a summary before the next round's table: every seat's hand
as counted (from the ``round_ended`` event, public once the round is over), each seat's points
and total, and who went out; it stays until the person continues. Before that, no other
seat's card is shown. The service's default clocks; the test plays the seats through the API."""

from __future__ import annotations

from typing import Any

import requests
from playwright.sync_api import expect
from web_helpers import act, lay_off_each, round_one_table, settle, turn, view


def test_a_round_summary_shows_every_hand_until_the_person_continues(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id, tokens, page = round_one_table(url, new_page, seat=1)  # Bob's page: another seat goes out
    for seat in range(4):  # the first upcard: nobody takes it; Ann is dealt 9H
        act(url, game_id, tokens[seat], "claims", {"claim": False})
    act(url, game_id, tokens[0], "melds", {"melds": [["7C", "7D", "7S"], ["9C", "9D", "9S"]]})
    act(url, game_id, tokens[0], "turn/discard", {"card": "KC"})
    for seat in (1, 2, 3):
        turn(url, game_id, tokens, seat)
    settle(url, game_id, tokens)
    act(url, game_id, tokens[0], "turn/draw", {"source": "stock"})
    hand = view(url, game_id, tokens[0])["hand"]
    lay_off_each(url, game_id, tokens[0], ["7H", "7C", "9H", "9H"])
    summary = page.locator(".round-summary")
    expect(summary).to_have_count(0)
    # While the round is on, no card of another seat is in the page: only Bob's hand and the table's.
    expect(page.locator(".melds .card")).to_have_count(10)
    shown = page.locator("#app [data-card]:not(.hand-cards *):not(.melds *):not(.piles *)")
    assert shown.count() == 0, shown.evaluate_all("els => els.map(e => e.outerHTML)")
    last = next(c for c in hand if c not in ("7H", "7C", "9H", "9H"))
    act(url, game_id, tokens[0], "turn/discard", {"card": last})  # Ann goes out

    ended = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()["events"]
    data = next(e for e in ended if e["type"] == "round_ended")["data"]
    expect(summary).to_be_visible()
    expect(summary.locator("h2")).to_have_text("Round 1 is over")
    expect(summary.locator(".summary-out")).to_have_text("Ann went out.")
    rows = summary.locator("tbody tr")
    expect(rows).to_have_count(4)
    for seat in range(4):
        row = rows.nth(seat)
        cards = row.locator(".summary-hand .card").evaluate_all("els => els.map(e => e.dataset.card)")
        assert sorted(cards) == sorted(data["hands"][seat]), (seat, cards)
        expect(row.locator(".points")).to_have_text(str(data["scores"][seat]))
        expect(row.locator(".total")).to_have_text(str(data["totals"][seat]))
    expect(rows.nth(0).locator("th")).to_have_text("Ann (out)")
    expect(rows.nth(1).locator("th")).to_have_text("Bob (you)")
    assert data["scores"][0] == 0 and all(s > 0 for s in data["scores"][1:]), data
    continuing = page.get_by_role("button", name="Continue to round 2")
    expect(continuing).to_be_focused()
    shots(page, "round-summary")
    # It stays while the next round is dealt, until the person continues.
    expect(page.locator(".status .round")).to_contain_text("Round 2 of 7")
    expect(summary).to_be_visible()
    continuing.click()
    expect(summary).to_have_count(0)
    expect(page.locator(".status .round")).to_contain_text("Round 2 of 7")
    expect(page.locator(".hand h2")).to_contain_text("Your hand")
