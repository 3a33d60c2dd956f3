"""The fixed action space and the observation arrays of a table (variant and players).

One :class:`Layout` per table (:func:`layout`): every legal move of the engine is exactly
one action (:mod:`mayi_rl.actions`), and every observation is one flat ``float32`` array
whose parts are named and documented (:mod:`mayi_rl.observations`); cards are indexed
0..52 (:mod:`mayi_rl.cards`). This module gathers them, with the tables of both games.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from mayi_engine import Rules, get_rules

from .actions import CLAIM, DISCARD_BASE, DRAW_STOCK, ENDS, PASS, TAKE_DISCARD, ActionSpace
from .cards import CARDS, card_index, index_card
from .observations import PHASE_ORDER, Layout, Part

__all__ = [
    "CARDS",
    "CLAIM",
    "DISCARD_BASE",
    "DRAW_STOCK",
    "ENDS",
    "PASS",
    "PHASE_ORDER",
    "TAKE_DISCARD",
    "ActionSpace",
    "Layout",
    "Part",
    "card_index",
    "describe_layout",
    "every_table",
    "index_card",
    "layout",
    "table_rules",
]


@lru_cache(maxsize=64)
def layout(rules: Rules, players: int) -> Layout:
    """The (cached) layout of a table."""
    return Layout(rules, players)


def table_rules(variant: str, options: dict[str, Any] | None = None, rounds: int | None = None) -> Any:
    """The rules of ``variant`` with table ``options``; ``rounds``: play only the first
    ``rounds`` rounds (a shorter game, for quick experiments and tests)."""
    rules = get_rules(variant, options)
    if rounds is None or rounds == len(rules.rounds):
        return rules
    if not 1 <= rounds <= len(rules.rounds):
        raise ValueError(f"rounds must be 1 to {len(rules.rounds)} for {rules.title}, not {rounds}")
    return dataclasses.replace(rules, rounds=rules.rounds[:rounds])


def every_table() -> list[tuple[str, int]]:
    """Every table of both games: ``(variant, players)`` for May I and Shanghai at each player count."""
    from mayi_engine import MAY_I, SHANGHAI

    return [(r.name, n) for r in (MAY_I, SHANGHAI) for n in range(r.min_players, r.max_players + 1)]


def describe_layout(lay: Layout) -> list[dict[str, Any]]:
    """The observation's parts as data: name, start, shape, what."""
    return [{"name": p.name, "start": p.start, "shape": p.shape, "what": p.what} for p in lay.parts.values()]
