"""Shanghai at the web table: laying off the natural card a run's joker stands for, with the
joker's end chosen on the page, and buying back one's own discard."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import SEED, act, create, hand_on_page, hold_seat, pass_claim, stack

#: Shanghai, round 2 (1 book and 1 run), 3 players: Ann is seat 1, who plays first.
ANN = ["3H", "4H", "JK", "6H", "8C", "8D", "8S", "5H", "KS", "QD"]
BOB = ["2C", "3D", "4S", "5C", "6D", "7S", "9C", "TD", "JS", "AC"]
CY = ["2D", "3S", "4C", "5D", "6S", "7C", "9D", "TS", "JC", "AD"]


def test_a_displaced_joker_goes_to_the_end_the_player_chooses(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    deck = stack([BOB, ANN, CY], "2S", ["9S"], first=1)
    test = {"seed": SEED, "stacked_decks": [None, deck], "start_round": 2}
    game_id, tokens = create(url, 3, ["Bob", "Ann", "Cy"], test, variant="shanghai")
    pass_claim(url, game_id, tokens[2])  # in Shanghai the others may buy the first upcard: they pass
    pass_claim(url, game_id, tokens[0])
    act(url, game_id, tokens[1], "turn/draw", {"source": "stock"})
    act(url, game_id, tokens[1], "melds", {"melds": [["3H", "4H", "JK", "6H"], ["8C", "8D", "8S"]]})

    page = new_page(360, 740)  # a small phone
    hold_seat(page, url, game_id, tokens[1], 1)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator(".role")).to_have_text("You are Ann (seat 2)")
    run = page.locator(".meld[data-meld='0'] .card")
    expect(run.nth(2)).to_have_attribute("aria-label", "joker as the 5 of hearts")

    # 5H takes the joker's place; the joker may go to either end: one button for each.
    page.locator(".hand-cards button.card[data-card='5H']").click()
    ends = page.locator("button.lay-off[data-cards='5H']")
    expect(ends).to_have_count(2)
    expect(ends.nth(0)).to_contain_text("joker to the")
    page.get_by_role("button", name="5♥ on 0: Ann's run (joker to the high end)").click()
    expect(run).to_have_count(5)
    expect(run.nth(4)).to_have_attribute("aria-label", "joker as the 7 of hearts")
    assert [run.nth(i).get_attribute("data-card") for i in range(5)] == ["3H", "4H", "5H", "6H", "JK"]
    shots(page, "joker-high")

    # Shanghai: the discarder may buy their own discard back (with the lowest priority).
    assert hand_on_page(page) == sorted(["KS", "QD", "9S"])
    page.locator(".hand-cards button.card[data-card='KS']").click()
    page.get_by_role("button", name="Discard K♠").click()
    expect(page.get_by_role("button", name="Buy! (K♠)")).to_be_visible()
