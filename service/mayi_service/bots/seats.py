"""Bot accounts: registration, tokens, webhook secrets, the games a bot sits in, and its
decisions waiting across those games (their keys: :mod:`mayi_service.storage.bots`).

The table's meta names the bot in each bot seat (``bot_ids``): the bots a commit wakes.

A bot's seats hold, in the game's token map, not the bot token's hash but
:func:`seat_digest` of its id: a token rotation then changes one lookup key and leaves
every game untouched.

Threat model of the webhook secret: the service must sign with it, so it is kept as it
is (not hashed) in the bot's account; whoever can read this Redis can read the secrets and,
as well, play any game. The secret is shown to the bot only at registration and rotation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mayi_engine as engine
from mayi_service.bots.polls import Polls, is_bot_token, unauthorized
from mayi_service.bots.wakes import Deliveries, Wakes
from mayi_service.play.tables import new_token, token_hash
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage.bots import BotStore
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import GameRepository

#: Webhook secrets: ``whsec_`` and base64 of 32 random bytes (the Standard Webhooks form).
SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """A fresh webhook signing secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def seat_digest(bot_id: str) -> str:
    """What stands for a bot in a game's token map (never a hash of any token)."""
    return hashlib.sha256(f"bot:{bot_id}".encode()).hexdigest()


@dataclass
class BotRecord:
    id: str
    name: str
    created_at: float
    webhook_url: str | None
    secret: str
    old_secret: str | None


