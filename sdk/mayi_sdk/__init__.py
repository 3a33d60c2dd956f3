"""The Python SDK of the May I game service.

>>> from mayi_sdk import Client
>>> client = Client("http://127.0.0.1:8000")
>>> client.base_url
'http://127.0.0.1:8000'
"""

from __future__ import annotations

from . import cards, errors, helpers, models, webhooks
from .bot import WAIT, Bot, Wait
from .client import Client, operations
from .errors import ApiError, ResponseError, TransportError
from .local import LocalGame, play_local
from .models import *  # noqa: F403 (every typed result: mayi_sdk.models.__all__)
from .runners import RunStats, run_polling

__all__ = [
    "WAIT",
    "ApiError",
    "Bot",
    "Client",
    "LocalGame",
    "ResponseError",
    "RunStats",
    "TransportError",
    "Wait",
    "cards",
    "errors",
    "helpers",
    "operations",
    "play_local",
    "run_polling",
    "webhooks",
    *models.__all__,
]
