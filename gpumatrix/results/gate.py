"""The regression gate: did a cell that passed in the baseline fail now, on the same host type?

A baseline is any results source :func:`gpumatrix.results.merge.load_sources` reads: the JSON of
``invoke merge --format json`` (``format: gpumatrix-merged``), the JSON of ``invoke report --format json``,
a results folder or its ``summary.json``. Both sides are compared per (cell, host type):

* **regression** — passed in the baseline; now fails, errors or does not build on at least one host
  of that type. The gate raises :class:`~gpumatrix.errors.RegressionFound` (exit code 4).
* **improvement** — did not pass in the baseline (or conflicted); passes now.
* **not checked** — passed in the baseline, but was not run now (skipped, not applicable, or not in
  this run's shard or hosts): listed, never a failure, because nothing was learnt.

This is the model of the comparison; :mod:`gpumatrix.report.comparison` renders it and raises
:class:`~gpumatrix.errors.RegressionFound` (exit code 4) on a regression.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gpumatrix.results.merge import Merged
from gpumatrix.results.status import NOT_RUN


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
        if after is None or after.status in NOT_RUN:
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
