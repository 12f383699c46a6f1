"""JUnit XML, so CI systems show every cell as a test: one test suite per host type, one test case per cell.

pass → a plain test case; fail / error / build failed / conflict → ``<failure>`` with the reason as
its message and the diagnosis and failing probes as its text; skipped / n/a → ``<skipped>`` with the
reason. The format is the common subset GitHub (e.g. dorny/test-reporter, mikepenz/action-junit-report),
GitLab and Jenkins read. All foreign text passes through :func:`gpumatrix.report.escape.xml`, so the
document is well-formed XML 1.0 whatever a container printed.
"""

from __future__ import annotations

import re

from gpumatrix.report.escape import xml
from gpumatrix.report.table import Table
from gpumatrix.report.vocabulary import entry_summary, word
from gpumatrix.results.merge import Entry
from gpumatrix.results.status import NOT_RUN, PROBE_FAILING


def _failure_text(e: Entry) -> str:
    lines = []
    for name, s in zip(e.host_names(), e.considered):
        r = s.result
        lines.append(f"{name}: {word(r.status)}" + (f" — {r.reason}" if r.reason else ""))
        diag = r.diagnosis or {}
        if diag.get("cause"):
            lines.append(f"  cause: {diag['cause']}; fix: {diag.get('remedy') or ''}")
        if diag.get("evidence"):
            lines.append(f"  evidence: {str(diag['evidence'])[:1000]}")
        for p in (r.probes or {}).get("probes") or []:
            if p.get("status") in PROBE_FAILING:
                lines.append(f"  probe {p.get('id')} (layer {p.get('layer')}): {p.get('status')}: {p.get('message')}")
    return "\n".join(lines)


def _seconds(e: Entry) -> str:
    timings = e.result.timings or {}
    return f"{sum(float(v) for v in timings.values() if isinstance(v, (int, float))):.3f}"


def _message(e: Entry) -> str:
    return (entry_summary(e) if e.conflict else f"{word(e.status)}: {e.result.reason or ''}").rstrip(": ")


def render_junit(table: Table) -> str:
    """The JUnit XML document of ``table`` (deterministic: sorted suites and cases)."""
    import xml.etree.ElementTree as ET  # only this format needs it

    root = ET.Element("testsuites", name="gpumatrix")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for i, col in enumerate(table.columns):
        suite = ET.SubElement(root, "testsuite", name=xml(col.label))
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        classname = "gpumatrix." + (re.sub(r"[^A-Za-z0-9_]+", "_", col.label).strip("_") or "host")
        for row in table.rows:
            te = row.entries[i]
            if te is None:
                continue
            e = te.entry
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=classname, name=xml(row.cell_id), time=_seconds(e))
            if e.status in NOT_RUN:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=xml(_message(e)))
            elif e.status != "pass":
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", message=xml(_message(e)), type=e.status)
                failure.text = xml(_failure_text(e))
            image = e.result.image or {}
            ref = image.get("pushed") or image.get("pulled") or image.get("tag")
            if ref:
                ET.SubElement(case, "system-out").text = xml(f"image: {ref} ({image.get('id')})")
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("errors", "0")
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
