"""The bots' Redis keys: accounts, token lookups, the games each bot sits in, its wake
number, and what a decisions poll reads.

Keys (one hash tag per bot, ``{bot:<id>}``, so a bot's keys share a cluster slot):

* ``<prefix>:{bot:<id>}:bot`` — hash: ``name``, ``created_at``, ``token_hash`` (SHA-256 of
  the token: the token itself is never stored), ``secret`` and, during a rotation,
  ``old_secret`` / ``old_secret_until``, ``webhook_url``.
* ``<prefix>:{bot:<id>}:games`` — hash ``game_id`` → JSON list of the seats it holds there.
* ``<prefix>:{bot:<id>}:wake`` — a short stream; one entry per commit that may have given the
  bot a decision (numbered by ``<prefix>:{bot:<id>}:wake-seq``). Long-polls wait on it
  through the shared-wait hub (:mod:`.hub`), so a waiting bot holds no Redis connection.
* ``<prefix>:{bot:<id>}:deliveries`` — its webhook delivery log (:mod:`.deliveries`).
* ``<prefix>:{index}:bot-token:<token hash>`` → bot id (the token lookup; on a Redis Cluster
  ``<prefix>:{bot-token:<token hash>}``: see ``GameRepository.lookup_key``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mayi_service.storage import codec
from mayi_service.storage.leases import lease_script
from mayi_service.storage.repository import GameRepository


def bot_key(prefix: str, bot_id: str) -> str:
    """The key of the hash of bot ``bot_id``'s account, under ``prefix``."""
    return f"{prefix}:{{bot:{bot_id}}}:bot"


def log_key(prefix: str, bot_id: str) -> str:
    """The key of bot ``bot_id``'s webhook delivery log, under ``prefix``."""
    return f"{prefix}:{{bot:{bot_id}}}:deliveries"


@dataclass(frozen=True)
class Lease:
    """A client's waiting-slot lease the poll script takes (``op="take"``) or gives back
    (``op="give"``): its lease set ``key``, its id, the client's ``limit``, its length in ms."""

    key: str
    lease: str
    op: str
    limit: int = 0
    ms: int = 0


@dataclass(frozen=True)
class PollRead:
    """What a decisions poll reads: the bot's wake number, the games it sits in with its
    seats, the hashes of those games (only those read with them), and whether a lease was taken."""

    seq: int
    held: dict[str, list[int]]
    hashes: dict[str, dict[bytes, bytes]]
    took: bool


