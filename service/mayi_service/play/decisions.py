"""A seat's decision and its key (the decisions long-poll, webhook deliveries, and the
seat-scoped precondition ``If-Match: key:<key>`` on actions)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import mayi_engine as engine

#: ``If-Match: key:<key>``: act only while the seat's decision is the one with that key.
KEY_PREFIX = "key:"


def decision_key(game_id: str, state: engine.State, seat: int, legal: tuple[engine.Move, ...]) -> str:
    """A decision's key: the same while the seat's choices in this turn stay the same.

    It names the game, seat, round, turn (turns completed in the round), phase, the
    seat's hand and its legal moves. Another seat's answer to the upcard leaves it as it
    is, unless it changes what the seat may do (the last answer makes the stock draw
    legal for the seat on turn); any move of the seat itself changes it. A bot that
    waits on a decision (``skip``) is shown it again only under a new key."""
    text = f"{game_id}|{seat}|{state.round}|{state.round_turns}|{state.phase.name}|{state.hands[seat]}|{legal!r}"
    return base64.urlsafe_b64encode(hashlib.blake2b(text.encode(), digest_size=12).digest()).decode()


def decision_entry(view: dict[str, Any], key: str) -> dict[str, Any]:
    """One decision as the API lists it (and a webhook delivers it), from the seat's view."""
    return {
        "game_id": view["id"],
        "seat": view["seat"],
        "version": view["version"],
        "key": key,
        "deadline": view.get("deadline"),
        "view": view,
    }
