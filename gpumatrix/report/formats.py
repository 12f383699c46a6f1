"""The format registry: each output format's name and its renderer, and the entry points the CLI calls.

Every format is a view of one :class:`~gpumatrix.report.table.Table`, built from the one result model
(:class:`~gpumatrix.results.merge.Merged`), whether the results are one host's or a fleet's.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from gpumatrix.errors import UsageError
from gpumatrix.report.html import render_html
from gpumatrix.report.junit import render_junit
from gpumatrix.report.table import Table, build_table, render_markdown, render_text
from gpumatrix.report.vocabulary import entry_summary
from gpumatrix.results.merge import MERGED_FORMAT, MERGED_SCHEMA_VERSION, Merged, merge_results
from gpumatrix.results.store import CellResult

_SURROGATE = re.compile("[\ud800-\udfff]")


def render_json(table: Table) -> str:
    """The merged JSON (``format: gpumatrix-merged``): host types, and per (cell, host type) the status and
    every input result. It can be merged again and serves as a regression baseline.

    Where results came from (folder names) is left out, so a merge of sharded runs equals the merge of
    the unsharded run.
    """
    merged = table.merged
    entries = []
    for cid in merged.cell_ids():
        for label in merged.host_labels():
            e = merged.entry(cid, label)
            if e is None:
                continue
            entries.append({"cell_id": cid, "host_type": label, "status": e.status,
                            "statuses": {h: s.result.status for h, s in zip(e.host_names(), e.considered)},
                            "summary": entry_summary(e),
                            "results": [s.result.to_dict() for s in e.results]})
    hosts = [{**merged.host_types[h], "hostnames": sorted(merged.host_types[h]["hostnames"])}
             for h in merged.host_labels()]
    doc = {"format": MERGED_FORMAT, "schema_version": MERGED_SCHEMA_VERSION, "host_types": hosts,
           "entries": entries, "counts": merged.counts()}
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    # A lone surrogate cannot be encoded as UTF-8; JSON spells it as an escape, which reads back the same.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


# name -> renderer; `invoke report`, `invoke matrix` and `invoke merge` accept every one of them.
RENDERERS: Mapping[str, Callable[[Table], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "html": render_html,
    "junit": render_junit,
}
FORMATS = tuple(RENDERERS)


def check_format(fmt: str, flag: str = "--format", allowed: Sequence[str] = FORMATS) -> None:
    """A one-line :class:`UsageError` (exit code 2) naming the formats when ``fmt`` is not one of ``allowed``."""
    if fmt not in allowed:
        raise UsageError(flag, f"unknown format {fmt!r}; choose one of {', '.join(allowed)}")


def render_merged(merged: Merged, fmt: str = "text", title: str | None = "gpumatrix fleet compatibility") -> str:
    """Merged results (one host type or many) in ``fmt``: text, markdown, json, html or junit."""
    check_format(fmt)
    return RENDERERS[fmt](build_table(merged, title))


def render_results(results: Iterable[CellResult], host: Mapping[str, Any] | None = None, fmt: str = "text",
                   title: str | None = None) -> str:
    """One results folder's cells in ``fmt`` (any of :data:`FORMATS`): the table with one host-type column.

    ``host`` is the run's host fingerprint (``summary.json``), for results that do not record their own.
    """
    pairs = [("results", replace(r, host=dict(host)) if host and not r.host else r) for r in results]
    return render_merged(merge_results(pairs), fmt, title)
