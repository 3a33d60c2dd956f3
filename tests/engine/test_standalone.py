"""The engine's tests stand alone: they import the standard library, pytest, hypothesis and
``mayi_engine`` only (no service, no Redis), and so does every conftest pytest loads for them.

The one bridge out is the reference ``greedy`` bot (``mayi_bots``, over ``mayi_sdk``), which
the golden games and a few whole-game tests play with: only the modules in :data:`BOT_DRIVEN`
may import it, and without it installed those modules are not collected (``conftest.py``),
so ``pytest tests/engine`` runs with the standard library, pytest and hypothesis alone.

Also the engine's own import graph: no circle, and no private name imported from another module.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import mayi_engine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOCAL = {p.stem for p in HERE.glob("*.py")}
ALLOWED = set(sys.stdlib_module_names) | {"pytest", "_pytest", "hypothesis", "mayi_engine"} | LOCAL
#: The modules that play with the reference greedy bot, and what they may import for it.
BOT_DRIVEN = {"players.py", "test_custom_variant.py", "test_simulate.py"}
BOT_PACKAGES = {"mayi_bots", "mayi_sdk"}


def imported(tree: ast.AST) -> set[str]:
    """Top-level names of every module imported anywhere in ``tree`` (relative imports excluded)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.add(arg.value.split(".")[0])
    return out


def loaded_for_the_engine_tests() -> list[Path]:
    """The engine tests' own modules, and every conftest.py pytest loads above them."""
    conftests = [d / "conftest.py" for d in (ROOT, ROOT / "tests") if (d / "conftest.py").exists()]
    return sorted(HERE.glob("*.py")) + conftests


def test_the_engine_tests_import_only_the_standard_library_pytest_and_the_engine() -> None:
    found = {}
    for path in loaded_for_the_engine_tests():
        allowed = ALLOWED | (BOT_PACKAGES if path.parent == HERE and path.name in BOT_DRIVEN else set())
        outside = imported(ast.parse(path.read_text())) - allowed
        if outside:
            found[str(path.relative_to(ROOT))] = sorted(outside)
    assert not found, f"imports from outside the standard library, pytest and mayi_engine: {found}"


def test_the_check_would_catch_a_service_import() -> None:
    source = "import redis\nfrom mayi_service.api.app import create_app\nimport json\nfrom servers import LiveServer\n"
    assert imported(ast.parse(source)) - ALLOWED == {"redis", "mayi_service", "servers"}


def engine_graph() -> tuple[dict[str, set[str]], list[str]]:
    """Each engine module's engine imports, and the private names imported between modules."""
    package = Path(mayi_engine.__file__).parent
    graph: dict[str, set[str]] = {}
    private = []
    for path in package.glob("*.py"):
        graph[path.stem] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                graph[path.stem].add(node.module.split(".")[0])
                private += [f"{path.stem}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return graph, private


def test_the_engine_imports_no_circle_and_no_private_name() -> None:
    graph, private = engine_graph()
    assert private == []
    graph.pop("__init__")

    def reached_from(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(graph.get(name, ()))
        return seen

    circles = sorted(name for name in graph if name in reached_from(name))
    assert circles == [], f"modules on an import circle: {circles}"
