"""The bodies of the moves (``POST .../turn/draw``, ``.../claims``...) and the legal moves a
seat view lists: each legal move is exactly the body that makes it, with its ``type``."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from mayi_service.api.schemas.fields import Card, StrictBoolean, StrictInteger, StrictSchema, Text, union_ref


def move_type(kind: str) -> Any:
    """A move body's optional ``type``: the move's, as ``legal`` names it (so a legal entry may be
    sent as it is); the endpoint says which move it is."""
    return Text(
        validate=validate.OneOf([kind]),
        metadata={"description": f"Optional: {kind}, as the legal entry names the move (one may be sent as it is)"},
    )


class DrawInSchema(StrictSchema):
    type = move_type("draw")
    source = Text(
        required=True,
        validate=validate.OneOf(["stock", "discard"]),
        metadata={"description": "stock: the top card of the stock; discard: the upcard"},
    )


class DiscardInSchema(StrictSchema):
    type = move_type("discard")
    card = Card(required=True)


class ClaimInSchema(StrictSchema):
    type = move_type("claim")
    claim = StrictBoolean(required=True, metadata={"description": "true: May I / buy; false: pass"})


class LayOffInSchema(StrictSchema):
    meld = StrictInteger(
        required=True, validate=validate.Range(0, 1000), metadata={"description": "The `id` of the meld"}
    )
    cards = fields.List(
        Card(),
        required=True,
        validate=validate.Length(min=1, max=20),
        metadata={"description": "The cards laid off on it"},
    )
    joker_to = Text(
        validate=validate.OneOf(["high", "low"]),
        allow_none=True,
        metadata={"description": "The end of a run a displaced joker moves to; left out: none, or one open end"},
    )


class LayOffsInSchema(StrictSchema):
    type = move_type("lay_off")
    lay_offs = fields.List(fields.Nested(LayOffInSchema), required=True, validate=validate.Length(min=1, max=20))


class MeldsInSchema(StrictSchema):
    type = move_type("go_down")
    melds = fields.List(
        fields.List(Card(), validate=validate.Length(min=1, max=20)),
        required=True,
        validate=validate.Length(min=1, max=8),
        metadata={"description": "The melds that meet the contract, each a list of cards"},
    )
    lay_offs = fields.List(
        fields.Nested(LayOffInSchema),
        validate=validate.Length(max=20),
        load_default=list,
        metadata={"description": "Lay-offs made in the same move, after the melds"},
    )


# Each legal move is exactly the request body that makes it, with its `type` (which the
# body may carry too): the document composes each member of `LegalMove` from the body's
# schema, so that a legal entry is a valid body of its endpoint, as it is.

#: The request body of each type of move (the members of ``LegalMove``).
MOVE_BODIES: dict[str, type[Schema]] = {
    "draw": DrawInSchema,
    "claim": ClaimInSchema,
    "discard": DiscardInSchema,
    "go_down": MeldsInSchema,
    "lay_off": LayOffsInSchema,
}


#: The endpoint of each type of move (the description of a legal entry's ``type``).
MOVE_ENDPOINTS = {
    "draw": "POST .../turn/draw",
    "claim": "POST .../claims",
    "discard": "POST .../turn/discard",
    "go_down": "POST .../melds",
    "lay_off": "POST .../lay-offs",
}


def legal_move_component(kind: str) -> dict[str, Any]:
    """The component of a legal move of type ``kind``: its body's schema, with ``type`` required."""
    body = MOVE_BODIES[kind].__name__.removesuffix("Schema")
    tag = {"type": "string", "enum": [kind], "description": MOVE_ENDPOINTS[kind]}
    return {"allOf": [union_ref(body), {"type": "object", "properties": {"type": tag}, "required": ["type"]}]}
