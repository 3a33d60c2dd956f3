"""A table waiting for players, seen by its host (who holds its first seat): the page follows
the people who join (nothing else happens at a waiting table, so nothing comes by its
events), "Fill N open seats" fills exactly the seats still open when pressed (one taken
meanwhile is left to its taker), and only the host is offered the filling: a spectator, or a
player of another seat, is not."""

from __future__ import annotations

import re
from typing import Any

import requests
from playwright.sync_api import expect
from web_helpers import create, hold_seat, view


def test_the_waiting_page_follows_joins_and_the_host_fills_the_open_seats(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 4, ["Ann"])
    host = new_page()
    hold_seat(host, url, game_id, tokens[0], 0)
    host.goto(f"{url}/#/game/{game_id}")
    heading = host.locator(".waiting h2")
    expect(heading).to_contain_text("1 of 4 seated")
    fill = host.get_by_role("button", name=re.compile("^Fill"))
    expect(fill).to_have_text("Fill 3 open seats with house bots")

    bob = requests.post(f"{url}/v1/games/{game_id}/seats", json={"name": "Bob"}, timeout=30)
    assert bob.status_code == 201, bob.text
    expect(heading).to_contain_text("2 of 4 seated")  # without a reload
    expect(host.locator(".waiting .seat-list li[data-seat='1']")).to_have_text("Bob")
    expect(fill).to_have_text("Fill 2 open seats with house bots")

    # Neither a spectator nor another seat's player is offered the filling.
    spectator = new_page()
    spectator.goto(f"{url}/#/watch/{game_id}")
    expect(spectator.locator(".waiting h2")).to_contain_text("2 of 4 seated")
    player = new_page()
    hold_seat(player, url, game_id, bob.json()["token"], 1)
    player.goto(f"{url}/#/game/{game_id}")
    expect(player.locator(".waiting h2")).to_contain_text("2 of 4 seated")
    for page in (spectator, player):
        expect(page.get_by_role("button", name=re.compile("^Fill"))).to_have_count(0)

    # Cy takes a seat just before the host presses the button: the one seat still open is filled.
    cy = requests.post(f"{url}/v1/games/{game_id}/seats", json={"name": "Cy", "seat": 2}, timeout=30)
    assert cy.status_code == 201, cy.text
    fill.click()
    expect(host.locator(".seat .name")).to_have_text(["Ann (you)", "Bob", "Cy", re.compile("house bot")])
    expect(host.locator("#action-error")).to_have_count(0)
    assert [s["name"] for s in view(url, game_id)["seats"]][:3] == ["Ann", "Bob", "Cy"]
    expect(player.locator(".seat .name")).to_have_count(4)  # the others' pages follow the start
