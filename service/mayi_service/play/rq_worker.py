"""The job worker's RQ worker and scheduler, kept running through Redis outages."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import signal
import threading
import time
from collections.abc import Sequence

import redis
from rq import Queue, SimpleWorker
from rq.scheduler import RQScheduler

from mayi_service.storage.connections import UNREACHABLE, Outage
from mayi_service.storage.loops import start_loop

log = logging.getLogger(__name__)

#: How often a job worker checks that its RQ scheduler runs, in seconds.
SCHEDULER_CHECK_SECONDS = 1.0


class ForkedOutage(Outage):
    """An :class:`Outage` whose state is shared with the processes this one forks after it is
    made (the RQ schedulers): whichever of them sees Redis answer again says so, also when
    another saw it go (a scheduler stopped in the outage and its successor)."""

    def __init__(self, what: str, logger: logging.Logger = log) -> None:
        self._down = multiprocessing.RawValue(ctypes.c_bool, False)
        super().__init__(what, logger)

    @property  # type: ignore[override]
    def down(self) -> bool:
        return bool(self._down.value)

    @down.setter
    def down(self, value: bool) -> None:
        self._down.value = value


class _Scheduler(RQScheduler):
    """RQ's scheduler, living through a Redis outage: where RQ's dies with a traceback (and
    waits for its worker to start another), this one logs one line (on ``outage``) and goes
    on once Redis answers."""

    def __init__(self, *args: object, outage: Outage, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.outage = outage

    def work(self) -> None:
        while True:
            try:
                super().work()
                return
            except UNREACHABLE as exc:
                if self._stop_requested:
                    return
                self.outage.failed(exc)
                time.sleep(SCHEDULER_CHECK_SECONDS)

    def heartbeat(self) -> None:
        super().heartbeat()
        self.outage.answered()


class RetryLines(logging.Filter):
    """Drops RQ's worker's line for each try to reach Redis, and its traceback when it quits
    because Redis went away: the service's loops in the same process say once that Redis is
    unreachable and once that it answers again (and :func:`run_worker` that it starts a
    new worker)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "could not connect to Redis instance" in str(record.msg):
            return False
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, UNREACHABLE)


