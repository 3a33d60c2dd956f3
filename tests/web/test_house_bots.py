"""A person creates a table in the lobby with three house bots (played by the service's job
worker) and plays round 1 to its end: draws, goes down, lays off, discards, and sees the scores.

The house bots' moves are their own, so the person plays by what the page offers, as a person
would; the stacked deck gives the person two books at once and a stock of sevens and nines to
lay off, and the bots hands without a pair. Calling May I is in test_play.py, where the test
plays the other seats through the API: here the house bot on turn takes each upcard as soon as
it may (while claims are open, taking it is its only legal move), so a person's May I would be a
race with the worker."""

from __future__ import annotations

import re
from contextlib import suppress
from typing import Any

import requests
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from web_helpers import OTHERS, create, create_in_lobby, hand_on_page, hold_seat, press_card, stack, view

PERSON = ["7C", "7D", "7S", "9C", "9D", "9S", "7H", "9H", "7C", "KC"]
STOCK = ["9H", "7D", "9S", "7S", "9D", "7H", "9C", "7C", "9H", "7D", "9S", "7S", "9D", "7H", "9C"]
MOVES = 60  # a bound on the person's decisions (the round takes about ten)


def play_round(page: Page, shots: Any) -> set[str]:
    """The person's moves until round 1 ends: what the page offers, in a fixed order of preference."""
    done: set[str] = set()
    # The round's end: its summary (the scores row may follow it, once the last moves are drawn).
    scores = page.locator(".round-summary").or_(page.locator(".score-table tbody tr[data-round='1']"))
    mine = page.locator("#turn.yours, #turn.answer")  # the person's turn, or an upcard to answer
    for _ in range(MOVES):
        expect(mine.or_(scores).first).to_be_visible()
        expect(page.locator("#app[aria-busy='true']")).to_have_count(0)
        if scores.first.is_visible():
            return done
        if not mine.is_visible():
            continue
        passing = page.get_by_role("button", name="Pass on")
        draw = page.get_by_role("button", name="Draw from the stock")
        take = page.get_by_role("button", name="Take the upcard")
        if passing.is_visible():
            # The bot on turn may take the upcard meanwhile, and the offer is gone: fine.
            with suppress(PlaywrightTimeout):
                passing.click(timeout=10_000)
            continue
        if take.is_visible() and not draw.is_visible():
            expect(draw.or_(scores).first).to_be_visible()  # the bots answer the upcard first
            continue
        if draw.is_visible():
            draw.click()
            done.add("draw")
            continue
        if page.locator(".contract-status[data-met='true']").count():
            page.get_by_role("button", name="Use the suggested melds").click()
            page.get_by_role("button", name="Go down").click()
            expect(page.locator(".seat[data-seat='0'] .badge.down")).to_be_visible()
            shots(page, "in-play")
            done.add("go_down")
            continue
        hand = hand_on_page(page)
        if page.locator("button.lay-off").count() and len(hand) > 1:
            page.locator("button.lay-off").first.click()
            done.add("lay_off")
            continue
        discard = page.get_by_role("button", name="Discard")
        if discard.count():
            card = next((c for c in hand if c[0] not in "79"), hand[-1])
            press_card(page, card)
            discard.click()
            done.add("discard")
    raise AssertionError(f"round 1 did not end within {MOVES} decisions of the person")


def test_a_person_plays_a_round_against_three_house_bots(served: Any, new_page: Any, shots: Any) -> None:
    page = new_page()
    game_id = create_in_lobby(page, served.url, stack([PERSON, *OTHERS], "2S", STOCK), bots=True)
    names = page.locator(".seat .name")
    expect(names).to_have_count(4)
    expect(names.nth(1)).to_contain_text("house bot")
    # Three house bots of one kind are told apart, in the API and on the page.
    seated = [s["name"] for s in view(served.url, game_id)["seats"]]
    assert seated == ["Ann", "random (house bot)", "random 2 (house bot)", "random 3 (house bot)"], seated
    expect(names).to_have_text(["Ann (you)", *seated[1:]])
    shots(page, "house-bots-start")
    done = play_round(page, shots)
    assert {"draw", "go_down", "lay_off", "discard"} <= done, done
    expect(page.locator(".score-table tbody tr[data-round='1'] td")).to_have_count(4)
    expect(page.locator(".events")).to_contain_text("Round 1 ends")
    shots(page, "house-bots-scores")
    assert game_id


def test_a_waiting_tables_open_seats_filled_with_house_bots(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 4, ["Bob", "Cy"])
    page = new_page()
    hold_seat(page, url, game_id, tokens[0], 0)  # Bob's browser: the table's host
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator(".waiting h2")).to_contain_text("2 of 4 seated")
    page.get_by_role("button", name="Fill 2 open seats with house bots").click()
    # The last seat taken starts the game; the page follows.
    bots = [re.compile("house bot"), re.compile("house bot")]
    expect(page.locator(".seat .name")).to_have_text(["Bob (you)", "Cy", *bots])
    assert view(url, game_id)["status"] == "playing"


def test_the_lobby_lists_the_house_bots_without_reading_the_api_document(served: Any, new_page: Any) -> None:
    """The names come from ``GET /v1/house-bots``; the 200 KB OpenAPI document is not fetched."""
    page = new_page()
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(served.url + "/")
    choice = page.get_by_label("Fill the other seats with house bots", exact=True)
    names = requests.get(f"{served.url}/v1/house-bots", timeout=30).json()["house_bots"]
    for name in names:
        expect(choice.locator(f"option[value='{name}']")).to_have_count(1)
    assert any(url.endswith("/v1/house-bots") for url in fetched), fetched
    assert not [url for url in fetched if "openapi.json" in url], fetched
