"""The bot ladder: entries, standings, a bot's record, matches and ratings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import listed


@dataclass(frozen=True)
class LadderEntry:
    """A bot entered in a variant's ladder, playing up to ``max_games`` ladder games at once."""

    variant: str
    bot_id: str
    name: str
    max_games: int
    entered_at: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderEntry:
        return cls(data["variant"], data["bot_id"], data["name"], int(data["max_games"]), float(data["entered_at"]))


@dataclass(frozen=True)
class LadderStanding:
    """One row of a leaderboard: ``rating`` is the conservative ``mu - 3 sigma`` that orders it."""

    rank: int
    bot_id: str
    name: str
    house: bool
    rating: float
    mu: float
    sigma: float
    games: int
    wins: int
    mean_score: float | None
    provisional: bool
    max_games: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderStanding:
        mean = data.get("mean_score")
        return cls(
            int(data["rank"]),
            data["bot_id"],
            data["name"],
            bool(data["house"]),
            float(data["rating"]),
            float(data["mu"]),
            float(data["sigma"]),
            int(data["games"]),
            int(data["wins"]),
            None if mean is None else float(mean),
            bool(data["provisional"]),
            int(data.get("max_games", 0)),
        )


@dataclass(frozen=True)
class Leaderboard:
    variant: str
    standings: list[LadderStanding]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Leaderboard:
        return cls(data["variant"], [LadderStanding.from_json(s) for s in listed(data, "standings")])


@dataclass(frozen=True)
class LadderBot:
    """A bot's rating in a variant's ladder, entered or not: ``entered`` is false once it
    left (it is then off the leaderboard: ``rank`` and ``max_games`` are ``None``), and
    its rating and history stay."""

    variant: str
    bot_id: str
    name: str
    house: bool
    entered: bool
    rank: int | None
    rating: float
    mu: float
    sigma: float
    games: int
    wins: int
    mean_score: float | None
    provisional: bool
    max_games: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderBot:
        mean, rank, most = data.get("mean_score"), data.get("rank"), data.get("max_games")
        return cls(
            data["variant"],
            data["bot_id"],
            data["name"],
            bool(data["house"]),
            bool(data["entered"]),
            None if rank is None else int(rank),
            float(data["rating"]),
            float(data["mu"]),
            float(data["sigma"]),
            int(data["games"]),
            int(data["wins"]),
            None if mean is None else float(mean),
            bool(data["provisional"]),
            None if most is None else int(most),
        )


@dataclass(frozen=True)
class LadderSeat:
    """A seat of a ladder match: its bot, and the reference bot's name if a house entrant."""

    seat: int
    bot_id: str
    name: str
    house: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderSeat:
        return cls(int(data["seat"]), data["bot_id"], data["name"], data.get("house"))


@dataclass(frozen=True)
class LadderResult:
    """A seat's result in a finished ladder match: final ``score`` (penalty points),
    ``place`` (1 = best; equal scores share it) and its rating before and after."""

    seat: int
    bot_id: str
    name: str
    house: str | None
    score: int
    place: int
    rating_before: float
    rating_after: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderResult:
        return cls(
            int(data["seat"]),
            data["bot_id"],
            data["name"],
            data.get("house"),
            int(data["score"]),
            int(data["place"]),
            float(data["rating_before"]),
            float(data["rating_after"]),
        )


@dataclass(frozen=True)
class LadderMatch:
    """A ladder match: its game (``game_id``: its replay), seats and, once finished, its
    ``standings`` (one :class:`LadderResult` per seat)."""

    match_id: str
    variant: str
    game_id: str
    status: str
    created_at: float
    finished_at: float | None
    seats: list[LadderSeat]
    standings: list[LadderResult] | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderMatch:
        finished = data.get("finished_at")
        standings = data.get("standings")
        return cls(
            data["match_id"],
            data["variant"],
            data["game_id"],
            data["status"],
            float(data["created_at"]),
            None if finished is None else float(finished),
            [LadderSeat.from_json(s) for s in listed(data, "seats")],
            None if standings is None else [LadderResult.from_json(s) for s in standings],
        )


@dataclass(frozen=True)
class RatingPoint:
    """A bot's rating after one ladder match."""

    match_id: str
    game_id: str
    at: float
    place: int
    players: int
    score: int
    mu: float
    sigma: float
    rating: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RatingPoint:
        return cls(
            data["match_id"],
            data["game_id"],
            float(data["at"]),
            int(data["place"]),
            int(data["players"]),
            int(data["score"]),
            float(data["mu"]),
            float(data["sigma"]),
            float(data["rating"]),
        )
