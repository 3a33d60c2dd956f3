"""JSON on the request path, through ``orjson`` (the engine keeps the standard library's).

The text is the same JSON as the engine's ``dumps`` writes (compact, UTF-8, keys in
order); only faster, which matters on every request: a state is read and written,
and a view and events are written, for each action.
"""

from __future__ import annotations

from typing import Any

import orjson

from mayi_engine import State, from_json, to_json


def text(raw: bytes | str) -> str:
    """A Redis reply's bytes (or text) as text."""
    return raw.decode() if isinstance(raw, bytes) else raw


def dump(data: Any) -> str:
    """``data`` as compact JSON text."""
    return orjson.dumps(data).decode()


def dump_bytes(data: Any) -> bytes:
    """``data`` as compact JSON, UTF-8 encoded (for a response body)."""
    return orjson.dumps(data)


def load(text: str | bytes) -> Any:
    """JSON text as data."""
    return orjson.loads(text)


def dump_state(state: State) -> str:
    """The engine state as its JSON text (what ``mayi_engine.dumps`` writes)."""
    return orjson.dumps(to_json(state)).decode()


def load_state(text: str | bytes) -> State:
    """The engine state from its JSON text (what ``mayi_engine.loads`` reads)."""
    return from_json(load(text))
