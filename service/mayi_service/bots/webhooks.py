"""Webhook deliveries: each decision waiting for a bot with a ``webhook_url`` is POSTed
there by an RQ job, at least once, signed by the Standard Webhooks specification.

* **When.** After a commit, :meth:`Webhooks.on_commit` enqueues one delivery per woken seat
  of a webhook bot that must act, once per decision (``(game, seat, key)``, the key of
  :func:`mayi_service.play.decisions.decision_key`: another seat's answer to the same
  upcard sends nothing new).
* **What.** The job sends the decision (one entry of ``GET /v1/bots/me/decisions``) only
  while it is still waiting: not after the game ended, the deadline passed, or the seat
  answered. Every attempt carries the same ``webhook-id``.
* **Retries.** One attempt per job run, never sleeping; a failure makes the next due after
  ``MAYI_WEBHOOK_RETRY_SECONDS``, doubled each time (at most 60 s), while that comes before
  the deadline and within ``MAYI_WEBHOOK_MAX_ATTEMPTS``.
* **At least once.** Every delivery not done is in the due-set, leased to the job that
  makes its attempt; the dispatcher of every webhooks worker (:func:`start_dispatcher`)
  enqueues the attempts that fall due and those whose lease ran out (a worker died, Redis
  went away, a job was lost): docs/decisions/0001-webhooks-off-rq-scheduler.md.
* **Where.** Only to public addresses (:mod:`mayi_service.bots.addresses`), the one that
  was checked (:mod:`mayi_service.bots.transport`). Each attempt, and each refused URL, is an
  entry of the bot's delivery log (``GET /v1/bots/me/deliveries``).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rq import Queue

import mayi_engine as engine
from mayi_engine.state import GameStatus
from mayi_service.bots.addresses import RefusedURL, resolve
from mayi_service.bots.transport import post, signed_headers
from mayi_service.config import Settings
from mayi_service.play.decisions import decision_entry, decision_key
from mayi_service.play.games import Viewer
from mayi_service.play.views import game_view
from mayi_service.problem_types import ServiceError
from mayi_service.storage import codec
from mayi_service.storage.connections import UNREACHABLE
from mayi_service.storage.deliveries import DeliveryStore
from mayi_service.storage.loops import start_loop
from mayi_service.storage.repository import GameRecord, GameRepository

if TYPE_CHECKING:
    from mayi_service.bots.seats import Bots

log = logging.getLogger(__name__)

#: The RQ job of one delivery attempt (:func:`mayi_service.jobs.run_delivery`).
DELIVERY_JOB = "mayi_service.jobs.run_delivery"
#: The longest pause between two attempts, in seconds.
MAX_RETRY_DELAY = 60.0
#: How long the "enqueued once" mark of a decision point is kept, in seconds.
DEDUPE_SECONDS = 3600
#: The longest pause of the dispatcher between two looks at the due-set, in seconds.
DISPATCH_SECONDS = 1.0
#: The most attempts the dispatcher enqueues at one look.
DISPATCH_BATCH = 500
#: An attempt's lease beyond its two timeouts (for the lookup and the log), in seconds.
LEASE_MARGIN = 3.0


def queue_name_for(clock_queue: str) -> str:
    """The RQ queue of the deliveries, beside the clock queue (workers take clock jobs first)."""
    return f"{clock_queue}-webhooks"


def retry_delay(attempt: int, base: float) -> float:
    """Seconds between attempt ``attempt`` and the next: ``base``, doubled each time, at most 60."""
    return float(min(MAX_RETRY_DELAY, base * 2 ** (attempt - 1)))


def webhook_id(game_id: str, seat: int, key: str) -> str:
    """The ``webhook-id`` of a decision (the same for each attempt)."""
    return f"msg_{game_id}_{seat}_{key}"


@dataclass(frozen=True)
class Attempt:
    """One attempt of one delivery: the due-set's member."""

    bot_id: str
    game_id: str
    seat: int
    key: str
    attempt: int

    @property
    def member(self) -> str:
        return json.dumps([self.bot_id, self.game_id, self.seat, self.key, self.attempt], separators=(",", ":"))

    @classmethod
    def of(cls, member: str | bytes) -> Attempt:
        bot_id, game_id, seat, key, attempt = json.loads(member)
        return cls(str(bot_id), str(game_id), int(seat), str(key), int(attempt))

    def next(self) -> Attempt:
        return Attempt(self.bot_id, self.game_id, self.seat, self.key, self.attempt + 1)


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


