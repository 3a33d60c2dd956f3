"""The game view a seat or a spectator reads, its parts, and its legal moves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import listed


@dataclass(frozen=True)
class Contract:
    """A round's contract: ``books`` and ``runs`` to lay down (``all_cards``: using every card)."""

    books: int
    runs: int
    all_cards: bool
    text: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Contract:
        return cls(
            int(data.get("books", 0)), int(data.get("runs", 0)), bool(data.get("all_cards")), data.get("text", "")
        )


@dataclass(frozen=True)
class Round:
    number: int
    of: int
    dealer: int
    first: int
    contract: Contract

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Round:
        return cls(
            int(data["number"]),
            int(data["of"]),
            int(data["dealer"]),
            int(data["first"]),
            Contract.from_json(data.get("contract") or {}),
        )


@dataclass(frozen=True)
class ClaimWindow:
    """The upcard on offer: who claimed, who passed, who may still answer, and until when."""

    card: str
    discarder: int | None
    claims: list[int]
    passes: list[int]
    pending: list[int]
    closes_at: float | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimWindow:
        return cls(
            data.get("card", ""),
            data.get("discarder"),
            listed(data, "claims"),
            listed(data, "passes"),
            listed(data, "pending"),
            data.get("closes_at"),
        )


@dataclass(frozen=True)
class Seat:
    """One seat as everyone sees it."""

    seat: int
    name: str | None
    taken: bool
    hand_count: int
    down: bool
    total: int
    claims_used: int
    claims_left: int | None
    absent: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Seat:
        return cls(
            int(data["seat"]),
            data.get("name"),
            bool(data.get("taken", data.get("name") is not None)),
            int(data.get("hand_count", 0)),
            bool(data.get("down", False)),
            int(data.get("total", 0)),
            int(data.get("claims_used", 0)),
            data.get("claims_left"),
            bool(data.get("absent", False)),
        )


@dataclass(frozen=True)
class Joker:
    """A joker in a meld: its ``index`` in the meld's cards and the card it ``stands_for``."""

    index: int
    stands_for: str


@dataclass(frozen=True)
class Meld:
    """A meld on the table (``type`` is ``book`` or ``run``; a run's cards low to high)."""

    id: int
    owner: int
    type: str
    cards: list[str]
    jokers: list[Joker]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Meld:
        jokers = [Joker(int(j["index"]), j["stands_for"]) for j in listed(data, "jokers")]
        return cls(int(data["id"]), int(data["owner"]), data["type"], listed(data, "cards"), jokers)


@dataclass(frozen=True)
class Result:
    """One finished round: who went ``out`` (None: nobody) and each seat's score."""

    round: int
    out: int | None
    scores: list[int]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(int(data["round"]), data.get("out"), listed(data, "scores"))


#: The endpoint each legal move's ``type`` is sent to (its body is the move itself).


MOVE_PATHS: dict[str, str] = {
    "draw": "turn/draw",
    "discard": "turn/discard",
    "claim": "claims",
    "go_down": "melds",
    "lay_off": "lay-offs",
}


@dataclass(frozen=True)
class LegalMove:
    """A move the seat may make now. ``body`` is exactly the request body to send to
    the endpoint of its ``type`` (see :meth:`mayi_sdk.Client.play`)."""

    type: str
    body: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LegalMove:
        return cls(data["type"], {k: v for k, v in data.items() if k != "type"})

    @property
    def path(self) -> str:
        """The action endpoint under ``/v1/games/{id}/``; a ``type`` that is no move's is a
        :class:`ValueError` naming it and the known ones."""
        found = MOVE_PATHS.get(self.type)
        if found is None:
            known = ", ".join(MOVE_PATHS)
            raise ValueError(f"type: {self.type!r} is not a move type (known: {known})")
        return found

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.body.items())
        return f"LegalMove({self.type}{', ' if args else ''}{args})"


@dataclass(frozen=True)
class GameView:
    """A game as the caller sees it: public for everyone, ``hand`` and ``legal`` for a seat.

    A waiting table has only the table fields (``round``, ``phase`` and the rest are None).
    """

    id: str
    version: int
    status: str
    variant: str
    options: dict[str, Any]
    rated: bool
    created_at: float
    last_event: int
    seats: list[Seat]
    seat: int | None = None
    round: Round | None = None
    phase: str | None = None
    turn: int | None = None
    actor: int | None = None
    upcard: str | None = None
    discard_top: str | None = None
    stock_count: int = 0
    discard_count: int = 0
    reshuffles: int = 0
    claim_window: ClaimWindow | None = None
    melds: list[Meld] = field(default_factory=list)
    deadline: float | None = None
    results: list[Result] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    hand: list[str] = field(default_factory=list)
    held: str | None = None
    legal: list[LegalMove] = field(default_factory=list)
    #: The key of the seat's decision (as :attr:`mayi_sdk.models.Decision.key`; empty: no legal move): a move
    #: sent with it (``Client.play(..., if_key=view.key)``) is applied while the seat's
    #: choices are these, whatever other seats answered to the upcard meanwhile.
    key: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameView:
        window = data.get("claim_window")
        return cls(
            id=data["id"],
            version=int(data["version"]),
            status=data["status"],
            variant=data["variant"],
            options=dict(data.get("options") or {}),
            rated=bool(data.get("rated", False)),
            created_at=float(data.get("created_at", 0.0)),
            last_event=int(data.get("last_event", 0)),
            seats=[Seat.from_json(s) for s in listed(data, "seats")],
            seat=data.get("seat"),
            round=Round.from_json(data["round"]) if data.get("round") else None,
            phase=data.get("phase"),
            turn=data.get("turn"),
            actor=data.get("actor"),
            upcard=data.get("upcard"),
            discard_top=data.get("discard_top"),
            stock_count=int(data.get("stock_count", 0)),
            discard_count=int(data.get("discard_count", 0)),
            reshuffles=int(data.get("reshuffles", 0)),
            claim_window=ClaimWindow.from_json(window) if window else None,
            melds=[Meld.from_json(m) for m in listed(data, "melds")],
            deadline=data.get("deadline"),
            results=[Result.from_json(r) for r in listed(data, "results")],
            places=listed(data, "places"),
            hand=listed(data, "hand"),
            held=data.get("held"),
            legal=[LegalMove.from_json(m) for m in listed(data, "legal")],
            key=str(data.get("key") or ""),
            raw=data,
        )

    def legal_of(self, kind: str) -> list[LegalMove]:
        """The legal moves of one ``type`` (``draw``, ``claim``, ``discard``, ``go_down``, ``lay_off``)."""
        return [m for m in self.legal if m.type == kind]
