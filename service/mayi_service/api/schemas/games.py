"""Tables: creating one, taking a seat, listing tables, and a table's options (one field per
option any registered variant declares, from the engine's registry)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from mayi_bots import NAMES as HOUSE_BOTS
from mayi_engine import VARIANTS, GameStatus, OptionSpec
from mayi_service.api.schemas.fields import (
    Card,
    Name,
    QueryInteger,
    RegisteredVariant,
    StrictBoolean,
    StrictFloat,
    StrictInteger,
    StrictSchema,
    Text,
    Union,
    required,
    variant_name,
)

#: The field that reads each type of option (strict: a number is a JSON number, a boolean true or false).
_OPTION_FIELDS: dict[type, type[fields.Field]] = {bool: StrictBoolean, int: StrictInteger, float: StrictFloat}


def _option_field(specs: list[tuple[str, OptionSpec, Any]]) -> fields.Field:
    """The request field of one option, from its :class:`OptionSpec` in each variant that has it
    (``(variant title, spec, default)``): its type, its range, and the defaults in words."""
    spec = specs[0][1]
    defaults = ", ".join(
        f"{title} {default!r}".replace("True", "true").replace("False", "false") for title, _, default in specs
    )
    description = f"{spec.description}" + (f" ({spec.unit})" if spec.unit else "") + f"; default: {defaults}"
    if spec.type is bool:
        return StrictBoolean(metadata={"description": description})
    lows = [s.low for _, s, _ in specs if s.low is not None]
    highs = [s.high for _, s, _ in specs if s.high is not None]
    low, high = (min(lows) if lows else None), (max(highs) if highs else None)
    return _OPTION_FIELDS[spec.type](validate=validate.Range(low, high), metadata={"description": description})


_options_schemas: dict[tuple[Any, ...], type[Schema]] = {}


def options_schema() -> type[Schema]:
    """The schema of a table's ``options``, built from the engine's registry: one field per
    option any registered variant declares (:attr:`Rules.option_specs`), typed and bounded
    by its spec. Whether the chosen variant has the option is the engine's to say."""
    key = tuple((name, rules) for name, rules in VARIANTS.items())
    found = _options_schemas.get(key)
    if found is None:
        by_name: dict[str, list[tuple[str, OptionSpec, Any]]] = {}
        for rules in VARIANTS.values():
            for spec in rules.option_specs:
                by_name.setdefault(spec.name, []).append((rules.title, spec, getattr(rules, spec.name)))
        attrs: dict[str, Any] = {name: _option_field(specs) for name, specs in by_name.items()}
        attrs["__doc__"] = "Table options; each variant accepts its own (the engine refuses the others)."
        found = _options_schemas[key] = type("OptionsSchema", (StrictSchema,), attrs)
    return found


class OptionsField(fields.Nested):
    """The ``options`` object, read with the schema of the variants registered now."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(options_schema, **kwargs)

    @property
    def schema(self) -> Schema:
        schema_class = options_schema()
        if not isinstance(self._schema, schema_class):
            self._schema = schema_class()
        return self._schema


class PlayerInSchema(StrictSchema):
    name = Name(required=True)


class TestBlockSchema(StrictSchema):
    seed = Text(validate=validate.Regexp(r"^[0-9a-fA-F]{32,128}$"), metadata={"description": "Hex seed"})
    stacked_decks = fields.List(
        fields.List(Card(), allow_none=True, validate=validate.Length(max=216)),
        allow_none=True,
        validate=validate.Length(max=8),
        metadata={"description": "Per round (index 0 = round 1): the top of the stock, top first; null = shuffled"},
    )
    start_round = StrictInteger(
        validate=validate.Range(1, 8),
        metadata={
            "description": "The round to start at: 1 to the variant's number of rounds ("
            + ", ".join(f"{rules.title} {len(rules.rounds)}" for rules in VARIANTS.values())
            + "); a larger one is a validation_error"
        },
    )


class GameCreateSchema(StrictSchema):
    variant = Text(required=True, validate=RegisteredVariant())
    seats = StrictInteger(required=True, validate=validate.Range(2, 8))
    options = OptionsField(load_default=dict)
    players = fields.List(fields.Nested(PlayerInSchema), validate=validate.Length(max=8), load_default=list)
    test = fields.Nested(
        TestBlockSchema,
        allow_none=True,
        metadata={"description": "Set-up for tests (makes the table unrated); leave it out for a rated table"},
    )


class SeatInSchema(StrictSchema):
    name = Name()  # required unless house_bot is given (the view checks)
    seat = StrictInteger(validate=validate.Range(0, 7))
    house_bot = Text(
        validate=validate.OneOf(HOUSE_BOTS),
        metadata={
            "description": "Seat a house bot (one of the reference bots, played by the service) "
            "instead of a person; its `name` defaults to the bot's name, numbered from the second "
            'of that bot at the table: "greedy (house bot)", "greedy 2 (house bot)"'
        },
    )


class ListGamesQuerySchema(StrictSchema):
    status = Text(validate=validate.OneOf([s.value for s in GameStatus]))
    variant = Text(validate=RegisteredVariant())
    page = QueryInteger(load_default=1, validate=validate.Range(1, 100000))
    page_size = QueryInteger(load_default=20, validate=validate.Range(1, 100))


class IssuedSeatSchema(Schema):
    seat = required(fields.Integer)
    name = required(fields.String)
    token = required(fields.String, metadata={"description": "The seat's bearer token, shown only once"})


class GameCreatedSchema(Schema):
    game_id = required(fields.String)
    seats = required(fields.List, fields.Nested(IssuedSeatSchema), metadata={"description": "The seats `players` took"})
    game = required(Union, "GameView")


class SeatTakenSchema(Schema):
    seat = required(fields.Integer)
    token = required(
        fields.String,
        allow_none=True,
        metadata={"description": "The seat's bearer token, shown only once (null for a house bot: it has none)"},
    )
    game = required(Union, "GameView")


class GameSummarySchema(Schema):
    id = required(fields.String)
    variant = variant_name()
    status = required(fields.String, validate=validate.OneOf([s.value for s in GameStatus]))
    seats = required(fields.Integer)
    names = required(fields.List, fields.String(allow_none=True), metadata={"description": "null: an open seat"})
    rated = required(fields.Boolean)
    created_at = required(fields.Float)
    version = required(fields.Integer)


class GameListSchema(Schema):
    games = required(fields.List, fields.Nested(GameSummarySchema))
    page = required(fields.Integer)
    page_size = required(fields.Integer)
    total = required(fields.Integer)
