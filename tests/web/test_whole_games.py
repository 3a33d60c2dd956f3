"""A person plays a whole game against three house bots on a default ``mayi serve`` (default
clocks: the lobby's 15 s claim window and 60 s turn clock; default stream and rate limits),
through the page only: a whole May I game (7 rounds) and a whole Shanghai game (8 hands).

The person creates the table in the lobby (a seed in its test set-up, so that the game, and
the house bots' answers, are the same every run), chooses in the table's settings to see
the others' moves at once, and plays a simple strategy by what the page offers: pass the
first upcard, call May I (Shanghai: buy) on every upcard offered until one is won, and then
let the page pass the upcards by itself (the settings' "Pass automatically"); draw from the
stock; go down with the meld builder's suggested melds as soon as the hand meets the
contract; lay off what the page lists; discard the card of the hand that scores most. Each
round's summary is continued (by its key, C), and the game ends on the final table with
every seat's place."""

from __future__ import annotations

import contextlib
import json
import warnings
from typing import Any

import pytest
import requests
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PageTimeout
from web_helpers import press_card, press_create

#: A bound on the person's decisions in one game (a game takes about 150).
DECISIONS = 1500
#: How long (ms) the person waits for the page to offer something new (generous: a loaded machine;
#: the claim window's 15 s and a house bot's answer are far below it).
WAIT_MS = 60_000
#: How long the page may still offer the decision the person just acted on before they act
#: again, as a person presses again when nothing seems to happen (a key the page missed).
AGAIN_MS = 15_000


def create_game(page: Page, url: str, variant: str, seed: str) -> str:
    """Ann's table of ``variant`` with three strong house bots, the lobby's default clocks."""
    page.goto(url + "/")
    page.get_by_label("Your name", exact=True).fill("Ann")
    page.get_by_label("Game", exact=True).select_option(variant)
    page.get_by_label("Seats", exact=True).fill("4")
    bots = page.get_by_label("Fill the other seats with house bots", exact=True)
    expect(bots.locator("option[value='strong']")).to_have_count(1)
    bots.select_option("strong")
    expect(page.get_by_label("Claim window (s)", exact=True)).to_have_value("15")
    expect(page.get_by_label("Turn clock (s)", exact=True)).to_have_value("60")
    page.locator("details.test-setup summary").click()
    page.get_by_label("Seed", exact=True).fill(seed)
    game_id = press_create(page)
    expect(page.locator(".seat .name")).to_have_count(4)
    return game_id


def all_events(url: str, game_id: str) -> list[dict[str, Any]]:
    """Every public event of the game, page by page."""
    events: list[dict[str, Any]] = []
    while True:
        after = events[-1]["seq"] if events else 0
        page = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": after}, timeout=30).json()
        if not page["events"]:
            return events
        events.extend(page["events"])


def highest(hand: list[str], points: dict[str, int]) -> str:
    """The card of ``hand`` that scores most left in it (a joker kept: it fits anywhere)."""
    naturals = [c for c in hand if c != "JK"] or hand
    return max(naturals, key=lambda c: (points["JK" if c == "JK" else c[0]], c))


#: What the page shows that the person acts on, read in one go (a loaded machine makes every
#: round trip to the browser count): null while an action is being sent.
STATE = """() => {
  const q = (s) => document.querySelector(s);
  if (q("#app[aria-busy='true']")) return null;
  const summary = q(".round-summary h2");
  const places = q(".places");
  const turn = q("#turn");
  const buttons = [...document.querySelectorAll(".actions button[data-key]")];
  const events = [...document.querySelectorAll(".events li")];
  return {
    summary: summary ? summary.textContent : null,
    places: places ? places.textContent : null,
    you: turn ? turn.dataset.you : "none",
    turn: turn ? turn.textContent : "",
    keys: buttons.map((b) => b.dataset.key),
    claim: (q("button[data-key='claim']") || { textContent: "" }).textContent,
    met: Boolean(q(".contract-status[data-met='true']")),
    layOffs: document.querySelectorAll("button.lay-off").length,
    hand: [...document.querySelectorAll(".hand-cards button.card")].map((b) => b.dataset.card),
    own: (q(".claim-window") || { textContent: "" }).textContent.includes("discarded by Ann."),
    won: events.some((li) => li.dataset.type === "claim_won" && li.textContent.startsWith("Ann wins")),
    seq: Math.max(0, ...events.map((li) => Number(li.dataset.seq))),
  };
}"""

#: True once the page offers the person something to do that differs from ``arg`` (the state
#: last acted on): a round's summary, the final table, or a move of theirs (a turn with only
#: "Take the upcard" waits: the others answer the upcard before the person may draw).
READY = (
    "(last) => { const s = (" + STATE + ")(); if (!s) return false;"
    " const mine = s.summary || s.places || (s.you !== 'none' && s.keys.length"
    " && !(s.keys.length === 1 && s.keys[0] === 'draw-discard'));"
    " return mine && JSON.stringify(s) !== last ? s : false; }"
)


