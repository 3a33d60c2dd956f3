"""An action's answer that reaches the page after the game's later events does not take the
table back to the moment of the action; and a pass the page sends by itself as it draws an
action's answer keeps the table busy (its moves refused to the keys) until its own answer.

The page's pass on an upcard is held on its way back (the service has applied it) while the
other seats play on through the API: the page reads their moves from the event stream first."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, Route, expect
from web_helpers import act, create, hold_seat, pass_claim, settle, turn, view


def held_answers(page: Page) -> list[tuple[Route, Any]]:
    """Hold the service's answers to the page's claims (each applied, not yet delivered)."""
    held: list[tuple[Route, Any]] = []
    page.route("**/v1/games/*/claims", lambda route: held.append((route, route.fetch())))
    return held


def discard(url: str, game_id: str, token: str) -> None:
    """The seat discards its first legal discard (it has drawn)."""
    card = next(m["card"] for m in view(url, game_id, token)["legal"] if m["type"] == "discard")
    act(url, game_id, token, "turn/discard", {"card": card})


def wait_held(page: Page, held: list[Any], count: int) -> None:
    for _ in range(300):
        if len(held) >= count:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the page sent {len(held)} claims, not {count}")


def test_a_late_answer_leaves_the_later_table_and_a_pass_it_starts_keeps_it_busy(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 4, ["Ann", "Bob", "Cy", "Di"])
    page = new_page()
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator("#live")).to_have_text("live")
    page.get_by_label("Upcards others discard", exact=True).select_option("pass")
    page.get_by_label("Others' moves", exact=True).select_option("instant")
    held = held_answers(page)
    for token in tokens:  # the first upcard: nobody takes it, so Ann has drawn from the stock
        pass_claim(url, game_id, token)
    discard(url, game_id, tokens[0])  # Ann discards (through the API)
    turn(url, game_id, tokens, 1)  # Bob too: Cy is to draw, Ann and Di may answer

    wait_held(page, held, 1)  # the page passed on Bob's discard by itself; its answer is held
    assert 0 not in view(url, game_id)["claim_window"]["pending"]  # (applied by the service)
    settle(url, game_id, tokens)
    act(url, game_id, tokens[2], "turn/draw", {"source": "stock"})
    discard(url, game_id, tokens[2])
    status = page.locator("#turn")
    expect(status).to_contain_text("Di to draw")  # read from the events while the pass is on its way
    expect(page.locator("#app")).to_have_attribute("aria-busy", "true")

    route, answer = held[0]
    route.fulfill(response=answer)  # the answer of the pass on Bob's discard: Cy was to draw then
    wait_held(page, held, 2)  # the page passes on Cy's discard at once, from the later table
    expect(status).to_contain_text("Di to draw")
    expect(page.locator("#app")).to_have_attribute("aria-busy", "true")  # busy until that answer

    route, answer = held[1]
    route.fulfill(response=answer)
    expect(page.locator("#app")).not_to_have_attribute("aria-busy", "true")
    expect(status).to_contain_text("Di to draw")
    expect(status).not_to_have_attribute("data-you", "answer")  # passed: nothing is Ann's now
    assert 0 not in view(url, game_id)["claim_window"]["pending"]
