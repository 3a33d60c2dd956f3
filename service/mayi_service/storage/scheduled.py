"""RQ's scheduled jobs, as the clocks replace them."""

from __future__ import annotations

import redis
from redis.exceptions import WatchError
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus


def drop_scheduled(connection: redis.Redis, job_id: str) -> None:
    """Delete the job ``job_id`` if it is still only scheduled. A job that has left the
    schedule is queued or running, and ends on its own (deleting a running job's hash makes
    RQ fail it with ``InvalidJobOperation``). The check and the delete are one transaction on
    the job's hash: if RQ's scheduler queues the job in between, nothing is deleted; if it
    read the job before and queues it after, it writes the whole job again."""
    with connection.pipeline() as pipe:
        try:
            pipe.watch(Job.key_for(job_id))
            job = Job.fetch(job_id, connection=connection)
            if job.get_status(refresh=False) != JobStatus.SCHEDULED:
                return
            pipe.multi()
            job.delete(pipeline=pipe)  # and out of the scheduled registry
            pipe.execute()
        except (NoSuchJobError, WatchError):
            return  # gone already, or it left the schedule meanwhile
