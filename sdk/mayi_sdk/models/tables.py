"""Tables: a new table and its seats, a seat taken, the list of tables, a replay, the service's health."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import listed
from .events import Event
from .games import GameView


@dataclass(frozen=True)
class IssuedSeat:
    """A seat taken at creation, with its bearer ``token`` (shown only once)."""

    seat: int
    name: str
    token: str


@dataclass(frozen=True)
class CreatedGame:
    game_id: str
    seats: list[IssuedSeat]
    game: GameView

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CreatedGame:
        seats = [IssuedSeat(int(s["seat"]), s["name"], s["token"]) for s in listed(data, "seats")]
        return cls(data["game_id"], seats, GameView.from_json(data["game"]))


@dataclass(frozen=True)
class TakenSeat:
    """A seat taken with :meth:`mayi_sdk.Client.take_seat`: its number and token (shown only once;
    ``None`` for a house bot's seat)."""

    seat: int
    token: str | None
    game: GameView

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TakenSeat:
        return cls(int(data["seat"]), data["token"], GameView.from_json(data["game"]))


@dataclass(frozen=True)
class GameSummary:
    """A table in a listing."""

    id: str
    variant: str
    status: str
    seats: int
    names: list[str | None]
    rated: bool
    created_at: float
    version: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSummary:
        return cls(
            data["id"],
            data["variant"],
            data["status"],
            int(data["seats"]),
            listed(data, "names"),
            bool(data.get("rated", False)),
            float(data.get("created_at", 0.0)),
            int(data.get("version", 0)),
        )


@dataclass(frozen=True)
class GamePage:
    games: list[GameSummary]
    page: int
    page_size: int
    total: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GamePage:
        games = [GameSummary.from_json(g) for g in listed(data, "games")]
        return cls(games, int(data["page"]), int(data["page_size"]), int(data["total"]))


@dataclass(frozen=True)
class Replay:
    """A finished game: every event with every private detail, and the shuffles' seed."""

    id: str
    variant: str
    options: dict[str, Any]
    names: list[str | None]
    seed: str
    totals: list[int]
    events: list[Event]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Replay:
        return cls(
            data["id"],
            data["variant"],
            dict(data.get("options") or {}),
            listed(data, "names"),
            data["seed"],
            listed(data, "totals"),
            [Event.from_json(e) for e in listed(data, "events")],
        )


@dataclass(frozen=True)
class Health:
    status: str
    redis: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Health:
        return cls(str(data.get("status", "")), bool(data.get("redis", False)))
