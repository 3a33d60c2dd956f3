"""The service's Lua scripts for Redis, one ``<name>.lua`` file each in this folder."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def source(name: str) -> str:
    """The text of the script ``<name>.lua`` of this folder."""
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")
