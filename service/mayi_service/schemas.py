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

from marshmallow import INCLUDE, RAISE, Schema, ValidationError, fields, validate

from mayi_engine import VARIANTS, GameStatus, InvalidMoveError, OptionSpec, parse_card

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


class Text(fields.String):
    """A string that can be stored and shown: no lone surrogates, no control characters."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text: str = super()._deserialize(value, attr, data, **kwargs)
        _no_bad_characters(text)
        return text


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
            metadata={"description": description},
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
    """A whole number in a query string: ASCII digits only (not ``1_0``, ``+1`` or other scripts' digits)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 16):
            raise self.make_error("invalid", input=value)
        number: int = super()._deserialize(value, attr, data, **kwargs)
        return number


_DECIMAL = re.compile(r"[0-9]{1,16}(?:\.[0-9]{1,16})?")


class QueryFloat(fields.Float):
    """A number in a query string: ASCII digits with an optional decimal point (``2``, ``0.5``)."""

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
    start_round = StrictInteger(validate=validate.Range(1, 8))


class GameCreateSchema(StrictSchema):
    variant = Text(required=True, validate=RegisteredVariant())
    seats = StrictInteger(required=True, validate=validate.Range(2, 8))
    options = OptionsField(load_default=dict)
    players = fields.List(fields.Nested(PlayerInSchema), validate=validate.Length(max=8), load_default=list)
    test = fields.Nested(TestBlockSchema, allow_none=True, load_default=None)


class SeatInSchema(StrictSchema):
    name = Name(required=True)
    seat = StrictInteger(validate=validate.Range(0, 7))


class DrawInSchema(StrictSchema):
    source = Text(required=True, validate=validate.OneOf(["stock", "discard"]))


class DiscardInSchema(StrictSchema):
    card = Card(required=True)


class ClaimInSchema(StrictSchema):
    claim = StrictBoolean(required=True, metadata={"description": "true: May I / buy; false: pass"})


class LayOffInSchema(StrictSchema):
    meld = StrictInteger(required=True, validate=validate.Range(0, 1000))
    cards = fields.List(Card(), required=True, validate=validate.Length(min=1, max=20))
    joker_to = Text(validate=validate.OneOf(["high", "low"]), allow_none=True)


class LayOffsInSchema(StrictSchema):
    lay_offs = fields.List(fields.Nested(LayOffInSchema), required=True, validate=validate.Length(min=1, max=20))


class MeldsInSchema(StrictSchema):
    melds = fields.List(
        fields.List(Card(), validate=validate.Length(min=1, max=20)),
        required=True,
        validate=validate.Length(min=1, max=8),
    )
    lay_offs = fields.List(fields.Nested(LayOffInSchema), validate=validate.Length(max=20), load_default=list)


class ListGamesQuerySchema(StrictSchema):
    status = Text(validate=validate.OneOf([s.value for s in GameStatus]))
    variant = Text(validate=RegisteredVariant())
    page = QueryInteger(load_default=1, validate=validate.Range(1, 100000))
    page_size = QueryInteger(load_default=20, validate=validate.Range(1, 100))


class EventsQuerySchema(StrictSchema):
    after = QueryInteger(load_default=0, validate=validate.Range(0, 2**53))
    wait = QueryFloat(load_default=0, validate=validate.Range(0, 60))


# -- responses ----------------------------------------------------------------


class ProblemSchema(Schema):
    """An error as RFC 9457 problem details; some codes add members of their own."""

    class Meta:
        unknown = INCLUDE  # problem details may carry extension members

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True, metadata={"description": "What went wrong, in words a player understands"})
    code = fields.String(required=True, metadata={"description": "Stable error code"})
    errors = fields.List(fields.String(), metadata={"description": "validation_error: each problem with the request"})
    retry_after = fields.Float(metadata={"description": "claims_open: seconds until the claim window closes"})
    current_version = fields.Integer(metadata={"description": "version_conflict: the game's version now"})


class ContractSchema(Schema):
    books = fields.Integer()
    runs = fields.Integer()
    all_cards = fields.Boolean()
    text = fields.String()


class RoundSchema(Schema):
    number = fields.Integer()
    of = fields.Integer()
    dealer = fields.Integer()
    first = fields.Integer()
    contract = fields.Nested(ContractSchema)


class ClaimWindowSchema(Schema):
    card = fields.String()
    discarder = fields.Integer(allow_none=True)
    claims = fields.List(fields.Integer())
    passes = fields.List(fields.Integer())
    pending = fields.List(fields.Integer())
    closes_at = fields.Float(allow_none=True)