class Bots(Polls, Wakes):
    """Bot accounts and their decisions, over the service's Redis (a commit listener of
    :class:`~mayi_service.play.games.Games`: each commit wakes the bots it gives a decision, and
    hands the webhook bots' to ``deliveries``)."""

    def __init__(
        self,
        repo: GameRepository,
        *,
        deliveries: Deliveries | None = None,
        secret_overlap: float = 24 * 3600,
        idle_ttl: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repo = repo
        self.store = BotStore(repo)
        self.deliveries = deliveries
        self.clock = clock
        #: How long the previous secret still signs (beside the new one) after a rotation.
        self.secret_overlap = secret_overlap
        #: A bot's keys expire after this many seconds without a request made with its token
        #: (0: never). The token lookup is refreshed on every use (GETEX), the rest at most
        #: once per ``touch_seconds`` per process.
        self.idle_ttl = idle_ttl
        self.touch_seconds = 3600.0
        self._touched: dict[str, float] = {}
        #: The states :meth:`page` parsed last, by their JSON text, oldest first (see :meth:`_state`).
        self._states: dict[str, engine.State] = {}

    # -- accounts -------------------------------------------------------------
    def register(self, name: str, webhook_url: str | None) -> dict[str, Any]:
        """A new bot: its id, token and webhook secret (the token and secret shown only here)."""
        bot_id = "b_" + secrets.token_urlsafe(9)
        token = new_token("bot")
        secret = new_secret()
        fields = {"name": name, "created_at": repr(self.clock()), "token_hash": token_hash(token), "secret": secret}
        if webhook_url:
            fields["webhook_url"] = webhook_url
        self.store.create(bot_id, fields, token_hash(token), self.idle_ttl)
        return {"bot_id": bot_id, "name": name, "token": token, "webhook_secret": secret, "webhook_url": webhook_url}

    def bot_id_for(self, token: str | None) -> str | None:
        """The bot a token belongs to (``None``: not a bot token, or no longer valid)."""
        if not is_bot_token(token):
            return None
        bot_id = self.store.bot_of(token_hash(str(token)), self.idle_ttl)  # used: the account lives on
        if bot_id is not None:
            self.touch(bot_id)
        return bot_id

    def touch(self, bot_id: str, force: bool = False) -> None:
        """Push back the expiry of the bot's account (at most once per ``touch_seconds`` in
        this process, unless ``force``)."""
        if not self.idle_ttl:
            return
        now = time.monotonic()
        if not force and now - self._touched.get(bot_id, -self.touch_seconds) < self.touch_seconds:
            return
        if len(self._touched) > 10000:
            self._touched.clear()
        self._touched[bot_id] = now
        self.store.expire(bot_id, self.idle_ttl)

    def require(self, token: str | None) -> str:
        """The bot id of the caller's token, or 401 naming what is wrong."""
        if not token:
            raise ServiceError(
                Problem.UNAUTHORIZED,
                "This needs a bot token: send 'Authorization: Bearer <token>' with the token POST /v1/bots gave",
                {"WWW-Authenticate": 'Bearer realm="mayi"'},
            )
        bot_id = self.bot_id_for(token)
        if bot_id is None:
            raise unauthorized()
        return bot_id

    def load(self, bot_id: str) -> BotRecord:
        data = self.store.account(bot_id)
        if not data:
            raise ServiceError(Problem.UNAUTHORIZED, "Authorization: this bot no longer exists")
        old = data.get("old_secret")
        if old and float(data.get("old_secret_until", "0")) < self.clock():
            old = None
        return BotRecord(
            bot_id, data["name"], float(data["created_at"]), data.get("webhook_url") or None, data["secret"], old
        )

    def profile(self, bot_id: str) -> dict[str, Any]:
        bot = self.load(bot_id)
        games = [{"game_id": g, "seats": seats} for g, seats in sorted(self.seats_of(bot_id).items())]
        return {
            "bot_id": bot.id,
            "name": bot.name,
            "created_at": bot.created_at,
            "webhook_url": bot.webhook_url,
            "games": games,
        }

    def rotate_token(self, bot_id: str, old_token: str) -> dict[str, Any]:
        """A new token; the old one stops working at once (the bot's seats stay its own)."""
        token = new_token("bot")
        self.store.replace_token(bot_id, token_hash(old_token), token_hash(token), self.idle_ttl)
        return {"bot_id": bot_id, "token": token}

    def rotate_secret(self, bot_id: str) -> dict[str, Any]:
        """A new webhook secret; deliveries carry signatures by both for ``secret_overlap`` seconds."""
        bot = self.load(bot_id)
        secret = new_secret()
        until = self.clock() + self.secret_overlap
        self.store.set_fields(bot_id, {"secret": secret, "old_secret": bot.secret, "old_secret_until": repr(until)})
        return {"bot_id": bot_id, "webhook_secret": secret, "previous_secret_valid_until": until}

    def set_webhook(self, bot_id: str, url: str | None) -> None:
        if url:
            self.store.set_fields(bot_id, {"webhook_url": url})
        else:
            self.store.drop_field(bot_id, "webhook_url")

    # -- seats ----------------------------------------------------------------
    def token_digest(self, token: str) -> str:
        """What stands for ``token`` in a game's token map: a bot's :func:`seat_digest`, else its hash."""
        bot_id = self.bot_id_for(token)
        return seat_digest(bot_id) if bot_id else token_hash(token)

    def load_with_seat(self, game_id: str, token: str) -> tuple[GameRecord | None, int | None]:
        """The game and the seat ``token`` holds there (``None``: none), in one round trip on a
        single Redis: a bot token's lookup (:meth:`bot_id_for`, with the same expiry refresh) is
        made by the game's load script. On a cluster the lookup lives in another slot: it is
        a call of its own, before the load. (The hook :class:`Games` calls to find the caller's seat.)"""
        if not is_bot_token(token):
            return self.repo.load_with_seat(game_id, token_hash(token))
        if not self.repo.single:
            return self.repo.load_with_seat(game_id, self.token_digest(token))
        lookup = self.store.token_key(token_hash(token))
        record, tokens, bot_id = self.repo.load_with_lookup(game_id, lookup, self.idle_ttl)
        if bot_id is None:
            return record, None  # no longer a valid token: it holds no seat
        self.touch(bot_id)
        return record, self.repo.seat_of(tokens, seat_digest(bot_id))

    def took_seat(self, bot_id: str, game_id: str, seat: int) -> None:
        """Remember that ``bot_id`` holds ``seat`` at ``game_id`` (both ways)."""
        seats = self.seats_of(bot_id).get(game_id, [])
        self.store.set_seats(bot_id, game_id, {*seats, seat}, self.idle_ttl)
        # The seat's commit (which may have started the game) came before the bot's games were
        # written: wake it again, so that its poll sees this game.
        self.wake(bot_id, game_id)

    def seats_of(self, bot_id: str) -> dict[str, list[int]]:
        """The games the bot sits in (and has not seen finish), with its seats in each."""
        return self.store.seats_of(bot_id)


def seat_for_bot(registry: Bots, game_id: str, token: str | None) -> tuple[str, str, str] | None:
    """For a seat taken with a bot token: the bot id, what stands for it in the game's token
    map, and the token (``None``: not a bot token). 401 for a bot token no longer valid, 409
    when the bot already sits at this game."""
    if not is_bot_token(token):
        return None
    bot_id = registry.require(token)
    if game_id in registry.seats_of(bot_id):
        raise ServiceError(Problem.BOT_ALREADY_SEATED, f"This bot already holds a seat at game {game_id}")
    return bot_id, seat_digest(bot_id), str(token)


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks signature ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()
