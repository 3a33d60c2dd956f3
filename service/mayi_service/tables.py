"""Tables: creating games, seating players, and applying moves through Redis.

This module joins the engine and the repository; the HTTP views only parse,
call one function here, and render. Nothing is kept in process memory: every
call loads the game from Redis, and every change is one atomic commit.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mayi_engine as engine
from mayi_engine.cards import card_codes, parse_card
from mayi_engine.errors import MayIError
from mayi_engine.moves import Move, Timeout
from mayi_engine.rules import Rules, get_rules
from mayi_engine.state import GameStatus, State, dumps, loads
from mayi_engine.views import player_view, status

from .problems import ServiceError, from_engine
from .repository import GAME_GONE, IDEMPOTENT_REPLAY, VERSION_CONFLICT, Change, GameRecord, GameRepository

MAX_ATTEMPTS = 100
TOKEN_BYTES = 32


def new_token(kind: str = "seat") -> str:
    """A fresh bearer token (256 random bits)."""
    return f"mayi_{kind}_{secrets.token_urlsafe(TOKEN_BYTES)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _json(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


@dataclass
class Viewer:
    """Who is asking: a seat, or nobody (a spectator)."""

    seat: int | None


class Tables:
    """The table operations of the API, over one :class:`GameRepository`."""

    def __init__(
        self,
        repo: GameRepository,
        clock: Callable[[], float] = time.time,
        on_commit: Callable[[GameRecord, int], None] | None = None,
    ) -> None:
        self.repo = repo
        self.clock = clock
        self.on_commit = on_commit
        #: Open (waiting or playing) tables one owner (client address) may have; 0: no bound.
        self.max_open_per_owner = 0

    # -- creating and seating ---------------------------------------------
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
                422,
                "validation_error",
                f"seats: {rules.title} is for {rules.min_players} to {rules.max_players} players, not {seats}",
            )
        players = data.get("players") or []
        if len(players) > seats:
            raise ServiceError(422, "validation_error", f"players: {len(players)} players for {seats} seats")
        test = data.get("test")
        meta: dict[str, Any] = {
            "variant": variant,
            "options": options,
            "seats": seats,
            "names": [None] * seats,
            "rated": test is None,
            "created_at": self.clock(),
        }
        if test is not None:
            meta["test"] = _check_test(test, rules)
            if len(players) < seats:
                # Refuse stacks the decks cannot hold now, not when the last seat is taken.
                self._start(dict(meta, names=[n or f"seat {i}" for i, n in enumerate(meta["names"])]), self.clock())
        tokens: dict[str, int] = {}
        issued = []
        for seat, player in enumerate(players):
            token = new_token()
            tokens[token_hash(token)] = seat
            meta["names"][seat] = player["name"]
            issued.append({"seat": seat, "name": player["name"], "token": token})
        game_id = secrets.token_urlsafe(9)
        record = GameRecord(game_id, 1, 0, GameStatus.WAITING, meta, None)
        events: list[tuple[int, str]] = []
        now = self.clock()
        if all(meta["names"]):
            state, engine_events = self._start(meta, now)
            record.state = dumps(state)
            record.status = GameStatus.PLAYING
            record.deadline = engine.deadline(state)
            events = self._stamp(engine_events, 0, now)
            record.seq = len(events)
        limit = self.max_open_per_owner
        if owner is not None and limit and not self.repo.add_open_table(owner, game_id, limit, now):
            raise ServiceError(
                409,
                "too_many_open_tables",
                f"This client address has {limit} open tables (waiting or playing), the most it may have "
                "at once (MAYI_MAX_OPEN_TABLES_PER_ADDRESS): finish one, or wait until a table that never "
                "filled expires",
                limit=limit,
            )
        self.repo.create(record, tokens, events, meta["created_at"])
        if record.status == GameStatus.PLAYING and self.on_commit is not None:
            _, at = self.repo.claim_clock(game_id, None)
            if at is not None:
                self.on_commit(record, at)
        return record, issued

    def _start(self, meta: dict[str, Any], now: float) -> tuple[State, list[dict[str, Any]]]:
        rules = get_rules(meta["variant"], meta["options"])
        test = meta.get("test") or {}
        seed = bytes.fromhex(test["seed"]) if test.get("seed") else None
        stacked = test.get("stacked_decks")
        stacks = [None if s is None else [parse_card(c) for c in s] for s in stacked] if stacked else None
        # A name with a lone surrogate (refused since; a table may hold one from before) cannot be
        # stored as UTF-8 in the game state: it would jam the table for good. Deal with it as "?".
        names = [n.encode("utf-8", "replace").decode() for n in meta["names"]]
        try:
            return engine.start_game(
                rules, names, seed, now=now, stacked=stacks, start_round=test.get("start_round", 1)
            )
        except MayIError as exc:
            raise from_engine(exc) from exc

    def take_seat(self, game_id: str, name: str, seat: int | None) -> tuple[GameRecord, int, str]:
        """Take an open seat (the lowest, or the one asked for); the game starts when all are taken."""
        for _ in range(MAX_ATTEMPTS):
            record = self.load(game_id)
            names = record.meta["names"]
            if record.status != GameStatus.WAITING:
                raise ServiceError(409, "game_started", f"Game {game_id} has no open seat: it has started")
            if seat is None:
                chosen = names.index(None)
            elif not 0 <= seat < len(names):
                raise ServiceError(422, "validation_error", f"seat: this table has seats 0 to {len(names) - 1}")
            elif names[seat] is not None:
                raise ServiceError(409, "seat_taken", f"Seat {seat} is taken")
            else:
                chosen = seat
            meta = dict(record.meta, names=[name if i == chosen else n for i, n in enumerate(names)])
            token = new_token()
            change = Change(fields={"meta": _json(meta)}, tokens={token_hash(token): chosen})
            now = self.clock()
            updated = GameRecord(game_id, record.version + 1, record.seq, GameStatus.WAITING, meta, None)
            if all(meta["names"]):
                state, events = self._start(meta, now)
                started, updated = self._state_change(record, state, events, now, meta)
                change.fields.update(started.fields)
                change.events, change.clock = started.events, started.clock
            result = self._commit(record, change, updated, now)
            if result == VERSION_CONFLICT:
                continue
            if result == GAME_GONE:
                raise ServiceError(404, "not_found", f"There is no game {game_id}")
            return updated, chosen, token
        raise _busy()

    # -- reading ------------------------------------------------------------
    def load(self, game_id: str) -> GameRecord:
        record = self.repo.load(game_id)
        if record is None:
            raise ServiceError(404, "not_found", f"There is no game {game_id}")
        return record

    def viewer(self, game_id: str, token: str | None, *, required: bool = False) -> Viewer:
        """Who holds ``token`` at this game (``required``: a seat token must be given)."""
        return self.load_as(game_id, token, required=required)[1]

    def load_as(self, game_id: str, token: str | None, *, required: bool = False) -> tuple[GameRecord, Viewer]:
        """The game and who is asking (one round trip to Redis).

        No token: a spectator (or 401 when ``required``); a token that holds no seat
        at this game: 403.
        """
        if not token:
            if required:
                raise ServiceError(
                    401,
                    "unauthorized",
                    "This action needs a seat token: send 'Authorization: Bearer <token>'",
                    {"WWW-Authenticate": 'Bearer realm="mayi"'},
                )
            return self.load(game_id), Viewer(None)
        digest = token_hash(token)
        record, seat = self.repo.load_with_seat(game_id, digest)
        if record is None:
            raise ServiceError(404, "not_found", f"There is no game {game_id}")
        if seat is None:
            raise ServiceError(403, "forbidden", f"This token holds no seat at game {game_id}")
        return record, Viewer(seat)

    def view(
        self, record: GameRecord, viewer: Viewer, now: float | None = None, state: State | None = None
    ) -> dict[str, Any]:
        """The caller's view of a game (``state``: the record's state, if already parsed)."""
        meta = record.meta
        base: dict[str, Any] = {
            "id": record.id,
            "version": record.version,
            "status": record.status,
            "variant": meta["variant"],
            "options": meta["options"],
            "rated": meta["rated"],
            "created_at": meta["created_at"],
            "last_event": record.seq,
        }
        if record.state is None:
            base["seats"] = [{"seat": i, "name": n, "taken": n is not None} for i, n in enumerate(meta["names"])]
            base["seat"] = viewer.seat
            return base
        if state is None:
            state = loads(record.state)
        view = player_view(state, viewer.seat, self.clock() if now is None else now)
        view.update(base)
        return view

    # -- acting -------------------------------------------------------------
    def act(
        self,
        game_id: str,
        token: str | None,
        move: Move,
        *,
        if_match: int | None = None,
        idempotency_key: str | None = None,
        body_digest: str = "",
    ) -> dict[str, Any]:
        """Apply ``move`` for the token's seat; return the seat's new view."""
        record, viewer = self.load_as(game_id, token, required=True)
        seat = viewer.seat
        idem_digest = None
        if idempotency_key:
            idem_digest = hashlib.sha256(f"{seat}\x00{idempotency_key}".encode()).hexdigest()
        for attempt in range(MAX_ATTEMPTS):
            if attempt:
                record = self.load(game_id)
            if idem_digest is not None:
                # Looked up after loading the game: the record is committed with the version,
                # so a first request that won before the load is found here, and one that wins
                # after it makes this attempt's commit fail and the next attempt find it.
                replay = self._replay_idempotent(game_id, idem_digest, body_digest)
                if replay is not None:
                    return replay
            if if_match is not None and if_match != record.version:
                raise ServiceError(
                    412,
                    "version_conflict",
                    f"If-Match: the game is at version {record.version}, not {if_match}",
                    current_version=record.version,
                )
            if record.state is None:
                raise ServiceError(409, "wrong_phase", "The game has not started: seats are still open")
            now = self.clock()
            # The seat is acting: it is present again before anything is played for it.
            state, events = engine.seat_returns(loads(record.state), seat)
            state, due = self._due_timeouts(state, now)
            events += due
            try:
                new_state, more = engine.play(state, seat, move, now)
            except MayIError as exc:
                if events:  # keep the timeouts that were due (and the return), then report the error
                    self._commit_state(record, state, events, now)
                raise from_engine(exc) from exc
            change, updated = self._state_change(record, new_state, events + more, now)
            body = self.view(updated, viewer, now, new_state)
            if idem_digest is not None:
                change.idempotency = (idem_digest, _json({"digest": body_digest, "body": body}))
            result = self._commit(record, change, updated, now)
            if result in (VERSION_CONFLICT, IDEMPOTENT_REPLAY):
                continue
            if result == GAME_GONE:
                raise ServiceError(404, "not_found", f"There is no game {game_id}")
            return body
        raise _busy()

    def _replay_idempotent(self, game_id: str, digest: str, body_digest: str) -> dict[str, Any] | None:
        stored = self.repo.idempotency_record(game_id, digest)
        if stored is None:
            return None
        if stored["digest"] != body_digest:
            raise ServiceError(
                422,
                "idempotency_key_reused",
                "Idempotency-Key: this key was used with another request body; use a new key for a new action",
            )
        body: dict[str, Any] = stored["body"]
        return body

    def _due_timeouts(self, state: State, now: float) -> tuple[State, list[dict[str, Any]]]:
        due = engine.deadline(state)
        if due is None or due > now:
            return state, []
        try:
            return engine.play(state, None, Timeout(), now)
        except MayIError:
            return state, []

    def run_clock(self, game_id: str) -> bool:
        """Play every decision of ``game_id`` whose deadline has passed. True if anything moved."""
        for _ in range(MAX_ATTEMPTS):
            record = self.repo.load(game_id)
            if record is None or record.state is None or record.status != GameStatus.PLAYING:
                return False
            now = self.clock()
            state, events = self._due_timeouts(loads(record.state), now)
            if not events:
                return False
            if self._commit_state(record, state, events, now):
                return True
        return False

    def _commit_state(self, record: GameRecord, state: State, events: list[dict[str, Any]], now: float) -> bool:
        change, updated = self._state_change(record, state, events, now)
        return self._commit(record, change, updated, now) >= 0

    def _state_change(
        self,
        record: GameRecord,
        state: State,
        events: list[dict[str, Any]],
        now: float,
        meta: dict[str, Any] | None = None,
    ) -> tuple[Change, GameRecord]:
        """What committing ``state`` after ``record`` writes, and the record it makes."""
        due = engine.deadline(state)
        seq = record.seq + len(events)
        game_status = status(state)
        text = dumps(state)
        change = Change(
            fields={
                "state": text,
                "seq": str(seq),
                "status": game_status,
                "deadline": "" if due is None else repr(due),
            },
            events=self._stamp(events, record.seq, now),
            clock=None if due is None or game_status != GameStatus.PLAYING else math.ceil(due),
            round_ended=any(e["type"] == "round_ended" for e in events),
        )
        updated = GameRecord(
            record.id, record.version + 1, seq, game_status, meta or record.meta, text, due, record.clock_at
        )
        return change, updated

    def _commit(self, before: GameRecord, change: Change, after: GameRecord, now: float) -> int:
        """Commit ``change`` over ``before``; on success keep the indexes and the clock in step."""
        if before.status != after.status or after.status == GameStatus.WAITING:
            change.expire = self.repo.ttl_for(after.status)  # retention follows the status
        result, clock_at = self.repo.commit(before.id, before.version, change, now)
        if result < 0:
            return result
        if before.status != after.status:
            self.repo.index(after, before.status)
        if after.status == GameStatus.FINISHED and before.status != GameStatus.FINISHED:
            self.repo.archive_events(after.id, final=True)
        elif change.round_ended:
            self.repo.archive_events(after.id, final=False)
        if clock_at and self.on_commit is not None:
            self.on_commit(after, clock_at)
        return result

    @staticmethod
    def _stamp(events: list[dict[str, Any]], last_seq: int, now: float) -> list[tuple[int, str]]:
        out = []
        for i, event in enumerate(events, start=last_seq + 1):
            event = {"seq": i, "time": round(now, 3), **event}
            out.append((i, _json(event)))
        return out

    def list_games(self, status: str | None, variant: str | None, page: int, size: int) -> dict[str, Any]:
        """One page of tables, newest first, filtered by status and variant."""
        statuses = [status] if status else list(GameStatus)
        ids, total = self.repo.list_ids(statuses, variant, (page - 1) * size, size)
        games = [
            {
                "id": r.id,
                "variant": r.meta["variant"],
                "status": r.status,
                "seats": r.meta["seats"],
                "names": r.meta["names"],
                "rated": r.meta["rated"],
                "created_at": r.meta["created_at"],
                "version": r.version,
            }
            for r in self.repo.load_many(ids)
        ]
        return {"games": games, "page": page, "page_size": size, "total": total}

    # -- events -------------------------------------------------------------
    def events(self, game_id: str, viewer: Viewer, after: int, wait: float) -> list[dict[str, Any]]:
        """Events after ``after`` that ``viewer`` may see, waiting up to ``wait`` seconds for one."""
        found = self.repo.events_after(game_id, after)
        if not found:
            record = self.load(game_id)  # 404 for a game that does not exist
            if wait > 0 and record.status != GameStatus.FINISHED:
                found = self.repo.wait_events(game_id, after, int(wait * 1000))
        return [visible(e, viewer.seat) for e in found]

    def replay(self, game_id: str) -> dict[str, Any]:
        record = self.load(game_id)
        if record.status != GameStatus.FINISHED or record.state is None:
            raise ServiceError(409, "game_not_finished", f"Game {game_id} is not over: the replay opens when it ends")
        state = loads(record.state)
        events = self.repo.events_after(game_id, 0, count=1_000_000)
        return {
            "id": game_id,
            "variant": record.meta["variant"],
            "options": record.meta["options"],
            "names": record.meta["names"],
            "seed": state.seed.hex(),
            "totals": list(state.totals),
            "events": events,
        }


def visible(event: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """``event`` as ``seat`` may see it: private data only for its own seat."""
    if "private" not in event:
        return event
    out = {k: v for k, v in event.items() if k != "private"}
    if seat is not None and event.get("seat") == seat:
        out["private"] = event["private"]
    return out


def _busy() -> ServiceError:
    return ServiceError(503, "busy", "The game is too busy to commit your move; try again", {"Retry-After": "1"})


def _check_test(test: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """The ``test`` block of a new table, checked against the variant (names the bad field)."""
    out: dict[str, Any] = {}
    seed = test.get("seed")
    if seed is not None:
        if len(seed) % 2:
            raise ServiceError(422, "validation_error", "test.seed: give an even number of hexadecimal digits")
        try:
            raw = bytes.fromhex(seed)
        except ValueError:
            raw = b""
        if len(raw) < 16:
            raise ServiceError(422, "validation_error", "test.seed: give at least 16 bytes as hexadecimal")
        out["seed"] = seed.lower()
    stacks = test.get("stacked_decks")
    if stacks is not None:
        if len(stacks) > len(rules.rounds):
            raise ServiceError(
                422, "validation_error", f"test.stacked_decks: {rules.title} has {len(rules.rounds)} rounds"
            )
        try:
            out["stacked_decks"] = [None if s is None else card_codes([parse_card(c) for c in s]) for s in stacks]
        except MayIError as exc:
            raise ServiceError(422, "validation_error", f"test.stacked_decks: {exc.message}") from exc
    start_round = test.get("start_round", 1)
    if not 1 <= start_round <= len(rules.rounds):
        raise ServiceError(
            422, "validation_error", f"test.start_round: {rules.title} has rounds 1 to {len(rules.rounds)}"
        )
    out["start_round"] = start_round
    return out
