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
import contextlib
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import redis

import mayi_engine as engine
from mayi_engine.state import GameStatus
from mayi_service.api.problems import Problem, ServiceError
from mayi_service.bots.decisions import decision_entry, decision_key
from mayi_service.play.games import (
    AddressSlotsFull,
    ProcessSlotsFull,
    StreamSlotsFull,
    Viewer,
    WaitSlot,
    game_view,
    new_token,
    token_hash,
)
from mayi_service.play.listeners import Commit
from mayi_service.storage import codec
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.leases import lease_script
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import GameRepository

if TYPE_CHECKING:
    from mayi_service.server.deadlines import HangUp

#: Bot tokens start with this (seat tokens with ``mayi_seat_``).
BOT_TOKEN_PREFIX = "mayi_bot_"
#: Webhook secrets: ``whsec_`` and base64 of 32 random bytes (the Standard Webhooks form).
SECRET_PREFIX = "whsec_"
#: Wake entries kept per bot (a waiter only needs the latest number).
WAKE_KEEP = 100
#: Game states a process keeps parsed for the decisions polls (see ``Bots._state``).
STATES_KEPT = 64


def new_secret() -> str:
    """A fresh webhook signing secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def seat_digest(bot_id: str) -> str:
    """What stands for a bot in a game's token map (never a hash of any token)."""
    return hashlib.sha256(f"bot:{bot_id}".encode()).hexdigest()


def is_bot_token(token: str | None) -> bool:
    return bool(token) and str(token).startswith(BOT_TOKEN_PREFIX)


@dataclass
class DecisionPage:
    """What a decisions poll answers: the ``decisions`` (each :func:`decision_entry`), the
    number of ``games`` not ended, the keys of the skipped decisions still waiting, and
    the earliest time one of those may change on the clock alone (``None``: none)."""

    decisions: list[dict[str, Any]]
    games: int
    skipped: list[str] = field(default_factory=list)
    changes_at: float | None = None


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


class Deliveries(Protocol):
    """Where the decisions of the woken webhook bots go (:class:`mayi_service.bots.webhooks.Webhooks`)."""

    def on_commit(
        self,
        record: GameRecord,
        seats: dict[int, str],
        state: engine.State | None = None,
        urls: dict[str, str | None] | None = None,
    ) -> None:
        """Deliver the decisions of the woken ``seats`` (seat → bot id) at ``record``."""
        ...


