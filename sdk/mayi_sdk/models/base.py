"""What every result's ``from_json`` shares."""

from __future__ import annotations

from typing import Any


def listed(data: dict[str, Any], key: str) -> list[Any]:
    """``data[key]`` as a new list (empty when it is missing or not a list)."""
    found = data.get(key)
    return list(found) if isinstance(found, list) else []
