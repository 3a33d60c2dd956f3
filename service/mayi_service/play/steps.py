"""One step of a change to a game: what it decides (:class:`Update`, :class:`Played`) and what
committing an engine state writes (:func:`state_change`, :func:`stamp`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import mayi_engine as engine
from mayi_engine.errors import MayIError
from mayi_engine.state import State
from mayi_engine.views import status
from mayi_service.storage import codec
from mayi_service.storage.records import Change, GameRecord, TableMeta

T = TypeVar("T")


@dataclass
class Update(Generic[T]):
    """What one attempt of :meth:`Games.update` decided: the change to commit over the
    record it read, the record that makes, what to answer once committed (``result``),
    and an error to raise once committed (``error``: a move refused after the timeouts
    that were due, which are kept). ``state``: the engine state of ``after``, when the
    step has it (the commit listeners then need not parse it again)."""

    change: Change
    after: GameRecord
    result: T
    error: Exception | None = field(default=None)
    state: State | None = field(default=None)
    #: The engine state of the record the step read, as stored, when the step parsed it
    #: (the bots' wake leaves asleep the seats whose decision the change leaves as it was).
    before: State | None = field(default=None)


@dataclass
class Played:
    """A move played for a seat over a stored game (:meth:`Games.play_move`): what it makes,
    not yet committed.

    ``first``: the events applied before the move, in order: the seat's return (when it
    acts in person) and the timeouts whose deadline had passed. ``error``: the engine's
    refusal of the move; ``state`` is then the game after ``first`` only. ``change`` and
    ``after`` are what committing ``state`` writes and the record it makes (``None``: a
    refused move with nothing before it, so nothing to commit)."""

    state: State
    first: list[engine.Event]
    error: MayIError | None
    change: Change | None
    after: GameRecord | None
    #: The game's state as stored, before the seat's return and the due timeouts.
    stored: State | None = None


def state_change(
    record: GameRecord,
    state: State,
    events: list[engine.Event],
    now: float,
    meta: TableMeta | None = None,
) -> tuple[Change, GameRecord]:
    """What committing ``state`` after ``record`` writes, and the record it makes."""
    due = engine.deadline(state)
    seq = record.seq + len(events)
    game_status = status(state)
    text = codec.dump_state(state)
    change = Change(
        fields={
            "state": text,
            "seq": str(seq),
            "status": game_status,
            "deadline": "" if due is None else repr(due),
            # Due when committed: the clock plays on at once (absent seats), a play-out step.
            "at_once": "1" if due is not None and due <= now else "",
        },
        events=stamp(events, record.seq, now),
        round_ended=any(e.type == "round_ended" for e in events),
    )
    updated = GameRecord(
        record.id, record.version + 1, seq, game_status, meta or record.meta, text, due, record.clock_at
    )
    return change, updated


def stamp(events: list[engine.Event], last_seq: int, now: float) -> list[tuple[int, str]]:
    """The engine's events as the log keeps them: numbered, timed, turned into JSON here
    (the one place engine events become JSON in the service)."""
    out = []
    for i, event in enumerate(events, start=last_seq + 1):
        out.append((i, codec.dump({"seq": i, "time": round(now, 3), **engine.event_to_json(event)})))
    return out
