"""Games: the one path of every change to a game, and the reading of games.

A move goes view -> :meth:`Games.act` (or :meth:`Games.play_for_seat`) -> load -> engine
-> commit -> listeners (:mod:`mayi_service.play.listeners`). Nothing is kept in process
memory: every call loads the game from Redis, and every change is one atomic commit.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import mayi_engine as engine
from mayi_engine.errors import MayIError
from mayi_engine.moves import Move, Timeout
from mayi_engine.state import GameStatus, State
from mayi_service.play.decisions import decision_key
from mayi_service.play.listeners import Commit, CommitListener
from mayi_service.play.slots import ProcessSlots, WaitSlot
from mayi_service.play.steps import Played, Update, state_change
from mayi_service.play.tables import Seating, token_hash
from mayi_service.play.views import Reading, Viewer, visible
from mayi_service.problem_types import Problem, ServiceError, from_engine
from mayi_service.storage import codec
from mayi_service.storage.records import Change, GameRecord
from mayi_service.storage.repository import GameGone, GameRepository, VersionConflict

T = TypeVar("T")

MAX_ATTEMPTS = 100


class SeatLookup(Protocol):
    """Finds the seat a bearer token holds at a game (the bot registry: a bot token holds its bot's seat)."""

    def load_with_seat(self, game_id: str, token: str) -> tuple[GameRecord | None, int | None]:
        """The game and the seat ``token`` holds there (``None``: none)."""
        ...


class Games(Seating, Reading):
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
        #: Event streams and waiting long-polls open in this process (see :attr:`wait_slot`).
        self.process_slots = ProcessSlots()
        #: A waiting slot over this repository and this process's slots, not taken yet:
        #: :class:`WaitSlot` given the rest of its arguments (the client, its limit, ...).
        self.wait_slot = functools.partial(WaitSlot, repo, self.process_slots)
        self.max_open_per_owner = max_open_per_owner

    def load_with_seat(self, game_id: str, token: str) -> tuple[GameRecord | None, int | None]:
        """The game and the seat a bearer token holds there (a bot token: its bot's seat)."""
        if self.seats is not None:
            return self.seats.load_with_seat(game_id, token)
        return self.repo.load_with_seat(game_id, token_hash(token))

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
        self.follow(commit)

    def follow(self, commit: Commit) -> None:
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
                played.change.idempotency = (idem_digest, codec.dump({"digest": body_digest, "body": body}))
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
            change, after = state_change(record, state, first, now)
            return Played(state, first, exc, change, after, stored)
        change, after = state_change(record, new_state, first + more, now)
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
            change, updated = state_change(record, state, events, now)
            return Update(change, updated, True, state=state)

        try:
            return bool(self.update(game_id, step))
        except (GameGone, ServiceError):  # gone, or too busy: the next job or the sweeper tries again
            return False

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


class _Replayed(Exception):
    """The first answer to an Idempotency-Key, found by :meth:`Games.act`: answered again."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("idempotent replay")
        self.body = body


def _busy() -> ServiceError:
    return ServiceError(Problem.BUSY, "The game is too busy to commit your move; try again", {"Retry-After": "1"})
