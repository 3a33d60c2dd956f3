"""Typed results of the API: views, legal moves, melds, events, tables, bots, the ladder,
the variants.

Each is a frozen dataclass read from the API's JSON by ``from_json``; fields the
server adds later are kept, unread, in ``raw``. Card codes stay strings (``"TH"``,
``"JK"``), as the API writes them. Import them from here (``mayi_sdk.models``); the
modules of this package group them by part of the API.
"""

from __future__ import annotations

from .bots import BotAccount, BotGame, BotProfile, Decision, DecisionList, Delivery, WebhookSecret
from .events import Event, EventPage
from .games import MOVE_PATHS, ClaimWindow, Contract, GameView, Joker, LegalMove, Meld, Result, Round, Seat
from .ladder import (
    LadderBot,
    LadderEntry,
    LadderMatch,
    LadderResult,
    LadderSeat,
    LadderStanding,
    Leaderboard,
    RatingPoint,
)
from .tables import CreatedGame, GamePage, GameSummary, Health, IssuedSeat, Replay, TakenSeat
from .variants import ClaimRules, OptionSpec, Variant, VariantRound

__all__ = [
    "MOVE_PATHS",
    "BotAccount",
    "BotGame",
    "BotProfile",
    "ClaimRules",
    "ClaimWindow",
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
    "Meld",
    "OptionSpec",
    "RatingPoint",
    "Replay",
    "Result",
    "Round",
    "Seat",
    "TakenSeat",
    "Variant",
    "VariantRound",
    "WebhookSecret",
]