def play_game(page: Page, points: dict[str, int], claim: str, rounds: int, shots: Any) -> dict[str, Any]:
    """Ann's moves until the game's final table shows; what she did."""
    done: dict[str, Any] = {
        "summaries": [],
        "claims": 0,
        "down": 0,
        "lay_offs": 0,
        "discards": 0,
        "again": 0,
        "again_why": [],
    }
    auto = False  # the page passes the upcards by itself (once Ann has won one)
    last = ""
    for _ in range(DECISIONS):
        try:
            state = page.wait_for_function(READY, arg=last, polling=100, timeout=AGAIN_MS).json_value()
        except PageTimeout:  # the same decision still offered: act on it again
            error = page.locator("#action-error")
            why = error.inner_text() if error.count() else "no error shown"
            state = page.wait_for_function(READY, arg="", polling=100, timeout=WAIT_MS).json_value()
            done["again"] += 1
            done["again_why"].append(f"{state['turn']} {state['keys']}: {why}")
        last = json.dumps(state, separators=(",", ":"))
        keys = state["keys"]
        if state["summary"]:
            done["summaries"].append(state["summary"])
            if len(done["summaries"]) == 1:
                shots(page, "first-summary")
            page.keyboard.press("c")  # the focus is on Continue; its key continues too
        elif state["places"]:
            if len(done["summaries"]) < rounds:  # the last round's summary follows its event
                with contextlib.suppress(PageTimeout):
                    page.wait_for_selector(".round-summary h2", timeout=WAIT_MS)
                    last = ""
                    continue
            return done
        elif state["won"] and not auto:
            page.get_by_label("Upcards others discard", exact=True).select_option("pass")
            page.locator("h1").click()  # (out of the field: the keys are the table's again)
            auto = True
            last = ""  # the decision on the table is still to be made: act on it next
        elif state["you"] == "answer":
            if not auto and not state["own"] and "claim" in keys and state["claim"].startswith(claim):
                page.keyboard.press("m")
                done["claims"] += 1
            elif "pass" in keys:
                page.keyboard.press("p")
        elif "first upcard" in state["turn"] and "pass" in keys:
            page.keyboard.press("p")
        elif "draw-stock" in keys:
            page.keyboard.press("d")
        elif state["met"]:
            page.locator("button[data-key='suggest']").click()
            page.locator("button[data-key='go-down']").click()
            done["down"] += 1
            if done["down"] == 1:
                page.wait_for_function("() => document.querySelector(\".seat[data-seat='0'] .badge.down\")")
                shots(page, "gone-down")
        elif state["layOffs"]:
            page.locator("button.lay-off").first.click()
            done["lay_offs"] += 1
        elif "discard" in keys:
            card = highest(state["hand"], points)
            if not page.locator(f'.hand-cards button.card[data-card="{card}"][aria-pressed="true"]').count():
                press_card(page, card)  # (selected already when the person presses again)
            expect(page.locator("button[data-key='discard']")).to_be_enabled()
            page.keyboard.press("x")
            done["discards"] += 1
    raise AssertionError(f"the game did not end within {DECISIONS} decisions of the person: {done}")


@pytest.mark.parametrize(
    ("variant", "seed", "claim", "rounds"),
    [("may_i", "5eed" * 8, "May I!", 7), ("shanghai", "5eed" * 8, "Buy!", 8)],
    ids=["may_i", "shanghai"],
)
def test_a_person_plays_a_whole_game_against_house_bots(
    served: Any, new_page: Any, shots: Any, variant: str, seed: str, claim: str, rounds: int
) -> None:
    url = served.url
    rules = next(v for v in requests.get(url + "/v1/variants", timeout=30).json()["variants"] if v["name"] == variant)
    assert len(rules["rounds"]) == rounds
    page = new_page()
    game_id = create_game(page, url, variant, seed)
    page.get_by_label("Others' moves", exact=True).select_option("instant")  # the person's choice
    page.locator("h1").click()
    done = play_game(page, rules["card_points"], claim, rounds, shots)
    if done["again"]:  # tolerated, as a person presses again, but said in the run's summary
        warnings.warn(f"the person pressed again {done['again']} times: {done['again_why']}", stacklevel=1)

    # Every round's summary was shown and continued, the last to the final table.
    assert done["summaries"] == [f"Round {n} is over" for n in range(1, rounds + 1)], done
    assert done["claims"] >= 1 and done["discards"] >= rounds, done
    evs = all_events(url, game_id)
    won = [e for e in evs if e["type"] == "claim_won" and e["seat"] == 0]
    assert won, "Ann won no claim"
    final = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()
    assert final["status"] == "finished" and len(final["results"]) == rounds
    names = [s["name"] for s in final["seats"]]
    assert len(set(names)) == 4, names
    expect(page.locator(".places")).to_have_text(
        "Places: " + ", ".join(f"{name} {place}" for name, place in zip(names, final["places"], strict=True))
    )
    expect(page.locator(".status .turn")).to_contain_text("Game over. Winner:")
    expect(page.locator(".score-table tbody tr")).to_have_count(rounds)
    expect(page.locator("#live")).to_have_text("not live")  # the game is over: nothing to follow
    shots(page, "final-table")
