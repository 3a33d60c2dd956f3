"""A replaced clock job is deleted only while it is still merely scheduled: once RQ's
scheduler has queued it (or a worker runs it), it is left to end on its own, so RQ never
finds a running job's hash gone (``InvalidJobOperation``). Real Redis, real RQ scheduler
and worker."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, FinishedJobRegistry, ScheduledJobRegistry
from rq.scheduler import RQScheduler

from mayi_service.play.clock import Clock


@pytest.fixture
def queue(redis_client: redis.Redis) -> Queue:
    return Queue(f"q{uuid.uuid4().hex[:10]}", connection=redis_client)


def _schedule(queue: Queue) -> str:
    """A job due a second ago, as a clock job is after a restart."""
    when = datetime.now(UTC) - timedelta(seconds=1)
    return queue.enqueue_at(when, "os.getpid", job_id=f"clock-{uuid.uuid4().hex}-1", result_ttl=0).id


def _scheduler(queue: Queue) -> RQScheduler:
    scheduler = RQScheduler([queue], connection=queue.connection)
    assert scheduler.acquire_locks()
    return scheduler


def test_a_job_still_scheduled_is_deleted(queue: Queue) -> None:
    job = _schedule(queue)
    Clock(None, queue)._drop(job)  # type: ignore[arg-type]
    assert not queue.connection.exists(Job.key_for(job))
    assert ScheduledJobRegistry(queue=queue).get_job_ids() == []
    _scheduler(queue).enqueue_scheduled_jobs()
    assert queue.get_job_ids() == [], "nothing left for the scheduler to queue"


def test_a_job_the_scheduler_queued_is_left_to_run(queue: Queue) -> None:
    job = _schedule(queue)
    _scheduler(queue).enqueue_scheduled_jobs()
    Clock(None, queue)._drop(job)  # type: ignore[arg-type]
    assert queue.get_job_ids() == [job]
    assert SimpleWorker([queue], connection=queue.connection).work(burst=True)
    assert FailedJobRegistry(queue=queue).get_job_ids() == []


def test_a_job_queued_while_it_is_being_dropped_is_left_to_run(queue: Queue, monkeypatch) -> None:
    """The scheduler queues the job between the drop's read of it and its delete."""
    job = _schedule(queue)
    scheduler = _scheduler(queue)
    read = Job.get_status
    ran: list[bool] = []

    def read_then_scheduler_runs(self: Job, refresh: bool = True) -> JobStatus:
        status = read(self, refresh)
        if not ran:
            ran.append(True)
            scheduler.enqueue_scheduled_jobs()
        return status

    monkeypatch.setattr(Job, "get_status", read_then_scheduler_runs)
    Clock(None, queue)._drop(job)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert ran, "the scheduler ran inside the drop"
    assert Job.fetch(job, connection=queue.connection).get_status() == JobStatus.QUEUED
    assert queue.get_job_ids() == [job]
    assert SimpleWorker([queue], connection=queue.connection).work(burst=True)
    assert FailedJobRegistry(queue=queue).get_job_ids() == []
    assert FinishedJobRegistry(queue=queue).get_job_ids() == []  # result_ttl=0: cleaned up, not failed


def test_a_running_job_is_left_alone(queue: Queue) -> None:
    job = _schedule(queue)
    _scheduler(queue).enqueue_scheduled_jobs()
    fetched = Job.fetch(job, connection=queue.connection)
    fetched.set_status(JobStatus.STARTED)
    Clock(None, queue)._drop(job)  # type: ignore[arg-type]
    assert Job.fetch(job, connection=queue.connection).get_status() == JobStatus.STARTED
