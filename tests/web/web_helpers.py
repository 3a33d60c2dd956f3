"""Helpers of the web table's tests: stacked decks, API calls for the other seats, and
page actions as a person takes them (press a card, press a button)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import requests
from playwright.sync_api import Page, expect

#: The settings a user gets: rate limits, the per-client caps of streams and long-polls, the
#: streams' lifetime. (The default, said again: the suite's own environment turns the job
#: worker's clock jobs off, and the house bots need them.)
SERVER_ENV = {"MAYI_SCHEDULE_CLOCK_JOBS": "true"}
SLOW = {"claim_seconds": 600, "turn_seconds": 600}
SEED = "0eb" * 11 + "0"

#: Round 1 of a May I table of 4 (test_play.py plays it step by step): the person (seat 0,
#: first to play) holds two books and sevens and nines to lay off; the others no pair.
PERSON = ["7C", "7D", "7S", "9C", "9D", "9S", "7H", "9H", "7C", "KC"]
OTHERS = [
    ["2C", "3D", "4H", "5S", "6C", "8D", "TH", "JS", "QC", "AD"],
    ["2D", "3H", "4S", "5C", "6D", "8H", "TS", "JC", "QD", "AH"],
    ["2H", "3S", "4C", "5D", "6H", "8S", "TC", "JD", "QH", "AS"],
]
#: After the deal and the upcard (2S): the person's first draw (9H), Bob's draw, the person's
#: May I penalty card (7D), Cy's and Di's draws, the person's second draw (9C).
STOCK = ["9H", "4D", "7D", "5H", "6S", "9C"]


def create_in_lobby(page: Page, url: str, deck: list[str], bots: bool = False) -> str:
    """Create a May I table of 4 in the lobby as Ann (slow clocks, ``deck`` stacked for round 1),
    with house bots in the other seats if ``bots``; the table's id."""
    page.goto(url + "/")
    page.get_by_label("Your name", exact=True).fill("Ann")
    page.get_by_label("Game", exact=True).select_option("may_i")
    page.get_by_label("Seats", exact=True).fill("4")
    bot_choice = page.get_by_label("Fill the other seats with house bots", exact=True)
    bot_choice.select_option("random" if bots else "")  # a choice made before the names load stands
    expect(bot_choice.locator("option[value='random']")).to_have_count(1)  # the service's names have loaded
    expect(bot_choice).to_have_value("random" if bots else "")
    page.get_by_label("Claim window (s)", exact=True).fill("600")
    page.get_by_label("Turn clock (s)", exact=True).fill("600")
    page.locator("details.test-setup summary").click()
    page.get_by_label("Seed", exact=True).fill(SEED)
    page.get_by_label("Stacked decks (JSON)", exact=True).fill(json.dumps([deck]))
    return press_create(page)


def press_create(page: Page) -> str:
    """Press the lobby's Create the table until the table is made, as a person does on the
    default limit of new tables a minute (the page says how long to wait); the table's id."""
    create = page.get_by_role("button", name="Create the table")
    for _ in range(10):
        create.click()  # (its handler disables the button until the service has answered)
        answered = "() => location.hash.startsWith('#/game/') || !document.querySelector('#create')?.disabled"
        page.wait_for_function(answered)
        refused = page.locator("#create-error").filter(has_text="Too many requests")
        if "#/game/" in page.url or not refused.is_visible():
            break
        wait = re.search(r"Try again in (\d+) s", refused.inner_text())
        assert wait is not None, refused.inner_text()  # the page says how long
        page.wait_for_timeout(1000 * int(wait.group(1)))
    expect(page).to_have_url(re.compile(r"#/game/"))
    return page.url.rsplit("/", 1)[1]


