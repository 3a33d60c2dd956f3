"""The API's event union declares exactly the engine's kinds of event."""

from __future__ import annotations

from mayi_engine import EVENT_TYPES
from mayi_service.api.schemas.events import EVENT_TYPES as DOCUMENTED


def test_every_engine_event_is_documented_and_nothing_else() -> None:
    assert set(DOCUMENTED) == set(EVENT_TYPES)


def test_the_documented_timeout_flag_matches_the_events_that_carry_one() -> None:
    for kind, cls in EVENT_TYPES.items():
        carries = "timeout" in cls.__dataclass_fields__
        assert DOCUMENTED[kind][3] is carries, kind
