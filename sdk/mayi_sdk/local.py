"""``play_local``: games in-process against other bots, with no server, for fast iteration.

The same :class:`~mayi_sdk.bot.Bot` interface as on a server: each decision feeds a bot the
seat's view (built by ``mayi_engine``'s ``player_view``, the function the service uses) and
plays its answer through the engine. A ``decide`` that raises or answers an illegal move is
logged and the clock plays the decision, as the service would when its deadline passes.
Needs ``mayi_engine`` (``pip install mayi``); :class:`~mayi_sdk.helpers.EngineMissing` otherwise.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .bot import Bot, as_legal_move
from .helpers import engine
from .models import GameView

log = logging.getLogger("mayi_sdk.local")

#: Most decisions one local game may take (a safeguard; real games take a few hundred).
MAX_DECISIONS = 20000


@dataclass
class LocalGame:
    """One finished local game: final ``totals`` (lowest wins), ``places`` (each seat's place, 1 = best),
    ``decisions`` asked of bots, ``failures`` (decisions the clock played instead) per seat,
    and the last public ``view``."""

    variant: str
    seed: bytes
    totals: list[int]
    places: list[int]
    decisions: int
    failures: list[int]
    view: GameView
    rounds: int = 0
    errors: list[str] = field(default_factory=list)


def _seed_bytes(seed: int | str | bytes | None) -> bytes:
    if isinstance(seed, bytes) and len(seed) == 32:
        return seed
    if seed is None:
        import os

        return os.urandom(32)
    return hashlib.blake2b(f"play_local/{seed!r}".encode(), digest_size=32).digest()


def play_local(
    bot: Bot,
    opponents: Sequence[Bot | str] = ("greedy", "greedy"),
    variant: str = "may_i",
    seed: int | str | bytes | None = None,
    *,
    options: dict[str, Any] | None = None,
) -> LocalGame:
    """Play one game of ``variant``: ``bot`` in seat 0, ``opponents`` in the next seats.

    An opponent is another :class:`Bot` or the name of one of the engine's built-in
    policies (``"greedy"``, ``"random"``). The same ``seed`` deals the same cards.
    """
    eng = engine()
    rules = eng.get_rules(variant, options)
    players: list[Bot | str] = [bot, *opponents]
    for p in players:
        if isinstance(p, str) and p not in eng.POLICIES:
            raise ValueError(f"opponents: unknown policy {p!r} (known: {', '.join(eng.POLICIES)}, or a Bot)")
    names = [p if isinstance(p, str) else getattr(p, "name", "bot") for p in players]
    names = [f"{n}{i}" for i, n in enumerate(names)]
    key = _seed_bytes(seed)
    state = eng.new_game(rules, names, key)
    rng = _policy_rng(key)
    now = 0.0
    failures = [0] * len(players)
    problems: list[str] = []
    decisions = 0
    while state.phase is not eng.Phase.FINISHED:
        if decisions >= MAX_DECISIONS:
            raise RuntimeError(f"play_local: the game did not end in {MAX_DECISIONS} decisions")
        decisions += 1
        seat = _next_seat(eng, state)
        player = players[seat]
        legal = eng.legal_moves(state, seat, now)
        if isinstance(player, str):
            move = eng.POLICIES[player](state, seat, legal, rng)
            state, _ = eng.play(state, seat, move, now)
            continue
        view = GameView.from_json(_view_json(eng, state, seat, now, decisions))
        try:
            move = eng.move_from_json(_answer(player, view))
            state, _ = eng.play(state, seat, move, now)
        except Exception as exc:  # a bot's bug must not stop the game: the clock plays
            failures[seat] += 1
            problems.append(f"seat {seat}: {type(exc).__name__}: {exc}")
            first = failures[seat] == 1  # the traceback once per seat, then one line each
            log.warning("seat %d (%s): decide failed, the clock plays: %s", seat, names[seat], exc, exc_info=first)
            due = eng.deadline(state)
            now = max(now, due if due is not None else now)
            state, _ = eng.play(state, None, eng.Timeout(), now)
    final = GameView.from_json(_view_json(eng, state, None, now, decisions))
    return LocalGame(
        variant=variant,
        seed=key,
        totals=list(state.totals),
        places=list(eng.standings(state)),
        decisions=decisions,
        failures=failures,
        view=final,
        rounds=len(state.results),
        errors=problems,
    )


def _answer(bot: Bot, view: GameView) -> dict[str, Any]:
    move = as_legal_move(bot.decide(view))
    return {"type": move.type, **move.body}


def _next_seat(eng: Any, state: Any) -> int:
    """Who decides next: pending claimants first (clockwise from the turn), then the actor."""
    pending = eng.pending_claimants(state)
    if pending:
        return int(min(pending, key=lambda p: (p - state.turn) % state.players))
    return int(state.actor)


def _policy_rng(seed: bytes) -> Any:
    from mayi_engine.rng import KeyedRandom

    return KeyedRandom(seed, "play_local")


def _view_json(eng: Any, state: Any, seat: int | None, now: float, version: int) -> dict[str, Any]:
    view: dict[str, Any] = eng.player_view(state, seat, now)
    return {
        "id": "local",
        "version": version,
        "options": state.rules.table_options(),
        "rated": False,
        "created_at": 0.0,
        "last_event": version,
        **view,
    }
