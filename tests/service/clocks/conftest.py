"""The clock tests' parts, built from the service's own composition root (:class:`Service`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from rq import Queue

from mayi_service.api.app import create_app
from mayi_service.play.clock import Clock
from mayi_service.play.games import Games


@dataclass
class ClockParts:
    """The app with clock jobs on (its test client), its games and clock on a hand-moved time,
    and the RQ queue of the clock jobs."""

    client: Any
    tables: Games
    clock: Clock
    queue: Queue
    time: Callable[[], float]


@pytest.fixture
def clock_parts(settings: Any) -> Callable[[Callable[[], float]], ClockParts]:
    """Build :class:`ClockParts` whose games and clock read ``time``."""

    def build(time: Callable[[], float]) -> ClockParts:
        app = create_app(replace(settings, schedule_clock_jobs=True))
        service = app.extensions["mayi"]
        service.games.clock = time
        service.clock.now = time
        service.house.clock = time
        assert service.clock.queue is not None
        return ClockParts(app.test_client(), service.games, service.clock, service.clock.queue, time)

    return build
