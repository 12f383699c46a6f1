"""A self-contained HTML page of (merged) results: one file, no external assets.

A table of cells × host types that sorts by any column (a small inline script; ``#sort=COL`` or
``#sort=COL-desc`` in the address sorts on load), and per cell and host type the details: each
host's status and reason, the image reference, the diagnosis, performance figures and every probe
result grouped by layer. The script marks ``<body data-gm-ready="ok">`` when it has run, and records
any script error in ``#gm-errors``, so a headless browser can tell that the page really works.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Mapping

from gpumatrix.results.merge import Entry, Merged, merged_counts
from gpumatrix.report.table import LEGEND, MARKS, WORDS, short_reason, version_key
from gpumatrix.results.store import STATUSES, CellResult

STATUS_RANK = {s: i for i, s in enumerate(("pass", "conflict", "fail", "error", "build_error", "skipped",
                                           "not_applicable"))}
LAYER_NAMES = {1: "kernel driver", 2: "system runtime", 3: "programming interface", 4: "math libraries",
               5: "framework", 6: "performance"}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1f2328}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:.3em .6em;vertical-align:top}
#gm-table th{background:#f6f8fa;cursor:pointer;user-select:none;white-space:nowrap}
#gm-table th[aria-sort=ascending]::after{content:" \\25B2"}#gm-table th[aria-sort=descending]::after{content:" \\25BC"}
.st-pass{background:#dafbe1}.st-fail,.st-error,.st-build_error{background:#ffebe9}.st-conflict{background:#fff8c5}
.st-skipped,.st-not_applicable{color:#656d76}
details{margin:.4em 0;border:1px solid #d0d7de;border-radius:6px;padding:.3em .7em}
summary{cursor:pointer;font-weight:600}.probes td{font-size:.92em}.mono{font-family:ui-monospace,monospace}
#gm-errors{color:#cf222e}
"""

