"""Bot accounts, their webhook deliveries and the decisions they are asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import listed
from .games import GameView


@dataclass(frozen=True)
class BotAccount:
    """A bot as registered (:meth:`mayi_sdk.Client.register_bot`): its id and bearer ``token``
    (shown only once: keep it), or a new token after a rotation."""

    bot_id: str
    token: str
    name: str = ""
    #: The secret (``whsec_...``) that signs its webhook deliveries: at registration only.
    webhook_secret: str = ""
    webhook_url: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BotAccount:
        return cls(
            data["bot_id"], data["token"], data.get("name", ""), data.get("webhook_secret", ""), data.get("webhook_url")
        )


@dataclass(frozen=True)
class BotGame:
    """A game a bot sits in, and its seats there."""

    game_id: str
    seats: list[int]


@dataclass(frozen=True)
class BotProfile:
    """A bot's profile: its games that have not ended."""

    bot_id: str
    name: str
    created_at: float
    games: list[BotGame]
    webhook_url: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BotProfile:
        games = [BotGame(g["game_id"], listed(g, "seats")) for g in listed(data, "games")]
        return cls(data["bot_id"], data["name"], float(data.get("created_at", 0.0)), games, data.get("webhook_url"))


@dataclass(frozen=True)
class WebhookSecret:
    """A new webhook secret (shown only once); until ``previous_secret_valid_until`` (Unix
    seconds) deliveries are signed by both the new and the previous one."""

    bot_id: str
    webhook_secret: str
    previous_secret_valid_until: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WebhookSecret:
        return cls(data["bot_id"], data["webhook_secret"], float(data["previous_secret_valid_until"]))


@dataclass(frozen=True)
class Delivery:
    """One attempt at POSTing a decision to the bot's webhook: the receiver's ``status``
    (``None``: no answer), or the ``error`` (``None``: delivered), and the next retry."""

    webhook_id: str
    game_id: str
    seat: int
    version: int
    attempt: int
    at: float
    url: str
    status: int | None
    error: str | None
    duration_ms: float
    response_truncated: bool
    next_retry_at: float | None
    #: The decision's key (see :class:`Decision`): one delivery, and one ``webhook_id``, per key.
    key: str = ""

    @property
    def delivered(self) -> bool:
        return self.error is None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delivery:
        return cls(
            data["webhook_id"],
            data["game_id"],
            int(data["seat"]),
            int(data["version"]),
            int(data["attempt"]),
            float(data["at"]),
            data.get("url", ""),
            data.get("status"),
            data.get("error"),
            float(data.get("duration_ms", 0.0)),
            bool(data.get("response_truncated", False)),
            data.get("next_retry_at"),
            str(data.get("key", "")),
        )


@dataclass(frozen=True)
class Decision:
    """A decision waiting for a bot: the game, its seat, the game's ``version``, the
    ``deadline`` when the clock plays it, and the seat's ``view`` with its legal moves.
    ``key`` stays the same while the seat's choices in this turn do (another seat's answer
    to the upcard leaves it unless it changes the seat's legal moves): a bot that waits on
    the decision gives it as ``skip`` to the next poll."""

    game_id: str
    seat: int
    version: int
    deadline: float | None
    view: GameView
    key: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            data["game_id"],
            int(data["seat"]),
            int(data["version"]),
            data.get("deadline"),
            GameView.from_json(data["view"]),
            str(data.get("key") or ""),
        )


@dataclass(frozen=True)
class DecisionList:
    """The decisions waiting for a bot, ``games``: how many games it sits in that have not
    ended, and ``skipped``: the keys of the skipped decisions that are still waiting."""

    decisions: list[Decision]
    games: int
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DecisionList:
        return cls(
            [Decision.from_json(d) for d in listed(data, "decisions")],
            int(data.get("games", 0)),
            [str(k) for k in listed(data, "skipped")],
        )
