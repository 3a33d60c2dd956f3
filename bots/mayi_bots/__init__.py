"""Reference bots, written only against the mayi_sdk package.

Each bot is a :class:`mayi_sdk.Bot`; :func:`make` builds one by name. The service's house
bots, ``mayi simulate --bots``, the ladder and ``play_local``'s named opponents all take
their bots from here (the last through the ``mayi_sdk.bots`` entry point, which names
:data:`BOTS`: the SDK does not import this package).

>>> make("greedy").name, NAMES
('greedy', ('random', 'greedy', 'strong', 'expert'))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mayi_sdk import Bot
from mayi_sdk.local import bot_policy, seat_seed


# The bots' modules are imported when first used, so that ``python -m mayi_bots.strong``
# runs its module once (not once as a package member and again as ``__main__``).
def _random(seed: int | None = None, budget: float | None = None) -> Bot:
    from .random import RandomBot

    return RandomBot(seed=seed)


def _greedy(seed: int | None = None, budget: float | None = None) -> Bot:
    from .greedy import GreedyBot

    return GreedyBot(seed=seed)


def _strong(seed: int | None = None, budget: float | None = None) -> Bot:
    from .strong import StrongBot

    return StrongBot(seed=seed)


def _expert(seed: int | None = None, budget: float | None = None) -> Bot:
    from .expert import BUDGET, ExpertBot

    return ExpertBot(seed=seed, budget=BUDGET if budget is None else budget)


#: The reference bots by name, weakest first. Each factory takes an optional ``seed`` and
#: ``budget`` (CPU seconds a decision, for a bot that searches: ``expert``; the others ignore it).
BOTS: dict[str, Callable[..., Bot]] = {"random": _random, "greedy": _greedy, "strong": _strong, "expert": _expert}
NAMES: tuple[str, ...] = tuple(BOTS)
_CLASSES = {"RandomBot": "random", "GreedyBot": "greedy", "StrongBot": "strong", "ExpertBot": "expert"}


def __getattr__(attr: str) -> Any:
    """``RandomBot``, ``GreedyBot``, ``StrongBot``, ``ExpertBot``: the bots' classes, imported on first use."""
    if attr in _CLASSES:
        import importlib

        return getattr(importlib.import_module(f".{_CLASSES[attr]}", __name__), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def make(name: str, *, seed: int | None = None, budget: float | None = None) -> Bot:
    """A new bot of the given name (one of :data:`NAMES`); ``seed`` makes a bot that draws
    random numbers (``random``, ``expert``) reproducible; the others ignore it. ``budget``:
    the CPU seconds a bot that searches (``expert``) may think per decision (``None``: its
    default); the others ignore it."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (known: {', '.join(NAMES)})") from None
    return factory(seed=seed, budget=budget)


def policy_makers(names: Iterable[str] = NAMES) -> dict[str, Callable[[bytes, int], Any]]:
    """The named bots as engine policies for in-process simulations
    (``mayi_engine.simulate.simulate(..., players=policy_makers())``): for each game and
    seat a fresh bot, seeded from the game's seed and the seat, fed the seat's view."""
    chosen = tuple(names)
    for name in chosen:
        if name not in BOTS:
            raise ValueError(f"unknown bot {name!r} (known: {', '.join(NAMES)})")
    return {name: _maker(name) for name in chosen}


def _maker(name: str) -> Callable[[bytes, int], Any]:
    def maker(game_seed: bytes, seat: int) -> Any:
        return bot_policy(make(name, seed=seat_seed(game_seed, seat)))

    return maker


__all__ = [
    "BOTS",
    "NAMES",
    "ExpertBot",
    "GreedyBot",
    "RandomBot",
    "StrongBot",
    "make",
    "policy_makers",
    "seat_seed",
]
