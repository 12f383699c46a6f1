"""The compatibility table: one result model, several renderings (text, markdown, JSON).

Rows are bases, columns are torch versions (newest first). Each entry is a
status mark and a short reason or figure; every entry that is not a clean pass
gets a numbered footnote with the reason, and the diagnosis (cause, remedy,
evidence) where there is one.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from tabulate import tabulate

from gpumatrix.results.store import STATUSES, CellResult

MARKS = {"pass": "✔", "fail": "✘", "error": "!", "build_error": "!", "skipped": "–", "not_applicable": "·"}
WORDS = {"pass": "pass", "fail": "fail", "error": "error", "build_error": "build failed", "skipped": "skipped",
         "not_applicable": "n/a"}
LEGEND = {
    "pass": "every probe passed (figure: best matmul TFLOP/s measured)",
    "fail": "the image runs, but a probe failed (the lowest failing layer is named)",
    "error": "the probes could not run or gave no readable result",
    "build_error": "the image could not be built",
    "skipped": "not run on this host (e.g. no GPU of this vendor)",
    "not_applicable": "no such combination (e.g. no wheel of this torch for this variant)",
}
FORMATS = ("text", "markdown", "json")


def version_key(version: str) -> tuple:
    """Sort key for versions such as ``2.10.0`` > ``2.9.1`` > ``2.9.0a0+rocm6.4``."""
    nums = [int(n) for n in re.findall(r"\d+", version.split("+", 1)[0].split("a")[0].split("b")[0].split("rc")[0])]
    pre = 0 if re.search(r"(a|b|rc|dev)\d", version) else 1
    return (*nums[:3], *([0] * (3 - len(nums[:3]))), pre, version)


def short_reason(result: CellResult) -> str:
    """A few words for the table entry; the footnote carries the full reason."""
    if result.status == "pass":
        best = result.headline_tflops()
        return f"{best[1]:.1f} TFLOP/s {best[0]}" if best else ""
    if result.status == "fail":
        verdict = result.verdict
        layer = verdict.get("lowest_failing_layer_name") or verdict.get("lowest_failing_layer")
        cause = (result.diagnosis or {}).get("cause")
        return " ".join(x for x in (f"at {layer}" if layer else "", f"({cause})" if cause else "") if x)
    cause = (result.diagnosis or {}).get("cause")
    return f"({cause})" if cause and cause != "unknown" else ""


def footnote_text(result: CellResult) -> str:
    """The note for a cell that did not pass: its reason, and the diagnosis where there is one."""
    parts = [WORDS[result.status]]
    if result.reason:
        parts.append(f"— {result.reason}")
    diag = result.diagnosis or {}
    if diag.get("cause"):
        parts.append(f"\n      cause: {diag['cause']}; fix: {diag.get('remedy', '')}")
        if diag.get("evidence"):
            parts.append(f"\n      evidence: {str(diag['evidence'])[:300]}")
    if result.status == "build_error" and result.logs.get("build"):
        parts.append(f"\n      log: {result.logs['build']}")
    return " ".join(parts).replace(" \n", "\n")


def build_grid(results: Sequence[CellResult], markdown: bool = False) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, rows and footnotes of the table. Cells with the same note share its number."""
    bases: dict[str, str] = {}
    for r in results:
        bases.setdefault(r.base_id, r.base_image)
    versions = sorted({r.torch for r in results}, key=version_key, reverse=True)
    by_key = {(r.base_id, r.torch): r for r in results}
    notes: dict[str, list[str]] = {}  # note text -> cell ids, in first-seen order
    rows = []
    for base_id in sorted(bases):
        row = [f"**{base_id}**" if markdown else base_id]
        for version in versions:
            r = by_key.get((base_id, version))
            if r is None:
                row.append("")
                continue
            text = f"{MARKS[r.status]} {WORDS[r.status]}"
            extra = short_reason(r)
            if extra:
                text += f" {extra}"
            if r.status != "pass":
                note = footnote_text(r)
                notes.setdefault(note, []).append(r.cell_id)
                text += f" [{list(notes).index(note) + 1}]"
            row.append(text)
        rows.append(row)
    header = ["base"] + [f"torch {v}" for v in versions]
    footnotes = [f"{', '.join(ids)}: {note}" for note, ids in notes.items()]
    return header, rows, footnotes


def render(results: Iterable[CellResult], fmt: str = "text", title: str | None = None,
           host: dict[str, Any] | None = None) -> str:
    """Render results as ``text`` (terminal), ``markdown`` (GitHub) or ``json``."""
    results = sorted(results, key=lambda r: r.cell_id)
    if fmt == "json":
        return json.dumps({"cells": [r.to_dict() for r in results],
                           "counts": counts(results)}, indent=2, sort_keys=True) + "\n"
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    markdown = fmt == "markdown"
    header, rows, footnotes = build_grid(results, markdown=markdown)
    lines = []
    if title:
        lines += [f"## {title}" if markdown else title, ""]
    if host:
        lines += [f"Host: {host.get('hostname', '?')} — {describe_host(host)}", ""]
    if not results:
        lines.append("(no results)")
        return "\n".join(lines) + "\n"
    lines.append(tabulate(rows, headers=header, tablefmt="github" if markdown else "simple_grid"))
    lines.append("")
    c = counts(results)
    lines.append("Cells: " + ", ".join(f"{n} {WORDS[s]}" for s, n in c.items() if n))
    lines.append("Legend: " + "; ".join(f"{MARKS[s]} {WORDS[s]} = {LEGEND[s]}" for s in STATUSES))
    if footnotes:
        lines.append("")
        lines.append("Notes:")
        for i, note in enumerate(footnotes, 1):
            lines.append(f"  [{i}] {note}" if not markdown else f"{i}. {note}".replace("\n      ", "<br>"))
    return "\n".join(lines) + "\n"


def counts(results: Iterable[CellResult]) -> dict[str, int]:
    out = {s: 0 for s in STATUSES}
    for r in results:
        out[r.status] += 1
    return out


def describe_host(host: dict[str, Any]) -> str:
    gpus = host.get("gpus") or []
    if not gpus:
        return "no GPU"
    names: dict[str, int] = {}
    for g in gpus:
        names[g.get("name", "?")] = names.get(g.get("name", "?"), 0) + 1
    driver = host.get("nvidia_driver") or host.get("amd_driver")
    text = ", ".join(f"{n}× {name}" for name, n in names.items())
    return f"{text}, driver {driver}" if driver else text
