"""Test helpers: turning a view's legal-move JSON into the request that makes it."""

from __future__ import annotations

from typing import Any

#: The endpoint (below ``/v1/games/{id}/``) of each legal-move type.
PATHS = {"draw": "turn/draw", "discard": "turn/discard", "claim": "claims", "go_down": "melds", "lay_off": "lay-offs"}


def move_request(move: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The endpoint and the body that make ``move``: the move's fields less its ``type``."""
    if move["type"] not in PATHS:
        raise AssertionError(f"unknown move {move!r}")
    body = {k: v for k, v in move.items() if k != "type"}
    if move["type"] == "go_down":
        body.setdefault("lay_offs", [])
    return PATHS[move["type"]], body


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
