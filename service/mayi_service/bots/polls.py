"""A bot's decisions poll: every decision waiting for the bot across its games, and the wait
for the next one (its wake stream, through the shared-wait hub), in one read on a single Redis."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import redis

import mayi_engine as engine
from mayi_engine.state import GameStatus
from mayi_service.play.decisions import decision_entry, decision_key
from mayi_service.play.slots import AddressSlotsFull, ProcessSlotsFull, WaitSlot
from mayi_service.play.tables import token_hash
from mayi_service.play.views import Viewer, game_view
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage import codec
from mayi_service.storage.bots import BotStore, Lease, PollRead
from mayi_service.storage.leases import StreamSlotsFull
from mayi_service.storage.repository import GameRepository

if TYPE_CHECKING:
    from mayi_service.server.deadlines import HangUp

#: Bot tokens start with this (seat tokens with ``mayi_seat_``).
BOT_TOKEN_PREFIX = "mayi_bot_"
#: Game states a process keeps parsed for the decisions polls (see ``Polls._state``).
STATES_KEPT = 64


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


class Polls:
    """The decisions poll, a part of :class:`~mayi_service.bots.seats.Bots` (whose keys,
    token look-up and seats these read)."""

    repo: GameRepository
    store: BotStore
    clock: Callable[[], float]
    idle_ttl: int
    _states: dict[str, engine.State]
    require: Callable[[str | None], str]
    touch: Callable[..., None]
    seats_of: Callable[[str], dict[str, list[int]]]

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
            read.update(self.store.game_hashes(missing))
        loaded = (self.repo.record_of(g, read[g]) for g in held)
        records = {r.id: r for r in loaded if r is not None}
        gone = [g for g in held if g not in records or records[g].status == GameStatus.FINISHED]
        if gone:
            self.store.forget_games(bot_id, gone)
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

    def _poll_read(
        self, token: str, bot_id: str | None = None, slot: WaitSlot | None = None, op: str = ""
    ) -> tuple[str | None, PollRead]:
        """What a decisions poll reads (:meth:`BotStore.poll_read`): the bot id (``None``:
        ``token`` is not a valid bot token) and its :class:`PollRead`; with a ``bot_id``, no
        token lookup. ``op``: ``"take"`` ``slot``'s count (up to its limit), or ``"give"`` it
        back; on a cluster the count is never taken here."""
        lease = None if slot is None or not op else Lease(slot.key, slot.lease, op, slot.limit, slot.lease_ms)
        found = self.store.poll_read(token_hash(token), bot_id, self.idle_ttl, lease)
        if found is None:
            return None, _NOTHING
        if bot_id is None:
            self.touch(found[0])
        return found

    def poll(
        self,
        token: str | None,
        wait: float,
        skip: frozenset[str] = frozenset(),
        slot: WaitSlot | None = None,
        hangup: HangUp | None = None,
    ) -> DecisionPage:
        """The decisions poll of the bot whose token is ``token`` (401 if it is none): the
        decisions waiting now (but those in ``skip``); with none, wait up to ``wait`` seconds
        for one, or until the bot's last game ends, or (``hangup``) the client hangs up, when
        it answers nothing. A skipped decision whose claim window closes meanwhile is looked
        at again then. ``slot``, the caller's waiting slot, is held only while the poll waits
        (its errors are raised only then), given back in the read after the wait, or by the
        caller once the answer is sent (``slot.held``). One round trip before the answer, one
        after each wake, on a single Redis (docs/decisions/0011-bot-decision-round-trips.md)."""
        if not is_bot_token(token):
            self.require(token)  # raises: no token, or not a bot token
        take = slot is not None and wait > 0 and slot.take_process()
        read = _NOTHING
        try:
            bot_id, read = self._poll_read(str(token), slot=slot, op="take" if take else "")
        finally:
            if slot is not None and take:
                slot.counted(read.took)
        if bot_id is None:
            raise unauthorized()
        seen = read.seq
        deadline = time.monotonic() + wait
        woken = waited = False
        try:
            while True:
                page = self.page(bot_id, held=read.held, skip=skip, read=read.hashes)
                left = deadline - time.monotonic()
                if page.decisions or left <= 0 or (page.games == 0 and (woken or read.held)):
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
                    hangup.on_gone = partial(self.repo.hub.interrupt, self.store.wake_key(bot_id))
                woken = self.repo.hub.wait(self.store.wake_key(bot_id), seen, left, hangup)
                given = slot is not None and slot.held
                _, read = self._poll_read(str(token), bot_id, slot, "give" if given else "")
                seen = read.seq
                if given:
                    slot.counted_down()
                if hangup is not None and hangup.gone:
                    return DecisionPage([], 0)  # the client hung up: nobody reads this answer
        except BaseException:
            if slot is not None:
                with contextlib.suppress(redis.RedisError):
                    slot.give()
            raise


def unauthorized() -> ServiceError:
    return ServiceError(
        Problem.UNAUTHORIZED,
        "Authorization: this is not a valid bot token (a seat token, or a bot token since rotated)",
        {"WWW-Authenticate": 'Bearer realm="mayi"'},
    )


#: What a poll reads for a token that is no bot's.
_NOTHING = PollRead(0, {}, {}, False)
