"""The ``rl`` extra of ``mayi-game-service`` declares what ``mayi_rl`` imports (with the
distribution's own dependencies): ``pip install -e '.[rl]'`` gives environments that import."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from imports import canonical, third_party_imports, undeclared
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_mayi_rl_imports_comes_with_the_rl_extra() -> None:
    declared = set()
    for text in md.requires("mayi-game-service") or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": "rl"}):
            declared.add(canonical(requirement.name))
    assert {"numpy", "gymnasium", "pettingzoo", "open-spiel"} <= declared
    missing = undeclared(third_party_imports(ROOT, ["rl/mayi_rl"]), declared)
    assert missing == {}, f"imported by mayi_rl but not in the rl extra (pyproject.toml): {missing}"
