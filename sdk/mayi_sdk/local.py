"""``play_local``: games in-process against other bots, with no server, for fast iteration.

The same :class:`~mayi_sdk.bot.Bot` interface as on a server: each decision feeds a bot the
seat's view (built by ``mayi_engine``'s ``player_view``, the function the service uses) and
plays its answer through the engine. A ``decide`` that raises or answers an illegal move is
logged and the clock plays the decision, as the service would when its deadline passes.
A bot that answers :data:`~mayi_sdk.bot.WAIT` is passed over until its choices change
(the seats still to answer the upcard, then the seat on turn, are asked in that order); when
every seat that must act waits, the clock plays, as it would on a server.
Needs ``mayi_engine`` (the whole project, ``mayi-game-service``); :class:`~mayi_sdk.helpers.EngineMissing` otherwise.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from .bot import Bot, as_legal_move, is_wait
from .helpers import engine
from .models import GameView

log = logging.getLogger("mayi_sdk.local")

#: Most decisions one local game may take (a safeguard; real games take a few hundred).
MAX_DECISIONS = 20000

#: The entry-point group of named bots: each entry point in it is a mapping of bot names to
#: factories called as ``factory(seed=...)`` (``mayi-game-service`` registers the reference
#: bots, ``mayi_bots.BOTS``; a package of bots of its own may register its own).
BOT_ENTRY_POINTS = "mayi_sdk.bots"


def named_bots() -> dict[str, Callable[..., Bot]]:
    """Every bot the installed packages register by name (:data:`BOT_ENTRY_POINTS`)."""
    found: dict[str, Callable[..., Bot]] = {}
    for point in entry_points(group=BOT_ENTRY_POINTS):
        registry: Mapping[str, Callable[..., Bot]] = point.load()
        found.update(registry)
    return found


def seat_seed(game_seed: bytes, seat: int) -> int:
    """The seed of the named bot in ``seat`` of the game dealt from ``game_seed`` (as
    :func:`play_local` seeds them)."""
    return int.from_bytes(hashlib.blake2b(game_seed + bytes([seat]), digest_size=8).digest(), "big")


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

    An opponent is another :class:`Bot` or the name of a bot an installed package registers
    (:func:`named_bots`: the reference bots ``"random"``, ``"greedy"``, ``"strong"``,
    ``"expert"`` come with the whole project, ``mayi-game-service``). The same ``seed`` deals
    the same cards (and seeds the named bots).
    """
    eng = engine()
    rules = eng.get_rules(variant, options)
    key = _seed_bytes(seed)
    registry = named_bots() if any(isinstance(p, str) for p in opponents) else {}
    players: list[Bot] = [bot, *(_named_bot(p, registry, key, i + 1) for i, p in enumerate(opponents))]
    names = [f"{getattr(p, 'name', 'bot')}{i}" for i, p in enumerate(players)]
    state = eng.new_game(rules, names, key)
    now = 0.0
    failures = [0] * len(players)
    problems: list[str] = []
    decisions = 0
    waiting: dict[int, Any] = {}  # seat -> what it waited on (the choices it let pass)
    while state.phase is not eng.Phase.FINISHED:
        if decisions >= MAX_DECISIONS:
            raise RuntimeError(f"play_local: the game did not end in {MAX_DECISIONS} decisions")
        seat = _next_seat(eng, state, now, waiting)
        if seat is None:  # every seat that must act waits: the clock plays
            waiting.clear()
            due = eng.deadline(state)
            now = max(now, due if due is not None else now)
            state, _ = eng.play(state, None, eng.Timeout(), now)
            continue
        decisions += 1
        player = players[seat]
        view = GameView.from_json(_view_json(eng, state, seat, now, decisions))
        try:
            answer = player.decide(view)
            if is_wait(answer):
                waiting[seat] = _choices(eng, state, seat, now)
                continue
            state, _ = eng.play(state, seat, eng.move_from_json(_move_json(answer)), now)
            waiting.pop(seat, None)
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


def _move_json(answer: Any) -> dict[str, Any]:
    move = as_legal_move(answer)
    return {"type": move.type, **move.body}


def _choices(eng: Any, state: Any, seat: int, now: float) -> tuple[Any, ...]:
    """What a seat's decision is made of (its round, turn, phase, hand and legal moves):
    a seat that waited is asked again only once this changes."""
    legal = eng.legal_moves(state, seat, now)
    return (state.round, state.round_turns, state.phase, state.hands[seat], legal)


def _next_seat(eng: Any, state: Any, now: float = 0.0, waiting: dict[int, Any] | None = None) -> int | None:
    """Who decides next, in the engine's order (``to_act``); a seat waiting on its present
    choices is passed over (``None``: every one waits)."""
    for seat in eng.to_act(state, now):
        if not waiting or seat not in waiting or waiting[seat] != _choices(eng, state, seat, now):
            return int(seat)
    return None


def _named_bot(player: Bot | str, registry: Mapping[str, Callable[..., Bot]], key: bytes, seat: int) -> Bot:
    """``player`` itself, or the registered bot of that name, seeded from the game's seed and the seat."""
    if not isinstance(player, str):
        return player
    if player not in registry:
        known = ", ".join(registry) or f"none: no installed package registers bots ({BOT_ENTRY_POINTS!r} entry points)"
        raise ValueError(f"opponents: unknown bot {player!r} (known: {known}; or pass a Bot)")
    return registry[player](seed=seat_seed(key, seat))


def seat_view(state: Any, seat: int | None, now: float = 0.0, version: int = 0) -> GameView:
    """The :class:`GameView` a bot gets of an engine ``state`` (as the service would show it)."""
    return GameView.from_json(_view_json(engine(), state, seat, now, version))


def bot_policy(bot: Bot) -> Callable[[Any, int, Any, Any], Any]:
    """``bot`` as an engine policy ``(state, seat, legal, rng) -> move``, for in-process
    drivers such as :func:`mayi_engine.simulate.simulate` (``mayi simulate``). The bot sees
    the seat's view, as on a server, with the driver's ``legal`` as its legal moves (the
    driver keeps the clock: a claim window it has closed offers the stock); an answer that
    is not a move raises. A driver asks a policy for a move now and cannot wait: a bot that
    answers :data:`~mayi_sdk.bot.WAIT` gets the first legal move played (where the reference
    bots wait, the seat on turn while the upcard may still be claimed, that is taking the
    upcard, its only legal move)."""
    eng = engine()

    def policy(state: Any, seat: int, legal: Any, rng: Any) -> Any:
        view = _view_json(eng, state, seat, None, 0)
        view["legal"] = [eng.move_to_json(move) for move in legal]
        answer = bot.decide(GameView.from_json(view))
        if is_wait(answer):
            return legal[0]
        return eng.move_from_json(_move_json(answer))

    return policy


def _view_json(eng: Any, state: Any, seat: int | None, now: float | None, version: int) -> dict[str, Any]:
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
