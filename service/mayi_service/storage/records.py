"""The values a game is stored as: its table's meta data, its record, and one commit's change."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from mayi_engine import GameStatus
from mayi_service.storage import codec


@dataclass(frozen=True)
class TableMeta:
    """A table's settings and players, as stored in the game hash's ``meta`` field (JSON
    with these keys, in this order; ``test`` only on a table that has a test block)."""

    variant: str
    #: The table options as sent (each checked by its OptionSpec in the engine).
    options: dict[str, Any]
    seats: int
    #: Per seat, the player's name, or ``None`` while the seat is open.
    names: tuple[str | None, ...]
    #: A table without a ``test`` block counts for ratings.
    rated: bool
    created_at: float
    #: The checked ``test`` block (``seed``, ``stacked_decks``, ``start_round``), if any.
    test: dict[str, Any] | None = None
    #: The seats a bot holds (stored only when there is one).
    bot_seats: tuple[int, ...] = ()
    #: The bot in each bot seat, as (seat, bot id) pairs (stored as ``bot_ids``, a seat → id
    #: object, only when there is one): the bots a commit wakes.
    bot_ids: tuple[tuple[int, str], ...] = ()
    #: The house bots seated, as (seat, bot name) pairs (stored only when there is one).
    house_bots: tuple[tuple[int, str], ...] = ()
    #: The ladder match this table is (stored only for one): its job plays the house seats.
    ladder: str | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "variant": self.variant,
            "options": self.options,
            "seats": self.seats,
            "names": list(self.names),
            "rated": self.rated,
            "created_at": self.created_at,
        }
        if self.test is not None:
            data["test"] = self.test
        if self.bot_seats:
            data["bot_seats"] = list(self.bot_seats)
        if self.bot_ids:
            data["bot_ids"] = {str(seat): bot_id for seat, bot_id in self.bot_ids}
        if self.house_bots:
            data["house_bots"] = {str(seat): name for seat, name in self.house_bots}
        if self.ladder:
            data["ladder"] = self.ladder
        return codec.dump(data)

    @classmethod
    def from_json(cls, raw: str | bytes) -> TableMeta:
        data = codec.load(raw)
        return cls(
            variant=data["variant"],
            options=data["options"],
            seats=data["seats"],
            names=tuple(data["names"]),
            rated=data["rated"],
            created_at=data["created_at"],
            test=data.get("test"),
            bot_seats=tuple(data.get("bot_seats", ())),
            bot_ids=tuple((int(seat), bot_id) for seat, bot_id in data.get("bot_ids", {}).items()),
            house_bots=tuple((int(seat), name) for seat, name in data.get("house_bots", {}).items()),
            ladder=data.get("ladder"),
        )

    def seated(
        self, seat: int, name: str, bot: bool = False, house_bot: str | None = None, bot_id: str | None = None
    ) -> TableMeta:
        """This table with ``name`` in ``seat`` (``bot``: a bot holds it; ``bot_id``: the bot
        of that id holds it; ``house_bot``: the house bot of that name, played by the job worker)."""
        names = tuple(name if i == seat else n for i, n in enumerate(self.names))
        return replace(
            self,
            names=names,
            bot_seats=(*self.bot_seats, seat) if bot or bot_id else self.bot_seats,
            bot_ids=(*self.bot_ids, (seat, bot_id)) if bot_id else self.bot_ids,
            house_bots=(*self.house_bots, (seat, house_bot)) if house_bot else self.house_bots,
        )

    def house_bot(self, seat: int) -> str | None:
        """The name of the house bot in ``seat``, if one sits there."""
        return next((name for s, name in self.house_bots if s == seat), None)

    @property
    def full(self) -> bool:
        """Every seat is taken."""
        return all(self.names)


#: Tables' meta data read from their stored JSON, by that JSON (:func:`table_meta`).
_METAS: dict[bytes, TableMeta] = {}
#: Most entries of :data:`_METAS` (beyond: it starts again, empty).
METAS_KEPT = 1024


def table_meta(raw: bytes) -> TableMeta:
    """The :class:`TableMeta` stored as ``raw``, read once per text in this process: a table's
    meta data changes only while its seats fill, and every request reads it."""
    found = _METAS.get(raw)
    if found is None:
        if len(_METAS) >= METAS_KEPT:
            _METAS.clear()
        found = _METAS[raw] = TableMeta.from_json(raw)
    return found


@dataclass
class GameRecord:
    """One game as stored: its meta data, the engine state JSON, and counters."""

    id: str
    version: int
    seq: int
    status: GameStatus
    meta: TableMeta
    state: str | None
    deadline: float | None = None
    #: When the clock job of this game is due to run (see :mod:`mayi_service.play.clock`).
    clock_at: float | None = None


@dataclass
class Change:
    """What one commit writes."""

    fields: dict[str, str] = field(default_factory=dict)
    events: list[tuple[int, str]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    idempotency: tuple[str, str] | None = None  # (key digest, record JSON)
    #: A round ended: its events move to the archive after the commit.
    round_ended: bool = False
    #: Retention: expire every key of the game in this many seconds (0: never; None: as it was).
    expire: int | None = None
