"""Games: creating them, seating players, and applying moves through Redis.

This module joins the engine and the repository; the HTTP views only parse,
call one function here, and render. Nothing is kept in process memory: every
call loads the game from Redis, and every change is one atomic commit.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

import mayi_engine as engine
from mayi_engine.cards import card_codes, parse_card
from mayi_engine.errors import MayIError
from mayi_engine.moves import Move, Timeout
from mayi_engine.rules import Rules, get_rules
from mayi_engine.state import GameStatus, State
from mayi_engine.views import player_view, status
from mayi_service.api.problems import Problem, ServiceError, from_engine
from mayi_service.bots.decisions import decision_key
from mayi_service.play.listeners import Commit, CommitListener
from mayi_service.storage import codec
from mayi_service.storage.leases import StreamSlotsFull
from mayi_service.storage.records import Change, GameRecord, TableMeta
from mayi_service.storage.repository import GameGone, GameRepository, VersionConflict

MAX_ATTEMPTS = 100
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


def _json(data: Any) -> str:
    return codec.dump(data)


T = TypeVar("T")


def effective_options(variant: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options a table plays by: every option of its variant, the ``options`` it was
    created with applied over the variant's defaults (those alone, if the variant is gone)."""
    if variant not in engine.VARIANTS:
        return dict(options)
    rules = get_rules(variant, options)
    return {spec.name: getattr(rules, spec.name) for spec in rules.option_specs}


@dataclass
class Update(Generic[T]):
    """What one attempt of :meth:`Games.update` decided: the change to commit over the
    record it read, the record that makes, what to answer once committed (``result``),
    and an error to raise once committed (``error``: a move refused after the timeouts
    that were due, which are kept). ``state``: the engine state of ``after``, when the
    step has it (the commit hooks then need not parse it again)."""

    change: Change
    after: GameRecord
    result: T
    error: Exception | None = field(default=None)
    state: State | None = field(default=None)
    #: The engine state of the record the step read, as stored, when the step parsed it
    #: (the bots' wake leaves asleep the seats whose decision the change leaves as it was).
    before: State | None = field(default=None)


@dataclass
class Played:
    """A move played for a seat over a stored game (:meth:`Games.play_move`): what it makes,
    not yet committed.

    ``first``: the events applied before the move, in order: the seat's return (when it
    acts in person) and the timeouts whose deadline had passed. ``error``: the engine's
    refusal of the move; ``state`` is then the game after ``first`` only. ``change`` and
    ``after`` are what committing ``state`` writes and the record it makes (``None``: a
    refused move with nothing before it, so nothing to commit)."""

    state: State
    first: list[engine.Event]
    error: MayIError | None
    change: Change | None
    after: GameRecord | None
    #: The game's state as stored, before the seat's return and the due timeouts.
    stored: State | None = None


@dataclass
class Viewer:
    """Who is asking: a seat, or nobody (a spectator)."""

    seat: int | None


def game_view(record: GameRecord, viewer: Viewer, now: float, state: State | None = None) -> dict[str, Any]:
    """``viewer``'s view of a game at ``now`` (``state``: the record's state, if already parsed)."""
    meta = record.meta
    base: dict[str, Any] = {
        "id": record.id,
        "version": record.version,
        "status": record.status,
        "variant": meta.variant,
        "options": effective_options(meta.variant, meta.options),
        "rated": meta.rated,
        "created_at": meta.created_at,
        "last_event": record.seq,
    }
    if record.state is None:
        base["seats"] = [{"seat": i, "name": n, "taken": n is not None} for i, n in enumerate(meta.names)]
        base["seat"] = viewer.seat
        return base
    if state is None:
        state = codec.load_state(record.state)
    view = player_view(state, viewer.seat, now)
    view.update(base)
    seat = viewer.seat
    if seat is not None:  # the key of the seat's decision (its legal moves are computed once a state)
        legal = engine.legal_moves(state, seat, now) if view.get("legal") else ()
        view["key"] = decision_key(record.id, state, seat, legal) if legal else None
    return view


