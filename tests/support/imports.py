"""What a distribution declares and what its packages import: the helpers of the tests
that check the two agree (tests/service/operations/test_distribution.py for the plain
install, tests/rl/test_extra.py for the ``rl`` extra)."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
from pathlib import Path


def canonical(name: str) -> str:
    """A distribution's name as the package index compares names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def third_party_imports(root: Path, packages: list[str]) -> dict[str, str]:
    """Every third-party top-level module the ``packages`` (folders under ``root``) import,
    at any depth, with the first file importing it (the standard library and ``mayi_*`` left out)."""
    found: dict[str, str] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top not in sys.stdlib_module_names and not top.startswith("mayi_"):
                        found.setdefault(top, str(path.relative_to(root)))
    return found


def undeclared(imported: dict[str, str], declared: set[str]) -> dict[str, str]:
    """The modules of ``imported`` that no distribution of ``declared`` (canonical names) provides."""
    providers = md.packages_distributions()
    return {
        module: where
        for module, where in imported.items()
        if not any(canonical(dist) in declared for dist in providers.get(module, [module]))
    }
