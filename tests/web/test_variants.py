"""The page names the variants, their claims and their rules as ``GET /v1/variants`` serves
them, not from a list of its own: a third variant registered with the engine
(``register_variant``, here by a ``sitecustomize`` module on the server's ``PYTHONPATH``, which
every process of ``mayi serve`` imports at start) shows in the lobby, at its table (its title,
its claim's own word: "Grab! (9♦)", "Ann grabs 9♦."), in its replay and on the ladder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from http_moves import move_request
from playwright.sync_api import expect
from serving import ready_server
from web_helpers import OTHERS, SEED, SERVER_ENV, act, hold_seat, press_card, settle, stack, view
from web_helpers import create as create_table

#: A short variant of three-card books, whose claim is called "Grab" (May I's rules otherwise).
SITECUSTOMIZE = """
from dataclasses import replace

from mayi_engine import MAY_I, Contract, RoundSpec, register_variant

register_variant(
    replace(
        MAY_I,
        name="mini_web",
        title="Mini Rummy",
        min_players=3,
        max_players=4,
        rounds=(RoundSpec(Contract(books=1, runs=0), 7), RoundSpec(Contract(books=2, runs=0), 7)),
        claim_name="Grab",
    )
)
"""


@pytest.fixture(scope="module")
def mini_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A ``mayi serve`` (the settings a user gets; no job worker: nothing here waits on a
    clock or a house bot) whose processes register ``mini_web`` as they start."""
    folder = tmp_path_factory.mktemp("variant")
    modules = folder / "modules"
    modules.mkdir()
    (modules / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(p for p in (str(modules), os.environ.get("PYTHONPATH", "")) if p)
    with ready_server(folder, {**SERVER_ENV, "PYTHONPATH": path}) as server:
        yield server


def _next_actor(url: str, game_id: str) -> int:
    """The seat that answers now: one that may still answer the upcard, else the actor."""
    public = view(url, game_id)
    window = public["claim_window"] or {}
    pending = [s for s in window.get("pending", []) if s != public["turn"]]
    return int(pending[0] if pending else public["actor"])


def _plain_move(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass a claim, draw from the stock, else the first listed move (a discard)."""
    for move in legal:
        passes = move["type"] == "claim" and move["claim"] is False
        if passes or (move["type"] == "draw" and move["source"] == "stock"):
            return move
    return legal[0]


def _go_down_first(legal: list[dict[str, Any]]) -> dict[str, Any]:
    for move in legal:
        if move["type"] in ("go_down", "lay_off"):
            return move
    return _plain_move(legal)


def test_a_registered_variant_shows_with_its_own_title_and_claim(mini_served: Any, new_page: Any) -> None:
    url = mini_served.url
    served = requests.get(url + "/v1/variants", timeout=30).json()["variants"]
    assert "mini_web" in [v["name"] for v in served]

    # The lobby offers exactly what the service serves, in its order.
    page = new_page()
    page.goto(url + "/")
    expect(page.get_by_label("Game", exact=True).locator("option")).to_have_text(
        [f"{v['title']} ({v['min_players']}–{v['max_players']} players)" for v in served]
    )

    # A table of the new variant: its title, and its claim in its own words.
    game_id, tokens = create_table(url, 3, ["Ann", "Bob", "Cy"], variant="mini_web")
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator(".game-head h1")).to_contain_text("Mini Rummy · table")
    expect(page.locator(".status .round")).to_contain_text("Round 1 of 2: 1 book")
    for _ in range(40):  # the other seats (and Ann's own turns) by the API, until Ann may claim
        ann = view(url, game_id, tokens[0])
        claims = any(m["type"] == "claim" and m["claim"] for m in ann["legal"])
        if ann["phase"] == "draw" and ann["turn"] != 0 and claims:
            break
        seat = _next_actor(url, game_id)
        path, body = move_request(_plain_move(view(url, game_id, tokens[seat])["legal"]))
        act(url, game_id, tokens[seat], path, body)
    else:
        pytest.fail("Ann was never offered an upcard to claim")
    card = ann["upcard"]
    shown = page.evaluate("(code) => import('/web/js/cards.js').then((c) => c.cardText(code))", card)
    grab = page.get_by_role("button", name=f"Grab! ({shown})")
    expect(grab).to_be_visible()
    expect(page.locator("#turn")).to_contain_text(f"You may grab {shown}, or pass.")
    grab.click()
    expect(page.locator(".events li[data-type='claimed']").first).to_have_text(f"Ann grabs {shown}.")
    expect(page.locator(".seat[data-seat='0'] .badge.claim")).to_have_text("Grab")

    # Its replay and its ladder carry its title too; the ladder's tabs are the served variants.
    for _ in range(2000):  # the game to its end, by the API
        if view(url, game_id)["status"] == "finished":
            break
        seat = _next_actor(url, game_id)
        path, body = move_request(_go_down_first(view(url, game_id, tokens[seat])["legal"]))
        act(url, game_id, tokens[seat], path, body)
    assert view(url, game_id)["status"] == "finished"
    page.goto(f"{url}/#/replay/{game_id}")
    expect(page.locator("h1")).to_contain_text("Replay · Mini Rummy · table")
    page.goto(f"{url}/#/ladder/mini_web")
    expect(page.locator("h1")).to_have_text("Ladder · Mini Rummy")
    expect(page.locator("nav.tabs a")).to_have_text([v["title"] for v in served])
    page.goto(url + "/")
    page.get_by_role("button", name="Finished").click()
    expect(page.locator(f"tr[data-game='{game_id}'] td").nth(1)).to_contain_text("Mini Rummy")


def test_the_page_reads_the_variants_once(served: Any, new_page: Any) -> None:
    """One ``GET /v1/variants`` a page load, whatever pages are opened after it."""
    asked: list[str] = []
    page = new_page()
    page.on("request", lambda r: asked.append(r.url) if "/v1/variants" in r.url else None)
    page.goto(served.url + "/")
    expect(page.get_by_label("Game", exact=True).locator("option")).to_have_count(2)
    page.goto(served.url + "/#/ladder/shanghai")
    expect(page.locator("h1")).to_have_text("Ladder · Shanghai")
    page.goto(served.url + "/#/")
    expect(page.locator("h1")).to_have_text("Lobby")
    assert len(asked) == 1, asked


def test_the_meld_builder_checks_book_ranks_where_the_variant_says(served: Any, new_page: Any) -> None:
    """Shanghai's books of one contract are of different ranks (``distinct_book_ranks`` in
    ``/v1/variants``): the builder says so as the second book of sevens is made."""
    url = served.url
    ann = ["7C", "7D", "7H", "7S", "7C", "7D", "9C", "9D", "KC", "QH"]
    deck = stack([ann, *OTHERS], "2S", ["4D"])
    game_id, tokens = create_table(
        url, 4, ["Ann", "Bob", "Cy", "Di"], {"seed": SEED, "stacked_decks": [deck]}, variant="shanghai"
    )
    settle(url, game_id, tokens)
    act(url, game_id, tokens[0], "turn/draw", {"source": "stock"})
    page = new_page()
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    check = page.locator("#meld-check")
    for book in (["7C", "7D", "7H"], ["7S", "7C", "7D"]):
        for card in book:
            press_card(page, card)
        page.locator("button[data-key='stage']").click()
    expect(check).to_contain_text("Two books of one contract must be of different ranks in Shanghai.")
    expect(page.locator("button[data-key='go-down']")).to_be_disabled()
