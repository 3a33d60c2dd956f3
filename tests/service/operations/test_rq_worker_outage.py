"""RQ's worker, as the job workers run it, lives through a Redis outage at every step of its
loop: where RQ's own quits (with a traceback) when Redis is away between two jobs, the
service's waits in its next dequeue, and a quit that still happens says nothing RQ's way."""

from __future__ import annotations

import logging
from pathlib import Path

import redis
from rq import Queue
from serving import RedisProcess

from mayi_service.play.rq_worker import RetryLines, Worker


def test_the_steps_between_two_jobs_carry_on_while_redis_is_away(tmp_path: Path) -> None:
    server = RedisProcess(tmp_path / "redis")
    server.start()
    connection = redis.Redis.from_url(server.url, socket_timeout=5, socket_connect_timeout=2)
    try:
        worker = Worker([Queue("q", connection=connection)], connection=connection)
        worker.register_birth()
        server.kill()
        worker.check_for_suspension(False)  # RQ's own raises ConnectionError here
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
