"""Events (``Event``: one schema per type, with its ``data`` and ``private``), the events page
and the replay."""

from __future__ import annotations

from dataclasses import MISSING
from dataclasses import fields as dataclass_fields
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

from marshmallow import Schema, fields, validate

from mayi_engine.events import EVENT_TYPES as ENGINE_EVENTS
from mayi_engine.events import Event
from mayi_engine.melds import Meld
from mayi_engine.moves import LayOffPart
from mayi_engine.rules import Contract
from mayi_service.api.schemas.fields import (
    UNIONS,
    AsIs,
    QueryFloat,
    QueryInteger,
    StrictSchema,
    Union,
    const,
    ints,
    required,
    variant_name,
)
from mayi_service.api.schemas.games import options_schema
from mayi_service.api.schemas.moves import LayOffInSchema
from mayi_service.api.schemas.views import ContractSchema, MeldViewSchema


class EventsQuerySchema(StrictSchema):
    after = QueryInteger(load_default=0, validate=validate.Range(0, 2**53))
    wait = QueryFloat(load_default=0, validate=validate.Range(0, 60))


# -- events: one schema per type, with its `data` (and `private`) ---------------


class _EventBase(Schema):
    seq = required(fields.Integer, metadata={"description": "The event number, from 1"})
    seat = required(fields.Integer, allow_none=True, metadata={"description": "The seat it concerns; null: none"})
    time = required(fields.Float, metadata={"description": "Unix seconds"})


#: A clock's move: present (true) on the events a timeout caused.
_TIMEOUT = {"timeout": fields.Boolean(metadata={"description": "Present (true) when the clock made this move"})}

#: The event types, each with the fields of its ``data`` and, for some, of its ``private``.
EVENT_TYPES: dict[str, tuple[str, dict[str, fields.Field], dict[str, fields.Field] | None, bool]] = {}


def _event_type(
    kind: str,
    description: str,
    data: dict[str, fields.Field],
    private: dict[str, fields.Field] | None = None,
    timeout: bool = False,
) -> None:
    """Declare event type ``kind``: a schema ``<Kind>Event`` with its ``data`` schema."""
    camel = "".join(part.title() for part in kind.split("_"))
    data_schema = Schema.from_dict(data, name=f"{camel}DataSchema")
    attrs: dict[str, Any] = {
        "type": const(kind, description),
        "data": required(fields.Nested, data_schema),
        **(_TIMEOUT if timeout else {}),
    }
    if private is not None:
        private_schema = Schema.from_dict(private, name=f"{camel}PrivateSchema")
        attrs["private"] = fields.Nested(
            private_schema, metadata={"description": "Sent only to the event's seat (and in the replay)"}
        )
    EVENT_TYPES[kind] = (description, data, private, timeout)
    schema = type(f"{camel}EventSchema", (_EventBase,), {**attrs, "__doc__": description})
    UNIONS.setdefault("Event", ("type", {}))[1][kind] = schema


#: What each type of event is, in the document's words (the fields come from the engine's types).
DESCRIPTIONS = {
    "round_started": "A round is dealt",
    "dealt": "The seat's hand was dealt",
    "took_upcard": "The seat took the upcard (its draw, or the first-upcard offer)",
    "claimed": "The seat claimed the upcard (May I / buy)",
    "passed": "The seat passed the upcard",
    "claim_won": "The seat won the claimed upcard (and its penalty cards)",
    "drew": "The seat drew from the stock",
    "stock_exhausted": "The stock ran out and may not be rebuilt",
    "stock_rebuilt": "The discards were shuffled into a new stock",
    "went_down": "The seat went down",
    "laid_off": "The seat laid off cards",
    "discarded": "The seat discarded",
    "turn_limit": "The round reached max_turns: it ends with nobody out",
    "round_ended": "A round ended (seat: who went out)",
    "game_ended": "The game ended",
    "seat_absent": "The seat timed out three times in a row",
    "seat_returned": "The absent seat acted again",
}

#: What a field's type cannot say, by ``(event type, field)`` or by field.
FIELD_NOTES: dict[Any, str] = {
    "card": "A card code",
    "upcard": "A card code",
    "deal": "Cards dealt to each seat",
    ("took_upcard", "first_upcard"): "Present (true): taken from the first-upcard offer",
    ("passed", "first_upcard"): "Present (true): the first upcard",
    "voided_claims": "Seats whose claims it voided",
    "hands": "Every hand, for counting",
    ("laid_off", "melds"): "The changed melds",
    "discard_top": "The discard pile's top card after it; null: the pile is empty",
}

