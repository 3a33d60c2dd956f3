"""The engine's own in-process driver for its property tests and simulations: ``random``.

A policy is a function ``(state, seat, legal, rng) -> move`` that picks one of the
``legal`` moves. The playing bots (``random``, ``greedy``, ``strong``) live in the
``mayi_bots`` package, written against the SDK's view of a seat; :mod:`mayi_engine`
does not import them (it imports nothing outside the standard library), so
:func:`mayi_engine.simulate.simulate` takes them as policies from its caller
(``mayi simulate`` wraps them with ``mayi_sdk.local.bot_policy``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .moves import Move
from .rng import KeyedRandom
from .state import State

Policy = Callable[[State, int, Sequence[Move], KeyedRandom], Move]
#: Makes a fresh policy for one seat of one game: ``(game_seed, seat) -> policy``.
PolicyMaker = Callable[[bytes, int], Policy]


def random_policy(state: State, seat: int, legal: Sequence[Move], rng: KeyedRandom) -> Move:
    """Uniform over the legal moves."""
    return legal[rng.below(len(legal))]


#: The engine's built-in policies by name.
POLICIES: dict[str, Policy] = {"random": random_policy}
