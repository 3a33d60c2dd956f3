"""House bots: the reference bots of :mod:`mayi_bots`, seated by a table and played by the job worker.

A table asks for one with ``POST /v1/games/{id}/seats`` and ``{"house_bot": "greedy"}``; the
seat's bot name is kept in the table's meta (``house_bots``). After every commit of a playing
game where a house seat must decide, :class:`HouseBots` (a commit listener) queues one job
(:func:`mayi_service.jobs.run_house_job`) on the jobs queue. The job loads the game, lets the first house seat
that must decide (a pending claimant before the player whose turn it is, as at a real table)
answer through the same engine call as an action, and commits with a version check. That
commit queues the next job, so house seats play one decision per job until a person must act.

Nothing is lost when a job is (docs/decisions/0003-house-bots-redriven.md): the commit that
gives a house seat its decision makes the game due, :data:`LEASE_SECONDS` later, in the
house due-set (:meth:`~mayi_service.storage.indexes.Indexes.house_due_key`) before it is
committed, and the commit that gives none drops it after. The sweeper of every game worker (:meth:`HouseBots.redrive`)
queues a job again for each game overdue there (the job was lost with Redis, or its worker
died), and makes it due again a lease later. A job for an old version does nothing (a newer
commit queued its own), a lost race is left to the job of the commit that won, and every
commit checks the version, so a job queued twice never plays twice.
The bots see only their seat's view, as any bot does: the worker builds the view the API
would answer and hands it to the bot as a :class:`mayi_sdk.GameView`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from mayi_engine import GameStatus, move_from_json, pending_claimants, to_act
from mayi_engine.state import State
from mayi_service.play.games import Games
from mayi_service.play.listeners import Commit
from mayi_service.play.views import Viewer, game_view
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage import codec
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import GameRepository

if TYPE_CHECKING:
    from rq import Queue

    from mayi_sdk import Bot

log = logging.getLogger(__name__)

#: The stock draw, as a legal move's JSON.
STOCK = {"type": "draw", "source": "stock"}
#: Bots kept per worker process (a bot may remember what it saw in its game).
KEEP_BOTS = 256
#: How long after the commit that gives a house seat its decision the decision is overdue
#: (its job lost), in seconds: the sweeper then queues a job again.
LEASE_SECONDS = 5.0
#: The RQ job of one house-bot decision (:func:`mayi_service.jobs.run_house_job`).
HOUSE_JOB = "mayi_service.jobs.run_house_job"


def job_id(game_id: str, version: int) -> str:
    """One house job per game version: a second enqueue of the same version replaces the first."""
    return f"house-{game_id}-{version}"


def _redrive_id(game_id: str, version: int, lease: float) -> str:
    """The job the sweeper queues again for ``game_id`` at ``version``: one per lease."""
    return f"house-{game_id}-{version}-again-{int(lease * 1000)}"


class HouseBots:
    """Queues and plays the house seats of the games of one repository (a commit listener of
    :class:`~mayi_service.play.games.Games`)."""

    def __init__(
        self,
        repo: GameRepository,
        queue: Queue | None,
        budget: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repo = repo
        self.queue = queue
        self.budget = budget  # a searching bot's CPU seconds a decision (MAYI_HOUSE_BOT_SECONDS)
        self.clock = clock
        self._bots: OrderedDict[tuple[str, int], Bot] = OrderedDict()

    @property
    def available(self) -> bool:
        """House bots need the job worker (clock jobs on)."""
        return self.queue is not None

    def require(self) -> None:
        """Refuse a house bot when no worker would play it."""
        if self.queue is None:
            raise ServiceError(
                Problem.HOUSE_BOTS_UNAVAILABLE,
                "house_bot: this server runs no job worker (MAYI_SCHEDULE_CLOCK_JOBS is off), "
                "so no house bot could play; take the seat with a name instead",
            )

    # -- the commit listener ---------------------------------------------------
    def prepare(self, commit: Commit) -> None:
        """Before a commit after which a house seat must decide: make the game due in the house
        due-set a lease from now, so that a process that dies right after the commit (before
        queueing the job) leaves the decision to the sweeper (:meth:`redrive`)."""
        if self._must_decide(commit):
            self.repo.set_house_due(commit.after.id, commit.after.version, commit.now + LEASE_SECONDS)

    def follow(self, commit: Commit, batch: FollowUps) -> Callable[[], None] | None:
        """After the commit: drop the version it replaced from the due-set (in ``batch``), then
        queue the house job when a house seat must decide."""
        after = commit.after
        if not self._ours(after):
            return None
        if commit.before is not None:
            self.repo.drop_house_due(after.id, commit.before.version, batch)
        return partial(self.enqueue, after) if self._must_decide(commit) else None

    def _ours(self, record: GameRecord) -> bool:
        """A table whose house seats this player plays (a ladder match's are its match job's,
        :mod:`mayi_service.ladder.matches`)."""
        return bool(record.meta.house_bots) and self.queue is not None and not record.meta.ladder

    def _must_decide(self, commit: Commit) -> bool:
        """Must a house seat of ours decide after ``commit``?"""
        record = commit.after
        if not self._ours(record) or record.status != GameStatus.PLAYING or record.state is None:
            return False
        state = commit.state if commit.state is not None else codec.load_state(record.state)
        return self._deciding(record, state, commit.now) is not None

    def enqueue(self, record: GameRecord) -> None:
        """Queue the house job of ``record``'s version (the game is due already: :meth:`prepare`)."""
        assert self.queue is not None
        self.queue.enqueue(
            HOUSE_JOB,
            record.id,
            record.version,
            job_id=job_id(record.id, record.version),
            result_ttl=0,
            failure_ttl=3600,
        )

    def redrive(self) -> int:
        """Queue a job again for every game overdue in the house due-set (its job was lost),
        making each due again a lease later; return how many (the sweeper's part)."""
        if self.queue is None:
            return 0
        now = self.clock()
        lease = now + LEASE_SECONDS
        overdue = self.repo.take_house_due(now, lease)
        for game_id, version in overdue:
            self.queue.enqueue(
                HOUSE_JOB,
                game_id,
                version,
                job_id=_redrive_id(game_id, version, lease),
                result_ttl=0,
                failure_ttl=3600,
            )
        if overdue:
            log.warning("house bots: queued the decisions of %d games again (their jobs were lost)", len(overdue))
        return len(overdue)

    # -- the job ---------------------------------------------------------------
    def play(self, games: Games, game_id: str, version: int) -> bool:
        """Play one decision of a house seat of ``game_id`` at ``version`` through ``games``.
        True if one was played. A version whose decision is not played (the game moved on or
        is gone, none is due, the bot waits or fails) leaves the house due-set."""
        record = self.repo.load(game_id)
        if record is None or record.version != version:
            self.repo.drop_house_due(game_id, version)  # gone, or a newer commit queued its own job
            return False
        if record.status != GameStatus.PLAYING or record.state is None:
            self.repo.drop_house_due(game_id, version)
            return False
        state = codec.load_state(record.state)
        now = self.clock()
        seat = self._deciding(record, state, now)
        if seat is None:
            self.repo.drop_house_due(game_id, version)
            return False
        view = game_view(record, Viewer(seat), now, state)
        bot = self._bot(record, seat)
        try:
            answer = house_answer(bot, view, state, seat)
            if answer is None:  # it waits: the next commit (an answer, the window's clock) asks again
                self.repo.drop_house_due(game_id, version)
                return False
            move = move_from_json(answer)
        except Exception:  # a reference bot's bug must not stop the table: the clock plays
            log.exception("house bot %s at game %s seat %d", record.meta.house_bot(seat), game_id, seat)
            self.repo.drop_house_due(game_id, version)
            return False
        return games.play_for_seat(record, seat, move) is not None

    def _deciding(self, record: GameRecord, state: State, now: float) -> int | None:
        """The first house seat that must decide now (in the engine's order, :func:`~mayi_engine.to_act`)."""
        house = {seat for seat, _ in record.meta.house_bots}
        return next((seat for seat in to_act(state, now) if seat in house), None)

    def _bot(self, record: GameRecord, seat: int) -> Bot:
        key = (record.id, seat)
        bot = self._bots.get(key)
        if bot is None:
            from mayi_bots import make

            bot = self._bots[key] = make(record.meta.house_bot(seat) or "random", budget=self.budget)
            while len(self._bots) > KEEP_BOTS:
                self._bots.popitem(last=False)
        else:
            self._bots.move_to_end(key)
        return bot


