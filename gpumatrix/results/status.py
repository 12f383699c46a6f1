"""The status vocabulary of a cell, and of a probe: the one place that says which statuses exist,
which count as failing and which mean the cell ran.

How a status is *shown* (marks, words, the legend) is presentation and lives in
:mod:`gpumatrix.report.vocabulary`.
"""

from __future__ import annotations

from gpumatrix.probes.model import FAILING_STATUSES as _PROBE_FAILING

# A cell's status, ordered from best to worst; the report's legend follows this order.
STATUSES = ("pass", "fail", "error", "build_error", "skipped", "not_applicable")
# The cell was tried on this host: the image was built (or failed to build) and probed.
RAN = ("pass", "fail", "error", "build_error")
# A result that is a failure of the cell: a gate regresses on these, JUnit reports them as failures.
FAILING = ("fail", "error", "build_error")
# The probes ran to a verdict: such a saved result may be reused (an error, e.g. a container that never answered,
# is tried again).
VERDICT = ("pass", "fail")
# Nothing was learnt about the cell on this host.
NOT_RUN = ("skipped", "not_applicable")
# Hosts of one type disagree (a merged entry only, never a stored result).
CONFLICT = "conflict"

# A probe's statuses (the probe suite's document) that make it count as failed: the probe suite owns this
# rule (it must stay standalone), so it is read from there, not copied.
PROBE_FAILING = tuple(sorted(_PROBE_FAILING))


def is_failing(status: str) -> bool:
    """Whether ``status`` (a cell's) is a failure: fail, error or build failed."""
    return status in FAILING


def ran(status: str) -> bool:
    """Whether a cell with ``status`` was tried on its host (pass, fail, error, build failed)."""
    return status in RAN
