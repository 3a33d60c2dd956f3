"""The wake of bots after a commit: each bot seat that may have a decision gets a wake entry
(its waiting polls look again) and its webhook bot's decision is handed to the deliveries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import mayi_engine as engine
from mayi_engine.state import GameStatus
from mayi_service.play.listeners import Commit
from mayi_service.storage import codec
from mayi_service.storage.bots import BotStore
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import GameRepository

#: Wake entries kept per bot (a waiter only needs the latest number).
WAKE_KEEP = 100


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


class Wakes:
    """The commit listener of :class:`~mayi_service.bots.seats.Bots`: the wakes of its bots."""

    repo: GameRepository
    store: BotStore
    deliveries: Deliveries | None

    def wake_seq(self, bot_id: str) -> int:
        """The bot's wake number: how many wakes it has had."""
        return self.store.wake_seq(bot_id)

    def wake(self, bot_id: str, game_id: str) -> None:
        """Give ``bot_id`` a wake entry for ``game_id`` (its waiting polls look again)."""
        batch = self.repo.follow_ups()
        batch.wake(self.store.wake_keys(bot_id), game_id, WAKE_KEEP, False)
        batch.send()

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
        woken = {bot_id: batch.wake(self.store.wake_keys(bot_id), record.id, WAKE_KEEP, urls) for bot_id in bots}
        if not urls:
            return None

        def deliver() -> None:
            found = {bot_id: reply.value for bot_id, reply in woken.items()}
            if self.deliveries is not None and any(found.values()):
                by_seat = {seat: bot_id for seat, bot_id in record.meta.bot_ids if bot_id in found}
                self.deliveries.on_commit(record, by_seat, commit.state, found)

        return deliver


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