class SeatLookup(Protocol):
    """Finds the seat a bearer token holds at a game (the bot registry: a bot token holds its bot's seat)."""

    def load_with_seat(self, game_id: str, token: str) -> tuple[GameRecord | None, int | None]:
        """The game and the seat ``token`` holds there (``None``: none)."""
        ...


class Games:
    """The game operations of the API (``/v1/games``), over one :class:`GameRepository`.

    ``seats``: who holds a bearer token's seat (default: the token's own digest in the game's
    token map); ``listeners``: the parts told of every commit, in this order;
    ``max_open_per_owner``: open (waiting or playing) tables one owner (client address) may
    have (0: no bound)."""

    def __init__(
        self,
        repo: GameRepository,
        clock: Callable[[], float] = time.time,
        *,
        seats: SeatLookup | None = None,
        listeners: tuple[CommitListener, ...] = (),
        max_open_per_owner: int = 0,
    ) -> None:
        self.repo = repo
        self.clock = clock
        self.seats = seats
        self.listeners = listeners
        #: Event streams and waiting long-polls open in this process (see :meth:`wait_slot`).
        self.process_slots = ProcessSlots()
        self.max_open_per_owner = max_open_per_owner

    def load_with_seat(self, game_id: str, token: str) -> tuple[GameRecord | None, int | None]:
        """The game and the seat a bearer token holds there (a bot token: its bot's seat)."""
        if self.seats is not None:
            return self.seats.load_with_seat(game_id, token)
        return self.repo.load_with_seat(game_id, token_hash(token))

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
            test=None if test is None else _check_test(test, rules),
        )
        if test is not None and len(players) < seats:
            # Refuse stacks the decks cannot hold now, not when the last seat is taken.
            self._start(replace(meta, names=tuple(f"seat {i}" for i in range(seats))), self.clock())
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
        seat), dealt at once when every seat is taken, with its clock and the commit hooks
        run as after any commit. ``game_id``: the table's id (default: a fresh random one);
        ``owner`` (the client address) may have at most ``max_open_per_owner`` open tables
        (409 ``too_many_open_tables``). (:meth:`create` for the API; the ladder's matches.)"""
        game_id = game_id or new_id()
        record = GameRecord(game_id, 1, 0, GameStatus.WAITING, meta, None)
        events: list[tuple[int, str]] = []
        now = self.clock()
        state = None
        if meta.full:
            state, engine_events = self._start(meta, now)
            record.state = codec.dump_state(state)
            record.status = GameStatus.PLAYING
            record.deadline = engine.deadline(state)
            events = self._stamp(engine_events, 0, now)
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
        self._follow(commit)
        return record

    def _start(self, meta: TableMeta, now: float) -> tuple[State, list[engine.Event]]:
        rules = get_rules(meta.variant, meta.options)
        test = meta.test or {}
        seed = bytes.fromhex(test["seed"]) if test.get("seed") else None
        stacked = test.get("stacked_decks")
        stacks = [None if s is None else [parse_card(c) for c in s] for s in stacked] if stacked else None
        # A name with a lone surrogate (refused since; a table may hold one from before) cannot be
        # stored as UTF-8 in the game state: it would jam the table for good. Deal with it as "?".
        names = [(n or "").encode("utf-8", "replace").decode() for n in meta.names]
        try:
            return engine.start_game(
                rules, names, seed, now=now, stacked=stacks, start_round=test.get("start_round", 1)
            )
        except MayIError as exc:
            raise from_engine(exc) from exc

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
                state, events = self._start(meta, now)
                started, updated = self._state_change(record, state, events, now, meta)
                change.fields.update(started.fields)
                change.events = started.events
            return Update(change, updated, (updated, chosen, token), state=state)

        return self.update(game_id, step)

    # -- the one path of every change to a game -------------------------------
    def update(
        self, game_id: str, step: Callable[[GameRecord, float], Update[T] | None], first: GameRecord | None = None
    ) -> T | None:
        """Load the game, let ``step`` decide the change, commit it with a version check,
        and keep the indexes, the archive, the clock and the retention TTLs in step;
        on a lost race, do it all again from a fresh load.

        Every change to an existing game goes through here: seats (:meth:`take_seat`),
        actions (:meth:`act`) and the clock (:meth:`run_clock`). ``step`` raises to refuse
        (nothing is written) or returns ``None`` when there is nothing to commit (the
        answer is then ``None``). ``first``: the record already read for the first attempt.
        Raises :class:`GameGone` when the game does not exist, and ``503 busy`` after
        :data:`MAX_ATTEMPTS` lost races.
        """
        record = first
        for _ in range(MAX_ATTEMPTS):
            if record is None:
                record = self.load(game_id)
            now = self.clock()
            planned = step(record, now)
            if planned is None:
                return None
            try:
                self._commit(record, planned.change, planned.after, now, planned.state, planned.before)
            except VersionConflict:
                record = None
                continue
            if planned.error is not None:
                raise planned.error
            return planned.result
        raise _busy()

    def _commit(
        self,
        before: GameRecord,
        change: Change,
        after: GameRecord,
        now: float,
        state: State | None = None,
        before_state: State | None = None,
    ) -> None:
        """Commit ``change`` over ``before``, told to the listeners; keep the indexes and the
        archive in step (``state``: the engine state of ``after``, ``before_state``: that of
        ``before``, if the caller has them)."""
        if before.status != after.status or after.status == GameStatus.WAITING:
            change.expire = self.repo.ttl_for(after.status)  # retention follows the status
        commit = Commit(before, after, change, state, before_state, now)
        for listener in self.listeners:
            listener.prepare(commit)
        self.repo.commit(before.id, before.version, change)
        if before.status != after.status:
            self.repo.index(after, before.status)
        if after.status == GameStatus.FINISHED and before.status != GameStatus.FINISHED:
            self.repo.archive_events(after.id, final=True)
        elif change.round_ended and not (after.deadline is not None and after.deadline <= now):
            # (A play-out goes on at once: its rounds are archived at the next round end the
            # clock waits for, or at the game's end, in one go instead of once a round.)
            self.repo.archive_events(after.id, final=False)
        self._follow(commit)

    def _follow(self, commit: Commit) -> None:
        """After a commit: every listener's follow-ups, their scripts in one round trip. Each
        listener's rest runs though another's failed; the first failure is raised after."""
        batch = self.repo.follow_ups()
        rest = [listener.follow(commit, batch) for listener in self.listeners]
        batch.send()
        failed: Exception | None = None
        for then in rest:
            if then is None:
                continue
            try:
                then()
            except Exception as exc:  # the others still run; their recovery covers this one's
                failed = failed or exc
        if failed is not None:
            raise failed

    # -- reading ------------------------------------------------------------
    def load(self, game_id: str) -> GameRecord:
        """The game; :class:`GameGone` if there is none."""
        record = self.repo.load(game_id)
        if record is None:
            raise GameGone(game_id)
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
                    Problem.UNAUTHORIZED,
                    "This action needs a seat token: send 'Authorization: Bearer <token>'",
                    {"WWW-Authenticate": 'Bearer realm="mayi"'},
                )
            return self.load(game_id), Viewer(None)
        record, seat = self.load_with_seat(game_id, token)  # (a bot token: its bot's seat)
        if record is None:
            raise GameGone(game_id)
        if seat is None:
            raise ServiceError(Problem.FORBIDDEN, f"This token holds no seat at game {game_id}")
        return record, Viewer(seat)

    def view(
        self, record: GameRecord, viewer: Viewer, now: float | None = None, state: State | None = None
    ) -> dict[str, Any]:
        """The caller's view of a game (``state``: the record's state, if already parsed)."""
        return game_view(record, viewer, self.clock() if now is None else now, state)

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
        if_key: str | None = None,
    ) -> dict[str, Any]:
        """Apply ``move`` for the token's seat; return the seat's new view. ``if_match``: only
        at that version; ``if_key``: only while the seat's decision has that key (whatever
        other seats answered to the upcard meanwhile)."""
        record, viewer = self.load_as(game_id, token, required=True)
        seat = viewer.seat
        assert seat is not None  # (a seat token is required)
        idem_digest = None
        if idempotency_key:
            idem_digest = hashlib.sha256(f"{seat}\x00{idempotency_key}".encode()).hexdigest()

        attempts = 0

        def step(record: GameRecord, now: float) -> Update[dict[str, Any]]:
            # The Idempotency-Key's first answer is looked up only where it may exist: on a
            # retried attempt (this one lost a race, maybe to the first request) and before
            # any refusal. A first attempt about to commit needs no look-up: the commit script
            # refuses to write over a recorded answer (IdempotencyRecorded), and the retry then
            # finds it. Looked up after loading the game: the record is committed with the
            # version, so a first request that won before the load is found, and one that wins
            # after it makes this attempt's commit fail.
            nonlocal attempts
            attempts += 1
            if attempts > 1:
                self._raise_if_replayed(game_id, idem_digest, body_digest)
                return plan(record, now)
            try:
                planned = plan(record, now)
            except ServiceError:
                self._raise_if_replayed(game_id, idem_digest, body_digest)
                raise
            if planned.error is not None:
                self._raise_if_replayed(game_id, idem_digest, body_digest)
            return planned

        def plan(record: GameRecord, now: float) -> Update[dict[str, Any]]:
            if if_match is not None and if_match != record.version:
                raise ServiceError(
                    Problem.VERSION_CONFLICT,
                    f"If-Match: the game is at version {record.version}, not {if_match}",
                    current_version=record.version,
                )
            # The seat is acting: it is present again before anything is played for it.
            played = self.play_move(record, seat, move, now, returns=True, if_key=if_key)
            if played.error is not None:
                if played.change is None:
                    raise from_engine(played.error) from played.error
                # Keep the timeouts that were due (and the return), then report the error.
                assert played.after is not None
                return Update(
                    played.change,
                    played.after,
                    {},
                    error=from_engine(played.error),
                    state=played.state,
                    before=played.stored,
                )
            assert played.change is not None and played.after is not None
            body = self.view(played.after, viewer, now, played.state)
            if idem_digest is not None:
                played.change.idempotency = (idem_digest, _json({"digest": body_digest, "body": body}))
            return Update(played.change, played.after, body, state=played.state, before=played.stored)

        try:
            result = self.update(game_id, step, first=record)
        except _Replayed as replayed:
            return replayed.body
        assert result is not None
        return result

    def play_move(
        self, record: GameRecord, seat: int, move: Move, now: float, *, returns: bool = False, if_key: str | None = None
    ) -> Played:
        """``move`` played for ``seat`` over ``record`` at ``now``, after the timeouts whose
        deadline has passed (and, with ``returns``, after the seat's return: a seat acting in
        person is present again): the one step of every move a seat makes, whoever sends it
        (an action, a house bot, a ladder match). Nothing is committed: see :class:`Played`.

        Raises 409 ``wrong_phase`` for a table whose seats are still open, and 412
        ``version_conflict`` when ``if_key`` is given and is no longer the key of the seat's
        decision (after the due timeouts)."""
        if record.state is None:
            raise ServiceError(Problem.WRONG_PHASE, "The game has not started: seats are still open")
        state = stored = codec.load_state(record.state)
        first: list[engine.Event] = []
        if returns:
            state, first = engine.seat_returns(state, seat)
        state, due = self._due_timeouts(state, now)
        first += due
        if if_key is not None:
            legal = engine.legal_moves(state, seat, now)
            current = decision_key(record.id, state, seat, legal) if legal else None
            if current != if_key:
                raise ServiceError(
                    Problem.VERSION_CONFLICT,
                    f"If-Match: seat {seat}'s decision has changed since key {if_key} "
                    + ("(it has none now" if current is None else f"(its key is {current} now")
                    + f"; the game is at version {record.version})",
                    current_version=record.version,
                    current_key=current,
                )
        try:
            new_state, more = engine.play(state, seat, move, now)
        except MayIError as exc:
            if not first:
                return Played(state, first, exc, None, None, stored)
            change, after = self._state_change(record, state, first, now)
            return Played(state, first, exc, change, after, stored)
        change, after = self._state_change(record, new_state, first + more, now)
        return Played(new_state, first, None, change, after, stored)

    def play_for_seat(self, record: GameRecord, seat: int, move: Move) -> GameRecord | None:
        """Play ``move`` for ``seat`` if the game is still at ``record``'s version (a house bot's
        decision, or a ladder match's); the record committed, or ``None`` when nothing was:
        the game moved on or is gone, a deadline passed (the clock's move comes first, then a
        new decision), or the game refused the move."""

        def step(current: GameRecord, now: float) -> Update[GameRecord] | None:
            if current.version != record.version or current.state is None:
                return None
            played = self.play_move(current, seat, move, now)
            if played.first or played.error is not None:
                return None
            assert played.change is not None and played.after is not None
            return Update(played.change, played.after, played.after, state=played.state, before=played.stored)

        try:
            return self.update(record.id, step, first=record)
        except GameGone:
            return None

    def _raise_if_replayed(self, game_id: str, digest: str | None, body_digest: str) -> None:
        """Raise :class:`_Replayed` with the first answer to this Idempotency-Key, if there is one."""
        replay = None if digest is None else self._replay_idempotent(game_id, digest, body_digest)
        if replay is not None:
            raise _Replayed(replay)

    def _replay_idempotent(self, game_id: str, digest: str, body_digest: str) -> dict[str, Any] | None:
        stored = self.repo.idempotency_record(game_id, digest)
        if stored is None:
            return None
        if stored["digest"] != body_digest:
            raise ServiceError(
                Problem.IDEMPOTENCY_KEY_REUSED,
                "Idempotency-Key: this key was used with another request body; use a new key for a new action",
            )
        body: dict[str, Any] = stored["body"]
        return body

    def _due_timeouts(self, state: State, now: float) -> tuple[State, list[engine.Event]]:
        due = engine.deadline(state)
        if due is None or due > now:
            return state, []
        try:
            return engine.play(state, None, Timeout(), now)
        except MayIError:
            return state, []

    def run_clock(self, game_id: str) -> bool:
        """Play every decision of ``game_id`` whose deadline has passed. True if anything moved."""

        def step(record: GameRecord, now: float) -> Update[bool] | None:
            if record.state is None or record.status != GameStatus.PLAYING:
                return None
            state, events = self._due_timeouts(codec.load_state(record.state), now)
            if not events:
                return None
            change, updated = self._state_change(record, state, events, now)
            return Update(change, updated, True, state=state)

        try:
            return bool(self.update(game_id, step))
        except (GameGone, ServiceError):  # gone, or too busy: the next job or the sweeper tries again
            return False

    def _state_change(
        self,
        record: GameRecord,
        state: State,
        events: list[engine.Event],
        now: float,
        meta: TableMeta | None = None,
    ) -> tuple[Change, GameRecord]:
        """What committing ``state`` after ``record`` writes, and the record it makes."""
        due = engine.deadline(state)
        seq = record.seq + len(events)
        game_status = status(state)
        text = codec.dump_state(state)
        change = Change(
            fields={
                "state": text,
                "seq": str(seq),
                "status": game_status,
                "deadline": "" if due is None else repr(due),
                # Due when committed: the clock plays on at once (absent seats), a play-out step.
                "at_once": "1" if due is not None and due <= now else "",
            },
            events=self._stamp(events, record.seq, now),
            round_ended=any(e.type == "round_ended" for e in events),
        )
        updated = GameRecord(
            record.id, record.version + 1, seq, game_status, meta or record.meta, text, due, record.clock_at
        )
        return change, updated

    @staticmethod
    def _stamp(events: list[engine.Event], last_seq: int, now: float) -> list[tuple[int, str]]:
        """The engine's events as the log keeps them: numbered, timed, turned into JSON here
        (the one place engine events become JSON in the service)."""
        out = []
        for i, event in enumerate(events, start=last_seq + 1):
            out.append((i, _json({"seq": i, "time": round(now, 3), **engine.event_to_json(event)})))
        return out

    def list_games(self, status: str | None, variant: str | None, page: int, size: int) -> dict[str, Any]:
        """One page of tables, newest first, filtered by status and variant."""
        statuses = [status] if status else list(GameStatus)
        ids, total = self.repo.list_ids(statuses, variant, (page - 1) * size, size)
        games = [
            {
                "id": r.id,
                "variant": r.meta.variant,
                "status": r.status,
                "seats": r.meta.seats,
                "names": list(r.meta.names),
                "rated": r.meta.rated,
                "created_at": r.meta.created_at,
                "version": r.version,
            }
            for r in self.repo.load_many(ids)
        ]
        return {"games": games, "page": page, "page_size": size, "total": total}

    # -- events -------------------------------------------------------------
    def events(
        self, game_id: str, viewer: Viewer, after: int, wait: float, gone: Callable[[], bool] | None = None
    ) -> list[dict[str, Any]]:
        """Events after ``after`` that ``viewer`` may see, waiting up to ``wait`` seconds for
        one (and no longer once ``gone`` is true: the client hung up)."""
        found = self.repo.events_after(game_id, after)
        if not found:
            record = self.load(game_id)  # 404 for a game that does not exist
            if wait > 0 and record.status != GameStatus.FINISHED:
                found = self.repo.wait_events(game_id, after, int(wait * 1000), gone=gone)
        return [visible(e, viewer.seat) for e in found]

    def replay(self, game_id: str) -> dict[str, Any]:
        record = self.load(game_id)
        if record.status != GameStatus.FINISHED or record.state is None:
            raise ServiceError(Problem.GAME_NOT_FINISHED, f"Game {game_id} is not over: the replay opens when it ends")
        state = codec.load_state(record.state)
        events = self.repo.events_after(game_id, 0, count=1_000_000)
        return {
            "id": game_id,
            "variant": record.meta.variant,
            "options": record.meta.options,
            "names": list(record.meta.names),
            "seed": state.seed.hex(),
            "totals": list(state.totals),
            "events": events,
        }

    def wait_slot(
        self,
        client: str,
        limit: int,
        seconds: float,
        process_limit: int,
        address: str | None = None,
        address_limit: int = 0,
    ) -> WaitSlot:
        """One of this process's ``process_limit`` slots for event streams and waiting
        long-polls, one of the ``address_limit`` of ``address`` in this process, and one of
        ``client``'s ``limit`` (a lease in Redis, across every process, lasting ``seconds``
        and :data:`LEASE_MARGIN_SECONDS` unless renewed): a :class:`WaitSlot`, not taken yet."""
        return WaitSlot(self, client, limit, seconds, process_limit, address, address_limit)


