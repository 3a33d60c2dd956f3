"""The service tests use the fixtures of ``tests/support/service_fixtures.py`` (a real Redis,
the app, the app on a real socket)."""

from __future__ import annotations

import pytest
import service_fixtures


def pytest_configure(config: pytest.Config) -> None:
    service_fixtures.register(config)