# Plain ES5 so any browser runs it; no external code.
_SCRIPT = r"""
(function () {
  "use strict";
  var errors = document.getElementById("gm-errors");
  window.addEventListener("error", function (ev) {
    var li = document.createElement("li");
    li.className = "gm-error";
    li.textContent = String(ev.message || ev.error);
    errors.appendChild(li);
  });
  var table = document.getElementById("gm-table");
  var heads = table.tHead.rows[0].cells;
  function value(row, col) {
    var cell = row.cells[col];
    var v = cell.getAttribute("data-sort");
    return v === null ? cell.textContent.trim() : v;
  }
  function compare(a, b) {
    var na = parseFloat(a), nb = parseFloat(b);
    if (!isNaN(na) && !isNaN(nb) && String(na) === a && String(nb) === b) { return na - nb; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  function sortBy(col, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var c = compare(value(r1, col), value(r2, col));
      if (c === 0) { c = compare(value(r1, 0), value(r2, 0)); }
      return descending ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    heads[col].setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.title = "sort by " + th.textContent;
    th.addEventListener("click", function () {
      sortBy(col, th.getAttribute("aria-sort") === "ascending");
    });
  });
  var m = /sort=(\d+)(-desc)?/.exec(window.location.hash);
  if (m && Number(m[1]) < heads.length) { sortBy(Number(m[1]), Boolean(m[2])); }
  // an entry links to its details: open them when followed
  function openTarget() {
    var target = window.location.hash.length > 1 && document.getElementById(window.location.hash.slice(1));
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  document.body.setAttribute("data-gm-ready", "ok");
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _anchor(cell_id: str, index: int) -> str:
    return "d-" + re.sub(r"[^A-Za-z0-9_-]", "_", cell_id) + f"-{index}"


def _version_sort(version: str) -> str:
    nums = version_key(version)[:4]
    return ".".join(f"{n:05d}" if isinstance(n, int) else "0" for n in nums)


def _entry_cell(e: Entry | None, anchor: str) -> str:
    if e is None:
        return '<td data-sort="9"></td>'
    status = e.status
    if e.conflict:
        text = "≠ " + e.conflict_text()
    else:
        text = f"{MARKS[status]} {WORDS[status]}"
        extra = short_reason(e.result)
        if extra:
            text += f" {extra}"
    best = e.result.headline_tflops() if status == "pass" else None
    # pass first, and among passes the faster first when sorted ascending
    key = f"{STATUS_RANK[status]}-{10**6 - (best[1] if best else 0):012.3f}"
    return f'<td class="st-{status}" data-sort="{_e(key)}"><a href="#{anchor}">{_e(text)}</a></td>'


def _probe_rows(result: CellResult) -> str:
    probes = (result.probes or {}).get("probes") or []
    if not probes:
        return "<p>No probe results (the probes did not run).</p>"
    out = []
    for layer in sorted({int(p.get("layer") or 0) for p in probes}):
        items = [p for p in probes if int(p.get("layer") or 0) == layer]
        counts: dict[str, int] = {}
        for p in items:
            counts[str(p.get("status"))] = counts.get(str(p.get("status")), 0) + 1
        tally = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        out.append(f"<h4>Layer {layer}: {_e(LAYER_NAMES.get(layer, items[0].get('layer_name', '')))} "
                   f"<small>({_e(tally)})</small></h4>")
        out.append('<table class="probes"><tr><th>probe</th><th>status</th><th>message</th></tr>')
        for p in items:
            out.append(f'<tr class="st-{_e(p.get("status"))}"><td class="mono">{_e(p.get("id"))}</td>'
                       f'<td>{_e(p.get("status"))}</td><td>{_e(p.get("message") or "")}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def _performance(result: CellResult) -> str:
    rows = []
    for p in (result.probes or {}).get("probes") or []:
        if p.get("layer") != 6 or p.get("status") != "pass":
            continue
        per_dtype = (p.get("details") or {}).get("results")
        if isinstance(per_dtype, dict):
            for dtype, figures in sorted(per_dtype.items()):
                if isinstance(figures, dict) and isinstance(figures.get("tflops"), (int, float)):
                    rows.append(f"<li>matmul {_e(dtype)}: {figures['tflops']:.2f} TFLOP/s</li>")
        else:
            rows.append(f"<li>{_e(p.get('id'))}: {_e(p.get('message') or '')}</li>")
    return f"<ul>{''.join(rows)}</ul>" if rows else "<p>No performance figures.</p>"


def _diagnosis(diag: Mapping[str, Any] | None) -> str:
    if not diag:
        return ""
    parts = [f"<dt>cause</dt><dd class=\"mono\">{_e(diag.get('cause'))}</dd>"]
    for key in ("remedy", "evidence", "explanation"):
        if diag.get(key):
            parts.append(f"<dt>{key}</dt><dd>{_e(str(diag[key])[:2000])}</dd>")
    return "<h4>Diagnosis</h4><dl>" + "".join(parts) + "</dl>"


def _details(e: Entry, anchor: str) -> str:
    head = e.conflict_text() if e.conflict else WORDS[e.status]
    out = [f'<details id="{anchor}"><summary>{_e(e.cell_id)} on {_e(e.host_type)} — {_e(head)}</summary>']
    for name, s in zip(e.host_names(e.results), e.results):
        r = s.result
        image = r.image or {}
        ref = image.get("pushed") or image.get("pulled") or image.get("tag") or ""
        out.append(f"<h3>{_e(name)}: {_e(MARKS[r.status])} {_e(WORDS[r.status])}</h3>")
        out.append(f"<p>torch {_e(r.torch)} · {_e(r.base_image)} · Python {_e(r.python)}"
                   + (f" · image <span class=\"mono\">{_e(ref)}</span>" if ref else "")
                   + (f" <span class=\"mono\">({_e(image.get('id'))})</span>" if image.get("id") else "") + "</p>")
        if r.reason:
            out.append(f"<p><b>Reason:</b> {_e(r.reason)}</p>")
        out.append(_diagnosis(r.diagnosis))
        if r.probes:
            out.append("<h4>Performance</h4>" + _performance(r))
            out.append(_probe_rows(r))
    out.append("</details>")
    return "\n".join(x for x in out if x)


def render_html(merged: Merged, title: str = "gpumatrix") -> str:
    """The page, as one string (UTF-8, no external references)."""
    labels = merged.host_labels()
    head_cells = ["cell", "base", "torch", "vendor"] + labels
    rows, details = [], []
    for i, cid in enumerate(merged.cell_ids()):
        r = merged.cells[cid]
        tds = [f'<td class="mono">{_e(cid)}</td>', f"<td>{_e(r.base_id)}</td>",
               f'<td data-sort="{_version_sort(r.torch)}">{_e(r.torch)}</td>', f"<td>{_e(r.vendor)}</td>"]
        for j, label in enumerate(labels):
            e = merged.entry(cid, label)
            anchor = _anchor(cid, j)
            tds.append(_entry_cell(e, anchor))
            if e is not None:
                details.append(_details(e, anchor))
        rows.append(f'<tr data-cell="{_e(cid)}">{"".join(tds)}</tr>')
    hosts = "".join(
        f"<li><b>{_e(h)}</b>: {_e(', '.join(merged.host_types[h]['hostnames']))}"
        + (f" — arch {_e(', '.join(merged.host_types[h]['archs']))}" if merged.host_types[h]["archs"] else "")
        + " — " + _e(", ".join(f"{n} {WORDS.get(s, s)}" for s, n in merged_counts(merged)[h].items() if n))
        + "</li>" for h in labels)
    legend = "".join(f"<li>{_e(MARKS[s])} {_e(WORDS[s])}: {_e(LEGEND[s])}</li>" for s in STATUSES)
    warnings = "".join(f"<li>{_e(w)}</li>" for w in merged.warnings)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>",
        "<body>",
        f"<h1>{_e(title)}</h1>",
        f"<h2>Host types</h2><ul>{hosts or '<li>none</li>'}</ul>",
        "<h2>Cells</h2><p>Click a column heading to sort; click an entry for its details.</p>",
        '<table id="gm-table"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head_cells) + "</tr></thead>",
        "<tbody>" + "\n".join(rows) + "</tbody></table>",
        f"<h2>Legend</h2><ul>{legend}<li>≠ conflict: hosts of one type disagree</li></ul>",
        f"<ul>{warnings}</ul>" if warnings else "",
        "<h2>Details</h2>",
        "\n".join(details),
        '<ul id="gm-errors"></ul>',
        f"<script>{_SCRIPT}</script>",
        f'<script type="application/json" id="gm-data">{_json_for_script(merged)}</script>',
        "</body></html>",
    ]) + "\n"


def _json_for_script(merged: Merged) -> str:
    """A compact machine-readable index of the table (status per cell and host type), safe inside <script>."""
    data = {f"{cid} | {h}": e.status for (cid, h), e in sorted(merged.entries.items())}
    return json.dumps(data, sort_keys=True, ensure_ascii=False).replace("<", "\\u003c")
