"""The server goes away and comes back: a real ``mayi serve`` (default settings, its job worker
and its embedded Redis in its data directory) is stopped while a person's page is at the
table, and started again on the same port and the same data directory. The page says it is
not live meanwhile, follows the game again once the server answers (what happened while it
was away included), and the person's next move goes through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from serving import MAYI, as_a_user_serves, clean_env, free_port
from web_helpers import SERVER_ENV, create, hold_seat, pass_claim, press_card, view

#: The restart can take a while on a loaded machine (a graceful stop, then gunicorn, Redis and
#: the worker starting again): the page's waits for it are long; they end as soon as it is live.
BACK_MS = 120_000


def test_the_page_plays_on_after_the_server_restarts(tmp_path: Path, new_page: Any, shots: Any) -> None:
    assert MAYI is not None
    port, env = free_port(), clean_env(**SERVER_ENV)  # the same queue, port and data both times
    page = new_page()
    with as_a_user_serves(MAYI, tmp_path, port, "first", env) as first:
        url = first.url
        game_id, tokens = create(url, 3, ["Ann", "Bob", "Cy"])
        hold_seat(page, url, game_id, tokens[0], 0)
        page.goto(f"{url}/#/game/{game_id}")
        expect(page.locator("#live")).to_have_text("live")
        page.get_by_role("button", name="Pass on").click()  # the first upcard, before the restart
        expect(page.locator(".events")).to_contain_text("Ann passes on")
        pass_claim(url, game_id, tokens[1])
        expect(page.locator("#turn")).to_contain_text("Cy is offered the first upcard")
        assert first.stop() == 0  # as Ctrl+C would
        expect(page.locator("#live")).not_to_have_text("live", timeout=BACK_MS)
        expect(page.locator("#live")).to_have_text("reconnecting…")
        shots(page, "server-gone")
    with as_a_user_serves(MAYI, tmp_path, port, "second", env) as second:
        assert view(second.url, game_id)["seats"][0]["name"] == "Ann"  # the same data
        expect(page.locator("#live")).to_have_text("live", timeout=BACK_MS)
        pass_claim(second.url, game_id, tokens[2])  # Cy passes: the page follows it
        expect(page.locator(".events")).to_contain_text("Cy passes on")
        # Nobody took the first upcard: Ann, first to play, has drawn; her discard goes through.
        expect(page.locator("#turn")).to_contain_text("Your move: go down, lay off, or discard")
        expect(page.locator(".hand h2")).to_contain_text("Your hand (11)")
        card = view(second.url, game_id, tokens[0])["hand"][0]
        press_card(page, card)
        page.keyboard.press("x")
        expect(page.locator(".hand h2")).to_contain_text("Your hand (10)")
        expect(page.locator(".events li").first).to_contain_text("Ann discards")
        assert view(second.url, game_id)["discard_top"] == card
        shots(page, "server-back")
