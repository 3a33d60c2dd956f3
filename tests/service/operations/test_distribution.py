"""The project's distribution (``mayi-game-service``) declares what its packages import: a
plain ``pip install .`` (no test extras) gives a ``mayi`` that runs."""

from __future__ import annotations

import importlib.metadata as md
import subprocess
from pathlib import Path

import pytest
from imports import canonical, third_party_imports, undeclared
from packaging.requirements import Requirement
from serving import MAYI

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ["engine/mayi_engine", "service/mayi_service", "sdk/mayi_sdk", "bots/mayi_bots"]


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


def test_every_module_the_packages_import_comes_with_the_distribution() -> None:
    declared = runtime_requirements("mayi-game-service")
    missing = undeclared(third_party_imports(ROOT, PACKAGES), declared)
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
