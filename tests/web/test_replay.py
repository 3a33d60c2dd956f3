"""The replay of a finished game, stepped through at the web table: forward, back, to the
end, a jump to a round, and autoplay to the end; the hands are rebuilt from the replay's
events; at the end, the winner's line and who went out ("(out)")."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import SEED, act, create, stack

#: May I's last round (3 runs with every card; with 3 players, Ann, seat 0, plays first): Ann
#: takes the first upcard, goes down with three runs and discards her last card: the game ends.
ANN = ["3C", "4C", "5C", "6C", "8D", "9D", "TD", "JD", "2H", "3H", "4H", "5H"]
OTHERS = [
    ["2C", "2D", "7S", "9S", "JS", "KS", "QC", "QH", "6D", "8H", "TC", "AS"],
    ["2S", "3D", "4S", "5D", "6S", "7H", "8S", "9H", "TS", "JC", "QS", "AD"],
]
RUNS = [["3C", "4C", "5C", "6C"], ["8D", "9D", "TD", "JD"], ["2H", "3H", "4H", "5H"]]


def finished_game(url: str) -> str:
    deck = stack([ANN, *OTHERS], "KD", [])
    game_id, tokens = create(
        url, 3, ["Ann", "Bob", "Cy"], {"seed": SEED, "stacked_decks": [None] * 6 + [deck], "start_round": 7}
    )
    act(url, game_id, tokens[0], "claims", {"claim": True})
    act(url, game_id, tokens[0], "melds", {"melds": RUNS})
    final = act(url, game_id, tokens[0], "turn/discard", {"card": "KD"})
    assert final["status"] == "finished"
    return game_id


def test_a_replay_steps_through_a_finished_game(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    game_id = finished_game(url)
    page = new_page(390, 844)  # a phone-sized screen

    # From the lobby: the finished table, and its replay.
    page.goto(url + "/")
    page.get_by_role("button", name="Finished").click()
    page.locator(f"tr[data-game='{game_id}'] a", has_text="Replay").click()
    step = page.locator("#step")
    text = page.locator("#event-text")
    expect(step).to_have_text("Step 0 of 9")  # 9 events: start, 3 deals, take, down, discard, 2 ends
    expect(page.get_by_role("button", name="◀ Back")).to_be_disabled()

    page.get_by_role("button", name="Forward ▶").click()
    expect(text).to_contain_text("Round 7 starts: 3 runs")
    for _ in range(3):
        page.get_by_role("button", name="Forward ▶").click()
    expect(step).to_have_text("Step 4 of 9")
    ann = page.locator(".replay-hands .seat[data-seat='0'] .card")
    expect(ann).to_have_count(12)
    page.keyboard.press("ArrowRight")  # the keyboard steps too
    expect(text).to_contain_text("Ann takes the upcard K♦")
    expect(ann).to_have_count(13)
    page.keyboard.press("ArrowRight")
    expect(text).to_contain_text("Ann goes down")
    expect(page.locator(".melds .meld")).to_have_count(3)
    expect(ann).to_have_count(1)
    shots(page, "replay-phone")

    page.get_by_role("button", name="◀ Back").click()
    expect(page.locator(".melds .meld")).to_have_count(0)
    expect(ann).to_have_count(13)
    page.get_by_role("button", name="End »").click()
    expect(step).to_have_text("Step 9 of 9")
    expect(text).to_contain_text("The game is over")
    expect(page.locator(".score-table tbody tr")).to_have_count(1)
    expect(page.locator(".replay-hands .seat[data-seat='1'] .card")).to_have_count(12)  # hands shown at the end
    expect(page.locator("#winner")).to_have_text("Winner: Ann (0 points).")
    expect(page.locator(".score-table tbody td").first).to_have_text("0 (out)")
    expect(page.locator(".replay-hands .seat[data-seat='0'] .total")).to_have_text("0 points")

    page.locator("#round-jump").select_option(label="7: 3 runs, using all your cards")
    expect(step).to_have_text("Step 1 of 9")
    expect(text).to_contain_text("Round 7 starts")
    expect(page.locator("#winner")).to_have_count(0)  # not before the game's end

    # Autoplay: one event after another to the end, then it stops by itself.
    page.get_by_label("Speed").select_option("fast")
    play = page.locator("button[data-key='autoplay']")
    # Every line the replay shows is recorded as it is drawn (a step lasts 0.4 s: a poll could miss it).
    page.evaluate(
        """() => { window.shown = [];
        new MutationObserver(() => { const t = document.querySelector('#event-text');
          if (t && window.shown[window.shown.length - 1] !== t.textContent) window.shown.push(t.textContent); })
        .observe(document.getElementById('app'), { childList: true, subtree: true, characterData: true }); }"""
    )
    play.click()
    expect(play).to_have_text("Pause")
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(step).to_have_text("Step 9 of 9")
    expect(play).to_have_text("Play")
    shown = page.evaluate("() => window.shown")
    assert any(line.startswith("Ann takes the upcard K♦") for line in shown), shown  # drawn on its way
    expect(page.locator("#winner")).to_be_visible()
    # Counts in words: one of a thing is singular (the seats' buys, points, cards).
    words = page.evaluate(
        "() => import('/web/js/events.js').then((e) =>"
        " [e.plural(1, 'buy'), e.plural(2, 'buy'), e.plural(1, 'win'), e.plural(1, 'match', 'matches')])"
    )
    assert words == ["1 buy", "2 buys", "1 win", "1 match"], words
