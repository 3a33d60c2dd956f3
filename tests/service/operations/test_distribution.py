"""The project's distribution (``mayi-game-service``) declares what its packages import: a
plain ``pip install .`` (no test extras) gives a ``mayi`` that runs."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from serving import MAYI

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ["engine/mayi_engine", "service/mayi_service", "sdk/mayi_sdk", "bots/mayi_bots"]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_requirements(dist: str) -> set[str]:
    """``dist``'s dependencies without extras, and theirs, as canonical names."""
    seen: set[str] = set()
    todo = [dist]
    while todo:
        try:
            requirements = md.requires(todo.pop()) or []
        except md.PackageNotFoundError:  # not installed here: nothing of it is imported either
            continue
        for text in requirements:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue  # an extra, or another platform's
            name = canonical(requirement.name)
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def imported_top_level_modules() -> dict[str, str]:
    """Every third-party module the shipped packages import (at any depth), with a file importing it."""
    found: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
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
                        found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_module_the_packages_import_comes_with_the_distribution() -> None:
    declared = runtime_requirements("mayi-game-service")
    providers = md.packages_distributions()
    missing = {
        module: where
        for module, where in imported_top_level_modules().items()
        if not any(canonical(dist) in declared for dist in providers.get(module, [module]))
    }
    assert missing == {}, f"imported but not a dependency of mayi-game-service (pyproject.toml): {missing}"


def test_the_distributions_have_names_of_their_own() -> None:
    """Neither is the ``mayi`` of the package index (somebody else's project)."""
    assert md.version("mayi-game-service")
    assert 'name = "mayi-game-sdk"' in (ROOT / "sdk" / "pyproject.toml").read_text(encoding="utf-8")


def test_mayi_serve_help_runs() -> None:
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    ran = subprocess.run([str(MAYI), "serve", "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0 and "--data-dir" in ran.stdout, ran.stderr
