"""Fields every schema uses: strict request fields (a number is a JSON number, a boolean
``true`` or ``false``, no text with a lone surrogate or a control character; query numbers
in plain ASCII digits), the helpers response schemas are declared with, and the fields
that only document (:class:`Union`, :class:`AsIs`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from mayi_engine import VARIANTS, InvalidMoveError, parse_card

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


#: A decimal number as a query writes it: ASCII digits, an optional decimal point.
DECIMAL = re.compile(r"[0-9]{1,16}(?:\.[0-9]{1,16})?")


class QueryFloat(fields.Float):
    """A number in a query string: ASCII digits with an optional decimal point (``2``, ``0.5``;
    not ``1e1``); the document says so with a ``pattern`` on the parameter's text."""

    def __init__(self, **kwargs: Any) -> None:
        pattern = "^[0-9]{1,16}(\\.[0-9]{1,16})?$"
        super().__init__(metadata={"pattern": pattern, **(kwargs.pop("metadata", None) or {})}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        if not (isinstance(value, str) and DECIMAL.fullmatch(value)):
            raise self.make_error("invalid", input=value)
        number: float = super()._deserialize(value, attr, data, **kwargs)
        return number


class StrictSchema(Schema):
    """A request schema: an unknown field is an error."""

    class Meta:
        unknown = RAISE


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


# -- responses ----------------------------------------------------------------
#
# They document what the service sends, exactly: every field the service always
# sends is ``required``, a field that may be null is ``allow_none``, and every
# object is closed (``unknown=RAISE`` becomes ``additionalProperties: false``).
# Views and events are unions (``oneOf``) told apart by a field (``status``,
# ``type``), so that a generated client narrows them (docs/api.md, "Types").
# tests/service/contract/test_responses_match_the_document.py holds every response the
# test suite receives to these schemas.


def required(field: type[fields.Field], *args: Any, **kwargs: Any) -> Any:
    """A field the service always sends: ``field(*args, required=True, **kwargs)``."""
    return field(*args, required=True, **kwargs)


def const(value: str, description: str = "") -> Any:
    """A string field that always holds ``value`` (a union's tag)."""
    return Text(
        required=True, validate=validate.OneOf([value]), metadata={"description": description} if description else {}
    )


def variant_name(**kwargs: Any) -> Any:
    """A response's ``variant``: the name of a registered variant (an enum, as in requests)."""
    return required(fields.String, validate=RegisteredVariant(), **kwargs)


def strings(**kwargs: Any) -> Any:
    """A list of strings the service always sends."""
    return fields.List(fields.String(), required=True, **kwargs)


def ints(**kwargs: Any) -> Any:
    """A list of integers the service always sends."""
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
    """A value sent as it is stored (not dumped field by field), documented by ``schema``
    (a schema class, or a function that returns the one to document now)."""

    def __init__(self, schema: type[Schema] | Callable[[], type[Schema]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.schema = schema


#: Each union: component name -> (the field that tells the members apart, {its value: member schema}).
UNIONS: dict[str, tuple[str, dict[str, type[Schema]]]] = {}


def union_ref(name: str) -> dict[str, str]:
    """A reference to the component ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}
