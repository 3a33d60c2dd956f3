"""A page reloaded again and again keeps its live stream, on the default caps (four event
streams a client): a seat's table and a spectator's, reloaded more times than the cap in
quick succession, each time follow the game live at once. (A closed page's stream used to
stay counted, and the fifth reload was refused its stream.)"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import create, hold_seat, pass_claim

#: More reloads than MAYI_MAX_STREAMS_PER_CLIENT's default (4).
RELOADS = 7


def test_a_seat_and_a_spectator_reloading_again_and_again_stay_live(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 3, ["Ann", "Bob", "Cy"])
    seat = new_page()
    hold_seat(seat, url, game_id, tokens[2], 2)
    seat.goto(f"{url}/#/game/{game_id}")
    spectator = new_page()
    spectator.goto(f"{url}/#/watch/{game_id}")
    refused: list[str] = []
    for page in (seat, spectator):  # every answer to a stream request, of every reload
        page.on(
            "response",
            lambda r: refused.append(f"{r.status} {r.url}") if "/events" in r.url and r.status >= 400 else None,
        )
    for page in (seat, spectator):
        expect(page.locator("#live")).to_have_text("live")
    passes = iter(tokens[:2])
    for turn in range(RELOADS):
        for page in (seat, spectator):
            page.reload()
            expect(page.locator("#live")).to_have_text("live")
        if turn < 2:  # the page follows what happens next, live
            pass_claim(url, game_id, next(passes))
            for page in (seat, spectator):
                expect(page.locator(".events")).to_contain_text("passes on", use_inner_text=True)
    expect(seat.locator(".role")).to_have_text("You are Cy (seat 3)")
    assert refused == [], refused  # no reload was refused its stream (429), not even for a while


#: One more page than MAYI_MAX_STREAMS_PER_CLIENT's default (4): an EventSource carries no
#: token, so the streams of one browser's pages (one address) count together.
PAGES = 5


def test_a_page_refused_its_stream_follows_the_game_by_long_poll(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 3, ["Ann", "Bob", "Cy"])
    pages = []
    for number in range(PAGES):  # a seat's page and spectators' pages, all from this address
        page = new_page()
        if number == 0:
            hold_seat(page, url, game_id, tokens[2], 2)
            page.goto(f"{url}/#/game/{game_id}")
        else:
            page.goto(f"{url}/#/watch/{game_id}")
        expect(page.locator("#live")).to_have_text("live")
        pages.append(page)
    # One page was refused its stream (the default cap): it follows the game by long-poll.
    via = [page.locator("#live").get_attribute("data-via") for page in pages]
    assert "poll" in via, via
    pass_claim(url, game_id, tokens[0])
    for page in pages:
        expect(page.locator(".events")).to_contain_text("Ann passes on", use_inner_text=True)
        expect(page.locator("#turn")).to_contain_text("Bob is offered the first upcard")
        expect(page.locator("#live")).to_have_text("live")
