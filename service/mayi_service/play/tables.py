"""Tables: opening them, seating players (and bots, house bots), and dealing once full."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import mayi_engine as engine
from mayi_engine.cards import card_codes, parse_card
from mayi_engine.errors import MayIError
from mayi_engine.rules import Rules, get_rules
from mayi_engine.state import GameStatus, State
from mayi_service.play.listeners import Commit, CommitListener
from mayi_service.play.steps import Update, stamp, state_change
from mayi_service.problem_types import Problem, ServiceError, from_engine
from mayi_service.storage import codec
from mayi_service.storage.records import Change, GameRecord, TableMeta
from mayi_service.storage.repository import GameRepository

TOKEN_BYTES = 32


def new_id(nbytes: int = 9) -> str:
    """A fresh random id (``nbytes`` random bytes, URL-safe) that never begins with ``-``, so
    a command line never takes it for an option."""
    while (text := secrets.token_urlsafe(nbytes)).startswith("-"):
        pass
    return text


def new_token(kind: str = "seat") -> str:
    """A fresh bearer token (256 random bits)."""
    return f"mayi_{kind}_{secrets.token_urlsafe(TOKEN_BYTES)}"


def house_bot_name(kind: str, copy: int = 1) -> str:
    """The name of the ``copy``-th house bot ``kind`` at a table (or on a ladder):
    "greedy (house bot)", then "greedy 2 (house bot)", and so on."""
    return f"{kind} (house bot)" if copy == 1 else f"{kind} {copy} (house bot)"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def deal(meta: TableMeta, now: float) -> tuple[State, list[engine.Event]]:
    """The deal of a table whose seats are all taken (its test block applied)."""
    rules = get_rules(meta.variant, meta.options)
    test = meta.test or {}
    seed = bytes.fromhex(test["seed"]) if test.get("seed") else None
    stacked = test.get("stacked_decks")
    stacks = [None if s is None else [parse_card(c) for c in s] for s in stacked] if stacked else None
    # A name with a lone surrogate (refused since; a table may hold one from before) cannot be
    # stored as UTF-8 in the game state: it would jam the table for good. Deal with it as "?".
    names = [(n or "").encode("utf-8", "replace").decode() for n in meta.names]
    try:
        return engine.start_game(rules, names, seed, now=now, stacked=stacks, start_round=test.get("start_round", 1))
    except MayIError as exc:
        raise from_engine(exc) from exc


class Seating:
    """Opening and seating tables, a part of :class:`~mayi_service.play.games.Games` (whose
    update path, listeners and clock these use)."""

    repo: GameRepository
    clock: Callable[[], float]
    listeners: tuple[CommitListener, ...]
    max_open_per_owner: int
    update: Callable[..., Any]
    follow: Callable[[Commit], None]

    def create(self, data: dict[str, Any], owner: str | None = None) -> tuple[GameRecord, list[dict[str, Any]]]:
        """Create a table; seat the given ``players`` at once. Returns the record and their tokens.

        ``owner`` (the client address) may have at most ``max_open_per_owner`` open tables."""
        variant = data["variant"]
        seats = data["seats"]
        options = data.get("options") or {}
        try:
            rules = get_rules(variant, options)
        except MayIError as exc:
            raise from_engine(exc) from exc
        if not rules.min_players <= seats <= rules.max_players:
            raise ServiceError(
                Problem.VALIDATION_ERROR,
                f"seats: {rules.title} is for {rules.min_players} to {rules.max_players} players, not {seats}",
            )
        players = data.get("players") or []
        if len(players) > seats:
            raise ServiceError(Problem.VALIDATION_ERROR, f"players: {len(players)} players for {seats} seats")
        test = data.get("test")
        meta = TableMeta(
            variant=variant,
            options=options,
            seats=seats,
            names=(None,) * seats,
            rated=test is None,
            created_at=self.clock(),
            test=None if test is None else check_test(test, rules),
        )
        if test is not None and len(players) < seats:
            # Refuse stacks the decks cannot hold now, not when the last seat is taken.
            deal(replace(meta, names=tuple(f"seat {i}" for i in range(seats))), self.clock())
        tokens: dict[str, int] = {}
        issued = []
        for seat, player in enumerate(players):
            token = new_token()
            tokens[token_hash(token)] = seat
            meta = meta.seated(seat, player["name"])
            issued.append({"seat": seat, "name": player["name"], "token": token})
        return self.open_table(meta, tokens, owner=owner), issued

    def open_table(
        self, meta: TableMeta, tokens: dict[str, int], *, game_id: str | None = None, owner: str | None = None
    ) -> GameRecord:
        """Store a new table of ``meta`` whose seats' token digests are ``tokens`` (digest →
        seat), dealt at once when every seat is taken, told to the commit listeners as any
        commit is. ``game_id``: the table's id (default: a fresh random one);
        ``owner`` (the client address) may have at most ``max_open_per_owner`` open tables
        (409 ``too_many_open_tables``). (:meth:`create` for the API; the ladder's matches.)"""
        game_id = game_id or new_id()
        record = GameRecord(game_id, 1, 0, GameStatus.WAITING, meta, None)
        events: list[tuple[int, str]] = []
        now = self.clock()
        state = None
        if meta.full:
            state, engine_events = deal(meta, now)
            record.state = codec.dump_state(state)
            record.status = GameStatus.PLAYING
            record.deadline = engine.deadline(state)
            events = stamp(engine_events, 0, now)
            record.seq = len(events)
        limit = self.max_open_per_owner
        if owner is not None and limit and not self.repo.add_open_table(owner, game_id, limit, now):
            raise ServiceError(
                Problem.TOO_MANY_OPEN_TABLES,
                f"This client address has {limit} open tables (waiting or playing), the most it may have "
                "at once (MAYI_MAX_OPEN_TABLES_PER_ADDRESS): finish one, or wait until a table that never "
                "filled expires",
                limit=limit,
            )
        commit = Commit(None, record, None, state, None, now)
        for listener in self.listeners:
            listener.prepare(commit)
        self.repo.create(record, tokens, events, meta.created_at)
        self.follow(commit)
        return record

    def take_seat(
        self,
        game_id: str,
        name: str | None,
        seat: int | None,
        digest: str | None = None,
        house_bot: str | None = None,
        bot_id: str | None = None,
    ) -> tuple[GameRecord, int, str]:
        """Take an open seat (the lowest, or the one asked for); the game starts when all are taken.

        ``digest``: what stands for the seat's holder in the token map (a bot's); no new token then.
        ``bot_id``: the bot that holds the seat (kept in the table's meta: the commits wake it).
        ``house_bot``: a house bot of that name takes the seat (no token: the job worker plays it);
        with no ``name``, it is named by :func:`house_bot_name`, distinct from every seat's name."""

        def step(record: GameRecord, now: float) -> Update[tuple[GameRecord, int, str]]:
            names = record.meta.names
            if record.status != GameStatus.WAITING:
                raise ServiceError(Problem.GAME_STARTED, f"Game {game_id} has no open seat: it has started")
            if seat is None:
                chosen = names.index(None)
            elif not 0 <= seat < len(names):
                raise ServiceError(Problem.VALIDATION_ERROR, f"seat: this table has seats 0 to {len(names) - 1}")
            elif names[seat] is not None:
                raise ServiceError(Problem.SEAT_TAKEN, f"Seat {seat} is taken")
            else:
                chosen = seat
            copy = 1
            while name is None and house_bot_name(str(house_bot), copy) in names:
                copy += 1
            seat_name = name if name is not None else house_bot_name(str(house_bot), copy)
            meta = record.meta.seated(chosen, seat_name, bot=digest is not None, house_bot=house_bot, bot_id=bot_id)
            token = "" if digest or house_bot else new_token()
            holder = digest or (token_hash(token) if token else None)
            change = Change(fields={"meta": meta.to_json()}, tokens={holder: chosen} if holder else {})
            updated = GameRecord(game_id, record.version + 1, record.seq, GameStatus.WAITING, meta, None)
            state = None
            if meta.full:
                state, events = deal(meta, now)
                started, updated = state_change(record, state, events, now, meta)
                change.fields.update(started.fields)
                change.events = started.events
            return Update(change, updated, (updated, chosen, token), state=state)

        return self.update(game_id, step)


def check_test(test: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """The ``test`` block of a new table, checked against the variant (names the bad field)."""
    out: dict[str, Any] = {}
    seed = test.get("seed")
    if seed is not None:
        if len(seed) % 2:
            raise ServiceError(Problem.VALIDATION_ERROR, "test.seed: give an even number of hexadecimal digits")
        try:
            raw = bytes.fromhex(seed)
        except ValueError:
            raw = b""
        if len(raw) < 16:
            raise ServiceError(Problem.VALIDATION_ERROR, "test.seed: give at least 16 bytes as hexadecimal")
        out["seed"] = seed.lower()
    stacks = test.get("stacked_decks")
    if stacks is not None:
        if len(stacks) > len(rules.rounds):
            raise ServiceError(
                Problem.VALIDATION_ERROR, f"test.stacked_decks: {rules.title} has {len(rules.rounds)} rounds"
            )
        try:
            out["stacked_decks"] = [None if s is None else card_codes([parse_card(c) for c in s]) for s in stacks]
        except MayIError as exc:
            raise ServiceError(Problem.VALIDATION_ERROR, f"test.stacked_decks: {exc.message}") from exc
    start_round = test.get("start_round", 1)
    if not 1 <= start_round <= len(rules.rounds):
        raise ServiceError(
            Problem.VALIDATION_ERROR, f"test.start_round: {rules.title} has rounds 1 to {len(rules.rounds)}"
        )
    out["start_round"] = start_round
    return out
