"""A spectator's page: the public view only. No hidden card reaches the page (neither its
DOM nor any response it receives), no token is ever sent from it, and it follows the game live."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import OTHERS, PERSON, SEED, STOCK, act, create, draw_and_discard, pass_claim, stack, view

PRIVATE_KEYS = {"hand", "held", "legal", "private", "seat_token", "token"}


def private_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = PRIVATE_KEYS & set(node)
        for value in node.values():
            found |= private_keys(value)
        return found
    if isinstance(node, list):
        return set().union(*(private_keys(item) for item in node)) if node else set()
    return set()


def test_a_spectator_sees_no_hidden_card(served: Any, new_page: Any, shots: Any) -> None:
    url = served.url
    deck = stack([PERSON, *OTHERS], "2S", STOCK)
    game_id, tokens = create(url, 4, ["Ann", "Bob", "Cy", "Di"], {"seed": SEED, "stacked_decks": [deck]})
    for seat in range(4):
        pass_claim(url, game_id, tokens[seat])
    act(url, game_id, tokens[0], "melds", {"melds": [["7C", "7D", "7S"], ["9C", "9D", "9S"]]})
    act(url, game_id, tokens[0], "turn/discard", {"card": "KC"})

    page = new_page()
    # This browser holds Ann's seat token: the spectator page must still never send it.
    page.goto(url + "/")
    page.evaluate(
        "([id, token]) => localStorage.setItem('mayi.seats.v1', JSON.stringify({[id]: {token, seat: 0}}))",
        [game_id, tokens[0]],
    )
    sent: list[dict[str, str]] = []
    bodies: list[tuple[str, Any]] = []
    page.on("request", lambda request: sent.append(request.all_headers()) if "/v1/" in request.url else None)

    def note(response: Any) -> None:
        if "/v1/" in response.url and "/events/stream" not in response.url:
            bodies.append((response.url, response.json()))

    page.on("response", note)
    page.goto(f"{url}/#/watch/{game_id}")
    expect(page.locator(".role")).to_have_attribute("data-role", "spectator")
    expect(page.locator(".melds .meld")).to_have_count(2)
    expect(page.locator("#live")).to_have_text("live")

    # Bob plays; the page follows by SSE.
    pass_claim(url, game_id, tokens[2])
    pass_claim(url, game_id, tokens[3])
    draw_and_discard(url, game_id, tokens[1], "2C")
    expect(page.locator("#discard-top")).to_have_attribute("data-card", "2C")
    expect(page.locator(".events")).to_contain_text("Bob discards 2♣")
    expect(page.locator(".events")).to_contain_text("Bob draws from the stock.")
    shots(page, "spectator")

    # The DOM: no hand, no moves, and no card but the public ones (melds, discard, upcard).
    assert page.locator(".hand").count() == 0 and page.locator(".actions").count() == 0
    public = view(url, game_id)
    shown = set(page.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)"))
    allowed = {c for m in public["melds"] for c in m["cards"]} | {public["discard_top"], public["upcard"]}
    assert shown <= allowed, shown - allowed
    # The events, by SSE too, carry nothing private: nobody's dealt hand, nobody's drawn card.
    drew = page.locator(".events li[data-type='drew']").all_inner_texts()
    dealt = page.locator(".events li[data-type='dealt']").all_inner_texts()
    assert drew and all(text.endswith("draws from the stock.") for text in drew), drew
    assert all(text.endswith("is dealt a hand.") for text in dealt), dealt
    # The network: no token went out, and nothing private came back.
    assert sent and not any("authorization" in headers for headers in sent)
    assert bodies and all(not private_keys(body) for _, body in bodies), [u for u, b in bodies if private_keys(b)]
