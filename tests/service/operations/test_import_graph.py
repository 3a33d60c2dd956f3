"""The service's import graph has no circle, between its modules nor between its packages:
every import statement of ``mayi_service``, at any depth in a module (a function's lazy import
too), read from the source's AST."""

from __future__ import annotations

import ast
from pathlib import Path

import mayi_service

ROOT = Path(mayi_service.__file__).parent


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(["mayi_service", *parts])] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package that module ``name`` imports (a submodule named by
    ``from package import name`` counts as that submodule)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in known:
                    found.add(sub)
                elif source in known:
                    found.add(source)
    return found - {name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_service_imports_in_no_circle() -> None:
    found = modules()
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}
    assert "mayi_service.play.games" in graph["mayi_service.api.games"]  # the graph is read at all
    found_circles = circles(graph)
    described = ["; ".join(f"{m} imports {sorted(graph[m] & set(c))}" for m in c) for c in found_circles]
    assert not found_circles, "import circles in mayi_service: " + " | ".join(described)


def test_the_service_packages_import_in_no_circle() -> None:
    """The packages are layers (storage, play, bots, ladder, the composition root, api, cli):
    no package imports one that imports it back, through any of their modules."""
    found = modules()
    graph = {name: imports(name, path, set(found)) for name, path in found.items()}

    def top(name: str) -> str:
        return name.split(".")[1] if "." in name else name

    packages: dict[str, set[str]] = {top(name): set() for name in graph}
    for name, targets in graph.items():
        packages[top(name)] |= {top(t) for t in targets} - {top(name)}
    assert "play" in packages["api"]  # the graph is read at all
    found_circles = circles(packages)
    described = [
        "; ".join(
            f"{p} imports {sorted(q for q in c if q in packages[p])} "
            f"({sorted(m for m in graph if top(m) == p and {top(t) for t in graph[m]} & set(c) - {p})[:3]})"
            for p in c
        )
        for c in found_circles
    ]
    assert not found_circles, "package circles in mayi_service: " + " | ".join(described)


def test_every_job_the_parts_queue_is_a_function_of_the_jobs_module() -> None:
    """The parts queue their RQ jobs by dotted path: each path names a job of mayi_service.jobs."""
    import importlib

    from mayi_service import jobs
    from mayi_service.bots import house, webhooks
    from mayi_service.ladder import matches as ladder
    from mayi_service.play import clock

    paths = [clock.CLOCK_JOB, house.HOUSE_JOB, webhooks.DELIVERY_JOB, ladder.MATCH_JOB, ladder.MATCHMAKING_JOB]
    for path in paths:
        module, _, func = path.rpartition(".")
        assert importlib.import_module(module) is jobs and callable(getattr(jobs, func)), path
