"""How statuses and figures are shown: marks, words, the legend, short reasons and notes.

The statuses themselves (which exist, which fail, which ran) are the model's and live in
:mod:`gpumatrix.results.status`; this module only says how each one looks, for every format.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from gpumatrix.results.merge import Entry
from gpumatrix.results.status import CONFLICT, STATUSES
from gpumatrix.results.store import CellResult

MARKS = {"pass": "✔", "fail": "✘", "error": "!", "build_error": "!", "skipped": "–", "not_applicable": "·",
         CONFLICT: "≠"}
WORDS = {"pass": "pass", "fail": "fail", "error": "error", "build_error": "build failed", "skipped": "skipped",
         "not_applicable": "n/a", CONFLICT: "conflict"}
LEGEND = {
    "pass": "every probe passed (figure: best matmul TFLOP/s measured)",
    "fail": "the image runs, but a probe failed (the lowest failing layer is named)",
    "error": "the probes could not run or gave no readable result",
    "build_error": "the image could not be built",
    "skipped": "not run on this host (e.g. no GPU of this vendor)",
    "not_applicable": "no such combination (e.g. no wheel of this torch for this variant)",
    CONFLICT: "hosts of one type disagree",
}
# Every status a table entry can show, in legend order.
SHOWN = (*STATUSES, CONFLICT)
LAYER_NAMES = {1: "kernel driver", 2: "system runtime", 3: "programming interface", 4: "math libraries",
               5: "framework", 6: "performance"}

assert set(MARKS) == set(WORDS) == set(LEGEND) == set(SHOWN), "a status without its mark, word or legend"


def word(status: str) -> str:
    """The word for a status (``build failed``); an unknown status shows as itself."""
    return WORDS.get(status, status)


def figure(value: float) -> str:
    """A measured figure with its significant digits: ``612.4``, ``51.0``, ``0.012`` (never ``0.0`` for 0.012)."""
    if not math.isfinite(value):
        return str(value)
    if value == 0 or abs(value) >= 1:
        return f"{value:.1f}"
    digits = 1 - math.floor(math.log10(abs(value)))  # two significant digits
    return f"{value:.{digits}f}"


def short_reason(result: CellResult) -> str:
    """A few words for the table entry; the note carries the full reason."""
    if result.status == "pass":
        best = result.headline_tflops()
        return f"{figure(best[1])} TFLOP/s {best[0]}" if best else ""
    cause = (result.diagnosis or {}).get("cause")
    if result.status == "fail":
        verdict = result.verdict
        layer = verdict.get("lowest_failing_layer_name") or verdict.get("lowest_failing_layer")
        return " ".join(x for x in (f"at {layer}" if layer else "", f"({cause})" if cause else "") if x)
    return f"({cause})" if cause and cause != "unknown" else ""


def note_parts(result: CellResult) -> list[str]:
    """The note of a result that did not pass, as lines: what and why, then cause/fix, evidence, log."""
    first = word(result.status) + (f" — {result.reason}" if result.reason else "")
    lines = [first]
    diag = result.diagnosis or {}
    if diag.get("cause"):
        lines.append(f"cause: {diag['cause']}; fix: {diag.get('remedy') or ''}")
        if diag.get("evidence"):
            lines.append(f"evidence: {str(diag['evidence'])[:300]}")
    if result.status == "build_error" and result.logs.get("build"):
        lines.append(f"log: {result.logs['build']}")
    return lines


def conflict_text(entry: Entry) -> str:
    """``conflict: pass on host-a, fail on host-b`` (hosts grouped by status, best status first)."""
    names = entry.host_names()
    parts = []
    for status in entry.statuses:
        hosts = sorted({n for n, s in zip(names, entry.considered) if s.result.status == status})
        parts.append(f"{word(status)} on {', '.join(hosts)}")
    return "conflict: " + ", ".join(parts)


def entry_summary(entry: Entry) -> str:
    """The entry's status in words: ``pass``, or who said what for a conflict."""
    return conflict_text(entry) if entry.conflict else word(entry.status)


def entry_text(entry: Entry) -> str:
    """A table entry: mark, word and a few words; a conflict names who said what."""
    if entry.conflict:
        return f"{MARKS[CONFLICT]} {conflict_text(entry)}"
    r = entry.result
    extra = short_reason(r)
    return f"{MARKS[r.status]} {word(r.status)}" + (f" {extra}" if extra else "")


def counts_text(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{n} {word(s)}" for s, n in counts.items() if n)
