"""The SDK depends on no other package of the project but the engine (used where installed):
no module of ``mayi_sdk`` imports ``mayi_bots`` or ``mayi_service``, statically or by
name, so there is no import circle between the SDK and the bots written against it
(``play_local``'s named opponents come through the ``mayi_sdk.bots`` entry point)."""

from __future__ import annotations

import ast
from pathlib import Path

import mayi_sdk

SDK = Path(mayi_sdk.__file__).resolve().parent
FORBIDDEN = ("mayi_bots", "mayi_service")


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def test_no_sdk_module_imports_the_bots_or_the_service() -> None:
    offending = {
        f"{path.name}: {module}"
        for path in sorted(SDK.glob("*.py"))
        for module in _imported(path)
        if module.split(".")[0] in FORBIDDEN
    }
    assert not offending, sorted(offending)