#: Seconds a waiting slot's lease outlives the time its holder said it would wait (or, for
#: an event stream, renew it): the slack for a holder late to renew or give it back.
LEASE_MARGIN_SECONDS = 10.0


class WaitSlot:
    """One waiting slot of a client, held as a lease in Redis (:meth:`GameRepository.take_lease`,
    under :attr:`key`, across processes), and one of this process (:class:`ProcessSlots`,
    overall and per address), taken only while a request waits.

    The lease expires :attr:`lease_ms` after it was taken or last renewed (:meth:`renew`):
    a holder that cannot give it back (its process died, Redis was down when it ended)
    leaves nothing that outlives it for long, and a refused attempt changes nothing.

    :meth:`take` takes both (raising :class:`ProcessSlotsFull`, :class:`AddressSlotsFull` or
    :class:`StreamSlotsFull`) and :meth:`give` gives both back, a round trip each. A caller
    that takes the lease in a script of its own (the decisions poll, in the reads it
    makes anyway) takes this process's slot with :meth:`take_process`, then says what its
    script did with :meth:`counted` and :meth:`counted_down`.
    """

    __slots__ = (
        "address",
        "address_limit",
        "client",
        "full",
        "games",
        "held",
        "key",
        "lease",
        "lease_ms",
        "limit",
        "process_limit",
    )

    def __init__(
        self,
        games: Games,
        client: str,
        limit: int,
        seconds: float,
        process_limit: int,
        address: str | None = None,
        address_limit: int = 0,
    ) -> None:
        self.games = games
        self.client = client
        self.limit = limit
        #: How long the lease lasts, from its taking or its last renewal, in milliseconds.
        self.lease_ms = int((seconds + LEASE_MARGIN_SECONDS) * 1000)
        self.process_limit = process_limit
        self.address = address
        self.address_limit = address_limit
        #: The client's set of leases in Redis, and this slot's lease in it.
        self.key = games.repo.lookup_key("leases", client)
        self.lease = secrets.token_hex(8)
        self.held = False
        #: What :meth:`take_process` found full (``None``: nothing).
        self.full: str | None = None

    def take(self) -> None:
        if not self.take_process():
            if self.full == "address":
                raise AddressSlotsFull(str(self.address), self.address_limit)
            raise ProcessSlotsFull(self.process_limit)
        took = False
        try:
            took = self.games.repo.take_lease(self.key, self.lease, self.limit, self.lease_ms)
        finally:
            self.counted(took)
        if not took:
            raise StreamSlotsFull(self.client, self.limit)

    def take_process(self) -> bool:
        """Take this process's slot alone; ``False`` when it (or the address) holds its limit already."""
        self.full = self.games.process_slots.take(self.process_limit, self.address, self.address_limit)
        return self.full is None

    def counted(self, took: bool) -> None:
        """After :meth:`take_process`: the client's lease was taken (``took``), or refused
        (this process's slot is given back)."""
        if took:
            self.held = True
        else:
            self.games.process_slots.give(self.address)

    def counted_down(self) -> None:
        """The client's lease was given back by the caller: give back this process's slot."""
        if self.held:
            self.held = False
            self.games.process_slots.give(self.address)

    def renew(self) -> bool:
        """Extend the lease by :attr:`lease_ms` from now; ``False`` if it is gone (it expired:
        the holder was too late, or Redis lost it), and the holder should end its wait."""
        return self.games.repo.renew_lease(self.key, self.lease, self.lease_ms)

    def give(self) -> None:
        if self.held:
            self.counted_down()
            self.games.repo.drop_lease(self.key, self.lease)