def house_answer(bot: Bot, view: dict[str, Any], state: State, seat: int) -> dict[str, Any] | None:
    """The move (its JSON form) the house bot ``bot`` makes now at ``seat`` from its ``view``
    (the seat's view as the API would answer it, of engine state ``state``), or ``None``: it
    waits (:data:`mayi_sdk.WAIT`), to be asked again when its legal moves change.

    The seat on turn while others may still answer the upcard may take the upcard now, or
    draw from the stock once the window closes. Its bot is offered both, as a player at a
    real table would weigh them: choosing the stock, like answering ``WAIT``, waits (the
    answers, or the window's clock, commit and bring the next decision). The house seats of
    ordinary tables (:class:`HouseBots`) and of ladder matches (:mod:`mayi_service.ladder.matches`)
    both decide through here."""
    from mayi_sdk import GameView
    from mayi_sdk.bot import as_legal_move, is_wait

    offered = seat == state.actor and bool(set(pending_claimants(state)) - {seat}) and STOCK not in view["legal"]
    if offered:
        view = {**view, "legal": [*view["legal"], STOCK]}
    chosen = bot.decide(GameView.from_json(view))
    if is_wait(chosen):
        return None
    move = as_legal_move(chosen)
    answer = {"type": move.type, **move.body}
    return None if offered and answer == STOCK else answer


__all__ = ["HOUSE_JOB", "LEASE_SECONDS", "HouseBots", "house_answer", "job_id"]
