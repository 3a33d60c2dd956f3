"""What a commit tells the parts that follow it (the clock, the bots' wakes, the house bots).

A listener prepares before the commit only what must be in place should the process die
right after it (rare: a game's first clock, a house seat's due decision), and follows it
once made: its scripts join one batch, sent in one round trip for every listener, then
the rest of its work runs (queueing jobs, webhook deliveries). A commit whose follow-ups
never ran is repaired by each part's recovery (docs/decisions/0021-one-path-for-a-move.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mayi_engine.state import State
from mayi_service.storage.followups import FollowUps
from mayi_service.storage.records import Change, GameRecord


@dataclass(frozen=True)
class Commit:
    """One commit of a game as its listeners see it: the record it replaced (``None``: a new
    table) and the one it made, what it wrote (``None``: a new table), the engine states of
    both when the committing step has them (else ``None``), and when it was planned."""

    before: GameRecord | None
    after: GameRecord
    change: Change | None
    state: State | None
    before_state: State | None
    now: float


class CommitListener(Protocol):
    """A part told of every commit of a game (:class:`~mayi_service.play.games.Games`)."""

    def prepare(self, commit: Commit) -> None:
        """Before the commit: write what must outlive a process that dies right after it."""
        ...

    def follow(self, commit: Commit, batch: FollowUps) -> Callable[[], None] | None:
        """After the commit: add this part's scripts to ``batch`` (sent once for every
        listener); the callable returned (if any) runs once they have answered."""
        ...
