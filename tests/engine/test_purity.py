"""The engine is pure and I/O-free (STYLE 1).

It imports no web framework, store, queue, schema library or network module, no
clock (``time``, ``datetime``) and not the global ``random`` generator; it calls
no clock, opens no file and prints nothing. Checked twice: on the source (the
AST of every module of ``mayi_engine``) and in a fresh interpreter (importing
every module pulls in none of the third-party packages).
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import mayi_engine
from mayi_engine import apply_move, legal_moves, new_game
from mayi_engine.rules import MAY_I, SHANGHAI
from mayi_engine.simulate import next_seat
from mayi_engine.state import to_json
from mayi_engine.views import player_view

PACKAGE = Path(mayi_engine.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))

THIRD_PARTY = {"flask", "flask_smorest", "redis", "requests", "httpx", "rq", "marshmallow", "gunicorn", "click", "rich"}
#: Standard modules the engine must not import: clocks, the global generator, I/O.
FORBIDDEN = THIRD_PARTY | {
    "time",
    "datetime",
    "random",
    "socket",
    "ssl",
    "http",
    "urllib",
    "asyncio",
    "threading",
    "subprocess",
    "sqlite3",
    "os",
    "io",
    "logging",
}
#: Calls that read a clock or do I/O.
FORBIDDEN_CALLS = {"open", "print", "input", "__import__", "eval", "exec"}


def imported_modules(tree: ast.AST) -> set[str]:
    """Top-level names of every module imported anywhere in ``tree`` (relative imports excluded)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.add(str(node.args[0].value).split(".")[0])
    return out


def test_every_module_is_found() -> None:
    names = {p.stem for p in MODULES}
    assert {"cards", "rules", "melds", "moves", "state", "game", "views", "policies", "simulate", "rng"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_forbidden_imports(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    assert imported_modules(tree) & FORBIDDEN == set()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_clock_reads_and_no_io_calls(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    problems = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in {"time", "datetime", "random", "os", "sys"}
        ):
            problems.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            problems.append(f"line {node.lineno}: {node.func.id}()")
    assert problems == []


def test_the_scan_would_catch_an_import() -> None:
    """The checker itself: it sees plain, dotted, from- and dynamic imports."""
    source = (
        "import time\nfrom datetime import date\nimport os.path\nimportlib.import_module('random')\nfrom . import x"
    )
    assert imported_modules(ast.parse(source)) == {"time", "datetime", "os", "random"}


def test_importing_the_engine_loads_no_third_party_package() -> None:
    modules = [f"mayi_engine.{m.name}" for m in pkgutil.iter_modules([str(PACKAGE)])]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert "mayi_engine" in loaded
    assert loaded & THIRD_PARTY == set()
    assert not {name for name in loaded if name.startswith("mayi_") and name != "mayi_engine"}


@pytest.mark.parametrize("rules", [MAY_I, SHANGHAI], ids=lambda r: r.name)
def test_transitions_do_not_change_their_argument(rules: object) -> None:
    """``apply_move``, ``legal_moves`` and ``player_view`` return new data; the state
    they were given is unchanged (so states may be shared and cached)."""
    state = new_game(rules, ["a", "b", "c", "d"], bytes(32))  # type: ignore[arg-type]
    for _ in range(400):
        before = json.dumps(to_json(state))
        seat = next_seat(state)
        legal = legal_moves(state, seat)
        player_view(state, seat)
        player_view(state, None)
        after = apply_move(state, seat, legal[len(legal) // 2])
        assert json.dumps(to_json(state)) == before
        assert after is not state
        state = after
        if state.finished:
            break


def test_same_seed_same_game() -> None:
    """No hidden source of randomness: a seed fixes the deal."""
    a = new_game(MAY_I, ["a", "b", "c"], bytes(range(32)))
    b = new_game(MAY_I, ["a", "b", "c"], bytes(range(32)))
    c = new_game(MAY_I, ["a", "b", "c"], bytes(range(1, 33)))
    assert to_json(a) == to_json(b)
    assert a.hands != c.hands
