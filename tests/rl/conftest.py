"""Shared helpers of the environment tests: the tables (every variant and player count)
and a driver that plays games through the engine, keen to go down and lay off (so that
every kind of action, the two-card go-outs of Shanghai too, comes up in a few games)."""

from __future__ import annotations

import importlib.util
import os
import random
from collections.abc import Callable, Iterator

import pytest

from mayi_engine import GoDown, LayOff, Move, State, legal_moves, new_game, play
from mayi_engine.simulate import next_seat
from mayi_engine.state import FINISHED_PHASE

#: Without the rl extra (pip install -e '.[test,rl]', as the README and .ci/run install) these
#: tests are not collected; under CI (``CI`` set) its absence fails the run instead.
_MISSING = [name for name in ("numpy", "pettingzoo", "pyspiel") if importlib.util.find_spec(name) is None]
if _MISSING and os.environ.get("CI"):
    raise pytest.UsageError(f"tests/rl need the rl extra (missing: {', '.join(_MISSING)}): pip install -e '.[test,rl]'")
if _MISSING:
    collect_ignore_glob = ["test_*.py"]


def keen_move(legal: tuple[Move, ...], rng: random.Random) -> Move:
    """A random legal move, going down or laying off four times in five when it can."""
    melding = [m for m in legal if isinstance(m, GoDown | LayOff)]
    if melding and rng.random() < 0.8:
        return rng.choice(melding)
    return rng.choice(legal)


def walk(rules: object, players: int, seed: int, steps: int = 100_000) -> Iterator[tuple[State, int]]:
    """Each state of one game and the seat to act (as the environments order them)."""
    rng = random.Random(seed)
    state = new_game(rules, [f"p{i}" for i in range(players)], seed.to_bytes(32, "big"))  # type: ignore[arg-type]
    for _ in range(steps):
        if state.phase is FINISHED_PHASE:
            return
        seat = next_seat(state)
        yield state, seat
        state, _ = play(state, seat, keen_move(legal_moves(state, seat), rng))


@pytest.fixture
def games() -> Callable[..., Iterator[tuple[State, int]]]:
    return walk
