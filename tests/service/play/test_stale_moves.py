"""A move made stale by another (a retry without an ``Idempotency-Key``, a second tab) is
answered as docs/api.md says (issue 20): without ``If-Match``, a move whose content the
game no longer allows is 422 (its code names the rule: here ``illegal_meld``, "You are down
already"); with ``If-Match: key:<the decision's key>`` (or a version) it is 412
``version_conflict``, so a client that sends its decision's key gets 422 only for a move
its decision never allowed. Over a real socket, on a real Redis."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import requests

TIMEOUT = 30
API_DOC = Path(__file__).resolve().parents[3] / "docs" / "api.md"

#: Round 1 of a May I table of 4: seat 0 (first to play) holds two books of sevens and
#: nines but one nine; its first draw from the stock is that nine (9H).
PERSON = ["7C", "7D", "7S", "9C", "9D", "9S", "7H", "QS", "7C", "KC"]
OTHERS = [
    ["2C", "3D", "4H", "5S", "6C", "8D", "TH", "JS", "QC", "AD"],
    ["2D", "3H", "4S", "5C", "6D", "8H", "TS", "JC", "QD", "AH"],
    ["2H", "3S", "4C", "5D", "6H", "8S", "TC", "JD", "QH", "AS"],
]
UPCARD, STOCK = "2S", ["9H", "4D", "5H", "6S"]


def stacked() -> list[str]:
    hands = [PERSON, *OTHERS]
    dealt = [hands[i % 4][i // 4] for i in range(40)]
    return [*dealt, UPCARD, *STOCK]


def test_a_stale_go_down_is_422_without_if_match_and_412_with_it(live_server: Any) -> None:
    base = live_server.url
    body = {
        "variant": "may_i",
        "seats": 4,
        "options": {"claim_seconds": 600, "turn_seconds": 600},
        "players": [{"name": n} for n in ("Ann", "Bob", "Cy", "Di")],
        "test": {"seed": "0eb" * 11 + "0", "stacked_decks": [stacked()]},
    }
    created = requests.post(f"{base}/v1/games", json=body, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    game_id, tokens = created.json()["game_id"], [s["token"] for s in created.json()["seats"]]
    game = f"{base}/v1/games/{game_id}"

    def auth(seat: int, **more: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[seat]}", **more}

    # Every seat passes the first upcard; seat 0, first to play, has then drawn from the stock (the nine).
    for seat in range(4):
        passed = requests.post(f"{game}/claims", json={"claim": False}, headers=auth(seat), timeout=TIMEOUT)
        assert passed.status_code == 200, passed.text
    seen = requests.get(game, headers=auth(0), timeout=TIMEOUT).json()
    go_down = next(m for m in seen["legal"] if m["type"] == "go_down")
    move = {"melds": go_down["melds"], "lay_offs": []}
    down = requests.post(f"{game}/melds", json=move, headers=auth(0), timeout=TIMEOUT)
    assert down.status_code == 200, down.text

    # The same move again, made from the same (now stale) view: without If-Match, 422.
    again = requests.post(f"{game}/melds", json=move, headers=auth(0), timeout=TIMEOUT)
    assert again.status_code == 422, again.text
    problem = again.json()
    assert problem["code"] in ("illegal_meld", "card_not_in_hand"), problem
    # With the key of the decision it was made for (or the version), 412: the decision has changed.
    stale_key = auth(0, **{"If-Match": f"key:{seen['key']}"})
    keyed = requests.post(f"{game}/melds", json=move, headers=stale_key, timeout=TIMEOUT)
    assert keyed.status_code == 412 and keyed.json()["code"] == "version_conflict", keyed.text
    stale_version = auth(0, **{"If-Match": str(seen["version"])})
    versioned = requests.post(f"{game}/melds", json=move, headers=stale_version, timeout=TIMEOUT)
    assert versioned.status_code == 412 and versioned.json()["current_version"] > seen["version"], versioned.text


def test_the_errors_table_says_what_409_and_422_answer() -> None:
    """docs/api.md's table of errors says a 422 answers a move the game *as it is now* does
    not allow, and that If-Match turns a stale move into a 412 (it said 422 was for what
    the rules never allow, which a stale move is not)."""
    text = API_DOC.read_text()
    table = text[text.index("## Errors") : text.index("## Rate limits")]
    row = next(line for line in table.splitlines() if re.match(r"\| 422 \| `card_not_in_hand`", line))
    assert "never allow" not in row and "as it is now" in row, row
    assert "If-Match" in row and "412" in row, row
