"""Turn clocks: deadlines are enforced even when nobody calls.

Three mechanisms, from fastest to safest:

1. **Lazily**, on every request that acts on a game (``Tables.act`` applies the
   timeouts that are due before the move).
2. **An RQ job at the deadline.** Each game has at most one pending clock job;
   its time is kept in the game hash (``clock_at``) and in the ``deadlines``
   index. A commit schedules a new job only when the game's deadline comes
   *before* the pending job (an absent seat, say); a job that finds the
   deadline moved later simply reschedules itself for the new deadline. So
   the usual move costs no scheduling at all.
3. **The sweeper**, in every worker: games whose clock job should have run a
   little while ago (a job lost with a crashed worker) are run again.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from datetime import UTC, datetime
from functools import lru_cache

from rq import Queue, Retry

from .config import Settings
from .repository import GameRecord, GameRepository
from .store import connect, redis_url

log = logging.getLogger(__name__)

#: A clock job more than this late is considered lost and the sweeper runs it.
GRACE_SECONDS = 5.0


class Clock:
    """Schedules and runs clock jobs for the games of one repository."""

    def __init__(self, repo: GameRepository, queue: Queue | None, clock: object = time.time) -> None:
        self.repo = repo
        self.queue = queue
        self.now = clock

    def on_commit(self, before: GameRecord | None, after: GameRecord) -> None:
        """After a commit: make sure a clock job runs by the game's new deadline."""
        deadline = after.deadline
        if deadline is None or after.status != "playing":
            return
        pending = before.clock_at if before is not None else None
        now = self.now()  # type: ignore[operator]
        if pending is not None and now - GRACE_SECONDS <= pending <= deadline:
            return  # the pending job runs first and reschedules itself
        self.schedule(after.id, deadline)

    def schedule(self, game_id: str, at: float, *, again: bool = False) -> None:
        """Have a clock job run at ``at`` (``again``: the job due at ``at`` is running, see ``run``)."""
        self.repo.set_clock(game_id, at)
        if self.queue is None:
            return
        job_id = f"clock-{game_id}-{int(at * 1000)}"
        if again:  # not the id of the running job: RQ deletes that job (result_ttl=0) when it ends
            job_id += f"-{secrets.token_hex(4)}"
        self.queue.enqueue_at(
            # RQ keeps scheduled times in whole seconds, rounded down: round up, never run early.
            datetime.fromtimestamp(math.ceil(at), UTC),
            run_clock_job,
            game_id,
            job_id=job_id,
            job_timeout=30,
            result_ttl=0,
            failure_ttl=3600,
            retry=Retry(max=3, interval=[1, 2, 5]),
        )

    def run(self, tables: object, game_id: str) -> None:
        """Run the timeouts of ``game_id`` that are due, then schedule its next deadline."""
        from .tables import Tables

        assert isinstance(tables, Tables)
        tables.run_clock(game_id)
        record = self.repo.load(game_id)
        if record is None or record.status != "playing" or record.deadline is None:
            self.repo.set_clock(game_id, None)
            return
        # Nothing was due yet if the job ran early (the clocks of two hosts differ): it then
        # schedules its own time again, which needs another job id.
        self.schedule(game_id, record.deadline, again=record.deadline == record.clock_at)

    def sweep(self, tables: object) -> int:
        """Run every game whose clock job is overdue; return how many."""
        due = self.repo.due_games(self.now() - GRACE_SECONDS)  # type: ignore[operator]
        for game_id in due:
            try:
                self.run(tables, game_id)
            except Exception:  # keep sweeping the others
                log.exception("clock of game %s", game_id)
        return len(due)


@lru_cache(maxsize=1)
def _worker_parts() -> tuple[object, Clock]:
    from .tables import Tables

    settings = Settings.from_env()
    client = connect(redis_url(settings.redis_url, settings.data_dir))
    repo = GameRepository(client, settings.key_prefix, settings.idempotency_ttl)
    queue = Queue(settings.queue_name, connection=client) if settings.schedule_clock_jobs else None
    clock = Clock(repo, queue)
    return Tables(repo, on_commit=clock.on_commit), clock


def run_clock_job(game_id: str) -> None:
    """RQ job: play the decisions of ``game_id`` whose deadline has passed."""
    tables, clock = _worker_parts()
    clock.run(tables, game_id)


def start_sweeper(tables: object, clock: Clock, every: float, stop: threading.Event) -> threading.Thread:
    """A daemon thread that sweeps every ``every`` seconds until ``stop`` is set."""

    def loop() -> None:
        while not stop.wait(every):
            try:
                clock.sweep(tables)
            except Exception:
                log.exception("sweeper")

    thread = threading.Thread(target=loop, name="mayi-sweeper", daemon=True)
    thread.start()
    return thread
