"""``docs/view.md``: every field of the game view, written from the OpenAPI document that the
app generates from its schemas (:mod:`.schemas`), so that it says what the service sends."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

#: The views, by the ``status`` that selects them (the order of the table's columns).
STATUSES = ("waiting", "playing", "finished")


@dataclass
class Row:
    """One field of the view, at a dotted path (``seats[].down``)."""

    path: str
    kind: str
    description: str
    required: bool
    statuses: list[str] = field(default_factory=list)


def _null(node: dict[str, Any]) -> bool:
    """Whether ``node`` is the member of an ``anyOf`` that admits null alone (``enum: [null]``)."""
    return node.get("enum") == [None]


def _ref(node: dict[str, Any]) -> str | None:
    """The component a property names (``$ref``, a lone ``allOf`` of one, or an ``anyOf`` of
    one and null, as the document writes a nullable one)."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[1]
    parts = node.get("allOf") or [part for part in node.get("anyOf") or [] if not _null(part)]
    if len(parts) == 1 and "$ref" in parts[0]:
        return str(parts[0]["$ref"]).rsplit("/", 1)[1]
    return None


def _flat(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the parts of its ``allOf`` merged in: their properties and required fields."""
    merged: dict[str, Any] = {"properties": {}, "required": []}
    for part in [*schema.get("allOf", []), schema]:
        name = _ref(part) if "$ref" in part else None
        found = _flat(schemas[name], schemas) if name is not None else part
        for key, node in found.get("properties", {}).items():
            merged["properties"][key] = {**merged["properties"].get(key, {}), **node}
        merged["required"] += [r for r in found.get("required", []) if r not in merged["required"]]
    return merged


def _kind(node: dict[str, Any], schemas: dict[str, Any]) -> str:
    name = _ref(node)
    if name is not None:
        kind = "one of the types below" if "oneOf" in schemas[name] else "object"
    elif node.get("type") == "array":
        kind = f"list of {_kind(node.get('items', {}), schemas)}"
    elif "enum" in node:
        kind = " or ".join(f"`{json.dumps(v)}`" for v in node["enum"] if v is not None)
    else:
        kind = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean"}.get(
            node.get("type", ""), node.get("type", "any")
        )
    if node.get("nullable") or any(_null(part) for part in node.get("anyOf") or []):
        kind += " or `null`"
    return kind


def _description(node: dict[str, Any]) -> str:
    text = node.get("description") or (node.get("items") or {}).get("description") or ""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _walk(schema: dict[str, Any], schemas: dict[str, Any], prefix: str, rows: list[Row]) -> None:
    """Append a row for each property of ``schema`` (and of the objects it holds) to ``rows``."""
    needed = set(schema.get("required", []))
    for name, node in sorted(schema.get("properties", {}).items()):
        path = f"{prefix}{name}"
        rows.append(Row(path, _kind(node, schemas), _description(node), name in needed))
        target = _ref(node)
        if node.get("type") == "array":
            target, path = _ref(node.get("items", {})), path + "[]"
        if target is not None and "properties" in schemas[target]:
            _walk(schemas[target], schemas, path + ".", rows)


def _joined(first: str, second: str, sep: str) -> str:
    """Both texts (once each): a field whose views say different things."""
    if not second or second in first:
        return first
    if not first or first in second:
        return second
    return first + sep + second


def _merged(schemas: dict[str, Any]) -> list[Row]:
    """The rows of every view, one per path, with the statuses whose view has it."""
    views = schemas["GameView"]["discriminator"]["mapping"]
    merged: dict[str, Row] = {}
    for status in STATUSES:
        rows: list[Row] = []
        _walk(schemas[views[status].rsplit("/", 1)[1]], schemas, "", rows)
        for row in rows:
            kept = merged.setdefault(row.path, Row(row.path, row.kind, row.description, row.required))
            kept.statuses.append(status)
            kept.required = kept.required and row.required
            kept.kind = _joined(kept.kind, row.kind, " or ")
            kept.description = _joined(kept.description, row.description, "; ")
    # Grouped by top-level field (the fields of every view first), each group in path order.
    order = {status: i for i, status in enumerate(STATUSES)}
    first: dict[str, int] = {}
    for row in merged.values():
        top = _top(row.path)
        first[top] = min(first.get(top, len(STATUSES)), *(order[s] for s in row.statuses))
    return sorted(merged.values(), key=lambda r: (first[_top(r.path)], _top(r.path), r.path))


def _top(path: str) -> str:
    return path.split(".")[0].split("[")[0]


def _table(rows: list[Row], with_statuses: bool) -> list[str]:
    head = "| field | type |" + "".join(f" {s} |" for s in STATUSES) if with_statuses else "| field | type |"
    lines = [head + " what |", "|---|---|" + "---|" * (len(STATUSES) if with_statuses else 0) + "---|"]
    for row in rows:
        cells = f"| `{row.path}` | {row.kind}{'' if row.required else ' (optional)'} |"
        if with_statuses:
            cells += "".join(" yes |" if s in row.statuses else " |" for s in STATUSES)
        lines.append(cells + f" {row.description} |")
    return lines


def _sdk_notes(rows: list[Row]) -> str:
    """What differs in ``mayi_sdk.GameView``: the view's top-level fields it has no attribute
    for, and those it keeps as plain dicts."""
    from mayi_sdk import GameView

    names = {f.name: str(f.type) for f in fields(GameView)}
    tops = {_top(row.path) for row in rows}
    gaps = sorted(tops - set(names))
    dicts = sorted(n for n in tops & set(names) if names[n].startswith("dict"))
    notes = []
    if dicts:
        notes.append(f"{', '.join(f'`{d}`' for d in dicts)} stays a dict (`view.{dicts[0]}[...]`)")
    if gaps:
        notes.append(f"the SDK does not name {', '.join(f'`{g}`' for g in gaps)}: read it in `view.raw`")
    return "; " + "; ".join(notes) + "." if notes else "."


def render(spec: dict[str, Any] | None = None) -> str:
    """The text of ``docs/view.md`` for ``spec`` (default: the app's OpenAPI document)."""
    if spec is None:
        from mayi_service.api.openapi import render as render_openapi

        spec = json.loads(render_openapi())
    schemas = spec["components"]["schemas"]
    rows = _merged(schemas)
    notes = _sdk_notes(rows)
    moves = schemas["LegalMove"]["discriminator"]["mapping"]
    out = [
        "# The game view",
        "",
        "<!-- Written by `mayi view-doc` from the service's schemas (service/mayi_service/api/schemas/):",
        "     edit those, then run it; tests/service/contract/test_view_doc.py fails when this file is stale. -->",
        "",
        "`GET /v1/games/{game_id}` answers the game as the caller sees it (`GameView` in",
        "[openapi/openapi.json](../openapi/openapi.json)); with a seat's token it is that seat's view,",
        "with its `hand` and its `legal` moves. A bot's `decide(view)` gets the same view as a",
        "`mayi_sdk.GameView`, whose attributes have the same names (`view.round.contract.books`,",
        "`view.seats[0].down`)" + notes,
        "",
        "The view's `status` says which fields it has: a table `waiting` for players, a game",
        "`playing`, or one `finished`. A path `a.b` is the field `b` of the object in `a`; `a[].b`",
        "is the field `b` of each object of the list `a`. A field marked optional may be left out;",
        "every other field is always there, in every object that has it (maybe `null`, where its",
        "type says so).",
        "",
        *_table(rows, with_statuses=True),
        "",
        "## Legal moves",
        "",
        "Each entry of `legal` is one move the seat may make now: its `type`, and the rest is the",
        "request body that makes it, sent as it is (the SDK's `LegalMove` holds them as `type` and",
        "`body`).",
    ]
    for kind, ref in moves.items():
        schema = _flat(schemas[ref.rsplit("/", 1)[1]], schemas)
        rows = []
        _walk(schema, schemas, "", rows)
        out += ["", f"### `{kind}`: {schema['properties']['type'].get('description', '')}", ""]
        out += _table([r for r in rows if r.path != "type"], with_statuses=False)
    return "\n".join(out) + "\n"
