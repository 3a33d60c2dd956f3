"""The events of a game and a page of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import listed


@dataclass(frozen=True)
class Event:
    """One entry of a game's log. ``private`` is present only for the seat it concerns."""

    seq: int
    type: str
    seat: int | None
    time: float
    data: dict[str, Any]
    private: dict[str, Any] | None = None
    timeout: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        return cls(
            seq=int(data["seq"]),
            type=data["type"],
            seat=data.get("seat"),
            time=float(data.get("time", 0.0)),
            data=dict(data.get("data") or {}),
            private=data.get("private"),
            timeout=bool(data.get("timeout", False)),
            raw=data,
        )


@dataclass(frozen=True)
class EventPage:
    """Events after a number, and ``last``: the number to pass as ``after`` next time."""

    events: list[Event]
    last: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EventPage:
        return cls([Event.from_json(e) for e in listed(data, "events")], int(data["last"]))
