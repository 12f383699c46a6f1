"""A self-contained HTML page of the table: one file, no external assets.

Rendered from a Jinja2 template with autoescaping (``templates/report.html.j2``); the stylesheet and
script are real files beside it (``report.css``, ``report.js``), inlined at render time. The page has
the table of cells × host types, with each entry's reason visible under it; it sorts by any column
(``#sort=COL`` or ``#sort=COL-desc`` in the address sorts on load) and filters by status
(``#status=fail``). Per cell and host type, the details: each host's status and reason, the image
reference, the diagnosis, performance figures and every probe result grouped by layer. The script
marks ``<body data-gm-ready="ok">`` when it has run, and records any script error in ``#gm-errors``,
so a headless browser can tell that the page really works.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from gpumatrix.knowledge.versions import version_key
from gpumatrix.report.escape import clean
from gpumatrix.report.table import Table, TableEntry
from gpumatrix.report.vocabulary import LAYER_NAMES, LEGEND, MARKS, SHOWN, counts_text, entry_summary, figure, word
from gpumatrix.results.merge import Entry
from gpumatrix.results.status import CONFLICT, STATUSES
from gpumatrix.results.store import CellResult

if TYPE_CHECKING:
    import jinja2

# The order of an entry column sorted ascending: passes first (the faster first), then the worse.
STATUS_RANK = {s: i for i, s in enumerate((STATUSES[0], CONFLICT, *STATUSES[1:]))}
REASON_CHARS = 240  # the reason shown under an entry; the details have all of it


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}`` of the template: foreign text with its control characters spelled out.

    Autoescaping then makes it text; only the inlined stylesheet, script and data (Markup) pass as they are.
    """
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return clean(value, newlines=True)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2  # only a page needs it: the text table of every run does not pay for its import

    return jinja2.Environment(loader=jinja2.PackageLoader("gpumatrix.report", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, finalize=_finalize, keep_trailing_newline=True)


@lru_cache(maxsize=4)
def _asset(name: str) -> Markup:
    """A file of ``templates/`` to inline: ours, not foreign text, so it is not escaped."""
    return Markup(resources.files("gpumatrix.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8"))


def _short(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"


def _why(e: Entry) -> list[str]:
    """The reasons shown under an entry, without a click: the reason, or each disagreeing host's."""
    if e.conflict:
        return [_short(f"{name}: {word(s.result.status)}" + (f" — {s.result.reason}" if s.result.reason else ""))
                for name, s in zip(e.host_names(), e.considered) if s.result.status != "pass"]
    return [_short(e.result.reason)] if e.status != "pass" and e.result.reason else []


def _entry(te: TableEntry, anchor: str) -> dict[str, Any]:
    best = te.entry.result.headline_tflops() if te.status == "pass" else None
    speed = min(max(best[1], 0.0), 999_999.0) if best else 0.0
    # pass first, and among passes the faster first when sorted ascending
    return {"status": te.status, "text": te.text, "anchor": anchor, "why": _why(te.entry),
            "sort": f"{STATUS_RANK[te.status]}-{1_000_000 - speed:012.3f}"}


def _layers(result: CellResult) -> list[dict[str, Any]]:
    probes = (result.probes or {}).get("probes") or []
    out = []
    for layer in sorted({int(p.get("layer") or 0) for p in probes}):
        items = [p for p in probes if int(p.get("layer") or 0) == layer]
        tally: dict[str, int] = {}
        for p in items:
            tally[str(p.get("status"))] = tally.get(str(p.get("status")), 0) + 1
        out.append({"number": layer, "name": LAYER_NAMES.get(layer, items[0].get("layer_name") or ""),
                    "tally": ", ".join(f"{n} {s}" for s, n in sorted(tally.items())),
                    "probes": [{"id": str(p.get("id")), "status": str(p.get("status")),
                                "status_class": re.sub(r"[^a-z_]", "", str(p.get("status"))),
                                "message": str(p.get("message") or "")} for p in items]})
    return out


def _performance(result: CellResult) -> list[str]:
    lines = []
    for p in (result.probes or {}).get("probes") or []:
        if p.get("layer") != 6 or p.get("status") != "pass":
            continue
        per_dtype = (p.get("details") or {}).get("results")
        if isinstance(per_dtype, dict):
            for dtype, figures in sorted(per_dtype.items()):
                value = figures.get("tflops") if isinstance(figures, dict) else None
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    lines.append(f"matmul {dtype}: {figure(value)} TFLOP/s")
        else:
            lines.append(f"{p.get('id')}: {p.get('message') or ''}")
    return lines


def _details(e: Entry, anchor: str) -> dict[str, Any]:
    hosts = []
    for name, s in zip(e.host_names(e.results), e.results):
        r = s.result
        image = r.image or {}
        diag = r.diagnosis or {}
        hosts.append({
            "name": name, "mark": MARKS[r.status], "word": word(r.status), "torch": r.torch,
            "base_image": r.base_image, "python": r.python,
            "ref": image.get("pushed") or image.get("pulled") or image.get("tag") or "",
            "image_id": image.get("id") or "", "reason": r.reason or "",
            "diagnosis": [(k, str(diag[k])[:2000]) for k in ("cause", "remedy", "evidence", "explanation")
                          if diag.get(k)],
            "has_probes": bool(r.probes), "probes_missing": not r.probes,
            "performance": _performance(r), "layers": _layers(r)})
    return {"anchor": anchor, "cell_id": e.cell_id, "host_type": e.host_type, "head": entry_summary(e),
            "hosts": hosts}


def render_html(table: Table) -> str:
    """The page, as one string (UTF-8, no external references)."""
    versions = sorted({row.result.torch for row in table.rows}, key=version_key)
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for i, row in enumerate(table.rows):
        entries: list[dict[str, Any] | None] = []
        for j, te in enumerate(row.entries):
            if te is None:
                entries.append(None)
                continue
            anchor = f"d{i}-{j}"
            entries.append(_entry(te, anchor))
            details.append(_details(te.entry, anchor))
        rows.append({"cell_id": row.cell_id, "base": row.result.base_id, "torch": row.result.torch,
                     "torch_sort": f"{versions.index(row.result.torch):06d}", "vendor": row.result.vendor,
                     "statuses": " ".join(sorted({te.status for te in row.entries if te})), "entries": entries})
    present: dict[str, int] = {}
    for row in table.rows:
        for s in {te.status for te in row.entries if te}:
            present[s] = present.get(s, 0) + 1
    statuses = [{"status": s, "mark": MARKS[s], "word": word(s), "count": present[s]} for s in SHOWN if s in present]
    index = {f"{e.cell_id} | {e.host_type}": e.status for _, e in sorted(table.merged.entries.items())}
    data = json.dumps(index, sort_keys=True, ensure_ascii=True).replace("<", "\\u003c")
    return _environment().get_template("report.html.j2").render(
        title=table.title or "gpumatrix",
        columns=[{"label": c.label, "hostnames": c.hostnames, "archs": c.archs, "counts": counts_text(c.counts)}
                 for c in table.columns],
        statuses=statuses, rows=rows, details=details, warnings=list(table.warnings),
        legend=[{"status": s, "mark": MARKS[s], "word": word(s), "meaning": LEGEND[s]} for s in SHOWN],
        host_count=len({h for c in table.columns for h in c.hostnames}),
        css=_asset("report.css"), script=_asset("report.js"), data=Markup(data))

