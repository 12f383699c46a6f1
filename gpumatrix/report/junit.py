"""JUnit XML, so CI systems show every cell as a test: one test suite per host type, one test case per cell.

pass → a plain test case; fail / error / build failed / conflict → ``<failure>`` with the reason as
its message and the diagnosis and failing probes as its text; skipped / n/a → ``<skipped>`` with the
reason. The format is the common subset GitHub (e.g. dorny/test-reporter, mikepenz/action-junit-report),
GitLab and Jenkins read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpumatrix.results.merge import Entry, Merged
from gpumatrix.report.table import WORDS


def _failure_text(e: Entry) -> str:
    lines = []
    for name, s in zip(e.host_names(), e.considered):
        r = s.result
        lines.append(f"{name}: {WORDS[r.status]}" + (f" — {r.reason}" if r.reason else ""))
        diag = r.diagnosis or {}
        if diag.get("cause"):
            lines.append(f"  cause: {diag['cause']}; fix: {diag.get('remedy', '')}")
        if diag.get("evidence"):
            lines.append(f"  evidence: {str(diag['evidence'])[:1000]}")
        for p in (r.probes or {}).get("probes") or []:
            if p.get("status") in ("fail", "error", "timeout", "crash"):
                lines.append(f"  probe {p.get('id')} (layer {p.get('layer')}): {p.get('status')}: {p.get('message')}")
    return "\n".join(lines)


def _seconds(e: Entry) -> str:
    timings = e.result.timings or {}
    return f"{sum(float(v) for v in timings.values() if isinstance(v, (int, float))):.3f}"


def render_junit(merged: Merged) -> str:
    """The JUnit XML document for ``merged`` (deterministic: sorted suites and cases)."""
    root = ET.Element("testsuites", name="gpumatrix")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for label in merged.host_labels():
        suite = ET.SubElement(root, "testsuite", name=label)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        classname = "gpumatrix." + re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_")
        for cid in merged.cell_ids():
            e = merged.entry(cid, label)
            if e is None:
                continue
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=classname, name=cid, time=_seconds(e))
            status = e.status
            if status == "pass":
                pass
            elif status in ("skipped", "not_applicable"):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"{WORDS[status]}: {e.result.reason or ''}".rstrip(": "))
            else:
                counts["failures"] += 1
                message = e.conflict_text() if e.conflict else f"{WORDS[status]}: {e.result.reason or ''}"
                failure = ET.SubElement(case, "failure", message=message.rstrip(": "), type=status)
                failure.text = _failure_text(e)
            image = e.result.image or {}
            ref = image.get("pushed") or image.get("pulled") or image.get("tag")
            if ref:
                ET.SubElement(case, "system-out").text = f"image: {ref} ({image.get('id')})"
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("errors", "0")
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
