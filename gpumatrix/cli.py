"""What each ``invoke`` task does, as plain functions (``tasks.py`` only parses flags and calls these).

Each function returns the text to print, or raises a :class:`~gpumatrix.errors.GpumatrixError`.
Progress goes to ``echo`` (stderr in the tasks); tables and listings are returned for stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Sequence

from .config import Expansion, expand_cells, load_matrix, matches, select, split_patterns
from .engine import LABEL_NS, MANAGED_LABEL, Engine
from .errors import ConfigError, Problem
from .fsutil import write_text_atomic
from .pipeline import Runner
from .report import FORMATS, render
from .results import ResultsDir

CELL_LABEL = f"{LABEL_NS}.cell"


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _selected(matrix_path: str, only: str | None):
    matrix = load_matrix(matrix_path)
    expansion = expand_cells(matrix)
    cells = select(expansion.cells, only)
    if only and not cells:
        ids = ", ".join(c.id for c in expansion.cells)
        raise ConfigError([Problem("--only", None, f"{only!r} matches no cell; cells are: {ids}")])
    return matrix, expansion, cells


def _check_format(fmt: str, allowed: Sequence[str] = FORMATS) -> None:
    if fmt not in allowed:
        raise ConfigError([Problem("--format", None, f"unknown format {fmt!r}; choose one of {', '.join(allowed)}")])


def list_cells(matrix_path: str, only: str | None = None, fmt: str = "text") -> str:
    """The expanded cells, and why each excluded or not-applicable one is so."""
    _check_format(fmt, ("text", "json"))
    matrix, expansion, cells = _selected(matrix_path, only)
    if fmt == "json":
        return json.dumps(_expansion_json(expansion, cells), indent=2, sort_keys=True) + "\n"
    from tabulate import tabulate

    rows = []
    for c in cells:
        status = "ok" if c.applicable else f"n/a: {c.reason}"
        if c.notes:
            status += "; " + "; ".join(c.notes)
        env = " ".join(f"{k}={v}" for k, v in c.env)
        rows.append([c.id, c.vendor, c.base.image, c.torch_requirement, c.python, status + (f" [env {env}]" if env else "")])
    out = [tabulate(rows, headers=["cell", "vendor", "base image", "torch", "python", "status"], tablefmt="simple")]
    if expansion.excluded:
        out += ["", "Excluded:"]
        for e in expansion.excluded:
            rule = ", ".join(f"{k}: {v}" for k, v in e.rule.items())
            out.append(f"  {e.id}: excluded by {{{rule}}} at {matrix.path}:{e.line}")
    n_app = sum(c.applicable for c in cells)
    out += ["", f"{len(cells)} cells ({n_app} applicable, {len(cells) - n_app} not applicable), "
                f"{len(expansion.excluded)} excluded"]
    return "\n".join(out) + "\n"


def _expansion_json(expansion: Expansion, cells) -> dict:
    return {
        "cells": [{"id": c.id, "vendor": c.vendor, "base": c.base.id, "image": c.base.image,
                   "variant": c.base.variant, "torch": c.torch.version, "requirement": c.torch_requirement,
                   "python": c.python, "env": dict(c.env), "applicable": c.applicable, "reason": c.reason,
                   "notes": list(c.notes)} for c in cells],
        "excluded": [{"id": e.id, "line": e.line, "rule": dict(e.rule)} for e in expansion.excluded],
    }


def save_tables(results: ResultsDir, echo: Callable[[str], None]) -> None:
    cells, warnings = results.load()
    host = (results.read_summary() or {}).get("host")
    for w in warnings:
        echo(f"warning: {w}")
    write_text_atomic(results.path / "table.txt", render(cells, "text", host=host))
    write_text_atomic(results.path / "table.md", render(cells, "markdown", title="gpumatrix compatibility", host=host))


def run_matrix(matrix_path: str, results_path: str, only: str | None = None, *, build: bool = True,
               probe: bool = True, force: bool = False, rebuild: bool = False, quick: bool = False,
               perf: bool | None = None, fmt: str = "text", resume: bool = False,
               echo: Callable[[str], None] = _stderr) -> str:
    """Build and/or probe the selected cells, save results, and return the rendered table."""
    _check_format(fmt)
    matrix, _, cells = _selected(matrix_path, only)
    engine = Engine.connect()
    try:
        results = ResultsDir(results_path)
        runner = Runner(engine, matrix, results, echo=echo)
        echo(f"host: {runner.host.host_type()}; engine {runner.host.engine.get('version')}; "
             f"{len(cells)} cells; results in {results.path}")
        runner.run(cells, build=build, probe=probe, force=force, rebuild=rebuild, quick=quick, perf=perf,
                   resume=resume)
    finally:
        engine.close()
    save_tables(results, echo)
    return report(results_path, fmt, only=only)


def report(results_path: str, fmt: str = "text", only: str | None = None) -> str:
    """Render saved results (no engine needed)."""
    _check_format(fmt)
    results = ResultsDir(results_path)
    if not results.cells_dir.is_dir():
        raise ConfigError([Problem(str(results.path), None, "no results here; run 'invoke matrix' first "
                                                             "or pass --results DIR")])
    cells, warnings = results.load()
    for w in warnings:
        _stderr(f"warning: {w}")
    if only:
        patterns = split_patterns(only)
        cells = [c for c in cells if any(matches(c.cell_id, p) for p in patterns)]
    host = (results.read_summary() or {}).get("host")
    return render(cells, fmt, title="gpumatrix compatibility" if fmt == "markdown" else None, host=host)


def clean(dry_run: bool = False, only: str | None = None) -> str:
    """Remove containers and images that carry gpumatrix's label (optionally only some cells'), nothing else."""
    patterns = split_patterns(only) if only else None

    def wanted(labels: dict) -> bool:
        return patterns is None or any(matches(labels.get(CELL_LABEL, ""), p) for p in patterns)

    engine = Engine.connect()
    lines = []
    try:
        for c in engine.containers_with_label(MANAGED_LABEL):
            if wanted(c.get("Labels") or {}):
                lines.append(f"container {c['Id'][:12]} {','.join(c.get('Names') or [])}")
                if not dry_run:
                    engine.remove_container(c["Id"])
        for img in engine.images_with_label(MANAGED_LABEL):
            if wanted(dict(img.labels)):
                lines.append(f"image {img.id[7:19]} {' '.join(img.tags)}")
                if not dry_run:
                    engine.remove_image(img.id)
    finally:
        engine.close()
    verb = "would remove" if dry_run else "removed"
    return "\n".join([f"{verb} {len(lines)} objects labelled {MANAGED_LABEL}"] + [f"  {x}" for x in lines]) + "\n"


def matrix_schema_path() -> Path:
    return Path(__file__).resolve().parent / "data" / "matrix.schema.json"
