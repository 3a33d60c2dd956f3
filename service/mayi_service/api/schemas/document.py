"""What the OpenAPI document says beyond the schemas' fields: the unions (``oneOf`` with a
discriminator), nullable references, each operation's ``security``, and extras of components."""

from __future__ import annotations

from typing import Any

from apispec import BasePlugin
from marshmallow import fields

from mayi_service.api.schemas.fields import UNIONS, AsIs, Union, union_ref
from mayi_service.api.schemas.moves import MOVE_BODIES, legal_move_component

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
        schema = field.schema if isinstance(field.schema, type) else field.schema()
        return {"allOf": [self.resolve_nested_schema(schema)]}
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