class BotStore:
    """The bots' keys in the game Redis of ``repo``."""

    def __init__(self, repo: GameRepository) -> None:
        self.repo = repo
        self.r = repo.r
        self.prefix = repo.prefix
        self._poll = self.r.register_script(lease_script("poll"))
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
        """The lookup of the bot whose token hashes to ``digest``."""
        return self.repo.lookup_key("bot-token", digest)

    def wake_keys(self, bot_id: str) -> tuple[str, str, str]:
        """The keys ``wake.lua`` names for a bot: its wake number, wake stream and account hash."""
        return self.wake_seq_key(bot_id), self.wake_key(bot_id), self.bot_key(bot_id)

    def account_keys(self, bot_id: str) -> list[str]:
        """The keys of a bot's account that expire when it is not used (not its token lookup)."""
        return [
            self.bot_key(bot_id),
            self.games_key(bot_id),
            self.wake_key(bot_id),
            self.wake_seq_key(bot_id),
            log_key(self.prefix, bot_id),
        ]

    # -- accounts -------------------------------------------------------------
    def create(self, bot_id: str, fields: Mapping[str, str], digest: str, ttl: int) -> None:
        """Write a new account and its token lookup (``digest``), expiring in ``ttl`` s (0: never)."""
        pipe = self.r.pipeline()
        pipe.hset(self.bot_key(bot_id), mapping=dict(fields))
        pipe.set(self.token_key(digest), bot_id, ex=ttl or None)
        if ttl:
            pipe.expire(self.bot_key(bot_id), ttl)
        pipe.execute()

    def bot_of(self, digest: str, ttl: int) -> str | None:
        """The bot whose token hashes to ``digest`` (``None``: none); with a ``ttl``, the
        lookup's expiry is pushed back to it."""
        key = self.token_key(digest)
        found = self.r.getex(key, ex=ttl) if ttl else self.r.get(key)
        return None if found is None else codec.text(found)

    def expire(self, bot_id: str, ttl: int) -> None:
        """Make every key of the account expire in ``ttl`` seconds."""
        pipe = self.r.pipeline(transaction=False)
        for key in self.account_keys(bot_id):
            pipe.expire(key, ttl)
        pipe.execute()

    def account(self, bot_id: str) -> dict[str, str]:
        """The fields of the account (empty: no such bot)."""
        return {codec.text(k): codec.text(v) for k, v in self.r.hgetall(self.bot_key(bot_id)).items()}

    def replace_token(self, bot_id: str, old: str, new: str, ttl: int) -> None:
        """Make the token hashing to ``new`` the bot's, in place of the one hashing to ``old``."""
        pipe = self.r.pipeline()
        pipe.delete(self.token_key(old))
        pipe.set(self.token_key(new), bot_id, ex=ttl or None)
        pipe.hset(self.bot_key(bot_id), "token_hash", new)
        pipe.execute()

    def set_fields(self, bot_id: str, fields: Mapping[str, str]) -> None:
        self.r.hset(self.bot_key(bot_id), mapping=dict(fields))

    def drop_field(self, bot_id: str, name: str) -> None:
        self.r.hdel(self.bot_key(bot_id), name)

    # -- seats ----------------------------------------------------------------
    def set_seats(self, bot_id: str, game_id: str, seats: Iterable[int], ttl: int) -> None:
        """Record the bot's ``seats`` at ``game_id`` (the games hash expiring in ``ttl`` s; 0: never)."""
        pipe = self.r.pipeline()
        pipe.hset(self.games_key(bot_id), game_id, json.dumps(sorted(seats)))
        if ttl:
            pipe.expire(self.games_key(bot_id), ttl)
        pipe.execute()

    def seats_of(self, bot_id: str) -> dict[str, list[int]]:
        """The games the bot sits in (and has not seen finish), with its seats in each."""
        return _seats(self.r.hgetall(self.games_key(bot_id)).items())

    def forget_games(self, bot_id: str, game_ids: Iterable[str]) -> None:
        """Drop ``game_ids`` from the games the bot sits in."""
        self.r.hdel(self.games_key(bot_id), *game_ids)

    def game_hashes(self, game_ids: list[str]) -> dict[str, dict[bytes, bytes]]:
        """The stored hash of each game, one pipeline."""
        pipe = self.r.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hgetall(self.repo.game_key(game_id))
        return dict(zip(game_ids, pipe.execute(), strict=True))

    def wake_seq(self, bot_id: str) -> int:
        """The bot's wake number: how many wakes it has had."""
        found = self.r.get(self.wake_seq_key(bot_id))
        return int(found) if found else 0

    # -- the decisions poll ------------------------------------------------------
    def poll_read(
        self, digest: str, bot_id: str | None, ttl: int, lease: Lease | None = None
    ) -> tuple[str, PollRead] | None:
        """What a decisions poll reads for the bot ``bot_id`` (``None``: the one whose token
        hashes to ``digest``, its lookup's expiry pushed back to ``ttl`` s; ``None`` is
        answered for an unknown token), the wake number read before the games. On a single
        Redis one script, also taking or giving back ``lease``; on a cluster, where these keys
        live in different slots, separate calls (a lease is then only given back, never
        taken, and the games' hashes are left unread)."""
        if self.repo.single:
            keys = [self.token_key(digest)]
            args: list[Any] = [bot_id or "", ttl, "", 0, 0, *self._poll_key_parts, ""]
            if lease is not None:
                keys.append(lease.key)
                args[2:5] = [lease.op, lease.limit, lease.ms]
                args[10] = lease.lease
            found = self.repo.run(self._poll, keys, args)
            if found is None:
                return None
            raw_bot, seq, raw_games, hashes, took = found
            held = _seats(zip(raw_games[::2], raw_games[1::2], strict=True))
            read = {game_id: _pairs(h) for game_id, h in zip(held, hashes, strict=True)}
            return codec.text(raw_bot), PollRead(int(seq), held, read, bool(took))
        if lease is not None and lease.op == "give":
            self.repo.drop_lease(lease.key, lease.lease)
        if bot_id is None:
            bot_id = self.bot_of(digest, ttl)
            if bot_id is None:
                return None
        pipe = self.r.pipeline(transaction=False)  # in order: the wake number first
        pipe.get(self.wake_seq_key(bot_id))
        pipe.hgetall(self.games_key(bot_id))
        seq, raw = pipe.execute()
        return bot_id, PollRead(int(seq or 0), _seats(raw.items()), {}, False)


def _seats(pairs: Iterable[tuple[bytes, bytes]]) -> dict[str, list[int]]:
    return {codec.text(game_id): json.loads(seats) for game_id, seats in pairs}


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A hash as HGETALL's flat reply to a script lists it: field, value, field, value..."""
    return dict(zip(flat[::2], flat[1::2], strict=True))
