"""Events: typed records of what a move did, turned into JSON once, at the edge.

:func:`~mayi_engine.game.play` returns, with the new state, the events the move
made: one frozen dataclass per kind of event (:class:`Discarded`, :class:`Drew`,
:class:`RoundEnded`...), holding cards as cards and melds as :class:`Meld`
values. They print as a player writes them (``Discarded(seat=0, card='QS')``).
:func:`event_to_json` (or ``event.to_json()``) gives the JSON the service logs and
serves (docs/api.md, "Events")::

    {"type": "discarded", "seat": 0, "data": {"card": "QS"}}

``seat`` is the seat the event is about (``None``: the table). ``private`` holds
what only that seat may see (its dealt hand, the card it drew from the stock);
``timeout`` (true) marks a move the service's clock made for the seat.

>>> event_to_json(Discarded(0, 51))
{'type': 'discarded', 'seat': 0, 'data': {'card': 'QS'}}
>>> Drew(2, 0, penalty=True, timeout=True)
Drew(seat=2, card='JK', penalty=True, timeout=True)
>>> event_to_json(Drew(2, 0, penalty=True, timeout=True))["private"]
{'card': 'JK'}
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from .cards import card_code, card_codes
from .melds import Meld, meld_json
from .moves import LayOffPart
from .rules import Contract


@dataclass(frozen=True, slots=True, repr=False)
class Event:
    """The base of every event: ``type`` names its kind (the JSON ``type``)."""

    type: ClassVar[str] = ""
    #: The seat the event is about (``None``: the table).
    seat: int | None

    def data(self) -> dict[str, Any]:
        """The event's public fields, as JSON-ready data."""
        return {}

    def private(self) -> dict[str, Any] | None:
        """What only ``seat`` may see, or ``None``."""
        return None

    def to_json(self) -> dict[str, Any]:
        """The event as the service logs and serves it (``type``, ``seat``, ``data``,
        ``private`` if any, ``timeout`` if the clock made the move)."""
        out: dict[str, Any] = {"type": self.type, "seat": self.seat, "data": self.data()}
        private = self.private()
        if private is not None:
            out["private"] = private
        if getattr(self, "timeout", False):
            out["timeout"] = True
        return out

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "timeout" and not value:
                continue
            parts.append(f"{f.name}={_shown(f.name, value)}")
        return f"{type(self).__name__}({', '.join(parts)})"


_CARD_FIELDS = frozenset({"card", "upcard"})


def _shown(name: str, value: Any) -> str:
    """A field as it prints: cards as their codes."""
    if name in _CARD_FIELDS:
        return repr(card_code(value))
    if name == "hand":
        return repr(tuple(card_codes(value)))
    if name == "hands":
        return repr(tuple(tuple(card_codes(h)) for h in value))
    return repr(value)


def event_to_json(event: Event) -> dict[str, Any]:
    """The JSON form of an event (the one place events become JSON)."""
    return event.to_json()


@dataclass(frozen=True, slots=True, repr=False)
class RoundStarted(Event):
    """A round is dealt: its number, dealer, first player, contract, deal size and upcard."""

    type: ClassVar[str] = "round_started"
    round: int
    dealer: int
    first: int
    contract: Contract
    deal: int
    upcard: int
    jokers_buried: int

    def data(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "dealer": self.dealer,
            "first": self.first,
            "contract": self.contract.as_json(),
            "deal": self.deal,
            "upcard": card_code(self.upcard),
            "jokers_buried": self.jokers_buried,
        }


@dataclass(frozen=True, slots=True, repr=False)
class Dealt(Event):
    """The seat was dealt ``hand`` (private)."""

    type: ClassVar[str] = "dealt"
    hand: tuple[int, ...]

    def private(self) -> dict[str, Any] | None:
        return {"hand": card_codes(self.hand)}


@dataclass(frozen=True, slots=True, repr=False)
class TookUpcard(Event):
    """The seat took the upcard: as its draw (voiding ``voided_claims``), or the first upcard offered;
    ``discard_top``: the discard pile's top card after it (``None``: the pile is empty)."""

    type: ClassVar[str] = "took_upcard"
    card: int
    first_upcard: bool = False
    voided_claims: tuple[int, ...] | None = None
    discard_top: int | None = None

    def data(self) -> dict[str, Any]:
        top = None if self.discard_top is None else card_code(self.discard_top)
        out: dict[str, Any] = {"card": card_code(self.card), "discard_top": top}
        if self.first_upcard:
            out["first_upcard"] = True
        if self.voided_claims is not None:
            out["voided_claims"] = list(self.voided_claims)
        return out


@dataclass(frozen=True, slots=True, repr=False)
class Claimed(Event):
    """The seat claimed the upcard (May I / a buy)."""

    type: ClassVar[str] = "claimed"
    card: int

    def data(self) -> dict[str, Any]:
        return {"card": card_code(self.card)}


@dataclass(frozen=True, slots=True, repr=False)
class Passed(Event):
    """The seat passed on the upcard (or on the first upcard offered)."""

    type: ClassVar[str] = "passed"
    card: int
    first_upcard: bool = False
    timeout: bool = False

    def data(self) -> dict[str, Any]:
        if self.first_upcard:
            return {"card": card_code(self.card), "first_upcard": True}
        return {"card": card_code(self.card)}


