"""RQ's worker, as the job workers run it, lives through a Redis outage at every step of its
loop: where RQ's own quits (with a traceback) when Redis is away between two jobs, the
service's waits in its next dequeue, and a quit that still happens says nothing RQ's way."""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from rq import Queue
from serving import RedisProcess

from mayi_service.play.rq_worker import ForkedOutage, RetryLines, Worker

#: The cap of a wait for a forked process (a loaded CI machine); never an assertion on speed.
CAP = 60.0


def test_the_steps_between_two_jobs_carry_on_while_redis_is_away(tmp_path: Path) -> None:
    server = RedisProcess(tmp_path / "redis")
    server.start()
    connection = redis.Redis.from_url(server.url, socket_timeout=5, socket_connect_timeout=2)
    try:
        worker = Worker([Queue("q", connection=connection)], connection=connection)
        worker.register_birth()
        server.kill()
        worker.check_for_suspension(False)  # RQ's own raises ConnectionError here
        worker.set_state("idle")  # (at the start of its next dequeue)
        worker.heartbeat()
    finally:
        connection.close()
        server.kill()


def test_rqs_traceback_for_a_worker_that_redis_left_is_not_logged() -> None:
    lines = RetryLines()

    def record(message: str, error: BaseException | None) -> logging.LogRecord:
        info = (type(error), error, None) if error is not None else None
        return logging.LogRecord("rq.worker", logging.ERROR, __file__, 1, message, (), info)

    gone = redis.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")
    assert not lines.filter(record("Worker %s: found an unhandled exception, quitting...", gone))
    assert not lines.filter(record("Worker %s: could not connect to Redis instance: %s", None))
    assert lines.filter(record("Worker %s: found an unhandled exception, quitting...", ValueError("a bug")))
    assert lines.filter(record("Worker %s: stopping on request", None))


def test_a_scheduler_forked_after_another_saw_redis_go_says_that_it_is_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A job worker's scheduler is a fork, and one that saw Redis go may be stopped before it
    is back (its worker quit, and a new worker forks a new scheduler): the outage they share
    is said once each way, by whichever process sees it."""
    logger = logging.getLogger("test-forked-outage")
    outage = ForkedOutage("RQ scheduler", logger)
    fork = multiprocessing.get_context("fork")

    def in_a_fork(step: Callable[[], None]) -> None:
        child = fork.Process(target=step)
        child.start()
        child.join(CAP)
        assert child.exitcode == 0

    in_a_fork(lambda: outage.failed(redis.ConnectionError("Connection refused.")))
    assert outage.down  # seen by this process, and by the schedulers it forks next
    with caplog.at_level(logging.WARNING, logger="test-forked-outage"):
        outage.failed(redis.ConnectionError("Connection refused."))  # not said twice
        outage.answered()
    assert [r.getMessage() for r in caplog.records] == ["RQ scheduler: Redis answers again"]
    in_a_fork(lambda: outage.failed(redis.ConnectionError("Connection refused.")))
    in_a_fork(outage.answered)
    assert not outage.down
