"""The Python SDK of the May I game service.

>>> from mayi_sdk import Client
>>> client = Client("http://127.0.0.1:8000")
>>> client.base_url
'http://127.0.0.1:8000'
"""

from __future__ import annotations

from . import errors, helpers, webhooks
from .bot import WAIT, Bot, Wait
from .client import Client, operations
from .errors import ApiError, ResponseError, TransportError
from .local import LocalGame, play_local
from .models import (
    BotAccount,
    BotGame,
    BotProfile,
    ClaimWindow,
    Contract,
    CreatedGame,
    Decision,
    DecisionList,
    Delivery,
    Event,
    EventPage,
    GamePage,
    GameSummary,
    GameView,
    Health,
    IssuedSeat,
    Joker,
    LadderBot,
    LadderEntry,
    LadderMatch,
    LadderResult,
    LadderSeat,
    LadderStanding,
    Leaderboard,
    LegalMove,
    Meld,
    RatingPoint,
    Replay,
    Result,
    Round,
    Seat,
    TakenSeat,
    WebhookSecret,
)
from .runners import RunStats, run_polling

__all__ = [
    "WAIT",
    "ApiError",
    "Bot",
    "BotAccount",
    "BotGame",
    "BotProfile",
    "ClaimWindow",
    "Client",
    "Contract",
    "CreatedGame",
    "Decision",
    "DecisionList",
    "Delivery",
    "Event",
    "EventPage",
    "GamePage",
    "GameSummary",
    "GameView",
    "Health",
    "IssuedSeat",
    "Joker",
    "LadderBot",
    "LadderEntry",
    "LadderMatch",
    "LadderResult",
    "LadderSeat",
    "LadderStanding",
    "Leaderboard",
    "LegalMove",
    "LocalGame",
    "Meld",
    "RatingPoint",
    "Replay",
    "ResponseError",
    "Result",
    "Round",
    "RunStats",
    "Seat",
    "TakenSeat",
    "TransportError",
    "Wait",
    "WebhookSecret",
    "errors",
    "helpers",
    "operations",
    "play_local",
    "run_polling",
    "webhooks",
]
