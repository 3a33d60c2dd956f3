"""Request and response schemas. They check shape only; the engine checks rules.

Request fields are strict: a number is a JSON number (``"4"`` is not one), a
boolean is ``true`` or ``false``, and no text may hold a lone surrogate (which
no UTF-8 text can carry) or a control character. Query parameters arrive as
text, so their numbers must be plain ASCII digits.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from apispec import BasePlugin
from marshmallow import RAISE, Schema, ValidationError, fields, validate

from mayi_bots import NAMES as HOUSE_BOTS
from mayi_engine import VARIANTS, GameStatus, InvalidMoveError, OptionSpec, parse_card
from mayi_service.problem_types import PROBLEM_CODES

#: Longest player name, in characters.
NAME_MAX = 40

#: Bidirectional formatting characters: they would reorder the text shown around a name.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _no_bad_characters(value: str) -> None:
    """Refuse lone surrogates (text that cannot be stored as UTF-8) and control characters."""
    for i, char in enumerate(value):
        category = unicodedata.category(char)
        if category == "Cs":
            raise ValidationError(f"a lone surrogate (U+{ord(char):04X}) at character {i + 1} is not text")
        if category == "Cc":
            raise ValidationError(f"control character U+{ord(char):04X} at character {i + 1} is not allowed")


#: What :class:`Text` refuses, as the OpenAPI document states it: no control character
#: (an ECMA regex; lone surrogates, which no JSON text of UTF-8 can carry, are refused too).
TEXT_PATTERN = "^[^\u0000-\u001f\u007f-\u009f]*$"


class Text(fields.String):
    """A string that can be stored and shown: no lone surrogates, no control characters.
    (The document says so with :data:`TEXT_PATTERN`, unless the field has a pattern or a
    list of values of its own.)"""

    def __init__(self, **kwargs: Any) -> None:
        metadata = kwargs.pop("metadata", None) or {}
        validators = kwargs.get("validate")
        validators = validators if isinstance(validators, list | tuple) else [validators]
        if "pattern" not in metadata and not any(isinstance(v, validate.OneOf | validate.Regexp) for v in validators):
            metadata = {**metadata, "pattern": TEXT_PATTERN}
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text: str = super()._deserialize(value, attr, data, **kwargs)
        _no_bad_characters(text)
        return text


#: A name as the document states it: no control or bidirectional formatting characters, and not blank.
NAME_PATTERN = "^(?=.*\\S)[^\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$"


class Name(Text):
    """A player's name: 1 to 40 characters once the spaces around it are trimmed, no control
    or bidirectional formatting characters, no lone surrogates."""

    def __init__(self, **kwargs: Any) -> None:
        description = (
            f"1 to {NAME_MAX} characters, not blank (spaces around it are trimmed); no control characters, "
            "no bidirectional formatting characters (U+202A-U+202E, U+2066-U+2069)"
        )
        super().__init__(
            validate=validate.Length(min=1, max=NAME_MAX),
            metadata={"description": description, "pattern": NAME_PATTERN},
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if len(text) > NAME_MAX:  # before trimming too, as the OpenAPI document says
            raise ValidationError(f"Length must be between 1 and {NAME_MAX}.")
        text = text.strip()
        if not text:
            raise ValidationError("a name must not be blank")
        for i, char in enumerate(text):
            if char in _BIDI_CONTROLS:
                raise ValidationError(f"bidirectional formatting character U+{ord(char):04X} at character {i + 1}")
        return text


#: A card code, as the engine reads it: rank (A 2-9 T J Q K, or 10) then suit (C D H S), or JK;
#: any case. (An ECMA regex, as OpenAPI wants: no inline flags.)
CARD_PATTERN = "^(?:(?:10|[2-9TJQKAtjqka])[CDHScdhs]|[Jj][Kk])$"
_CARD_RE = re.compile(CARD_PATTERN)


def is_card_code(value: str) -> bool:
    """Whether ``value`` is a card code as :class:`Card` reads it (taken as it is)."""
    return _CARD_RE.fullmatch(value) is not None


class Card(Text):
    """A card code. A wrong one is refused in the engine's words (which name the card)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            metadata={
                "description": "A card code: rank then suit (TH, AS; 10H is TH), or JK; any case",
                "pattern": CARD_PATTERN,
            },
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        if isinstance(value, str) and _CARD_RE.fullmatch(value):  # (re's $ would let a final newline by)
            return value
        text = fields.String._deserialize(self, value, attr, data, **kwargs)  # a string at least
        raise ValidationError(card_error(text))  # (repr escapes any control character or surrogate)