@dataclass(frozen=True, slots=True, repr=False)
class ClaimWon(Event):
    """The seat won the claim on ``card`` among ``claimants`` and draws ``penalty`` cards more;
    ``discard_top``: the discard pile's top card after it (``None``: the pile is empty)."""

    type: ClassVar[str] = "claim_won"
    card: int
    penalty: int
    claimants: tuple[int, ...]
    discard_top: int | None = None

    def data(self) -> dict[str, Any]:
        top = None if self.discard_top is None else card_code(self.discard_top)
        return {
            "card": card_code(self.card),
            "penalty": self.penalty,
            "claimants": list(self.claimants),
            "discard_top": top,
        }


@dataclass(frozen=True, slots=True, repr=False)
class Drew(Event):
    """The seat drew ``card`` (private) from the stock; ``penalty``: as a claim's penalty card."""

    type: ClassVar[str] = "drew"
    card: int
    penalty: bool = False
    timeout: bool = False

    def data(self) -> dict[str, Any]:
        return {"source": "stock", "penalty": self.penalty}

    def private(self) -> dict[str, Any] | None:
        return {"card": card_code(self.card)}


@dataclass(frozen=True, slots=True, repr=False)
class StockExhausted(Event):
    """The stock ran out and could not be rebuilt (``reason``): the round ends."""

    type: ClassVar[str] = "stock_exhausted"
    reason: str

    def data(self) -> dict[str, Any]:
        return {"reason": self.reason}


@dataclass(frozen=True, slots=True, repr=False)
class StockRebuilt(Event):
    """The discard pile but its top card (``cards`` cards) was shuffled into a new stock."""

    type: ClassVar[str] = "stock_rebuilt"
    cards: int
    rebuilds: int

    def data(self) -> dict[str, Any]:
        return {"cards": self.cards, "rebuilds": self.rebuilds}


@dataclass(frozen=True, slots=True, repr=False)
class WentDown(Event):
    """The seat laid down ``melds``, meeting ``contract``."""

    type: ClassVar[str] = "went_down"
    melds: tuple[Meld, ...]
    contract: Contract

    def data(self) -> dict[str, Any]:
        return {"melds": [meld_json(m) for m in self.melds], "contract": self.contract.as_json()}


@dataclass(frozen=True, slots=True, repr=False)
class LaidOff(Event):
    """The seat laid off ``lay_offs``; ``melds``: the melds they changed, as they are now."""

    type: ClassVar[str] = "laid_off"
    lay_offs: tuple[LayOffPart, ...]
    melds: tuple[Meld, ...]

    def data(self) -> dict[str, Any]:
        return {
            "lay_offs": [
                {"meld": p.meld, "cards": card_codes(p.cards), **({"joker_to": p.joker_to} if p.joker_to else {})}
                for p in self.lay_offs
            ],
            "melds": [meld_json(m) for m in self.melds],
        }


@dataclass(frozen=True, slots=True, repr=False)
class Discarded(Event):
    """The seat discarded ``card``."""

    type: ClassVar[str] = "discarded"
    card: int
    timeout: bool = False

    def data(self) -> dict[str, Any]:
        return {"card": card_code(self.card)}


@dataclass(frozen=True, slots=True, repr=False)
class TurnLimit(Event):
    """The round reached the ``max_turns`` safeguard: it ends."""

    type: ClassVar[str] = "turn_limit"
    turns: int

    def data(self) -> dict[str, Any]:
        return {"turns": self.turns}


@dataclass(frozen=True, slots=True, repr=False)
class RoundEnded(Event):
    """A round ended (``out``: the seat that went out, or ``None``), with its scores and every hand."""

    type: ClassVar[str] = "round_ended"
    round: int
    out: int | None
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]

    def data(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "out": self.out,
            "scores": list(self.scores),
            "totals": list(self.totals),
            "hands": [card_codes(h) for h in self.hands],
        }


@dataclass(frozen=True, slots=True, repr=False)
class GameEnded(Event):
    """The game is over: the totals and each seat's place (1 = best)."""

    type: ClassVar[str] = "game_ended"
    totals: tuple[int, ...]
    places: tuple[int, ...]

    def data(self) -> dict[str, Any]:
        return {"totals": list(self.totals), "places": list(self.places)}


@dataclass(frozen=True, slots=True, repr=False)
class SeatAbsent(Event):
    """The seat timed out ``timeouts`` times in a row: it is absent, played for at once."""

    type: ClassVar[str] = "seat_absent"
    timeouts: int

    def data(self) -> dict[str, Any]:
        return {"timeouts": self.timeouts}


@dataclass(frozen=True, slots=True, repr=False)
class SeatReturned(Event):
    """The absent seat acted again."""

    type: ClassVar[str] = "seat_returned"


#: Every kind of event by its JSON ``type``.
EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        RoundStarted,
        Dealt,
        TookUpcard,
        Claimed,
        Passed,
        ClaimWon,
        Drew,
        StockExhausted,
        StockRebuilt,
        WentDown,
        LaidOff,
        Discarded,
        TurnLimit,
        RoundEnded,
        GameEnded,
        SeatAbsent,
        SeatReturned,
    )
}

__all__ = [
    "EVENT_TYPES",
    "ClaimWon",
    "Claimed",
    "Dealt",
    "Discarded",
    "Drew",
    "Event",
    "GameEnded",
    "LaidOff",
    "Passed",
    "RoundEnded",
    "RoundStarted",
    "SeatAbsent",
    "SeatReturned",
    "StockExhausted",
    "StockRebuilt",
    "TookUpcard",
    "TurnLimit",
    "WentDown",
    "event_to_json",
]
