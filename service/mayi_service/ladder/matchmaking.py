"""The ladder's entrants and how tables are formed from them.

A table starts from the free entrant that played least recently and adds the free
entrants nearest to it in rating; now and then (:data:`EXPLORE`) it picks them at random
instead. Seats are in random order. No Redis here: :class:`~mayi_service.ladder.matches.Ladder`
reads the entrants and creates the matches.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mayi_engine.rules import get_rules
from mayi_service.ladder.ratings import ordinal_of

#: House entrants' ids start with this; the rest is the reference bot's name (and a copy number).
HOUSE = "house-"
#: The share of tables whose opponents are picked at random rather than by rating.
EXPLORE = 0.2


@dataclass
class Entry:
    """A bot entered in a variant's ladder."""

    entrant: str
    name: str
    max_games: int
    entered_at: float
    #: The reference bot's name, for a house entrant.
    house: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entrant": self.entrant,
            "name": self.name,
            "max_games": self.max_games,
            "entered_at": self.entered_at,
            "house": self.house,
        }


def house_id(name: str, copy: int = 1) -> str:
    """The entrant id of a house bot (``copy`` > 1: another entrant playing the same bot)."""
    return f"{HOUSE}{name}" if copy == 1 else f"{HOUSE}{name}-{copy}"


def table_sizes(variant: str, wanted: Sequence[str]) -> list[int]:
    """The table sizes of ``wanted`` (``MAYI_LADDER_PLAYERS``) the variant allows; all it
    allows when none is."""
    rules = get_rules(variant)
    allowed = [int(n) for n in wanted if n.strip() and rules.min_players <= int(n) <= rules.max_players]
    return allowed or list(range(rules.min_players, rules.max_players + 1))


def pick_table(
    entries: Mapping[str, Entry],
    room: Mapping[str, int],
    ratings: Mapping[str, dict[str, Any]],
    last: Mapping[str, float],
    sizes: Sequence[int],
    rng: random.Random,
    house_tables: bool,
) -> list[str] | None:
    """The entrants of the next table, in seat order, of those with ``room`` left (``None``:
    none can be formed). ``house_tables``: a table of house bots only may be formed (local
    runs); otherwise every table has an external bot."""
    free = [e for e, left in room.items() if left > 0]
    anchors = free if house_tables else [e for e in free if not entries[e].house]
    fitting = [n for n in sizes if n <= len(free)]
    if not anchors or not fitting:
        return None
    anchor = min(anchors, key=lambda e: (last.get(e, 0.0), rng.random()))
    size = rng.choice(fitting)
    others = [e for e in free if e != anchor]
    if rng.random() < EXPLORE:
        rng.shuffle(others)
    else:
        mine = ordinal_of(ratings.get(anchor))
        others.sort(key=lambda e: (abs(ordinal_of(ratings.get(e)) - mine), last.get(e, 0.0), rng.random()))
    table = [anchor, *others[: size - 1]]
    rng.shuffle(table)
    return table
