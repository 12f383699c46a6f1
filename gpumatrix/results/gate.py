"""The regression gate: did a cell that passed in the baseline fail now, on the same host type?

A baseline is any results source :func:`gpumatrix.merge.load_sources` reads: the JSON of
``invoke merge --format json`` (``format: gpumatrix-merged``), the JSON of ``invoke report --format json``,
a results folder or its ``summary.json``. Both sides are compared per (cell, host type):

* **regression** — passed in the baseline; now fails, errors or does not build on at least one host
  of that type. The gate raises :class:`~gpumatrix.errors.RegressionFound` (exit code 4).
* **improvement** — did not pass in the baseline (or conflicted); passes now.
* **not checked** — passed in the baseline, but was not run now (skipped, not applicable, or not in
  this run's shard or hosts): listed, never a failure, because nothing was learnt.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from gpumatrix.errors import RegressionFound
from gpumatrix.results.merge import Merged, load_sources, restrict
from gpumatrix.report.table import WORDS


@dataclass(frozen=True)
class Change:
    """One (cell, host type) whose verdict moved."""

    cell_id: str
    host_type: str
    before: str  # the baseline's status (or "conflict")
    after: str  # the current status (or "conflict")
    hosts: tuple[str, ...]  # the hosts that show the new status (for a regression: those that fail)
    reason: str | None = None
    diagnosis: dict[str, Any] | None = None

    def describe(self) -> str:
        where = f"{self.cell_id} on {self.host_type}"
        if self.hosts:
            where += f" ({', '.join(self.hosts)})"
        text = f"{where}: {WORDS.get(self.before, self.before)} → {WORDS.get(self.after, self.after)}"
        if self.reason:
            text += f" — {self.reason}"
        diag = self.diagnosis or {}
        if diag.get("cause") and diag.get("cause") != "unknown":
            text += f"\n    cause: {diag['cause']}; fix: {diag.get('remedy', '')}"
        if diag.get("evidence"):
            text += f"\n    evidence: {str(diag['evidence'])[:300]}"
        return text


@dataclass
class Comparison:
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    not_checked: list[Change] = field(default_factory=list)
    unchanged: int = 0
    new: int = 0  # (cell, host type) pairs the baseline did not have

    @property
    def ok(self) -> bool:
        return not self.regressions

    def to_dict(self) -> dict[str, Any]:
        return {"regressions": [asdict(c) for c in self.regressions],
                "improvements": [asdict(c) for c in self.improvements],
                "not_checked": [asdict(c) for c in self.not_checked],
                "unchanged": self.unchanged, "new": self.new, "ok": self.ok}


def compare(baseline: Merged, current: Merged) -> Comparison:
    """Compare two merged result sets cell by cell, host type by host type."""
    comp = Comparison()
    for key in sorted(set(baseline.entries) | set(current.entries)):
        before, after = baseline.entries.get(key), current.entries.get(key)
        cell_id, host_type = key
        if before is None:
            comp.new += 1
            continue
        if after is None or after.status in ("skipped", "not_applicable"):
            if before.status == "pass":
                why = after.result.reason if after is not None else "not in this run"
                comp.not_checked.append(Change(cell_id, host_type, "pass", after.status if after else "absent", (),
                                               why))
            continue
        failing = after.failing()
        if before.status == "pass" and failing:
            worst = failing[0].result
            names = [n for n, s in zip(after.host_names(), after.considered) if s in failing]
            comp.regressions.append(Change(cell_id, host_type, "pass", after.status, tuple(names), worst.reason,
                                           dict(worst.diagnosis) if worst.diagnosis else None))
        elif before.status != "pass" and after.status == "pass":
            comp.improvements.append(Change(cell_id, host_type, before.status, "pass",
                                            tuple(after.host_names()),
                                            f"was: {before.result.reason}" if before.result.reason else None))
        else:
            comp.unchanged += 1
    return comp


def render_comparison(comp: Comparison, fmt: str = "text") -> str:
    """The comparison for a terminal (``text``), a GitHub job summary (``markdown``) or ``json``."""
    if fmt == "json":
        return json.dumps(comp.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    md = fmt == "markdown"
    lines = [("### " if md else "") + ("Regression gate: " + ("passed" if comp.ok else
                                                              f"{len(comp.regressions)} regression(s)"))]

    def section(title: str, changes: list[Change]) -> None:
        if not changes:
            return
        lines.append("")
        lines.append(f"**{title}**" if md else f"{title}:")
        for c in changes:
            text = c.describe()
            lines.append(f"- {text}".replace("\n    ", "<br>") if md else f"  {text}")

    section("Regressions (passed in the baseline, fail now)", comp.regressions)
    section("Improvements (pass now)", comp.improvements)
    section("Not checked (passed in the baseline, not run now)", comp.not_checked)
    lines.append("")
    lines.append(f"{comp.unchanged} unchanged, {comp.new} new (not in the baseline)")
    return "\n".join(lines) + "\n"


def enforce(comp: Comparison) -> None:
    """Raise :class:`RegressionFound` (exit code 4) when the comparison has a regression."""
    if comp.regressions:
        raise RegressionFound(render_comparison(comp).rstrip())


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