class SeatViewSchema(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    taken = fields.Boolean()
    hand_count = fields.Integer()
    down = fields.Boolean()
    total = fields.Integer()
    claims_used = fields.Integer()
    claims_left = fields.Integer(allow_none=True)
    absent = fields.Boolean()


class JokerSchema(Schema):
    index = fields.Integer()
    stands_for = fields.String()


class MeldViewSchema(Schema):
    id = fields.Integer()
    owner = fields.Integer()
    type = fields.String(metadata={"enum": ["book", "run"]})
    cards = fields.List(fields.String())
    jokers = fields.List(fields.Nested(JokerSchema))


class ResultSchema(Schema):
    round = fields.Integer()
    out = fields.Integer(allow_none=True)
    scores = fields.List(fields.Integer())


class LayOffOutSchema(Schema):
    meld = fields.Integer()
    cards = fields.List(fields.String())
    joker_to = fields.String()


class LegalMoveSchema(Schema):
    type = fields.String(metadata={"enum": ["draw", "claim", "discard", "go_down", "lay_off"]})
    source = fields.String()
    claim = fields.Boolean()
    card = fields.String()
    melds = fields.List(fields.List(fields.String()))
    lay_offs = fields.List(fields.Nested(LayOffOutSchema))


class GameViewSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    status = fields.String(metadata={"enum": [s.value for s in GameStatus]})
    variant = fields.String()
    options = fields.Dict()
    rated = fields.Boolean()
    created_at = fields.Float()
    last_event = fields.Integer()
    round = fields.Nested(RoundSchema)
    phase = fields.String(metadata={"enum": ["first_offer", "first_discard", "draw", "play", "finished"]})
    turn = fields.Integer()
    actor = fields.Integer()
    upcard = fields.String(allow_none=True)
    discard_top = fields.String(allow_none=True)
    stock_count = fields.Integer()
    discard_count = fields.Integer()
    reshuffles = fields.Integer()
    claim_window = fields.Nested(ClaimWindowSchema, allow_none=True)
    seats = fields.List(fields.Nested(SeatViewSchema))
    melds = fields.List(fields.Nested(MeldViewSchema))
    goals_done = fields.List(
        fields.List(fields.Integer()),
        metadata={"description": "Free goal order only: per seat, the goals met (numbered as the rounds)"},
    )
    deadline = fields.Float(allow_none=True)
    results = fields.List(fields.Nested(ResultSchema))
    places = fields.List(fields.Integer())
    seat = fields.Integer(allow_none=True)
    hand = fields.List(fields.String())
    held = fields.String(allow_none=True)
    legal = fields.List(fields.Nested(LegalMoveSchema))


class IssuedSeatSchema(Schema):
    seat = fields.Integer()
    name = fields.String()
    token = fields.String(metadata={"description": "The seat's bearer token, shown only once"})


class GameCreatedSchema(Schema):
    game_id = fields.String()
    seats = fields.List(fields.Nested(IssuedSeatSchema))
    game = fields.Nested(GameViewSchema)


class SeatTakenSchema(Schema):
    seat = fields.Integer()
    token = fields.String()
    game = fields.Nested(GameViewSchema)


class GameSummarySchema(Schema):
    id = fields.String()
    variant = fields.String()
    status = fields.String()
    seats = fields.Integer()
    names = fields.List(fields.String(allow_none=True))
    rated = fields.Boolean()
    created_at = fields.Float()
    version = fields.Integer()


class GameListSchema(Schema):
    games = fields.List(fields.Nested(GameSummarySchema))
    page = fields.Integer()
    page_size = fields.Integer()
    total = fields.Integer()


class EventSchema(Schema):
    seq = fields.Integer()
    type = fields.String()
    seat = fields.Integer(allow_none=True)
    time = fields.Float()
    data = fields.Dict()
    private = fields.Dict()
    timeout = fields.Boolean()


class EventListSchema(Schema):
    events = fields.List(fields.Nested(EventSchema))
    last = fields.Integer(metadata={"description": "The last event number; pass it as `after` to continue"})


class ReplaySchema(Schema):
    id = fields.String()
    variant = fields.String()
    options = fields.Dict()
    names = fields.List(fields.String(allow_none=True))
    seed = fields.String()
    totals = fields.List(fields.Integer())
    events = fields.List(fields.Nested(EventSchema))


class HealthSchema(Schema):
    status = fields.String()
    redis = fields.Boolean()
