"""The composition root: :class:`Service` builds every part of the service from one
:class:`~mayi_service.config.Settings`, the same way for the API, the job worker and the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import redis
from rq import Queue

from mayi_service.bots.house import HouseBots
from mayi_service.bots.seats import Bots
from mayi_service.bots.webhooks import Webhooks, queue_name_for
from mayi_service.config import Settings
from mayi_service.ladder.matches import Ladder, ladder_queue_name
from mayi_service.play.clock import JOB_KINDS, Clock
from mayi_service.play.games import Games
from mayi_service.storage.connections import connect, is_cluster, jobs_url, redis_url
from mayi_service.storage.repository import GameRepository


def jobs_connection(settings: Settings, client: redis.Redis) -> redis.Redis:
    """The Redis for jobs (RQ): ``MAYI_JOBS_REDIS_URL``'s, else ``client`` itself. RQ does
    not run on a Redis Cluster, so a cluster needs a jobs Redis of its own (``ValueError``
    naming the setting otherwise)."""
    # jobs_url refuses a cluster, and a cluster client without a jobs URL, naming the setting.
    url = jobs_url("redis+cluster://" if is_cluster(client) else "", settings.jobs_redis_url)
    return connect(url, "MAYI_JOBS_REDIS_URL") if url else client


def queue_names(settings: Settings, kinds: Sequence[str] = JOB_KINDS) -> list[str]:
    """The RQ queues of the job ``kinds`` (in this order, which a worker of several takes
    first): ``games``, the clock jobs and house-bot decisions (``MAYI_QUEUE_NAME``);
    ``webhooks``, the webhook deliveries; ``ladder``, the matchmaking and match jobs."""
    names = {
        "games": settings.queue_name,
        "webhooks": queue_name_for(settings.queue_name),
        "ladder": ladder_queue_name(settings),
    }
    return [names[kind] for kind in JOB_KINDS if kind in kinds]


class Service:
    """Every part of the service over one Redis (``client``: default, the one of ``settings``)
    and the Redis of its jobs (``jobs``: default, :func:`jobs_connection`), each built through
    its constructor: the games, their clock, the bot accounts with their webhook deliveries,
    the house bots and the ladder. Every RQ queue of the service is on :attr:`jobs`."""

    def __init__(self, settings: Settings, client: redis.Redis | None = None, jobs: redis.Redis | None = None) -> None:
        self.settings = settings
        #: The URL of the games' Redis.
        self.url = redis_url(settings.redis_url, settings.data_dir)
        if client is None:
            jobs_url(self.url, settings.jobs_redis_url)  # a cluster needs a Redis of its own for the jobs: say so first
            client = connect(self.url)
        #: The games' Redis, and the Redis of the RQ jobs (its own on a cluster).
        self.redis = client
        self.jobs = jobs if jobs is not None else jobs_connection(settings, client)
        self.repo = GameRepository(
            client,
            settings.key_prefix,
            settings.idempotency_ttl,
            waiting_ttl=settings.waiting_ttl,
            finished_ttl=settings.finished_ttl,
            kept=settings.redis_kept_connections,
        )
        games_queue = Queue(settings.queue_name, connection=self.jobs) if settings.schedule_clock_jobs else None
        #: The house bots: the API seats them, the worker plays them.
        self.house = HouseBots(self.repo, games_queue, settings.house_bot_seconds)
        self.clock = Clock(self.repo, games_queue, jobs=self.jobs, house=self.house)
        #: Webhook deliveries: jobs beside the clock's.
        self.webhooks = Webhooks(self.repo, self.queue(queue_name_for(settings.queue_name)), settings)
        self.bots = Bots(
            self.repo,
            deliveries=self.webhooks,
            secret_overlap=settings.webhook_secret_overlap_seconds,
            idle_ttl=settings.bot_idle_ttl,
        )
        self.games = Games(
            self.repo,
            seats=self.bots,
            # The clock's commits wake bots too: API and worker share these listeners.
            listeners=(self.clock, self.bots, self.house),
            # A bound on open tables per client address, part of the abuse limits (off with them).
            max_open_per_owner=settings.max_open_tables_per_address if settings.rate_limits_enabled else 0,
        )
        #: The bot ladder (its jobs run in the worker).
        self.ladder = Ladder(self.games, self.bots, settings, self.queue(ladder_queue_name(settings)))

    def queue(self, name: str) -> Queue:
        """The RQ queue ``name`` on the Redis of the jobs."""
        return Queue(name, connection=self.jobs)


@lru_cache(maxsize=1)
def worker_service() -> Service:
    """The service of this worker process, from the environment's settings (built once)."""
    return Service(Settings.from_env())
