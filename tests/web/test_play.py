"""A person plays a whole round of May I at the web table, in a real Chromium: creates the
table in the lobby, draws, calls May I, goes down by putting cards into melds, lays off,
discards, goes out and sees the scores. The other seats are played through the API by the
test (seat tokens), on a stacked deck, so every step is known in advance."""

from __future__ import annotations

from typing import Any

import requests
from playwright.sync_api import Page, expect
from web_helpers import (
    OTHERS,
    PERSON,
    STOCK,
    create_in_lobby,
    draw_and_discard,
    expect_turn_text,
    hand_on_page,
    pass_claim,
    press_card,
    stack,
    view,
)

#: A name the page must show as text, never as markup.
BOB = '<b>Bob</b> & "co"'


def test_a_person_plays_a_round_and_sees_the_scores(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    page = new_page()
    game_id = create_in_lobby(page, url, stack([PERSON, *OTHERS], "2S", STOCK))
    expect(page.locator(".waiting h2")).to_contain_text("1 of 4 seated")
    tokens = [""]
    for name in (BOB, "Cy", "Di"):
        taken = requests.post(f"{url}/v1/games/{game_id}/seats", json={"name": name}, timeout=30)
        assert taken.status_code == 201, taken.text
        tokens.append(taken.json()["token"])

    # The game starts live (SSE): the person is offered the first upcard.
    expect_turn_text(page, "Your move")
    expect(page.locator(".seat[data-seat='1'] .name")).to_have_text(BOB)  # as text, not markup
    assert page.locator(".seat b").count() == 0
    expect(page.locator("#discard-top")).to_have_attribute("data-card", "2S")
    assert hand_on_page(page) == sorted(PERSON)
    page.get_by_role("button", name="Pass on 2♠").click()
    # Bob's turn to answer now. ("Your move. Ann is offered the first upcard" also holds
    # those words: wait until the pass has landed and the move is no longer the person's.)
    expect(page.locator("#turn")).not_to_contain_text("Your move")
    expect_turn_text(page, "is offered the first upcard")
    for seat in (1, 2, 3):  # the others pass too: the person draws the stock's top card
        pass_claim(url, game_id, tokens[seat])

    # Go down: two books, chosen card by card. The page checks each meld as it is built, in
    # its own words: three clubs apart are no meld, and "Go down" waits for the contract.
    expect(page.locator(".go-down .contract-status")).to_have_attribute("data-met", "true")
    assert hand_on_page(page) == sorted([*PERSON, "9H"])
    check = page.locator("#meld-check")
    press_card(page, "7C")
    expect(check).to_contain_text("7♣: not a meld yet")
    for card in ("9C", "KC"):
        press_card(page, card)
    expect(check).to_contain_text("7♣ 9♣ K♣: a run needs 4 or more cards of one suit in sequence")
    expect(page.get_by_role("button", name="Make a meld of the selected cards")).to_be_disabled()
    expect(page.get_by_role("button", name="Go down")).to_be_disabled()
    for card in ("7C", "9C", "KC"):  # pressed again: unselected
        page.locator(f'.hand-cards button.card[data-card="{card}"][aria-pressed="true"]').first.click()
    for card in ("7C", "7D", "7S"):
        press_card(page, card)
    page.get_by_role("button", name="Make a meld of the selected cards").click()
    expect(page.locator("#staged-count")).to_have_text("Melds made: 1 of 2 books.")  # no runs in this contract
    expect(page.locator(".staged li")).to_have_text(["7♣7♦7♠ book Take back"])
    expect(page.locator(".hand h2")).to_contain_text("Your hand (8) and 3 in melds being made")
    expect(page.get_by_role("button", name="Go down")).to_be_disabled()  # 1 of 2 melds
    for card in ("9C", "9D", "9S"):
        press_card(page, card)
    page.get_by_role("button", name="Make a meld of the selected cards").click()
    expect(page.locator("#staged-count")).to_contain_text("2 of 2 books")
    expect(page.get_by_role("button", name="Go down")).to_be_enabled()
    page.get_by_role("button", name="Go down").click()
    expect(page.locator(".melds .meld")).to_have_count(2)
    expect(page.locator(".seat[data-seat='0'] .badge.down")).to_be_visible()
    # May I: no lay-off on the turn you go down; a wrong discard shows the API's detail.
    expect(page.locator(".lay-offs")).to_have_count(0)
    shots(page, "gone-down")
    # By keyboard alone: focus the card, Space selects it, Tab to the discard button, Enter.
    page.locator('.hand-cards button.card[data-card="KC"]').focus()
    page.keyboard.press("Space")
    discard = page.get_by_role("button", name="Discard K♣")
    expect(discard).to_be_enabled()
    for _ in range(40):
        if discard.evaluate("b => b === document.activeElement"):
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#discard-top")).to_have_attribute("data-card", "KC")
    assert hand_on_page(page) == sorted(["7H", "9H", "7C", "9H"])

    # Bob draws and discards JS; Ann calls May I on it before Cy draws.
    pass_claim(url, game_id, tokens[2])
    pass_claim(url, game_id, tokens[3])
    draw_and_discard(url, game_id, tokens[1], "JS")
    may_i = page.get_by_role("button", name="May I! (J♠)")
    may_i.click()
    expect(page.locator(".seat[data-seat='0'] .badge.claim")).to_be_visible()
    pass_claim(url, game_id, tokens[3])
    draw_and_discard(url, game_id, tokens[2])  # Cy's stock draw gives Ann JS and her penalty card
    expect(page.locator(".seat[data-seat='0'] .count")).to_have_text("6 cards")
    assert hand_on_page(page) == sorted(["7H", "9H", "7C", "9H", "JS", "7D"])

    # Ann passes on Cy's discard; Di plays; Ann draws from the stock.
    page.get_by_role("button", name="Pass on").click()
    expect(page.locator(".claim-window")).to_contain_text("Passed: Ann")
    pass_claim(url, game_id, tokens[1])
    draw_and_discard(url, game_id, tokens[3])
    pass_claim(url, game_id, tokens[1])
    pass_claim(url, game_id, tokens[2])
    page.get_by_role("button", name="Draw from the stock").click()
    assert_hand_soon(page, ["7H", "9H", "7C", "9H", "JS", "7D", "9C"])

    # Lay off every 7 and 9, each on its book, one button at a time.
    for card, meld in (("7H", 0), ("7C", 0), ("7D", 0), ("9H", 1), ("9H", 1), ("9C", 1)):
        before = page.locator(f".meld[data-meld='{meld}'] .card").count()
        page.locator(f'button.lay-off[data-meld="{meld}"][data-cards="{card}"]').first.click()
        expect(page.locator(f".meld[data-meld='{meld}'] .card")).to_have_count(before + 1)
    assert hand_on_page(page) == ["JS"]

    # Discarding the last card goes out: the round ends and the scores show.
    press_card(page, "JS")
    page.get_by_role("button", name="Discard J♠").click()
    row = page.locator(".score-table tbody tr[data-round='1']")
    expect(row).to_be_visible()
    expect(row.locator("td").first).to_have_text("0 (out)")
    scores = view(url, game_id)["results"][0]["scores"]
    expect(row.locator("td")).to_have_text([f"{scores[0]} (out)", *[str(s) for s in scores[1:]]])
    expect(page.locator(".events")).to_contain_text("Round 1 ends: Ann went out")
    expect(page.locator(".status .round")).to_contain_text("Round 2 of 7")
    shots(page, "scores")


def assert_hand_soon(page: Page, cards: list[str]) -> None:
    expect(page.locator(".hand h2")).to_contain_text(f"Your hand ({len(cards)})")
    assert hand_on_page(page) == sorted(cards)
