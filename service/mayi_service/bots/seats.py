"""Bot accounts: registration, tokens, webhook secrets, the games a bot sits in, and its
decisions waiting across those games.

Redis keys (one hash tag per bot, ``{bot:<id>}``, so a bot's keys share a cluster slot):

* ``<prefix>:{bot:<id>}:bot`` — hash: ``name``, ``created_at``, ``token_hash`` (SHA-256 of
  the token: the token itself is never stored), ``secret`` and, during a rotation,
  ``old_secret`` / ``old_secret_until``, ``webhook_url``.
* ``<prefix>:{bot:<id>}:games`` — hash ``game_id`` → JSON list of the seats it holds there.
* ``<prefix>:{bot:<id>}:wake`` — a short stream; one entry per commit that may have given the
  bot a decision (numbered by ``<prefix>:{bot:<id>}:wake-seq``). Long-polls wait on it
  through the shared-wait hub (:mod:`.hub`), so a waiting bot holds no Redis connection.
* ``<prefix>:{index}:bot-token:<token hash>`` → bot id (the token lookup; on a Redis Cluster
  ``<prefix>:{bot-token:<token hash>}``: see ``GameRepository.lookup_key``).

The table's meta names the bot in each bot seat (``bot_ids``): the bots a commit wakes.

A bot's seats hold, in the game's token map, not the bot token's hash but
:func:`seat_digest` of its id: a token rotation then changes one lookup key and leaves
every game untouched.

Threat model of the webhook secret: the service must sign with it, so it is kept as it
is (not hashed) in the bot's hash; whoever can read this Redis can read the secrets and,
as well, play any game. The secret is shown to the bot only at registration and rotation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis

import mayi_engine as engine
from mayi_service.bots.polls import Polls, is_bot_token, unauthorized
from mayi_service.bots.wakes import Deliveries, Wakes
from mayi_service.play.tables import new_token, token_hash
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage.leases import lease_script
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


def bot_key(prefix: str, bot_id: str) -> str:
    """The key of the hash of bot ``bot_id``'s account, under ``prefix``."""
    return f"{prefix}:{{bot:{bot_id}}}:bot"


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
        self.r: redis.Redis = repo.r
        self.prefix = repo.prefix
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
        self._poll_script = self.r.register_script(lease_script("poll"))
        #: The states :meth:`page` parsed last, by their JSON text, oldest first (see :meth:`_state`).
        self._states: dict[str, engine.State] = {}
        # The keys the poll script builds, cut where the bot id or game id goes.
        bot_head, seq_tail = self.wake_seq_key("\0").split("\0")
        game_head, game_tail = repo.game_key("\0").split("\0")
        self._poll_key_parts = (bot_head, seq_tail, self.games_key("\0").split("\0")[1], game_head, game_tail)

    # -- keys ---------------------------------------------------------------
    def bot_key(self, bot_id: str) -> str:
        return bot_key(self.prefix, bot_id)

    def games_key(self, bot_id: str) -> str:
        return f"{self.prefix}:{{bot:{bot_id}}}:games"

    def wake_key(self, bot_id: str) -> str:
        return f"{self.prefix}:{{bot:{bot_id}}}:wake"

    def wake_seq_key(self, bot_id: str) -> str:
        return f"{self.prefix}:{{bot:{bot_id}}}:wake-seq"

    def token_key(self, digest: str) -> str:
        return self.repo.lookup_key("bot-token", digest)

    def wake_keys(self, bot_id: str) -> tuple[str, str, str]:
        """The keys ``wake.lua`` names for a bot: its wake number, wake stream and account hash."""
        return self.wake_seq_key(bot_id), self.wake_key(bot_id), self.bot_key(bot_id)

    # -- accounts -------------------------------------------------------------
    def register(self, name: str, webhook_url: str | None) -> dict[str, Any]:
        """A new bot: its id, token and webhook secret (the token and secret shown only here)."""
        bot_id = "b_" + secrets.token_urlsafe(9)
        token = new_token("bot")
        secret = new_secret()
        fields = {"name": name, "created_at": repr(self.clock()), "token_hash": token_hash(token), "secret": secret}
        if webhook_url:
            fields["webhook_url"] = webhook_url
        pipe = self.r.pipeline()
        pipe.hset(self.bot_key(bot_id), mapping=fields)
        pipe.set(self.token_key(token_hash(token)), bot_id, ex=self.idle_ttl or None)
        if self.idle_ttl:
            pipe.expire(self.bot_key(bot_id), self.idle_ttl)
        pipe.execute()
        return {"bot_id": bot_id, "name": name, "token": token, "webhook_secret": secret, "webhook_url": webhook_url}

    def bot_id_for(self, token: str | None) -> str | None:
        """The bot a token belongs to (``None``: not a bot token, or no longer valid)."""
        if not is_bot_token(token):
            return None
        key = self.token_key(token_hash(str(token)))
        if not self.idle_ttl:
            found = self.r.get(key)
            return found.decode() if isinstance(found, bytes) else found
        found = self.r.getex(key, ex=self.idle_ttl)  # used: the account lives on
        if found is None:
            return None
        bot_id = found.decode() if isinstance(found, bytes) else str(found)
        self.touch(bot_id)
        return bot_id

    def account_keys(self, bot_id: str) -> list[str]:
        """The keys of a bot's account that expire when it is not used (not its token lookup)."""
        return [
            self.bot_key(bot_id),
            self.games_key(bot_id),
            self.wake_key(bot_id),
            self.wake_seq_key(bot_id),
            f"{self.prefix}:{{bot:{bot_id}}}:deliveries",
        ]

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
        pipe = self.r.pipeline(transaction=False)
        for key in self.account_keys(bot_id):
            pipe.expire(key, self.idle_ttl)
        pipe.execute()

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
        data = {k.decode(): v.decode() for k, v in self.r.hgetall(self.bot_key(bot_id)).items()}
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
        pipe = self.r.pipeline()
        pipe.delete(self.token_key(token_hash(old_token)))
        pipe.set(self.token_key(token_hash(token)), bot_id, ex=self.idle_ttl or None)
        pipe.hset(self.bot_key(bot_id), "token_hash", token_hash(token))
        pipe.execute()
        return {"bot_id": bot_id, "token": token}

    def rotate_secret(self, bot_id: str) -> dict[str, Any]:
        """A new webhook secret; deliveries carry signatures by both for ``secret_overlap`` seconds."""
        bot = self.load(bot_id)
        secret = new_secret()
        until = self.clock() + self.secret_overlap
        self.r.hset(
            self.bot_key(bot_id),
            mapping={"secret": secret, "old_secret": bot.secret, "old_secret_until": repr(until)},
        )
        return {"bot_id": bot_id, "webhook_secret": secret, "previous_secret_valid_until": until}

    def set_webhook(self, bot_id: str, url: str | None) -> None:
        if url:
            self.r.hset(self.bot_key(bot_id), "webhook_url", url)
        else:
            self.r.hdel(self.bot_key(bot_id), "webhook_url")

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
        record, tokens, bot_id = self.repo.load_with_lookup(game_id, self.token_key(token_hash(token)), self.idle_ttl)
        if bot_id is None:
            return record, None  # no longer a valid token: it holds no seat
        self.touch(bot_id)
        return record, self.repo.seat_of(tokens, seat_digest(bot_id))

    def took_seat(self, bot_id: str, game_id: str, seat: int) -> None:
        """Remember that ``bot_id`` holds ``seat`` at ``game_id`` (both ways)."""
        seats = self.seats_of(bot_id).get(game_id, [])
        pipe = self.r.pipeline()
        pipe.hset(self.games_key(bot_id), game_id, json.dumps(sorted({*seats, seat})))
        if self.idle_ttl:
            pipe.expire(self.games_key(bot_id), self.idle_ttl)
        pipe.execute()
        # The seat's commit (which may have started the game) came before the bot's games were
        # written: wake it again, so that its poll sees this game.
        self.wake(bot_id, game_id)

    def seats_of(self, bot_id: str) -> dict[str, list[int]]:
        """The games the bot sits in (and has not seen finish), with its seats in each."""
        raw = self.r.hgetall(self.games_key(bot_id))
        return {k.decode(): json.loads(v) for k, v in raw.items()}


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
