"""The ``rl`` extra of ``mayi-game-service`` declares what ``mayi_rl`` imports (with the
distribution's own dependencies): ``pip install -e '.[rl]'`` gives environments that import."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_module_mayi_rl_imports_comes_with_the_rl_extra() -> None:
    declared = set()
    for text in md.requires("mayi-game-service") or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": "rl"}):
            declared.add(canonical(requirement.name))
    assert {"numpy", "gymnasium", "pettingzoo", "open-spiel"} <= declared
    providers = md.packages_distributions()
    missing = {}
    for path in sorted((ROOT / "rl" / "mayi_rl").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top.startswith("mayi_"):
                    continue
                if not any(canonical(d) in declared for d in providers.get(top, [top])):
                    missing[top] = str(path.relative_to(ROOT))
    assert missing == {}, f"imported by mayi_rl but not in the rl extra (pyproject.toml): {missing}"
