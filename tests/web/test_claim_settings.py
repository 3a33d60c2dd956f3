"""Upcards on offer before another seat's turn: the person may choose, in the page's settings
(kept in the browser's localStorage), to be asked only for cards they can use, or to pass every
one at once, so that the other seats' turns do not wait out the claim window (15 s by default).
The page then answers the pass itself, at once (never by the clock)."""

from __future__ import annotations

import time
from typing import Any

import requests
from playwright.sync_api import expect
from web_helpers import OTHERS, PERSON, SEED, STOCK, act, hold_seat, pass_claim, stack
from web_helpers import create as create_table


def passes_of(url: str, game_id: str, seat: int) -> list[dict[str, Any]]:
    events = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()["events"]
    return [e for e in events if e["type"] == "passed" and e["seat"] == seat]


def wait_for_pass(url: str, game_id: str, card: str) -> dict[str, Any]:
    """Ann's pass on ``card`` (within the claim window: before the clock would play it)."""
    for _ in range(100):
        found = [e for e in passes_of(url, game_id, 0) if e["data"]["card"] == card]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"Ann did not pass on {card}")


def test_the_page_passes_the_upcards_the_person_chose_not_to_be_asked_for(
    served: Any, new_page: Any, shots: Any
) -> None:
    url = served.url
    deck = stack([PERSON, *OTHERS], "2S", STOCK)
    # The service's default clocks (a 15 s claim window): a pass the page did not send is one
    # the clock plays (``timeout: true``) when the window closes.
    test = {"seed": SEED, "stacked_decks": [deck]}
    game_id, tokens = create_table(url, 4, ["Ann", "Bob", "Cy", "Di"], test, options=None)
    page = new_page()
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#live")).to_have_text("live")
    page.get_by_label("Upcards others discard", exact=True).select_option(label="Ask me only for cards I can use")
    assert page.evaluate("() => localStorage.getItem('mayi.claims')") == "useful"
    for seat in range(4):  # the first upcard: nobody takes it; Ann is dealt 9H and discards KC
        pass_claim(url, game_id, tokens[seat])
    act(url, game_id, tokens[0], "turn/discard", {"card": "KC"})
    pass_claim(url, game_id, tokens[2])
    pass_claim(url, game_id, tokens[3])
    act(url, game_id, tokens[1], "turn/draw", {"source": "stock"})
    act(url, game_id, tokens[1], "turn/discard", {"card": "2C"})

    # 2C joins nothing of Ann's (sevens, nines, a 9 of hearts): the page passes it itself.
    passed = wait_for_pass(url, game_id, "2C")
    assert not passed.get("timeout"), passed
    pass_claim(url, game_id, tokens[3])
    act(url, game_id, tokens[2], "turn/draw", {"source": "stock"})
    act(url, game_id, tokens[2], "turn/discard", {"card": "8H"})

    # 8H would join 7H 9H: Ann is asked.
    asked = page.get_by_role("button", name="Pass on 8♥")
    expect(asked).to_be_visible()
    assert not [e for e in passes_of(url, game_id, 0) if e["data"]["card"] == "8H"]
    shots(page, "asked-for-a-card-ann-can-use")
    # "Pass automatically": the page passes it at once, and says so in the log.
    page.get_by_label("Upcards others discard", exact=True).select_option(label="Pass automatically")
    passed = wait_for_pass(url, game_id, "8H")
    assert not passed.get("timeout"), passed
    expect(page.locator(".events")).to_contain_text("Ann passes on 8♥")
    page.reload()
    expect(page.get_by_label("Upcards others discard", exact=True)).to_have_value("pass")
