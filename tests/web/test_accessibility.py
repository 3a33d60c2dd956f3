"""axe-core finds no violation at all (not even a minor one) on the web table's pages: the
lobby and its tabs, a waiting table, a seat's table with its log, a spectator's, the ladder.
(Every web test also runs axe-core on each page it visits and fails on a critical or serious
violation: conftest.py. This test walks the pages for that purpose alone.)"""

from __future__ import annotations

from typing import Any

from conftest import accessibility_problems
from playwright.sync_api import expect
from web_helpers import create, hold_seat, pass_claim

EVERY = ("critical", "serious", "moderate", "minor")


def test_no_accessibility_violation_on_any_page(served: Any, new_page: Any) -> None:
    url = served.url
    waiting, _ = create(url, 3, ["Ann"])
    game_id, tokens = create(url, 3, ["Ann", "Bob", "Cy"])
    pass_claim(url, game_id, tokens[0])  # something in the log
    page = new_page()
    found: list[str] = []

    page.goto(url + "/")
    expect(page.locator(f"tr[data-game='{waiting}']")).to_be_visible()
    found += accessibility_problems(page, EVERY)
    page.get_by_role("button", name="Playing").click()
    expect(page.locator(f"tr[data-game='{game_id}']")).to_be_visible()
    found += accessibility_problems(page, EVERY)

    page.goto(f"{url}/#/game/{waiting}")
    expect(page.locator(".waiting h2")).to_contain_text("1 of 3 seated")
    found += accessibility_problems(page, EVERY)

    hold_seat(page, url, game_id, tokens[1], 1)
    page.goto(f"{url}/#/game/{game_id}")
    expect(page.locator(".hand-cards button.card")).to_have_count(10)
    expect(page.locator(".events li")).not_to_have_count(0)
    found += accessibility_problems(page, EVERY)

    page.goto(f"{url}/#/watch/{game_id}")
    expect(page.locator(".role")).to_have_attribute("data-role", "spectator")
    expect(page.locator(".events li")).not_to_have_count(0)
    found += accessibility_problems(page, EVERY)

    page.goto(f"{url}/#/ladder")
    expect(page.locator(".tabs a").first).to_be_visible()
    found += accessibility_problems(page, EVERY)
    assert not found, "\n".join(found)
