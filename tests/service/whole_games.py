"""A deterministic player of whole games over HTTP: who must act in a view, and the move it chooses."""

from __future__ import annotations

from typing import Any

from mayi_bots.greedy import usefulness
from mayi_engine.cards import parse_card
from mayi_engine.rules import Rules
from mayi_sdk import Contract as ViewContract


def acting_seat(view: dict[str, Any]) -> int:
    """Who must act now: a seat the claim window waits for, else the actor."""
    window = view["claim_window"]
    if view["phase"] == "draw" and window and window["pending"]:
        return int(window["pending"][0])
    return int(view["actor"])


def choose(view: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """A deterministic choice among the view's legal moves.

    Go down, then lay off; claim an upcard only when it clearly helps a seat not
    yet down, else pass; take the discard when it helps, else draw from the
    stock; discard the card that helps least (highest scoring first), never the
    card just taken while another will do.
    """
    legal: list[dict[str, Any]] = view["legal"]
    assert legal, f"seat {view['seat']} must act but has no legal move"
    for kind in ("go_down", "lay_off"):
        for move in legal:
            if move["type"] == kind:
                return move
    contract = ViewContract.from_json(view["round"]["contract"])
    hand = view["hand"]
    down = view["seats"][view["seat"]]["down"]
    upcard = view["upcard"]
    helps = upcard is not None and not down and usefulness(upcard, hand, contract)
    claim, take = {"type": "claim", "claim": True}, {"type": "draw", "source": "discard"}
    if claim in legal and view["phase"] == "draw" and helps >= 4:
        return claim
    if {"type": "claim", "claim": False} in legal:
        return {"type": "claim", "claim": False}
    if take in legal and helps >= 2:
        return take
    if {"type": "draw", "source": "stock"} in legal:
        return {"type": "draw", "source": "stock"}
    discards = [m for m in legal if m["type"] == "discard"]
    if discards:
        keep = [m for m in discards if m["card"] != view.get("held")] or discards

        def badness(move: dict[str, Any]) -> tuple[int, int, int]:
            card = parse_card(move["card"])
            return (-usefulness(move["card"], hand, contract), rules.card_score(card), card)

        return max(keep, key=badness)
    return legal[0]


def body_of(move: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in move.items() if k != "type"}
