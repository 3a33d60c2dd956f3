"""The event schemas are derived from the engine's event types: a field an event type
declares is documented with its JSON type, required when always sent, nullable when it
may be null, and a key its JSON adds that is no field holds its one value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from marshmallow import fields

from mayi_engine.cards import card_code
from mayi_engine.events import Event
from mayi_engine.rules import Contract
from mayi_service.api.schemas.events import event_fields
from mayi_service.api.schemas.views import ContractSchema


@dataclass(frozen=True, slots=True, repr=False)
class Sampled(Event):
    """An event type the engine does not have, with a field of each kind."""

    type: ClassVar[str] = "sampled"
    card: int
    count: int
    contract: Contract
    out: int | None
    scores: tuple[int, ...]
    hand: tuple[int, ...]
    flag: bool = False

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "card": card_code(self.card),
            "count": self.count,
            "contract": self.contract.as_json(),
            "out": self.out,
            "scores": list(self.scores),
            "kind": "sample",
        }
        if self.flag:
            out["flag"] = True
        return out

    def private(self) -> dict[str, Any] | None:
        return {"hand": [card_code(c) for c in self.hand]}


def test_an_event_types_fields_are_documented_from_its_declaration() -> None:
    data, private = event_fields("sampled", Sampled)
    assert list(data) == ["card", "count", "contract", "out", "scores", "kind", "flag"]
    assert isinstance(data["card"], fields.String) and data["card"].required
    assert data["card"].metadata["description"] == "A card code"
    assert isinstance(data["count"], fields.Integer) and data["count"].required and not data["count"].allow_none
    assert isinstance(data["contract"], fields.Nested) and data["contract"].nested is ContractSchema
    assert isinstance(data["out"], fields.Integer) and data["out"].required and data["out"].allow_none
    assert isinstance(data["scores"], fields.List) and isinstance(data["scores"].inner, fields.Integer)
    assert data["kind"].validate.choices == ["sample"] and data["kind"].required  # type: ignore[union-attr]
    assert isinstance(data["flag"], fields.Boolean) and not data["flag"].required  # sent only when true
    assert private is not None and list(private) == ["hand"]
    assert isinstance(private["hand"], fields.List) and isinstance(private["hand"].inner, fields.String)
