"""Reference bots, written only against the mayi_sdk package.

Each bot is a :class:`mayi_sdk.Bot`; :func:`make` builds one by name. The service's house
bots, ``mayi simulate --bots`` and the ladder all take their bots from here.
"""

from __future__ import annotations

from collections.abc import Callable

from mayi_sdk import Bot

from .random import RandomBot

#: The reference bots by name, weakest first.
BOTS: dict[str, Callable[[], Bot]] = {"random": RandomBot}
NAMES: tuple[str, ...] = tuple(BOTS)


def make(name: str) -> Bot:
    """A new bot of the given name (one of :data:`NAMES`)."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (known: {', '.join(NAMES)})") from None
    return factory()


__all__ = ["BOTS", "NAMES", "RandomBot", "make"]
