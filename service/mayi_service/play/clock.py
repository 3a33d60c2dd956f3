"""Turn clocks: deadlines are enforced even when nobody calls.

Four mechanisms, from fastest to safest:

1. **Lazily**, on every request that acts on a game (``Games.act`` applies the
   timeouts that are due before the move).
2. **One RQ job per game at its clock time.** The game hash holds ``clock_at``,
   the time of the one job that is the game's clock (its deadline, rounded up to
   a whole second: RQ schedules in whole seconds). After each commit, :class:`Clock`
   (a commit listener) claims the clock atomically (``clock_claim.lua``) only when the new
   deadline comes before the pending job, or when there is none or it is overdue. When a job
   runs it first checks that it is still the game's clock (a job that an earlier
   deadline replaced does nothing); then it plays what is due and moves the clock
   to the game's current deadline, atomically again. So a game never has more
   than one live job, and a usual move schedules nothing.
3. **The clock timer**, in every game worker: RQ's scheduler keeps whole seconds (a job
   is due at its whole second and queued within a second after), so each worker also
   reads the games whose clock is due within the next seconds, with their exact
   deadlines, every ``MAYI_CLOCK_POLL_SECONDS``, and plays each one at its deadline
   (:meth:`Clock.tick`; the timers of several workers share them, one claim per deadline).
   The RQ job that follows finds nothing due and moves the clock on.
4. **The sweeper**, in every game worker: a game whose clock is overdue by more than a
   few seconds (its job lost with a crashed worker, or never queued: a process that died
   right after a commit) is taken over and run. It also queues
   again the house-bot decisions whose job was lost (:mod:`mayi_service.bots.house`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

import redis
from rq import Queue, Retry

from mayi_engine import GameStatus
from mayi_engine.rules import VARIANTS
from mayi_service.play.games import Games
from mayi_service.play.listeners import Commit
from mayi_service.storage.connections import UNREACHABLE
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.loops import start_loop
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import CLOCK_GRACE_SECONDS, GameRepository
from mayi_service.storage.scheduled import drop_scheduled

log = logging.getLogger(__name__)

#: How often the sweeper drops expired games from the indexes, in seconds.
PRUNE_SECONDS = 60.0
#: How far apart the clocks of the machines may be, in seconds: a clock job runs no earlier
#: than its time on the machine of RQ's scheduler.
CLOCK_SKEW_SECONDS = 1.0
#: The RQ job of a game's clock (:func:`mayi_service.jobs.run_clock_job`).
CLOCK_JOB = "mayi_service.jobs.run_clock_job"


def clock_time(record: GameRecord) -> int | None:
    """The time the clock job of ``record`` must run by (its deadline, rounded up to a whole
    second: RQ schedules in whole seconds); ``None``: a game not in play, or with no deadline."""
    if record.deadline is None or record.status != GameStatus.PLAYING:
        return None
    return math.ceil(record.deadline)


def job_id(game_id: str, at: int) -> str:
    """The id of the clock job of ``game_id`` due at ``at`` (one id per game and time)."""
    return f"clock-{game_id}-{at}"


class Redrives(Protocol):
    """A part whose lost work the sweeper queues again (the house bots' decisions)."""

    def redrive(self) -> object:
        """Queue again the work whose job was lost."""
        ...


class Clock:
    """Schedules and runs the clock jobs of the games of one repository (a commit listener
    of :class:`~mayi_service.play.games.Games`). ``jobs``: the Redis of the RQ jobs (default: the
    queue's); ``house``: the house bots whose lost decisions the sweeper queues again."""

    def __init__(
        self,
        repo: GameRepository,
        queue: Queue | None,
        now: Callable[[], float] = time.time,
        *,
        jobs: redis.Redis | None = None,
        house: Redrives | None = None,
    ) -> None:
        self.repo = repo
        self.queue = queue
        self.now = now
        self.house = house
        self._prune_at = 0.0
        #: The games whose deadline :meth:`tick` played, and that deadline.
        self._played: dict[str, float] = {}
        #: The Redis of the jobs (RQ): the queue's, or the one its worker would use.
        self.jobs: redis.Redis | None = jobs if jobs is not None else queue.connection if queue is not None else None

    # -- the commit listener ----------------------------------------------------
    def prepare(self, commit: Commit) -> None:
        """A game's first clock (it starts) goes in the sweeper's index before the commit: a
        process that dies right after the commit leaves the game to the sweeper."""
        want = clock_time(commit.after)
        if want is not None and (commit.before is None or commit.before.clock_at is None):
            self.repo.index_clock(commit.after.id, want)

    def follow(self, commit: Commit, batch: FollowUps) -> Callable[[], None] | None:
        """Claim the clock the commit's deadline needs (``clock_claim.lua``: only when it comes
        before the pending job, or there is none, or it is lost), then schedule its job.

        Nothing is sent when the clock the commit replaced (``before.clock_at``) is due no
        later than the new deadline and still :data:`CLOCK_SKEW_SECONDS` ahead now, after
        the commit: its job has not run yet (nor could it have moved the clock since the
        record was read), so it runs, finds nothing due and moves the clock on."""
        after = commit.after
        want = clock_time(after)
        if want is None:
            return None
        pending = commit.before.clock_at if commit.before is not None else None
        if pending is not None and pending <= want and pending > self.now() + CLOCK_SKEW_SECONDS:
            return None
        claim = batch.claim_clock(self.repo.game_key(after.id), want, commit.now, CLOCK_GRACE_SECONDS)

        def schedule() -> None:
            if claim.value is not None:
                at, previous = claim.value
                self.schedule(after.id, at, replaces=previous)

        return schedule

    def schedule(self, game_id: str, at: int, replaces: float | None = None) -> None:
        self.repo.index_clock(game_id, at)
        if self.queue is None:
            return
        if replaces is not None and int(replaces) != at:
            self._drop(job_id(game_id, int(replaces)))
        self.queue.enqueue_at(
            datetime.fromtimestamp(at, UTC),
            CLOCK_JOB,
            game_id,
            at,
            job_id=job_id(game_id, at),
            job_timeout=30,
            result_ttl=0,
            failure_ttl=3600,
            retry=Retry(max=3, interval=[1, 2, 5]),
        )

    def _drop(self, replaced: str) -> None:
        """Delete the replaced job if it is still only scheduled (:func:`drop_scheduled`): a job
        already queued or running finds it is no longer the clock, and does nothing."""
        assert self.queue is not None
        drop_scheduled(self.queue.connection, replaced)

    def run(self, games: Games, game_id: str, at: int | None) -> None:
        """The job due at ``at`` (``None``: the sweeper taking over): play what is due,
        then move the clock to the game's next deadline."""
        record = self.repo.load(game_id)
        if record is None:
            self.repo.index_clock(game_id, None)
            return
        if at is not None and (record.clock_at is None or int(record.clock_at) != at):
            return  # an earlier deadline replaced this job: another job is the game's clock
        if record.status == GameStatus.FINISHED:
            # A crash between the final commit and its follow-ups leaves these undone: redo them.
            self.repo.index(record, GameStatus.PLAYING)
            self.repo.archive_events(game_id)
        else:
            games.run_clock(game_id)
        # Never the running job's own time again: RQ deletes a job's id when the job ends.
        claimed, next_at = self.repo.claim_clock(game_id, at, at_least=(at or 0) + 1)
        if not claimed:
            return  # a commit meanwhile made an earlier clock, with a job of its own
        if next_at is None:
            self.repo.index_clock(game_id, None)
            return
        self.schedule(game_id, next_at)

    def tick(self, games: Games, poll: float) -> float:
        """Play the clocks whose exact deadline has passed (not waiting for their job's whole
        second); return the seconds until the next deadline of the coming ``poll`` seconds
        (at most ``poll``). A deadline is played by the one timer that claims it; after that
        the game is left to its job, the sweeper and its next deadline.

        A play-out (every seat absent: the clock plays on at once, a commit of up to
        :data:`~mayi_engine.clocks.MAX_TIMEOUT_STEPS` decisions at a time) never holds up a
        clock that fell due at another table: the clocks due are played first, earliest
        first, then one step of a play-out, and the deadlines are read again before the next,
        until nothing is due."""
        played: dict[str, float] = {}
        while True:
            now = self.now()
            # A clock job is due no later than its deadline rounded up: these include every
            # game whose deadline falls within the next ``poll`` seconds.
            soon = self.repo.due_games(now + poll + 1.0, limit=1000)
            wait = poll
            due: list[tuple[bool, float, str]] = []
            for game_id, (deadline, at_once) in zip(soon, self.repo.deadlines(soon), strict=True):
                if deadline is None:
                    continue
                if deadline > now:
                    wait = min(wait, deadline - now)
                elif deadline in (played.get(game_id), self._played.get(game_id)):
                    played[game_id] = deadline  # its job or the sweeper does the rest
                else:
                    due.append((at_once, deadline, game_id))
            if not due:
                break
            for at_once, deadline, game_id in sorted(due):  # the clocks first, then the play-outs
                played[game_id] = deadline
                if not self.repo.claim_deadline(game_id, deadline):
                    continue  # another worker's timer plays it
                try:
                    games.run_clock(game_id)
                except Exception:  # keep playing the others; the job and the sweeper try again
                    log.exception("clock of game %s", game_id)
                if at_once:
                    break  # one step of a play-out: then the clocks that fell due meanwhile
        self._played = played
        return max(0.001, wait - (self.now() - now))

    def sweep(self, games: Games) -> int:
        """Take over every game whose clock is overdue; return how many. Queue again the
        house-bot decisions whose job was lost (:meth:`~mayi_service.bots.house.HouseBots.redrive`).
        Now and then, also drop expired games from the indexes (retention)."""
        if self.now() >= self._prune_at:
            self._prune_at = self.now() + PRUNE_SECONDS
            self.repo.prune_indexes(self.now(), VARIANTS)
        if self.house is not None:
            try:
                self.house.redrive()
            except UNREACHABLE:
                raise
            except Exception:  # the clocks below come first
                log.exception("house bots' due-set")
        due = self.repo.due_games(self.now() - CLOCK_GRACE_SECONDS)
        for game_id in due:
            try:
                self.run(games, game_id, None)
            except Exception:  # keep sweeping the others
                log.exception("clock of game %s", game_id)
        return len(due)


#: The kinds of job a worker runs (``mayi worker --jobs``), each on a queue of its own.
JOB_KINDS = ("games", "webhooks", "ladder")


def start_timer(games: Games, clock: Clock, poll: float, stop: threading.Event) -> threading.Thread:
    """A daemon thread that plays each clock at its deadline (:meth:`Clock.tick`) until ``stop``."""
    return start_loop("clock timer", lambda: clock.tick(games, poll), poll, stop, log)


def start_sweeper(games: Games, clock: Clock, every: float, stop: threading.Event) -> threading.Thread:
    """A daemon thread that sweeps every ``every`` seconds until ``stop`` is set."""

    def sweep() -> None:
        clock.sweep(games)

    return start_loop("sweeper", sweep, every, stop, log)