class Webhooks:
    """Enqueues, sends and logs the webhook deliveries of the bots of one repository."""

    def __init__(
        self, repo: GameRepository, queue: Queue | None, settings: Settings, clock: Callable[[], float] = time.time
    ) -> None:
        self.repo = repo
        self.queue = queue
        self.settings = settings
        self.clock = clock
        #: RQ's bound on one attempt (a receiver dripping its answer a byte at a time cannot
        #: hold a worker for longer): the timeouts, plus time for the lookup and the log.
        self.job_timeout = math.ceil(settings.webhook_connect_seconds + settings.webhook_read_seconds) + 10
        #: An attempt's lease: one not ended this long after it was enqueued or started is
        #: enqueued again (shorter than the job's timeout, so that a decision of a 15 s claim
        #: window is still waiting when it is; a slower attempt may be sent twice, with the
        #: same ``webhook-id``).
        self.lease_seconds = settings.webhook_connect_seconds + settings.webhook_read_seconds + LEASE_MARGIN
        self.store = DeliveryStore(
            repo.r,
            repo.prefix,
            queue.connection if queue is not None else None,
            f"{queue.name}:due" if queue is not None else "",
        )

    # -- after a commit (the API's request path: keep it cheap) -----------------
    def on_commit(
        self,
        record: GameRecord,
        seats: dict[int, str],
        state: engine.State | None = None,
        urls: dict[str, str | None] | None = None,
    ) -> None:
        """Enqueue a delivery for each seat of a webhook bot that must act at ``record``
        (``seats``: the woken seats' bot ids; ``state``: the record's engine state, if the
        caller has it), unless that decision was enqueued already.

        ``urls``: the bots' ``webhook_url`` as their wakes read them (in the same script, after
        the commit: :meth:`mayi_service.bots.wakes.Wakes.follow`); ``None``: read here.
        The URL is read at each commit, never kept: one set mid-game counts from the next
        commit on, and one cleared stops the deliveries."""
        if self.queue is None or record.status != GameStatus.PLAYING or record.state is None:
            return
        if urls is None:
            urls = self.store.webhook_urls(seats.values())
        hooked = {bot_id for bot_id, url in urls.items() if url}
        if not hooked:
            return
        if state is None:
            state = codec.load_state(record.state)
        now = self.clock()
        for seat, bot_id in sorted(seats.items()):
            if bot_id in hooked:
                legal = engine.legal_moves(state, seat, now)
                if legal:
                    self.enqueue(bot_id, record.id, seat, decision_key(record.id, state, seat, legal))

    def enqueue(self, bot_id: str, game_id: str, seat: int, key: str) -> bool:
        """Enqueue the first attempt of a decision, once (``False``: it was already)."""
        if self.queue is None or not self.store.mark(bot_id, game_id, seat, key, DEDUPE_SECONDS):
            return False
        first = Attempt(bot_id, game_id, seat, key, 1)
        lease = _ms(self.clock() + self.lease_seconds)
        self.store.lease(first.member, lease)  # first: were the job lost, the lease ends
        self._enqueue(first, lease)
        return True

    def _enqueue(self, attempt: Attempt, lease: int) -> None:
        """Queue the job of ``attempt`` holding ``lease`` (a job per lease: a copy whose lease
        was taken over finds it so and does nothing)."""
        assert self.queue is not None
        self.queue.enqueue(
            DELIVERY_JOB,
            attempt.bot_id,
            attempt.game_id,
            attempt.seat,
            attempt.key,
            attempt.attempt,
            lease,
            job_id=f"webhook-{attempt.game_id}-{attempt.seat}-{attempt.key}-{attempt.attempt}-{lease}",
            job_timeout=self.job_timeout,
            result_ttl=0,
            failure_ttl=3600,
        )

    def dispatch(self) -> float:
        """Enqueue every attempt that is due, or whose lease ran out; return the seconds until
        the next one falls due (at most :data:`DISPATCH_SECONDS`). Several workers'
        dispatchers share the due-set: each attempt is leased by one."""
        if self.queue is None:
            return DISPATCH_SECONDS
        while True:
            now = self.clock()
            lease = _ms(now + self.lease_seconds)
            members, first = self.store.take(_ms(now), lease, DISPATCH_BATCH)
            for member in members:
                self._enqueue(Attempt.of(member), lease)
            if len(members) < DISPATCH_BATCH:
                break
        if first is None:
            return DISPATCH_SECONDS
        return min(DISPATCH_SECONDS, max(0.01, first / 1000 - self.clock()))

    def due(self) -> int:
        """How many deliveries are not done yet (due, leased or waiting for their next attempt)."""
        return self.store.due()

    # -- one attempt (in the worker) ----------------------------------------------
    def decision(self, game_id: str, seat: int, key: str) -> dict[str, Any] | None:
        """The seat's decision with ``key`` if it is still waiting (``None``: the game ended
        or the decision's deadline passed; the seat answered, its choices changed, or it
        need not act)."""
        record = self.repo.load(game_id)
        if record is None or record.status != GameStatus.PLAYING or record.state is None:
            return None
        now = self.clock()
        state = codec.load_state(record.state)
        legal = engine.legal_moves(state, seat, now)
        if not legal or decision_key(game_id, state, seat, legal) != key:
            return None
        view = game_view(record, Viewer(seat), now, state)
        deadline = view.get("deadline")
        if deadline is not None and now >= deadline:
            return None  # the clock plays it
        return decision_entry(view, key)

    def run(self, accounts: Bots, attempt: Attempt, lease: int) -> dict[str, Any] | None:
        """The job of ``attempt`` (to a bot of ``accounts``) holding ``lease``: renew the
        lease, make the attempt, then end the lease (the delivery done, or its next attempt
        due). A lease no longer this job's (the dispatcher gave it to another) does nothing."""
        held = self.store.claim(attempt.member, lease, _ms(self.clock() + self.lease_seconds))
        if held is None:
            return None
        try:
            entry = self.deliver(accounts, attempt.bot_id, attempt.game_id, attempt.seat, attempt.key, attempt.attempt)
        except UNREACHABLE:
            raise  # Redis went away: the lease ends, and the dispatcher enqueues the attempt again
        except Exception:
            self.store.finish(attempt.member, held)  # a bug: not again
            raise
        then = entry["next_retry_at"] if entry is not None else None
        self.store.finish(attempt.member, held, None if then is None else (attempt.next().member, _ms(then)))
        return entry

    def deliver(
        self, accounts: Bots, bot_id: str, game_id: str, seat: int, key: str, attempt: int = 1
    ) -> dict[str, Any] | None:
        """One attempt at delivering the seat's decision with ``key`` to bot ``bot_id`` of
        ``accounts``. Returns the delivery log entry (``None``: nothing to send); on failure,
        its ``next_retry_at`` says when the next attempt is due (``None``: no more)."""
        try:
            bot = accounts.load(bot_id)
        except ServiceError:
            return None  # the bot is gone
        if not bot.webhook_url:
            return None
        decision = self.decision(game_id, seat, key)
        if decision is None:
            return None
        settings = self.settings
        msg_id = webhook_id(game_id, seat, key)
        started = self.clock()
        body = codec.dump_bytes(decision)
        secrets = [bot.secret, *([bot.old_secret] if bot.old_secret else [])]
        headers = signed_headers(secrets, msg_id, int(started), body)
        entry: dict[str, Any] = {
            "webhook_id": msg_id,
            "game_id": game_id,
            "seat": seat,
            "version": decision["version"],
            "key": key,
            "attempt": attempt,
            "at": started,
            "url": bot.webhook_url,
            "status": None,
            "error": None,
            "duration_ms": 0.0,
            "response_truncated": False,
            "next_retry_at": None,
        }
        clock_start = time.monotonic()
        try:
            target = resolve(bot.webhook_url, settings.webhook_allow_private)
        except RefusedURL as exc:
            entry["error"] = f"refused: {exc}"
            entry["duration_ms"] = round((time.monotonic() - clock_start) * 1000, 1)
            self.record(bot_id, entry)
            return entry
        outcome = post(
            target,
            body,
            headers,
            settings.webhook_connect_seconds,
            settings.webhook_read_seconds,
            settings.webhook_max_response_bytes,
        )
        entry.update(
            status=outcome.status,
            error=outcome.error,
            response_truncated=outcome.truncated,
            duration_ms=round((time.monotonic() - clock_start) * 1000, 1),
        )
        if not outcome.ok:
            next_at = self.clock() + retry_delay(attempt, settings.webhook_retry_seconds)
            deadline = decision["deadline"]
            if attempt >= settings.webhook_max_attempts:
                entry["error"] += f"; no more attempts (MAYI_WEBHOOK_MAX_ATTEMPTS is {settings.webhook_max_attempts})"
            elif deadline is not None and next_at >= deadline:
                entry["error"] += "; no more attempts: the decision's deadline comes first"
            elif self.queue is not None:
                entry["next_retry_at"] = next_at
        self.record(bot_id, entry)
        return entry

    # -- the log --------------------------------------------------------------------
    def record(self, bot_id: str, entry: dict[str, Any]) -> None:
        """Add ``entry`` to the bot's delivery log (newest first, bounded)."""
        self.store.record(bot_id, entry, self.settings.webhook_deliveries_kept)

    def recent(self, bot_id: str) -> list[dict[str, Any]]:
        """The bot's delivery log, newest first."""
        return self.store.recent(bot_id)


def start_dispatcher(hooks: Webhooks, stop: threading.Event) -> threading.Thread:
    """A daemon thread that enqueues the deliveries that fall due (:meth:`Webhooks.dispatch`)
    until ``stop``; it carries on by itself after a Redis outage."""

    return start_loop("webhook dispatcher", hooks.dispatch, DISPATCH_SECONDS, stop, log, first=0.0)
