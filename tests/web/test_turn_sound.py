"""A sound when the move becomes the person's: off unless they choose it in the table's
settings (kept in the browser); once chosen, a tone is heard at once (the choice is the
gesture a browser asks before it plays sound) and each time the move becomes theirs, not
when another seat's upcard is on offer. (Tones are counted where the page starts them: the
Web Audio API's oscillators, wrapped before the page loads.)"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from web_helpers import act, create, hold_seat, pass_claim, press_card, settle, turn, view

COUNT_TONES = """
window.tones = 0;
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) { window.tones += 1; return start.apply(this, args); };
"""


def discard_of(url: str, game_id: str, token: str) -> str:
    return str(next(m["card"] for m in view(url, game_id, token)["legal"] if m["type"] == "discard"))


def test_a_turn_sound_only_when_chosen(served: Any, new_page: Any) -> None:
    url = served.url
    game_id, tokens = create(url, 3, ["Ann", "Bob", "Cy"])
    page = new_page()
    page.add_init_script(COUNT_TONES)  # (again at each load: a reload counts afresh)
    hold_seat(page, url, game_id, tokens[1], 1)  # Bob
    page.goto(f"{url}/#/game/{game_id}")
    sound = page.get_by_label("Sound on your turn", exact=True)
    expect(sound).to_have_value("off")
    # Off (the default): the first upcard offered to Bob is his move, silently.
    pass_claim(url, game_id, tokens[0])
    expect(page.locator("#turn.yours")).to_contain_text("Your move: take the upcard")
    page.get_by_role("button", name="Pass on").click()
    expect(page.locator("#turn.yours")).to_have_count(0)
    assert page.evaluate("() => window.tones") == 0

    sound.select_option("on")
    page.wait_for_function("() => window.tones === 1")  # heard once, as it is chosen
    page.reload()
    expect(page.get_by_label("Sound on your turn", exact=True)).to_have_value("on")  # kept
    expect(page.locator("#live")).to_have_text("live")
    pass_claim(url, game_id, tokens[2])  # nobody took the first upcard: Ann plays first
    expect(page.locator("#turn")).to_contain_text("Ann to play")
    act(url, game_id, tokens[0], "turn/discard", {"card": discard_of(url, game_id, tokens[0])})
    expect(page.locator("#turn.yours")).to_contain_text("Your move: draw")  # Bob's turn: a tone
    page.wait_for_function("() => window.tones === 1")
    settle(url, game_id, tokens)  # Cy passes the upcard: Bob may draw from the stock
    page.get_by_role("button", name="Draw from the stock").click()
    expect(page.locator(".hand h2")).to_contain_text("Your hand (11)")
    press_card(page, discard_of(url, game_id, tokens[1]))
    page.keyboard.press("x")
    expect(page.locator("#turn.yours")).to_have_count(0)
    # Cy's turn, then Ann's (Bob may answer Cy's upcard: not his move, no tone); then his again.
    turn(url, game_id, tokens, 2)
    expect(page.locator("#turn.answer")).to_be_visible()
    turn(url, game_id, tokens, 0)
    expect(page.locator("#turn.yours")).to_contain_text("Your move: draw")
    page.wait_for_function("() => window.tones === 2")
    assert page.evaluate("() => window.tones") == 2
