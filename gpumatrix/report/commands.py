"""What ``invoke merge``, ``report --baseline`` and ``recommend`` do: load results, render, write, gate.

These tie the model (:mod:`gpumatrix.results`) to its renderings; the model itself renders nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gpumatrix.errors import ConfigError, Problem
from gpumatrix.fsutil import write_text_atomic
from gpumatrix.host import discover_host
from gpumatrix.knowledge.versions import parse_version
from gpumatrix.report.comparison import enforce, render_comparison
from gpumatrix.report.formats import check_format, render_merged
from gpumatrix.report.recommendation import RECOMMEND_FORMATS, render_recommendation
from gpumatrix.results.gate import compare
from gpumatrix.results.merge import Merged, load_sources, restrict
from gpumatrix.results.recommend import RUN_FLAGS, recommend


def write_output(text: str, output: str | Path | None) -> str:
    """``text`` for standard output; with ``output``, written atomically to that file and a line saying so."""
    if not output:
        return text
    write_text_atomic(output, text)
    return f"wrote {output}\n"


def merge_command(paths: Sequence[str], fmt: str = "text", output: str | None = None,
                  baseline: str | None = None) -> str:
    """``invoke merge``: the merged table in ``fmt`` (with ``output``, written to that file instead).

    With ``baseline``, the regression gate follows: its report is appended (text or markdown), and
    :class:`~gpumatrix.errors.RegressionFound` is raised — after the table is written — on a regression.
    """
    check_format(fmt)
    merged = load_sources(paths)
    text = write_output(render_merged(merged, fmt), output)
    if baseline:
        comp = compare(load_sources([baseline]), merged)
        enforce(comp)
        text += "\n" + render_comparison(comp, "markdown" if fmt == "markdown" else "text")
    return text


def gate(baseline: str | Path, current: Sequence[str | Path] | Merged, fmt: str = "text") -> str:
    """Compare ``current`` (results folders, or merged results) with the ``baseline`` file or folder.

    Returns the rendered comparison when nothing regressed; raises :class:`RegressionFound` otherwise.
    """
    base = load_sources([baseline])
    now = current if isinstance(current, Merged) else load_sources(list(current))
    comp = compare(base, now)
    enforce(comp)
    return render_comparison(comp, fmt)


def gate_results(baseline: str | Path, results: str | Path, cell_ids: Sequence[str] | None = None,
                 fmt: str = "text") -> str:
    """The gate for one results folder (``invoke matrix/report --baseline``), limited to ``cell_ids`` if given.

    Limiting to the cells a run selected keeps a shard or an ``--only`` run from being blamed for, or
    credited with, cells it did not touch.
    """
    base, now = load_sources([baseline]), load_sources([results])
    if cell_ids is not None:
        base, now = restrict(base, cell_ids), restrict(now, cell_ids)
    comp = compare(base, now)
    enforce(comp)
    return render_comparison(comp, fmt)


def recommend_command(sources: Sequence[str], host_type: str | None = None, vendor: str | None = None,
                      min_torch: str | None = None, require: Sequence[str] = (), fmt: str = "text") -> str:
    """``invoke recommend``: ``host_type`` defaults to this host's (discovered without an engine)."""
    if fmt not in RECOMMEND_FORMATS:
        raise ConfigError([Problem("--format", None, f"unknown format {fmt!r}; choose text or json")])
    if vendor and vendor not in RUN_FLAGS:
        raise ConfigError([Problem("--vendor", None, f"unknown vendor {vendor!r}; choose nvidia, amd or cpu")])
    if min_torch and parse_version(min_torch) is None:
        raise ConfigError([Problem("--min-torch", None, f"{min_torch!r} is not a version (e.g. 2.9 or 2.9.1)")])
    merged = load_sources(sources)
    if host_type is None:
        host_type = discover_host().host_type()
    return render_recommendation(recommend(merged, host_type, vendor, min_torch, list(require)), fmt)
