"""The service tests use the fixtures of ``tests/support/service_fixtures.py`` (a real Redis,
the app, the app on a real socket)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import service_fixtures
from bot_support import Receiver

from mayi_service.config import Settings
from mayi_service.service import worker_service


def pytest_configure(config: pytest.Config) -> None:
    service_fixtures.register(config)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture
def worker_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The worker's settings (read from the environment) made the test's own."""
    monkeypatch.setenv("REDIS_URL", settings.redis_url)
    for name in ("key_prefix", "queue_name", "webhook_read_seconds", "webhook_max_response_bytes"):
        monkeypatch.setenv(f"MAYI_{name.upper()}", str(getattr(settings, name)))
    monkeypatch.setenv("MAYI_SCHEDULE_CLOCK_JOBS", "false")
    monkeypatch.setenv("MAYI_WEBHOOK_ALLOW_PRIVATE", "true")
    worker_service.cache_clear()
    try:
        yield
    finally:
        worker_service.cache_clear()