#: The fields that hold cards (engine ints, JSON card codes): as the engine's events print them.
CARD_FIELDS = frozenset({"card", "upcard", "hand", "hands", "discard_top"})

#: The schema of each engine value an event holds, as its JSON is (``as_json``, ``meld_json``).
VALUE_SCHEMAS: dict[type, type[Schema]] = {Contract: ContractSchema, Meld: MeldViewSchema, LayOffPart: LayOffInSchema}

#: A value of each type, to make an event of every type and read what its JSON holds.
_SAMPLES: dict[Any, Any] = {int: 1, bool: True, str: "x", Contract: Contract(1, 1)}


def _field_of(hint: Any, card: bool, **kwargs: Any) -> fields.Field:
    """The response field of a value of type ``hint`` (its JSON form; ``card``: card codes)."""
    args = get_args(hint)
    if get_origin(hint) is tuple:
        return fields.List(_field_of(args[0], card), **kwargs)
    if type(hint) is UnionType:  # X | None
        return _field_of(next(a for a in args if a is not type(None)), card, **kwargs)
    if hint in VALUE_SCHEMAS:
        return fields.Nested(VALUE_SCHEMAS[hint], **kwargs)
    if card:
        return fields.String(**kwargs)
    return {int: fields.Integer, bool: fields.Boolean, str: fields.String}[hint](**kwargs)


def _sample(hint: Any, given: bool) -> Any:
    """A value of type ``hint``; of ``X | None``: ``None``, or (``given``) a value of ``X``."""
    if type(hint) is UnionType:
        return _sample(next(a for a in get_args(hint) if a is not type(None)), given) if given else None
    return () if get_origin(hint) is tuple else _SAMPLES[hint]


def event_fields(kind: str, cls: type[Event]) -> tuple[dict[str, fields.Field], dict[str, fields.Field] | None]:
    """The fields of ``data`` and ``private`` of events of ``cls``, from its dataclass fields and
    its JSON: an event with its defaults shows the keys always sent (``required``), one with
    every field set the keys sent at times; a key that is no field holds what it always holds."""
    hints = get_type_hints(cls)
    own = [f for f in dataclass_fields(cls) if f.name not in ("seat", "timeout")]
    least = cls(None, **{f.name: _sample(hints[f.name], False) for f in own if f.default is MISSING})  # type: ignore[arg-type]
    most = cls(None, **{f.name: _sample(hints[f.name], True) for f in own})  # type: ignore[arg-type]

    def schema_fields(always: dict[str, Any] | None, sometimes: dict[str, Any] | None) -> dict[str, fields.Field]:
        out: dict[str, fields.Field] = {}
        for key, value in (sometimes or {}).items():
            sent = key in (always or {})
            note = FIELD_NOTES.get((kind, key)) or FIELD_NOTES.get(key)
            options: dict[str, Any] = {"required": sent, **({"metadata": {"description": note}} if note else {})}
            if key not in hints:  # a constant
                out[key] = fields.String(validate=validate.OneOf([value]), **options)
                continue
            nullable = sent and type(hints[key]) is UnionType
            out[key] = _field_of(hints[key], key in CARD_FIELDS, allow_none=nullable, **options)
        return out

    private = most.private()
    return schema_fields(least.data(), most.data()), (
        None if private is None else schema_fields(least.private(), private)
    )


for _kind, _cls in ENGINE_EVENTS.items():
    _data, _private = event_fields(_kind, _cls)
    _event_type(_kind, DESCRIPTIONS[_kind], _data, _private, timeout="timeout" in _cls.__dataclass_fields__)


#: Most events one page of ``GET .../events`` holds (the repository reads at most this many).
EVENTS_PAGE = 1000


class EventListSchema(Schema):
    events = required(
        fields.List,
        Union("Event"),
        validate=validate.Length(max=EVENTS_PAGE),
        metadata={"description": f"At most {EVENTS_PAGE:,} events; a full page may have more after it"},
    )
    last = required(fields.Integer, metadata={"description": "The last event number; pass it as `after` to continue"})


class ReplaySchema(Schema):
    id = required(fields.String)
    variant = variant_name()
    options = required(AsIs, options_schema, metadata={"description": "The options the table was created with"})
    names = required(fields.List, fields.String(allow_none=True))
    seed = required(fields.String, metadata={"description": "The seed of the shuffles, hexadecimal"})
    totals = ints()
    events = required(fields.List, Union("Event"), metadata={"description": "Every event, with every `private`"})