def _engine_card_error() -> str:
    """What the engine says after the code it refuses (``'XX' is not a card: ...``)."""
    try:
        parse_card(None)
    except InvalidMoveError as exc:
        return exc.message[len(repr(None)) :]
    raise AssertionError("the engine read None as a card")  # pragma: no cover


#: The engine's words after a refused card code; a schema error that ends so is a ``bad_card``.
CARD_ERROR = _engine_card_error()


def card_error(code: str) -> str:
    """The engine's refusal of a card code, naming the code."""
    return f"{code!r}{CARD_ERROR}"


class StrictInteger(fields.Integer):
    """An integer that must be a JSON integer: ``4``, never ``"4"``, ``4.0`` or ``true``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)


class StrictFloat(fields.Float):
    """A number that must be a JSON number (integer or not): ``1.5``, never ``"1.5"`` or ``true``."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        number: float = super()._deserialize(value, attr, data, **kwargs)
        return number


class StrictBoolean(fields.Boolean):
    """``true`` or ``false``, nothing else (not ``1``, ``"yes"`` or ``"true"``)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class QueryInteger(fields.Integer):
    """A whole number in a query string: ASCII digits only (not ``1_0``, ``+1``, ``1e1`` or other
    scripts' digits); the document says so with a ``pattern`` on the parameter's text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(metadata={"pattern": "^[0-9]{1,16}$", **(kwargs.pop("metadata", None) or {})}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 16):
            raise self.make_error("invalid", input=value)
        number: int = super()._deserialize(value, attr, data, **kwargs)
        return number


_DECIMAL = re.compile(r"[0-9]{1,16}(?:\.[0-9]{1,16})?")


class QueryFloat(fields.Float):
    """A number in a query string: ASCII digits with an optional decimal point (``2``, ``0.5``;
    not ``1e1``); the document says so with a ``pattern`` on the parameter's text."""

    def __init__(self, **kwargs: Any) -> None:
        pattern = "^[0-9]{1,16}(\\.[0-9]{1,16})?$"
        super().__init__(metadata={"pattern": pattern, **(kwargs.pop("metadata", None) or {})}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if not (isinstance(value, str) and _DECIMAL.fullmatch(value)):
            raise self.make_error("invalid", input=value)
        number: float = super()._deserialize(value, attr, data, **kwargs)
        return number


class StrictSchema(Schema):
    class Meta:
        unknown = RAISE


# -- requests -----------------------------------------------------------------


class RegisteredVariant(validate.OneOf):
    """The name of a variant registered with the engine (``mayi_engine.register_variant``),
    looked up when a request is checked: a variant registered before the app serves is
    playable, and the OpenAPI document lists the variants known when it is built."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(VARIANTS)

    @choices.setter
    def choices(self, value: Any) -> None:  # OneOf.__init__ sets it: the registry decides
        pass

    @property  # type: ignore[override]
    def choices_text(self) -> str:
        return ", ".join(VARIANTS)

    @choices_text.setter
    def choices_text(self, value: Any) -> None:
        pass


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


#: The options of the variants registered when this module was imported (what requests document).
OptionsSchema = options_schema()

_RESPONSE_FIELDS: dict[type, type[fields.Field]] = {bool: fields.Boolean, int: fields.Integer, float: fields.Float}


def effective_options_schema() -> type[Schema]:
    """The schema of a view's ``options``: the options the table plays by, every option of
    its variant (the ones every registered variant has are required), typed by their specs."""
    by_name: dict[str, list[OptionSpec]] = {}
    for rules in VARIANTS.values():
        for spec in rules.option_specs:
            by_name.setdefault(spec.name, []).append(spec)
    attrs: dict[str, Any] = {}
    for name, specs in by_name.items():
        spec = specs[0]
        every = len(specs) == len(VARIANTS)
        description = (
            spec.description
            + (f" ({spec.unit})" if spec.unit else "")
            + ("" if every else "; present where the variant has it")
        )
        attrs[name] = _RESPONSE_FIELDS[spec.type](required=every, metadata={"description": description})
    attrs["__doc__"] = "The options the table plays by: the variant's defaults with the table's options applied."
    return type("EffectiveOptionsSchema", (Schema,), attrs)


#: The options a view shows (the variants registered when this module was imported).
EffectiveOptionsSchema = effective_options_schema()


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


def _move_type(kind: str) -> Any:
    """A move body's optional ``type``: the move's, as ``legal`` names it (so a legal entry may be
    sent as it is); the endpoint says which move it is."""
    return Text(
        validate=validate.OneOf([kind]),
        metadata={"description": f"Optional: {kind}, as the legal entry names the move (one may be sent as it is)"},
    )


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


#: What the document adds to components that their fields cannot say (:func:`refine_components`).
COMPONENT_EXTRAS: dict[str, dict[str, Any]] = {
    "SeatIn": {
        "minProperties": 1,
        "description": "A seat to take: `name` (a person), or `house_bot` (its `name` defaults to the bot's); "
        "`seat` picks one, else the first open seat. One of `name` and `house_bot` is required",
    },
}


def refine_components(spec: Any) -> None:
    """Add :data:`COMPONENT_EXTRAS` to the components of ``spec`` (once every schema is in it)."""
    for name, extra in COMPONENT_EXTRAS.items():
        spec.components.schemas[name].update(extra)


class DrawInSchema(StrictSchema):
    type = _move_type("draw")
    source = Text(
        required=True,
        validate=validate.OneOf(["stock", "discard"]),
        metadata={"description": "stock: the top card of the stock; discard: the upcard"},
    )


class DiscardInSchema(StrictSchema):
    type = _move_type("discard")
    card = Card(required=True)


class ClaimInSchema(StrictSchema):
    type = _move_type("claim")
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
    type = _move_type("lay_off")
    lay_offs = fields.List(fields.Nested(LayOffInSchema), required=True, validate=validate.Length(min=1, max=20))


class MeldsInSchema(StrictSchema):
    type = _move_type("go_down")
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


class ListGamesQuerySchema(StrictSchema):
    status = Text(validate=validate.OneOf([s.value for s in GameStatus]))
    variant = Text(validate=RegisteredVariant())
    page = QueryInteger(load_default=1, validate=validate.Range(1, 100000))
    page_size = QueryInteger(load_default=20, validate=validate.Range(1, 100))


class EventsQuerySchema(StrictSchema):
    after = QueryInteger(load_default=0, validate=validate.Range(0, 2**53))
    wait = QueryFloat(load_default=0, validate=validate.Range(0, 60))


# -- responses ----------------------------------------------------------------
#
# They document what the service sends, exactly: every field the service always
# sends is ``required``, a field that may be null is ``allow_none``, and every
# object is closed (``unknown=RAISE`` becomes ``additionalProperties: false``).
# Views and events are unions (``oneOf``) told apart by a field (``status``,
# ``type``), so that a generated client narrows them (docs/api.md, "Types").
# tests/service/contract/test_responses_match_the_document.py holds every response the
# test suite receives to these schemas.


def _req(field: type[fields.Field], *args: Any, **kwargs: Any) -> Any:
    """A field the service always sends."""
    return field(*args, required=True, **kwargs)


def _const(value: str, description: str = "") -> Any:
    """A string field that always holds ``value`` (a union's tag)."""
    return Text(
        required=True, validate=validate.OneOf([value]), metadata={"description": description} if description else {}
    )


def _variant(**kwargs: Any) -> Any:
    """A response's ``variant``: the name of a registered variant (an enum, as in requests)."""
    return _req(fields.String, validate=RegisteredVariant(), **kwargs)


def _strings(**kwargs: Any) -> Any:
    return fields.List(fields.String(), required=True, **kwargs)


def _ints(**kwargs: Any) -> Any:
    return fields.List(fields.Integer(), required=True, **kwargs)


class Union(fields.Raw):
    """A value that is one of several schemas, told apart by the value of one field.

    Documentation only: it is dumped as it is. ``name`` names the union's component;
    :func:`register_unions` adds the components to the OpenAPI document.
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.union_name = name


class AsIs(fields.Raw):
    """A value sent as it is stored (not dumped field by field), documented by ``schema``."""

    def __init__(self, schema: type[Schema], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.schema = schema


#: Each union: component name -> (the field that tells the members apart, {its value: member schema}).
UNIONS: dict[str, tuple[str, dict[str, type[Schema]]]] = {}


def union_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def register_unions(spec: Any) -> None:
    """Add every union, and its members, to ``spec`` as components (``oneOf`` with a ``discriminator``):
    ``LegalMove``'s members composed from the move bodies (:func:`legal_move_component`)."""
    mapping = {}
    for kind, body in MOVE_BODIES.items():
        if body.__name__.removesuffix("Schema") not in spec.components.schemas:
            spec.components.schema(body.__name__.removesuffix("Schema"), schema=body)
        member = "Legal" + "".join(part.title() for part in kind.split("_"))
        spec.components.schema(member, component=legal_move_component(kind))
        mapping[kind] = f"#/components/schemas/{member}"
    spec.components.schema(
        "LegalMove",
        component={
            "oneOf": [{"$ref": ref} for ref in mapping.values()],
            "discriminator": {"propertyName": "type", "mapping": mapping},
        },
    )
    for name, (tag, members) in UNIONS.items():
        mapping = {}
        for value, schema in members.items():
            member = schema.__name__.removesuffix("Schema")
            if member not in spec.components.schemas:
                spec.components.schema(member, schema=schema)
            mapping[value] = f"#/components/schemas/{member}"
        spec.components.schema(
            name,
            component={
                "oneOf": [{"$ref": ref} for ref in mapping.values()],
                "discriminator": {"propertyName": tag, "mapping": mapping},
            },
        )


def union2properties(self: Any, field: fields.Field, **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function: a :class:`Union` field is a reference to its component
    (a plain ``$ref``: generators read ``allOf`` of a union with a discriminator as a schema
    that extends it; so a :class:`Union` field takes no ``description``, which would be a
    sibling of the ``$ref``), an :class:`AsIs` field one to its schema's (``allOf: [$ref]``)."""
    if isinstance(field, Union):
        return union_ref(field.union_name)
    if isinstance(field, AsIs):
        return {"allOf": [self.resolve_nested_schema(field.schema)]}
    return {}


#: The member of an ``anyOf`` that admits null and nothing else, in OpenAPI 3.0.3 terms:
#: ``nullable`` counts only beside a ``type``, and ``enum: [null]`` leaves null alone.
NULL_SCHEMA: dict[str, Any] = {"type": "object", "nullable": True, "enum": [None]}


def nullable_ref2properties(self: Any, field: fields.Field, ret: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function: a nullable nested schema as ``anyOf: [$ref, <null>]``
    (:data:`NULL_SCHEMA`), which strict 3.0.3 tools read as "that schema or null"; not
    apispec's ``anyOf: [$ref, {type: object, nullable: true}]``, which would admit any
    object, nor ``allOf: [$ref], nullable: true``, whose ``nullable`` (no ``type`` beside
    it) strict tools ignore."""
    loose = {"type": "object", "nullable": True}
    any_of = ret.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and loose in any_of:
        ret["anyOf"] = [item for item in any_of if item != loose] + [NULL_SCHEMA]
    return {}


#: Operations whose token is optional (they answer without one, and more to a seat's token);
#: every other operation that documents a 401 needs one.
TOKEN_OPTIONAL = frozenset({"getGame", "getEvents", "streamEvents", "takeSeat", "getMetrics"})


class OperationSecurity(BasePlugin):
    """apispec plugin: each operation's ``security``, from its responses. An operation that
    documents no 401 takes no token (``[]``); one that does needs the bearer token, or
    takes it optionally (``[{}, {bearer: []}]``) if it is in :data:`TOKEN_OPTIONAL`."""

    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        for operation in (operations or {}).values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            if "401" not in {str(status) for status in operation["responses"]}:
                operation["security"] = []
            elif operation.get("operationId") in TOKEN_OPTIONAL:
                operation["security"] = [{}, {"bearer": []}]
            else:
                operation["security"] = [{"bearer": []}]


class ProblemSchema(Schema):
    """An error as RFC 9457 problem details: ``code`` is stable; some codes add fields of their own."""

    type = _req(fields.String, metadata={"description": "A URI naming the code: .../problems/<code>"})
    title = _req(fields.String, metadata={"description": "The code in words (the same for every problem of a code)"})
    status = _req(fields.Integer, metadata={"description": "The HTTP status"})
    detail = _req(fields.String, metadata={"description": "What went wrong, in words a player understands"})
    code = _req(fields.String, validate=validate.OneOf(PROBLEM_CODES), metadata={"description": "Stable error code"})
    errors = fields.List(
        fields.String(),
        metadata={"description": "validation_error, bad_card, bad_request: each problem with the request, by field"},
    )
    retry_after = fields.Float(metadata={"description": "claims_open: seconds until the claim window closes"})
    closes_at = fields.Float(
        metadata={"description": "claims_open, claim_not_allowed: when the claim window closes(d), Unix seconds"}
    )
    current_version = fields.Integer(metadata={"description": "version_conflict: the game's version now"})
    current_key = fields.String(
        allow_none=True,
        metadata={
            "description": "version_conflict under `If-Match: key:<key>`: the key of the seat's decision now "
            "(null: the seat has no decision now, say the upcard it answered was taken first)"
        },
    )
    cards = fields.List(fields.String(), metadata={"description": "card_not_in_hand: the cards you do not hold"})
    limit = fields.Integer(metadata={"description": "too_many_open_tables: open tables one address may have"})


class ContractSchema(Schema):
    books = _req(fields.Integer, metadata={"description": "Books (cards of one rank) to lay down"})
    runs = _req(fields.Integer, metadata={"description": "Runs (cards in sequence in one suit) to lay down"})
    all_cards = _req(fields.Boolean, metadata={"description": "Every card of the hand must go into the melds"})
    text = _req(fields.String, metadata={"description": "The contract in words"})


class RoundSchema(Schema):
    number = _req(fields.Integer, metadata={"description": "From 1"})
    of = _req(fields.Integer, metadata={"description": "Rounds in the game"})
    dealer = _req(fields.Integer, metadata={"description": "The seat that dealt this round"})
    first = _req(fields.Integer, metadata={"description": "The seat that played first this round"})
    contract = _req(fields.Nested, ContractSchema, metadata={"description": "What going down takes this round"})


class ClaimWindowSchema(Schema):
    card = _req(fields.String, metadata={"description": "The upcard"})
    discarder = _req(
        fields.Integer, allow_none=True, metadata={"description": "The seat that discarded it; null: the first upcard"}
    )
    claims = _ints(metadata={"description": "Seats that have claimed it (May I, or buy in Shanghai)"})
    passes = _ints(metadata={"description": "Seats that have passed"})
    pending = _ints(metadata={"description": "Seats that may still answer"})
    closes_at = _req(fields.Float, allow_none=True, metadata={"description": "Unix seconds; null: no clock"})


class WaitingSeatSchema(Schema):
    seat = _req(fields.Integer, metadata={"description": "The seat's number, from 0"})
    name = _req(fields.String, allow_none=True, metadata={"description": "The player's name; null: open"})
    taken = _req(fields.Boolean, metadata={"description": "A player (or a house bot) holds it"})


class SeatViewSchema(Schema):
    seat = _req(fields.Integer, metadata={"description": "The seat's number, from 0 (the order of play)"})
    name = _req(fields.String, allow_none=True, metadata={"description": "The player's name"})
    hand_count = _req(fields.Integer, metadata={"description": "Cards in the seat's hand"})
    down = _req(fields.Boolean, metadata={"description": "Has gone down this round"})
    total = _req(fields.Integer, metadata={"description": "Score so far (lower is better)"})
    claims_used = _req(fields.Integer, metadata={"description": "Claims the seat has won this round"})
    claims_left = _req(
        fields.Integer, allow_none=True, metadata={"description": "Claims it may still win this round; null: no limit"}
    )
    absent = _req(fields.Boolean, metadata={"description": "Timed out three times in a row; played by the clock"})


class JokerSchema(Schema):
    index = _req(fields.Integer, metadata={"description": "Position of the joker in `cards`"})
    stands_for = _req(fields.String, metadata={"description": "The card it stands for"})


class MeldViewSchema(Schema):
    id = _req(fields.Integer, metadata={"description": "The meld's number: a lay-off names it as `meld`"})
    owner = _req(fields.Integer, metadata={"description": "The seat that laid it down"})
    type = _req(fields.String, validate=validate.OneOf(["book", "run"]))
    cards = _strings(metadata={"description": "Runs low to high"})
    jokers = _req(fields.List, fields.Nested(JokerSchema), metadata={"description": "The jokers in it"})


class ResultSchema(Schema):
    round = _req(fields.Integer, metadata={"description": "The round's number"})
    out = _req(fields.Integer, allow_none=True, metadata={"description": "The seat that went out; null: nobody"})
    scores = _ints(metadata={"description": "The points each seat scored in it, by seat"})


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


class _ViewBase(Schema):
    """What every view holds, whatever the game's status."""

    id = _req(fields.String, metadata={"description": "The game's id"})
    version = _req(fields.Integer, metadata={"description": "Bumped by every change; send it as If-Match"})
    variant = _variant(metadata={"description": "The variant played: may_i, shanghai, or a registered one"})
    options = _req(
        fields.Nested,
        EffectiveOptionsSchema,
        metadata={
            "description": "The options the table plays by: its variant's defaults, with those it was created with"
        },
    )
    rated = _req(fields.Boolean, metadata={"description": "false: a test table (set-up given)"})
    created_at = _req(fields.Float, metadata={"description": "Unix seconds"})
    last_event = _req(fields.Integer, metadata={"description": "The number of the last event"})


class WaitingViewSchema(_ViewBase):
    """A table still waiting for players: no round, phase, hand or legal moves yet."""

    status = _const("waiting", "waiting: a table waiting for players")
    seats = _req(fields.List, fields.Nested(WaitingSeatSchema), metadata={"description": "Every seat, in order"})
    seat = _req(fields.Integer, allow_none=True, metadata={"description": "The caller's seat; null: no token"})


class _PlayedViewSchema(_ViewBase):
    """A game under way or over. ``seat``, ``hand``, ``held``, ``legal`` and ``key`` are sent to a seat only."""

    round = _req(fields.Nested, RoundSchema, metadata={"description": "The round being played (the last, when over)"})
    turn = _req(fields.Integer, metadata={"description": "The seat whose turn it is"})
    actor = _req(fields.Integer, metadata={"description": "The seat that must act now"})
    upcard = _req(fields.String, allow_none=True, metadata={"description": "The card the claim window is on"})
    discard_top = _req(
        fields.String, allow_none=True, metadata={"description": "The top card of the discard pile; null: empty"}
    )
    stock_count = _req(fields.Integer, metadata={"description": "Cards left in the stock"})
    discard_count = _req(fields.Integer, metadata={"description": "Cards in the discard pile"})
    reshuffles = _req(fields.Integer, metadata={"description": "Stock rebuilds this round"})
    claim_window = _req(
        fields.Nested,
        ClaimWindowSchema,
        allow_none=True,
        metadata={"description": "The upcard on offer out of turn; null: none"},
    )
    seats = _req(fields.List, fields.Nested(SeatViewSchema), metadata={"description": "Every seat, in order"})
    melds = _req(fields.List, fields.Nested(MeldViewSchema), metadata={"description": "Every meld on the table"})
    goals_done = fields.List(
        fields.List(fields.Integer()),
        metadata={"description": "Free goal order only: per seat, the goals met (numbered as the rounds)"},
    )
    deadline = _req(fields.Float, allow_none=True, metadata={"description": "When the clock acts, Unix seconds"})
    results = _req(fields.List, fields.Nested(ResultSchema), metadata={"description": "Rounds played, in order"})
    seat = fields.Integer(metadata={"description": "Seat views only: the caller's seat"})
    hand = fields.List(fields.String(), metadata={"description": "Seat views only: the seat's cards"})
    held = fields.String(
        allow_none=True,
        metadata={"description": "Seat views only: the card taken this turn, which may not be discarded"},
    )
    legal = fields.List(
        Union("LegalMove"),
        metadata={"description": "Seat views only: every move the seat may make now; each is the body to send"},
    )
    key = fields.String(
        allow_none=True,
        metadata={
            "description": "Seat views only: the key of the seat's decision (as `GET /v1/bots/me/decisions` "
            "lists it; null: no legal move). Send a move with `If-Match: key:<key>`: it is applied while the "
            "seat's choices are these, whatever other seats answered to the upcard meanwhile"
        },
    )


class PlayingViewSchema(_PlayedViewSchema):
    status = _const("playing", "playing: a game under way")
    phase = _req(
        fields.String,
        validate=validate.OneOf(["first_offer", "first_discard", "draw", "play"]),
        metadata={
            "description": "Who must act, and how. first_offer: May I's first upcard of a round is offered to "
            "`actor` (take it or pass); first_discard: `actor` took it out of turn and discards at once; "
            "draw: `turn` draws, while other seats may claim or pass the upcard; play: `turn` has drawn and "
            "goes down, lays off, discards"
        },
    )


class FinishedViewSchema(_PlayedViewSchema):
    status = _const("finished", "finished: a game over")
    phase = _const("finished", "finished: the game is over")
    places = _ints(metadata={"description": "Each seat's place (1 = best; equal totals share a place)"})


UNIONS["GameView"] = (
    "status",
    {"waiting": WaitingViewSchema, "playing": PlayingViewSchema, "finished": FinishedViewSchema},
)


class IssuedSeatSchema(Schema):
    seat = _req(fields.Integer)
    name = _req(fields.String)
    token = _req(fields.String, metadata={"description": "The seat's bearer token, shown only once"})


class GameCreatedSchema(Schema):
    game_id = _req(fields.String)
    seats = _req(fields.List, fields.Nested(IssuedSeatSchema), metadata={"description": "The seats `players` took"})
    game = _req(Union, "GameView")


class SeatTakenSchema(Schema):
    seat = _req(fields.Integer)
    token = _req(
        fields.String,
        allow_none=True,
        metadata={"description": "The seat's bearer token, shown only once (null for a house bot: it has none)"},
    )
    game = _req(Union, "GameView")


class GameSummarySchema(Schema):
    id = _req(fields.String)
    variant = _variant()
    status = _req(fields.String, validate=validate.OneOf([s.value for s in GameStatus]))
    seats = _req(fields.Integer)
    names = _req(fields.List, fields.String(allow_none=True), metadata={"description": "null: an open seat"})
    rated = _req(fields.Boolean)
    created_at = _req(fields.Float)
    version = _req(fields.Integer)


class GameListSchema(Schema):
    games = _req(fields.List, fields.Nested(GameSummarySchema))
    page = _req(fields.Integer)
    page_size = _req(fields.Integer)
    total = _req(fields.Integer)


# -- events: one schema per type, with its `data` (and `private`) ---------------


class _EventBase(Schema):
    seq = _req(fields.Integer, metadata={"description": "The event number, from 1"})
    seat = _req(fields.Integer, allow_none=True, metadata={"description": "The seat it concerns; null: none"})
    time = _req(fields.Float, metadata={"description": "Unix seconds"})


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
        "type": _const(kind, description),
        "data": _req(fields.Nested, data_schema),
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


def _card() -> Any:
    return _req(fields.String, metadata={"description": "A card code"})


def _discard_top() -> Any:
    """The pile's top once the upcard is taken (absent from events logged before it was sent)."""
    return fields.String(
        allow_none=True, metadata={"description": "The discard pile's top card after it; null: the pile is empty"}
    )


_event_type(
    "round_started",
    "A round is dealt",
    {
        "round": _req(fields.Integer),
        "dealer": _req(fields.Integer),
        "first": _req(fields.Integer),
        "contract": _req(fields.Nested, ContractSchema),
        "deal": _req(fields.Integer, metadata={"description": "Cards dealt to each seat"}),
        "upcard": _card(),
        "jokers_buried": _req(fields.Integer),
    },
)
_event_type("dealt", "The seat's hand was dealt", {}, {"hand": _strings()})
_event_type(
    "took_upcard",
    "The seat took the upcard (its draw, or the first-upcard offer)",
    {
        "card": _card(),
        "first_upcard": fields.Boolean(metadata={"description": "Present (true): taken from the first-upcard offer"}),
        "voided_claims": fields.List(fields.Integer(), metadata={"description": "Seats whose claims it voided"}),
        "discard_top": _discard_top(),
    },
)
_event_type("claimed", "The seat claimed the upcard (May I / buy)", {"card": _card()})
_event_type(
    "passed",
    "The seat passed the upcard",
    {"card": _card(), "first_upcard": fields.Boolean(metadata={"description": "Present (true): the first upcard"})},
    timeout=True,
)
_event_type(
    "claim_won",
    "The seat won the claimed upcard (and its penalty cards)",
    {"card": _card(), "penalty": _req(fields.Integer), "claimants": _ints(), "discard_top": _discard_top()},
)
_event_type(
    "drew",
    "The seat drew from the stock",
    {"source": _req(fields.String, validate=validate.OneOf(["stock"])), "penalty": _req(fields.Boolean)},
    {"card": _card()},
    timeout=True,
)
_event_type("stock_exhausted", "The stock ran out and may not be rebuilt", {"reason": _req(fields.String)})
_event_type(
    "stock_rebuilt",
    "The discards were shuffled into a new stock",
    {"cards": _req(fields.Integer), "rebuilds": _req(fields.Integer)},
)
_event_type(
    "went_down",
    "The seat went down",
    {"melds": _req(fields.List, fields.Nested(MeldViewSchema)), "contract": _req(fields.Nested, ContractSchema)},
)
_event_type(
    "laid_off",
    "The seat laid off cards",
    {
        "lay_offs": _req(fields.List, fields.Nested(LayOffInSchema)),
        "melds": _req(fields.List, fields.Nested(MeldViewSchema), metadata={"description": "The changed melds"}),
    },
)
_event_type("discarded", "The seat discarded", {"card": _card()}, timeout=True)
_event_type("turn_limit", "The round reached max_turns: it ends with nobody out", {"turns": _req(fields.Integer)})
_event_type(
    "round_ended",
    "A round ended (seat: who went out)",
    {
        "round": _req(fields.Integer),
        "out": _req(fields.Integer, allow_none=True),
        "scores": _ints(),
        "totals": _ints(),
        "hands": _req(fields.List, fields.List(fields.String()), metadata={"description": "Every hand, for counting"}),
    },
)
_event_type("game_ended", "The game ended", {"totals": _ints(), "places": _ints()})
_event_type("seat_absent", "The seat timed out three times in a row", {"timeouts": _req(fields.Integer)})
_event_type("seat_returned", "The absent seat acted again", {})


#: Most events one page of ``GET .../events`` holds (the repository reads at most this many).
EVENTS_PAGE = 1000


class EventListSchema(Schema):
    events = _req(
        fields.List,
        Union("Event"),
        validate=validate.Length(max=EVENTS_PAGE),
        metadata={"description": f"At most {EVENTS_PAGE:,} events; a full page may have more after it"},
    )
    last = _req(fields.Integer, metadata={"description": "The last event number; pass it as `after` to continue"})


class ReplaySchema(Schema):
    id = _req(fields.String)
    variant = _variant()
    options = _req(AsIs, OptionsSchema, metadata={"description": "The options the table was created with"})
    names = _req(fields.List, fields.String(allow_none=True))
    seed = _req(fields.String, metadata={"description": "The seed of the shuffles, hexadecimal"})
    totals = _ints()
    events = _req(fields.List, Union("Event"), metadata={"description": "Every event, with every `private`"})


class HealthSchema(Schema):
    status = _req(fields.String, validate=validate.OneOf(["ok", "unavailable"]))
    redis = _req(fields.Boolean)


class DeckStepSchema(Schema):
    up_to_players = _req(fields.Integer, metadata={"description": "Tables of up to this many players"})
    decks = _req(fields.Integer, metadata={"description": "Decks shuffled together (each with its jokers)"})


class VariantRoundSchema(Schema):
    number = _req(fields.Integer, metadata={"description": "From 1"})
    deal = _req(fields.Integer, metadata={"description": "Cards dealt to each player"})
    contract = _req(fields.Nested, ContractSchema, metadata={"description": "What going down takes this round"})


class ClaimRulesSchema(Schema):
    name = _req(fields.String, metadata={"description": 'What a claim of the upcard is called ("May I", "Buy")'})
    penalty = _req(fields.Integer, metadata={"description": "Stock cards a claimant takes with the upcard"})
    limit = _req(
        fields.Integer, allow_none=True, metadata={"description": "Claims a seat may win in one round; null: no limit"}
    )
    discarder_may_claim = _req(
        fields.Boolean, metadata={"description": "The discarder may claim their own discard (last in priority)"}
    )


class OptionSpecSchema(Schema):
    name = _req(fields.String, metadata={"description": "The option's name in a table's `options`"})
    type = _req(fields.String, validate=validate.OneOf(["boolean", "integer", "number"]))
    minimum = _req(fields.Float, allow_none=True, metadata={"description": "null: a boolean"})
    maximum = _req(fields.Float, allow_none=True, metadata={"description": "null: a boolean"})
    default = _req(fields.Raw, metadata={"description": "The variant's value when a table does not set it"})
    house = _req(fields.Boolean, metadata={"description": "A house rule of the variant (not a clock or safeguard)"})
    description = _req(fields.String)


class VariantSchema(Schema):
    name = _variant(metadata={"description": "The variant's name, as `variant` in requests"})
    title = _req(fields.String, metadata={"description": "The game's name as people write it"})
    min_players = _req(fields.Integer)
    max_players = _req(fields.Integer)
    decks = _req(fields.List, fields.Nested(DeckStepSchema), metadata={"description": "Decks by table size, ascending"})
    rounds = _req(fields.List, fields.Nested(VariantRoundSchema), metadata={"description": "The rounds, in order"})
    card_points = _req(
        fields.Dict,
        keys=fields.String(),
        values=fields.Integer(),
        metadata={
            "description": "Points a card left in hand scores against its holder when a round ends, by rank "
            "as card codes write it (A, 2-9, T, J, Q, K; JK: a joker)"
        },
    )
    joker_limit = _req(
        fields.Integer, allow_none=True, metadata={"description": "Most jokers in one meld; null: no limit"}
    )
    distinct_book_ranks = _req(
        fields.Boolean, metadata={"description": "The books of one contract must be of different ranks"}
    )
    claim = _req(fields.Nested, ClaimRulesSchema, metadata={"description": "Claiming the upcard out of turn"})
    options = _req(
        fields.List,
        fields.Nested(OptionSpecSchema),
        metadata={"description": "The table options the variant accepts, with its defaults"},
    )


class VariantListSchema(Schema):
    variants = _req(fields.List, fields.Nested(VariantSchema), metadata={"description": "Every variant served"})


class HouseBotListSchema(Schema):
    house_bots = _req(
        fields.List,
        fields.String(validate=validate.OneOf(HOUSE_BOTS)),
        metadata={"description": "The names `house_bot` takes when seating one, weakest first"},
    )
