"""The Python SDK of the May I game service.

>>> from mayi_sdk import Client
>>> client = Client("http://127.0.0.1:8000")
>>> client.base_url
'http://127.0.0.1:8000'
"""

from __future__ import annotations

from . import errors, helpers
from .bot import Bot
from .client import Client, operations
from .errors import ApiError, ResponseError, TransportError
from .local import LocalGame, play_local
from .models import (
    ClaimWindow,
    Contract,
    CreatedGame,
    Event,
    EventPage,
    GamePage,
    GameSummary,
    GameView,
    Health,
    IssuedSeat,
    Joker,
    LegalMove,
    Meld,
    Replay,
    Result,
    Round,
    Seat,
    TakenSeat,
)

__all__ = [
    "ApiError",
    "Bot",
    "ClaimWindow",
    "Client",
    "Contract",
    "CreatedGame",
    "Event",
    "EventPage",
    "GamePage",
    "GameSummary",
    "GameView",
    "Health",
    "IssuedSeat",
    "Joker",
    "LegalMove",
    "LocalGame",
    "Meld",
    "Replay",
    "ResponseError",
    "Result",
    "Round",
    "Seat",
    "TakenSeat",
    "TransportError",
    "errors",
    "helpers",
    "operations",
    "play_local",
]