class Bots:
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
            raise _unauthorized()
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
        batch = self.repo.follow_ups()
        batch.wake(self.wake_keys(bot_id), game_id, WAKE_KEEP, False)
        batch.send()

    def seats_of(self, bot_id: str) -> dict[str, list[int]]:
        """The games the bot sits in (and has not seen finish), with its seats in each."""
        raw = self.r.hgetall(self.games_key(bot_id))
        return {k.decode(): json.loads(v) for k, v in raw.items()}

    # -- decisions ------------------------------------------------------------
    def page(
        self,
        bot_id: str,
        now: float | None = None,
        held: dict[str, list[int]] | None = None,
        skip: frozenset[str] = frozenset(),
        read: dict[str, Any] | None = None,
    ) -> DecisionPage:
        """Every decision waiting for the bot now (one per game and seat that must act) but
        those whose ``key`` is in ``skip`` (the bot waits on them), and the number of games
        it sits in that have not ended (``held``: its seats, if read; ``read``: the hashes of
        some of those games, if read with them)."""
        now = self.clock() if now is None else now
        held = self.seats_of(bot_id) if held is None else held
        if not held:
            return DecisionPage([], 0)
        read = dict(read or {})
        missing = [g for g in held if g not in read]
        if missing:
            pipe = self.r.pipeline(transaction=False)
            for game_id in missing:
                pipe.hgetall(self.repo.game_key(game_id))
            read.update(zip(missing, pipe.execute(), strict=True))
        loaded = (self.repo.record_of(g, read[g]) for g in held)
        records = {r.id: r for r in loaded if r is not None}
        gone = [g for g in held if g not in records or records[g].status == GameStatus.FINISHED]
        if gone:
            self.r.hdel(self.games_key(bot_id), *gone)
        page = DecisionPage([], len(held) - len(gone))
        for game_id, seats in held.items():
            record = records.get(game_id)
            if record is None or record.status != GameStatus.PLAYING or record.state is None:
                continue
            state = self._state(record.state)
            for seat in seats:
                legal = engine.legal_moves(state, seat, now)
                if not legal:
                    continue
                key = decision_key(game_id, state, seat, legal)
                if key in skip:
                    page.skipped.append(key)
                    closes = state.claim_closes_at
                    if closes is not None and closes > now and state.phase is engine.Phase.DRAW:
                        # The window's clock changes the legal moves without a commit.
                        page.changes_at = closes if page.changes_at is None else min(page.changes_at, closes)
                    continue
                page.decisions.append(decision_entry(game_view(record, Viewer(seat), now, state), key))
        return page

    def _state(self, text: str) -> engine.State:
        """The engine state of ``text``, parsed once for the few latest states the polls of
        this process read: a commit wakes every bot of its game that may have a decision,
        and each of their polls reads the same state. (A state is read-only; the ones the
        engine memoises into it, like its legal moves, are the same for every reader.)"""
        found = self._states.get(text)
        if found is None:
            found = self._states[text] = codec.load_state(text)
            if len(self._states) > STATES_KEPT:
                with contextlib.suppress(KeyError, RuntimeError, StopIteration):  # (another thread's)
                    del self._states[next(iter(self._states))]
        return found

    def decisions(
        self, bot_id: str, now: float | None = None, held: dict[str, list[int]] | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Every decision waiting for the bot now, and the number of games it sits in that
        have not ended (:meth:`page` with nothing skipped)."""
        page = self.page(bot_id, now, held)
        return page.decisions, page.games

    def wake_seq(self, bot_id: str) -> int:
        found = self.r.get(self.wake_seq_key(bot_id))
        return int(found) if found else 0

    def _poll_read(
        self, token: str, bot_id: str | None = None, slot: WaitSlot | None = None, op: str = ""
    ) -> tuple[str | None, int, dict[str, list[int]], dict[str, Any], bool]:
        """What a decisions poll reads: the bot id (``None``: ``token`` is not a valid bot
        token), its wake number, :meth:`seats_of`, the hashes of those games, and whether
        it took ``slot``'s count; with a ``bot_id``, no token lookup. ``op``: ``"take"``
        ``slot``'s count (up to its limit), or ``"give"`` it back. On a single Redis all of
        it is one script, one round trip; on a cluster, where these keys live in different
        slots, separate calls (the count is then never taken here, and the games' hashes
        are left to :meth:`page`). The wake number is read before the games."""
        if self.repo.single:
            keys = [self.token_key(token_hash(token))]
            args: list[Any] = [bot_id or "", self.idle_ttl, "", 0, 0, *self._poll_key_parts, ""]
            if slot is not None and op:
                keys.append(slot.key)
                args[2:5] = [op, slot.limit, slot.lease_ms]
                args[10] = slot.lease
            found = self.repo.run(self._poll_script, keys, args)
            if found is None:
                return None, 0, {}, {}, False
            raw_bot, seq, raw_games, hashes, took = found
            if bot_id is None:
                bot_id = raw_bot.decode()
                self.touch(bot_id)
            held = {raw_games[i].decode(): json.loads(raw_games[i + 1]) for i in range(0, len(raw_games), 2)}
            read = {game_id: _pairs(h) for game_id, h in zip(held, hashes, strict=True)}
            return bot_id, int(seq), held, read, bool(took)
        if slot is not None and op == "give":
            self.repo.drop_lease(slot.key, slot.lease)
        if bot_id is None:
            bot_id = self.bot_id_for(token)
            if bot_id is None:
                return None, 0, {}, {}, False
        pipe = self.r.pipeline(transaction=False)  # in order: the wake number first
        pipe.get(self.wake_seq_key(bot_id))
        pipe.hgetall(self.games_key(bot_id))
        seq, raw = pipe.execute()
        return bot_id, int(seq or 0), {k.decode(): json.loads(v) for k, v in raw.items()}, {}, False

    def poll(
        self,
        token: str | None,
        wait: float,
        skip: frozenset[str] = frozenset(),
        slot: WaitSlot | None = None,
        hangup: HangUp | None = None,
    ) -> DecisionPage:
        """The decisions poll of the bot whose token is ``token`` (401 if it is none): the
        decisions waiting now (but those in ``skip``); with none, wait up to ``wait``
        seconds for one. Also returns early when the bot's last game ends (no games left:
        nothing will come). A skipped decision whose claim window closes on the clock
        meanwhile (which changes its legal moves, and so its key, with no commit) is
        looked at again when it closes.

        ``slot``: the caller's waiting slot (the client's limit on waiting polls, counted
        in Redis, and the process's), held while the poll waits; its errors
        (:class:`~mayi_service.play.games.StreamSlotsFull`, ...) are raised only when the poll
        has to wait, so a poll that can answer at once is never refused (nor one woken for
        nothing that waits again: it waits with no slot if none is free then). The slot is given
        back in the read that follows the wait, or, if the poll answers with it still held
        (it found a decision at once), by the caller after the answer is sent
        (``slot.held``): so nothing lies between the page and the answer.

        Round trips on a single Redis: one before a poll answers that finds a decision at
        once (the token lookup, the slot's count, the wake number, the games and their
        hashes: one script, since almost every poll of a bot waits, the slot is taken
        there at once rather than in a round trip of its own once the poll knows it must
        wait), and one after a wake (the same read, which also gives the slot back). A
        client that hangs up mid-wait holds its slot until the wait ends (a wake, or
        ``wait``); with ``hangup`` (the request's :class:`~mayi_service.server.deadlines.HangUp`), at
        once, and the poll answers nothing (nobody reads it). On a cluster, separate calls
        (see :meth:`_poll_read`)."""
        if not is_bot_token(token):
            self.require(token)  # raises: no token, or not a bot token
        take = slot is not None and wait > 0 and slot.take_process()
        took = False
        try:
            bot_id, seen, held, read, took = self._poll_read(str(token), slot=slot, op="take" if take else "")
        finally:
            if slot is not None and take:
                slot.counted(took)
        if bot_id is None:
            raise _unauthorized()
        deadline = time.monotonic() + wait
        woken = waited = False
        try:
            while True:
                page = self.page(bot_id, held=held, skip=skip, read=read)
                left = deadline - time.monotonic()
                if page.decisions or left <= 0 or (page.games == 0 and (woken or held)):
                    return page  # (no games left: those it sat in have ended; nothing will come)
                if page.changes_at is not None:
                    left = min(left, max(0.0, page.changes_at - self.clock()) + 0.005)
                if slot is not None and not slot.held:
                    if not waited:
                        slot.take()  # raises when the client (or this process) holds its limit
                    else:  # woken for nothing: a poll already admitted is never refused midway
                        with contextlib.suppress(StreamSlotsFull, ProcessSlotsFull, AddressSlotsFull):
                            slot.take()
                waited = True
                if hangup is not None:
                    hangup.on_gone = partial(self.repo.hub.interrupt, self.wake_key(bot_id))
                woken = self.repo.hub.wait(self.wake_key(bot_id), seen, left, hangup)
                given = slot is not None and slot.held
                _, seen, held, read, _ = self._poll_read(str(token), bot_id, slot, "give" if given else "")
                if given:
                    slot.counted_down()
                if hangup is not None and hangup.gone:
                    return DecisionPage([], 0)  # the client hung up: nobody reads this answer
        except BaseException:
            if slot is not None:
                with contextlib.suppress(redis.RedisError):
                    slot.give()
            raise

    # -- the commit listener -----------------------------------------------------
    def prepare(self, commit: Commit) -> None:
        """Nothing before a commit: a bot that misses a wake finds its decision at its next poll."""

    def follow(self, commit: Commit, batch: FollowUps) -> Callable[[], None] | None:
        """Wake the bots of the game that may have a decision now (:func:`waking_seats`): each
        gets a wake entry (``wake.lua``, in ``batch``), so its waiting long-polls look again;
        the seat on turn last (while the upcard is offered the others' answers come first:
        Redis answers the woken readers in the order of the entries). Then hand the webhook
        bots' decisions to :attr:`deliveries`, with the ``webhook_url``s the wakes read."""
        record = commit.after
        if not record.meta.bot_ids:
            return None
        seats = waking_seats(record, commit.state, commit.before_state, commit.now)
        turn = commit.state.turn if commit.state is not None else -1
        order = sorted(record.meta.bot_ids, key=lambda pair: (pair[0] == turn, pair[0]))
        bots = list(dict.fromkeys(bot_id for seat, bot_id in order if seat in seats))
        if not bots:
            return None
        urls = self.deliveries is not None and record.status == GameStatus.PLAYING
        woken = {bot_id: batch.wake(self.wake_keys(bot_id), record.id, WAKE_KEEP, urls) for bot_id in bots}
        if not urls:
            return None

        def deliver() -> None:
            found = {bot_id: reply.value for bot_id, reply in woken.items()}
            if self.deliveries is not None and any(found.values()):
                by_seat = {seat: bot_id for seat, bot_id in record.meta.bot_ids if bot_id in found}
                self.deliveries.on_commit(record, by_seat, commit.state, found)

        return deliver


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


def waking_seats(
    record: GameRecord,
    state: engine.State | None = None,
    before: engine.State | None = None,
    now: float | None = None,
) -> set[int]:
    """The bot seats of ``record`` to wake after a commit: those that may have a decision
    (a claimant the upcard waits for, the seat to act), or all of them once the game is
    over (a bot's poll then learns it has no game left). The others are left asleep: a
    commit gives them nothing to do, and a woken poll would only load the game to find
    that out. (Whether a woken seat has legal moves, its poll works out.) ``state``: the
    record's engine state, if the caller has it (the committing step does): else it is read
    from the record.

    ``before``: the engine state the commit replaces, as stored (the one the seats' polls
    last read), when the caller has it; then a seat whose decision the commit leaves as it
    was at ``now`` (the same round, turn, phase, hand and legal moves: the same decision
    ``key``) sleeps on too: a claimant when another seat answers the upcard, the seat on
    turn while its choices stay. Its decision was shown already; a poll waiting on it
    (``skip``) would only find it unchanged. (A change by the clock alone, the claim window
    closing, wakes such a poll by its own timer.)"""
    bots = record.meta.bot_seats
    if not bots or record.status == GameStatus.WAITING:
        return set()
    if record.status != GameStatus.PLAYING or record.state is None:
        return set(bots)
    if state is None:
        state = codec.load_state(record.state)
    seats = {seat for seat in engine.to_act(state) if seat in bots}
    if before is None or now is None or before.round != state.round or before.round_turns != state.round_turns:
        return seats
    return {seat for seat in seats if not _same_decision(before, state, seat, now)}


def _same_decision(before: engine.State, after: engine.State, seat: int, now: float) -> bool:
    """Whether ``seat`` has the same decision (so the same key) in ``before`` and ``after``
    at ``now``, and had one (the caller knows the round and turn are the same)."""
    if before.phase is not after.phase or before.hands[seat] != after.hands[seat]:
        return False
    legal = engine.legal_moves(before, seat, now)
    return bool(legal) and legal == engine.legal_moves(after, seat, now)


def _unauthorized() -> ServiceError:
    return ServiceError(
        Problem.UNAUTHORIZED,
        "Authorization: this is not a valid bot token (a seat token, or a bot token since rotated)",
        {"WWW-Authenticate": 'Bearer realm="mayi"'},
    )


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A hash as HGETALL's flat reply to a script lists it: field, value, field, value..."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks signature ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()