def stack(hands: list[list[str]], upcard: str, stock: list[str], first: int = 0) -> list[str]:
    """The top of a pack that deals ``hands`` (one card at a time from the first player,
    ``first``: seat 0 in round 1), turns up ``upcard``, then leaves ``stock`` on top of the stock."""
    deal, n = len(hands[0]), len(hands)
    dealt = [hands[(first + i) % n][i // n] for i in range(deal * n)]
    return [*dealt, upcard, *stock]


def create(
    url: str,
    seats: int,
    names: list[str],
    test: dict[str, Any] | None = None,
    variant: str = "may_i",
    options: dict[str, Any] | None = SLOW,
) -> tuple[str, list[str]]:
    """A table with the named players seated (the others open); its id and their tokens.
    ``options``: the table's (slow clocks unless told; None: the service's defaults)."""
    players = [{"name": n} for n in names]
    body: dict[str, Any] = {"variant": variant, "seats": seats, "players": players}
    if options is not None:
        body["options"] = options
    if test is not None:
        body["test"] = test
    for _ in range(10):  # as a client does on the default limit of new tables a minute: wait and retry
        created = requests.post(url + "/v1/games", json=body, timeout=30)
        if created.status_code != 429:
            break
        time.sleep(float(created.headers.get("Retry-After", "5")))
    assert created.status_code == 201, created.text
    return created.json()["game_id"], [s["token"] for s in created.json()["seats"]]


def act(url: str, game_id: str, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = requests.post(
        f"{url}/v1/games/{game_id}/{path}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def view(url: str, game_id: str, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = requests.get(f"{url}/v1/games/{game_id}", headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def pass_claim(url: str, game_id: str, token: str) -> None:
    act(url, game_id, token, "claims", {"claim": False})


def draw_and_discard(url: str, game_id: str, token: str, card: str | None = None) -> str:
    """The seat draws from the stock and discards ``card`` (or its first legal discard)."""
    drawn = act(url, game_id, token, "turn/draw", {"source": "stock"})
    if card is None:
        card = next(m["card"] for m in drawn["legal"] if m["type"] == "discard")
    act(url, game_id, token, "turn/discard", {"card": card})
    return card


def settle(url: str, game_id: str, tokens: list[str]) -> None:
    """Every seat that may still answer the upcard, other than the one on turn, passes."""
    v = view(url, game_id)
    window = v["claim_window"]
    for seat in (window or {}).get("pending", []):
        if seat != v["turn"]:
            act(url, game_id, tokens[seat], "claims", {"claim": False})


def turn(url: str, game_id: str, tokens: list[str], seat: int) -> None:
    """``seat`` draws from the stock and discards its first legal discard."""
    settle(url, game_id, tokens)
    act(url, game_id, tokens[seat], "turn/draw", {"source": "stock"})
    legal = view(url, game_id, tokens[seat])["legal"]
    act(url, game_id, tokens[seat], "turn/discard", {"card": next(m["card"] for m in legal if m["type"] == "discard")})


def round_one_table(
    url: str, new_page: Any, seat: int = 0, size: tuple[int, int] | None = None
) -> tuple[str, list[str], Page]:
    """Round 1 of :data:`PERSON`'s table of 4 on the service's default clocks, open in a new
    page that holds ``seat`` and follows the game live; its id, the tokens and the page."""
    deck = stack([PERSON, *OTHERS], "2S", STOCK)
    game_id, tokens = create(url, 4, ["Ann", "Bob", "Cy", "Di"], {"seed": SEED, "stacked_decks": [deck]}, options=None)
    page = new_page(*size) if size else new_page()
    hold_seat(page, url, game_id, tokens[seat], seat)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#live")).to_have_text("live")
    return game_id, tokens, page


def lay_off_each(url: str, game_id: str, token: str, cards: list[str]) -> None:
    """The seat lays off each of ``cards`` alone, where its legal moves first place it."""
    for card in cards:
        legal = view(url, game_id, token)["legal"]
        move = next(m for m in legal if m["type"] == "lay_off" and m["lay_offs"][0]["cards"] == [card])
        act(url, game_id, token, "lay-offs", {"lay_offs": move["lay_offs"]})


def press_card(page: Page, card: str) -> None:
    """Select one (unselected) ``card`` of the hand, as a person presses it."""
    button = page.locator(f'.hand-cards button.card[data-card="{card}"][aria-pressed="false"]').first
    button.click()


def hand_on_page(page: Page) -> list[str]:
    return sorted(page.locator(".hand-cards button.card").evaluate_all("els => els.map(e => e.dataset.card)"))


def expect_turn_text(page: Page, text: str) -> None:
    expect(page.locator("#turn")).to_contain_text(text)


def hold_seat(page: Page, url: str, game_id: str, token: str, seat: int) -> None:
    """Give this browser the seat's token, as the page keeps it after taking a seat."""
    page.goto(url + "/")
    page.evaluate(
        "([id, token, seat]) => localStorage.setItem('mayi.seats.v1', JSON.stringify({[id]: {token, seat}}))",
        [game_id, token, seat],
    )
