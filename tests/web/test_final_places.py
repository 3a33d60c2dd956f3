"""When another seat ends the game, the page draws the last moves and the last round's
summary before it shows the places: never the places of a finished game over a table
that has not yet drawn how it ended. May I's round 7 (``start_round``), stacked so that
the first player goes out at once; the test plays the seats through the API."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import SEED, act, create, hold_seat, stack

#: Round 7 of a table of 4: Cy (seat 2) plays first and holds three runs of different suits
#: but one card, which she draws (5D) to go out with every card (docs/rules.md, example 3).
CY = ["3H", "4H", "5H", "6H", "7H", "9S", "TS", "JS", "QS", "2D", "3D", "4D"]
OTHERS = {
    0: ["2C", "4C", "6C", "8C", "TC", "QC", "2S", "4S", "6S", "8S", "AS", "KS"],
    1: ["3C", "5C", "7C", "9C", "JC", "AC", "3S", "5S", "7S", "KD", "QD", "JD"],
    3: ["8H", "9H", "TH", "JH", "QH", "KH", "AH", "8D", "9D", "TD", "6D", "7D"],
}
FIRST = 2

#: Notes, at the first moment the places are in the page, whether the summary of the last
#: round is there too (the last moves drawn) and how many cards the melds show.
WATCH = """() => {
  window.placesSeen = null;
  const note = () => {
    if (window.placesSeen === null && document.querySelector(".places")) {
      window.placesSeen = { summary: !!document.querySelector(".round-summary") };
    }
  };
  new MutationObserver(note).observe(document.body, { childList: true, subtree: true });
  note();
}"""


def test_the_places_come_after_the_last_moves_and_summary(served: Any, new_page: Any) -> None:
    url = served.url
    hands = [OTHERS[0], OTHERS[1], CY, OTHERS[3]]
    deck = stack(hands, "KC", ["5D"], first=FIRST)
    names = ["Ann", "Bob", "Cy", "Di"]
    game_id, tokens = create(
        url, 4, names, {"seed": SEED, "start_round": 7, "stacked_decks": [None] * 6 + [deck]}, options=None
    )
    page = new_page()
    hold_seat(page, url, game_id, tokens[1], 1)  # Bob's page: Cy ends the game
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#live")).to_have_text("live")
    expect(page.locator(".status .round")).to_contain_text("Round 7 of 7")
    page.evaluate(WATCH)

    for seat in ((FIRST + i) % 4 for i in range(4)):  # the first upcard, offered in turn: nobody takes it
        act(url, game_id, tokens[seat], "claims", {"claim": False})
    # Passing the first upcard, the first player drew the stock's top card (5D).
    ended = act(url, game_id, tokens[FIRST], "melds", {"melds": [CY[:5], CY[5:9], [*CY[9:], "5D"]]})
    assert ended["status"] == "finished", ended["status"]

    summary = page.locator(".round-summary")
    expect(summary).to_be_visible()
    expect(summary.locator(".summary-out")).to_have_text("Cy went out.")
    expect(page.locator(".places")).to_have_count(1)
    seen = page.evaluate("window.placesSeen")
    assert seen == {"summary": True}, seen  # the places were not shown before the summary
