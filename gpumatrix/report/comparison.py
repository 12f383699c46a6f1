"""The regression gate's report: a :class:`~gpumatrix.results.gate.Comparison` for a terminal, a GitHub
job summary or JSON, and the exit code 4 when something regressed."""

from __future__ import annotations

import json

from gpumatrix.errors import RegressionFound
from gpumatrix.report import escape
from gpumatrix.report.vocabulary import word
from gpumatrix.results.gate import Change, Comparison

COMPARISON_FORMATS = ("text", "markdown", "json")


def describe_change(c: Change) -> list[str]:
    """A change as lines: where and what, then the cause and fix, and the evidence where known."""
    where = f"{c.cell_id} on {c.host_type}"
    if c.hosts:
        where += f" ({', '.join(c.hosts)})"
    lines = [f"{where}: {word(c.before)} → {word(c.after)}" + (f" — {c.reason}" if c.reason else "")]
    diag = c.diagnosis or {}
    if diag.get("cause") and diag.get("cause") != "unknown":
        lines.append(f"cause: {diag['cause']}; fix: {diag.get('remedy') or ''}")
    if diag.get("evidence"):
        lines.append(f"evidence: {str(diag['evidence'])[:300]}")
    return lines


def render_comparison(comp: Comparison, fmt: str = "text") -> str:
    """The comparison for a terminal (``text``), a GitHub job summary (``markdown``) or ``json``."""
    if fmt == "json":
        return json.dumps(comp.to_dict(), indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    md = fmt == "markdown"
    esc = escape.markdown if md else escape.clean
    lines = [("### " if md else "") + ("Regression gate: " + ("passed" if comp.ok else
                                                              f"{len(comp.regressions)} regression(s)"))]

    def section(title: str, changes: list[Change]) -> None:
        if not changes:
            return
        lines.append("")
        lines.append(f"**{title}**" if md else f"{title}:")
        for c in changes:
            first, *rest = (esc(x) for x in describe_change(c))
            lines.append(f"- {'<br>'.join([first, *rest])}" if md else "\n    ".join([f"  {first}", *rest]))

    section("Regressions (passed in the baseline, fail now)", comp.regressions)
    section("Improvements (pass now)", comp.improvements)
    section("Not checked (passed in the baseline, not run now)", comp.not_checked)
    lines.append("")
    lines.append(f"{comp.unchanged} unchanged, {comp.new} new (not in the baseline)")
    return "\n".join(lines) + "\n"


def enforce(comp: Comparison) -> None:
    """Raise :class:`RegressionFound` (exit code 4), with the comparison as its message, on a regression."""
    if comp.regressions:
        raise RegressionFound(render_comparison(comp).rstrip())