class ProcessSlots:
    """Event streams and waiting long-polls open in this process: all clients together,
    and per client address.

    Under gevent each costs a socket, a greenlet and some memory, not a thread;
    a cap (``MAYI_MAX_WAITING_PER_PROCESS``) keeps their number, and so the
    process's memory and file descriptors, bounded, and a cap per address
    (``MAYI_MAX_WAITING_PER_ADDRESS``), over all of its tokens, keeps a few addresses
    from taking them all.
    """

    def __init__(self) -> None:
        self.count = 0
        self.by_address: dict[str, int] = {}
        self.lock = threading.Lock()

    def take(self, limit: int, address: str | None = None, address_limit: int = 0) -> str | None:
        """Take a slot; ``None`` if taken, else what is full: ``"process"`` or ``"address"``."""
        with self.lock:
            if self.count >= limit:
                return "process"
            if address is not None and address_limit > 0:
                held = self.by_address.get(address, 0)
                if held >= address_limit:
                    return "address"
                self.by_address[address] = held + 1
            self.count += 1
            return None

    def give(self, address: str | None = None) -> None:
        with self.lock:
            self.count -= 1
            if address is not None and address in self.by_address:
                left = self.by_address[address] - 1
                if left > 0:
                    self.by_address[address] = left
                else:
                    del self.by_address[address]


class ProcessSlotsFull(Exception):
    """This process holds as many event streams and waiting long-polls as it may."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"this process holds {limit} waiting requests already")
        self.limit = limit


class AddressSlotsFull(Exception):
    """One client address holds as many event streams and waiting long-polls in this
    process as it may, over all of its tokens."""

    def __init__(self, address: str, limit: int) -> None:
        super().__init__(f"{address} holds {limit} waiting requests in this process already")
        self.address = address
        self.limit = limit


class _Replayed(Exception):
    """The first answer to an Idempotency-Key, found by :meth:`Games.act`: answered again."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("idempotent replay")
        self.body = body


def visible(event: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """``event`` as ``seat`` may see it: private data only for its own seat."""
    if "private" not in event:
        return event
    out = {k: v for k, v in event.items() if k != "private"}
    if seat is not None and event.get("seat") == seat:
        out["private"] = event["private"]
    return out


def _busy() -> ServiceError:
    return ServiceError(Problem.BUSY, "The game is too busy to commit your move; try again", {"Retry-After": "1"})


def _check_test(test: dict[str, Any], rules: Rules) -> dict[str, Any]:
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
