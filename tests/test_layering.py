"""The shape of the house, checked: no import cycle in the package, and the model never reaches back.

Imports are read with ``ast`` from every module's source — function-level imports included, since an
import hidden in a function is still a cycle — and every module is imported for real too.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import gpumatrix

PACKAGE = Path(gpumatrix.__file__).parent
MODULES = sorted(m.name for m in pkgutil.walk_packages([str(PACKAGE)], "gpumatrix."))


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool) -> set[str]:
    """The ``gpumatrix`` modules ``source`` imports anywhere in it (resolved to modules, not names)."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # `from pkg import module`
    return {name for name in found if name in GRAPH_NODES}


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_of(path)
        graph[module] = imports_of(path.read_text(encoding="utf-8"), module, path.name == "__init__.py") - {module}
    return graph


GRAPH_NODES = {_module_of(p) for p in PACKAGE.rglob("*.py")}
GRAPH = _graph()


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports(module):
    assert importlib.import_module(module).__name__ == module


def test_the_import_graph_has_no_cycle():
    assert cycles(GRAPH) == []


def test_results_never_import_report_or_run():
    """The model imports no renderer and nothing of the run side (host discovery, beside run, is allowed)."""
    bad = {m: sorted(d for d in deps if d.startswith(("gpumatrix.report", "gpumatrix.run", "gpumatrix.cli")))
           for m, deps in GRAPH.items() if m.startswith("gpumatrix.results")}
    assert {m: d for m, d in bad.items() if d} == {}
    assert "gpumatrix.results.merge" in GRAPH and GRAPH["gpumatrix.results.merge"]  # the graph was read


def test_the_checks_catch_a_hidden_cycle_and_a_reverse_import():
    """The checks can fail: a function-level import that closes a loop, and a model importing a renderer."""
    source = "def f():\n    from gpumatrix.report.table import build_table\n"
    deps = imports_of(source, "gpumatrix.results.merge", False)
    assert "gpumatrix.report.table" in deps
    graph = {**GRAPH, "gpumatrix.results.merge": GRAPH["gpumatrix.results.merge"] | deps}
    assert any("gpumatrix.results.merge" in c and "gpumatrix.report.table" in c for c in cycles(graph))
    relative = imports_of("from ..report import table\n", "gpumatrix.results.gate", False)
    assert "gpumatrix.report.table" in relative


# -- rooms: data flows config → images → run → results → report, knowledge below all ---------------------------
# Which rooms each room may import (besides itself and the shared leaves in ANYONE); see docs/architecture.md.
ANYONE = {"gpumatrix", "gpumatrix.errors", "gpumatrix.fsutil", "gpumatrix.resources", "gpumatrix.knowledge",
          "gpumatrix.probes", "gpumatrix.safetext"}
MAY_IMPORT = {
    "gpumatrix.knowledge": set(),
    "gpumatrix.config": set(),
    "gpumatrix.engine": set(),
    "gpumatrix.host": {"gpumatrix.engine"},
    "gpumatrix.images": {"gpumatrix.config", "gpumatrix.engine"},
    "gpumatrix.run": {"gpumatrix.config", "gpumatrix.engine", "gpumatrix.images", "gpumatrix.host",
                      "gpumatrix.results", "gpumatrix.diagnose"},
    "gpumatrix.results": {"gpumatrix.host"},
    "gpumatrix.report": {"gpumatrix.results", "gpumatrix.host"},
    "gpumatrix.diagnose": set(),
    "gpumatrix.doctor": {"gpumatrix.config", "gpumatrix.engine", "gpumatrix.host", "gpumatrix.run"},
}
ENTRY_POINTS = {"gpumatrix.cli", "gpumatrix.tasks", "gpumatrix.program", "gpumatrix.__main__"}


def _room(module: str) -> str:
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if _room(m) in MAY_IMPORT))
def test_each_room_imports_only_what_flows_into_it(module):
    room = _room(module)
    wrong = sorted(i for i in GRAPH[module] if _room(i) not in MAY_IMPORT[room] | ANYONE | {room})
    assert not wrong, f"{module} ({room}) must not import {wrong}"


def test_every_room_is_placed_deliberately():
    unplaced = sorted({_room(m) for m in GRAPH} - set(MAY_IMPORT) - ANYONE - ENTRY_POINTS)
    assert not unplaced, f"place these rooms in MAY_IMPORT (tests/test_layering.py) and docs/architecture.md: {unplaced}"


def test_only_the_engine_client_imports_docker():
    users = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n == "docker" or n.startswith("docker.") for n in names):
                users.append(_module_of(path))
    assert sorted(set(users)) == ["gpumatrix.engine.client"]
