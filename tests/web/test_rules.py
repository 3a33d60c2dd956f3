"""The rules, a link away from every page of the web table: the header's "Rules" and the
table's round line open docs/rules.md rendered (``static/rules.html``, made from it by
``python -m mayi_service.web.rules``: the file must be what that makes), and the rules'
links to their own sections work there."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import create, hold_seat

from mayi_service.web.rules import RULES_HTML, RULES_MD, render

#: The elements that reach past the screen's right edge (their tag, class and right edge),
#: scrolled within their own box or not: what to look at when the page is too wide.
WIDER = """width => [...document.querySelectorAll("body *")]
  .filter(e => e.getBoundingClientRect().right > width + 1)
  .map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""


def test_the_rules_page_is_made_from_docs_rules_md() -> None:
    assert RULES_HTML.is_file(), f"no {RULES_HTML}: python -m mayi_service.web.rules"
    made = render(RULES_MD.read_text(encoding="utf-8"))
    assert RULES_HTML.read_text(encoding="utf-8") == made, "stale: run python -m mayi_service.web.rules"


def test_the_rules_are_linked_from_the_lobby_and_the_table(served: Any, new_page: Any) -> None:
    url = served.url
    page = new_page(390, 844)  # a phone's screen: nothing wider than it
    page.goto(url + "/")
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Rules").click()
    expect(page.get_by_role("heading", name="Rules of May I and Shanghai", level=1)).to_be_visible()
    page.get_by_role("link", name="Rulings in detail").first.click()
    expect(page.locator("#rulings-in-detail")).to_be_in_viewport()
    # Nothing wider than the screen (a wide table or example scrolls in its own box).
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, page.evaluate(WIDER, 390)

    game_id, tokens = create(url, 2, ["Ann", "Bob"])
    hold_seat(page, url, game_id, tokens[0], 0)
    page.goto(f"{url}/#/game/{game_id}")
    page.locator(".status .round").get_by_role("link", name="Rules").click()
    expect(page).to_have_url(f"{url}/rules")
    expect(page.get_by_role("heading", name="Rules of May I and Shanghai", level=1)).to_be_visible()