class Worker(SimpleWorker):
    """RQ's simple worker, whose scheduler :func:`_keep_scheduler` may start again: the two
    never start one at once, and none is started once the worker has torn down."""

    #: While Redis is away, RQ tries again after 1, 2, 4... s, up to a minute: its jobs would
    #: wait that long after Redis is back. At most 2 s instead.
    max_connection_wait_time = 2.0

    def __init__(self, *args: object, scheduler_outage: Outage | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.scheduler_lock = threading.Lock()
        self.torn_down = False
        #: What its schedulers say of a Redis outage (shared by the workers of one process).
        self.scheduler_outage = scheduler_outage or Outage("RQ scheduler", log)

    def start_own_scheduler(self) -> None:
        """Give the worker a :class:`_Scheduler`, started if its locks can be had; RQ's
        worker keeps it as its own (its maintenance starts it again, its teardown stops it)."""
        with self.scheduler_lock:
            self.scheduler = _Scheduler(
                self.queues,
                connection=self.connection,
                logging_level="WARNING",
                serializer=self.serializer,
                outage=self.scheduler_outage,
            )
            self.scheduler.acquire_locks(auto_start=True)

    def check_for_suspension(self, burst: bool) -> None:
        # Redis gone: RQ's loop would quit; its next dequeue waits for Redis instead.
        with contextlib.suppress(*UNREACHABLE):
            super().check_for_suspension(burst)

    def heartbeat(self, *args: object, **kwargs: object) -> None:
        # (The same: a heartbeat missed in an outage is made at the next one.)
        with contextlib.suppress(*UNREACHABLE):
            super().heartbeat(*args, **kwargs)  # type: ignore[arg-type]

    def set_state(self, *args: object, **kwargs: object) -> None:
        # (The same: RQ sets "idle" before its next dequeue, outside its wait for Redis.)
        with contextlib.suppress(*UNREACHABLE):
            super().set_state(*args, **kwargs)  # type: ignore[arg-type]

    def run_maintenance_tasks(self) -> None:
        # RQ starts a dead scheduler again here, every 10 minutes. Redis gone: the next pass
        # runs it (the worker's loops say so once).
        with self.scheduler_lock, contextlib.suppress(*UNREACHABLE):
            super().run_maintenance_tasks()

    def teardown(self) -> None:
        with self.scheduler_lock:
            self.torn_down = True
            super().teardown()

    def restart_scheduler(self) -> bool:
        """Start the scheduler again if it is not running and its locks can be had (RQ's
        own maintenance does the same); ``True`` if one was started."""
        with self.scheduler_lock:
            scheduler = self.scheduler
            if scheduler is None or self.torn_down or self._shutdown_requested_date is not None:
                return False
            process = scheduler._process
            if process is not None and process.is_alive():
                return False
            scheduler.acquire_locks(auto_start=True)
            started = scheduler._process
            return started is not None and started is not process and started.is_alive()


def _keep_scheduler(running: list[Worker]) -> threading.Thread:
    """A daemon thread, for the life of the process (the parent-death signal of the
    scheduler it forks follows this thread), that starts the RQ scheduler of the running
    worker (``running[0]``) again within :data:`SCHEDULER_CHECK_SECONDS` of its death, as
    soon as Redis answers (RQ would try again only at its maintenance, every 10 minutes).
    Its locks are the same scheduler's (the same name), so its lock that survived in Redis
    is renewed, not waited out."""

    def check() -> None:
        worker = running[0] if running else None
        if worker is not None and worker.restart_scheduler():
            log.warning("job worker: RQ's scheduler had stopped; started it again")

    never = threading.Event()
    failed = "job worker: starting RQ's scheduler again"
    return start_loop("RQ scheduler", check, SCHEDULER_CHECK_SECONDS, never, log, failed=failed)


def run_worker(
    connection: redis.Redis, queue_name: str | Sequence[str], burst: bool = False, scheduler: bool = True
) -> None:
    """Run an RQ worker (with its scheduler, unless ``scheduler`` is false) on ``queue_name``
    (or several queues, the first first) until SIGINT or SIGTERM.

    RQ's worker quits on most Redis errors; when it does, this waits until Redis
    answers again and starts a new one, so that a Redis restart needs no worker restart.
    Its scheduler lives through an outage (:class:`_Scheduler`); should it die all the same,
    :func:`_keep_scheduler` starts it again once Redis answers.
    """
    names = [queue_name] if isinstance(queue_name, str) else list(queue_name)
    queues = [Queue(name, connection=connection) for name in names]
    logging.getLogger("rq.worker").addFilter(RetryLines())
    running: list[Worker] = []
    outage = ForkedOutage("RQ scheduler", log)
    if scheduler and not burst:
        _keep_scheduler(running)
    while True:
        worker = None
        try:
            worker = Worker(queues, connection=connection, scheduler_outage=outage)  # it talks to Redis already
            running[:] = [worker]
            if scheduler and not burst:
                worker.start_own_scheduler()
            # A burst runs RQ's own scheduler once, in process.
            worker.work(burst=burst, with_scheduler=scheduler and burst, logging_level="WARNING")
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("job worker: Redis is unreachable (%s)", exc)
        if burst or (worker is not None and worker._shutdown_requested_date is not None):
            return
        log.warning("job worker: RQ's worker stopped (Redis failed?); starting a new one once Redis answers")
        # The stopped worker's signal handlers would raise into the wait: stop plainly instead.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        time.sleep(1.0)  # never a busy loop, whatever stopped it
        _wait_for_redis(connection)
        if worker is not None and worker.scheduler is not None:
            # Its scheduler died with Redis: its locks would make the next one wait a minute.
            with contextlib.suppress(*UNREACHABLE):
                worker.scheduler.release_locks()


def _wait_for_redis(connection: redis.Redis, most: float = 5.0) -> None:
    """Block until Redis answers a PING (SIGINT or SIGTERM meanwhile stop the process)."""
    delay = 0.2
    while True:
        try:
            if connection.ping():
                return
        except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
            pass
        time.sleep(delay)
        delay = min(most, delay * 2)
