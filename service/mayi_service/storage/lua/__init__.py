"""The service's Lua scripts for Redis, one ``<name>.lua`` file each in this folder."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any


@cache
def source(name: str) -> str:
    """The text of the script ``<name>.lua`` of this folder."""
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


def outcome(reply: Any) -> tuple[str, list[Any]]:
    """A script's tagged answer (a table whose first element names the outcome, as
    ``{'ok', version}``) as its tag and the rest, the tag decoded."""
    tag, *rest = reply
    return (tag.decode() if isinstance(tag, bytes) else str(tag)), rest
