"""Merge the results of many hosts into one table: rows are cells, columns are host types.

A *host type* is what decides compatibility — the GPU model(s), their architecture and the driver —
read from the ``host`` fingerprint every :class:`~gpumatrix.results.CellResult` carries; it is
labelled like ``NVIDIA H100 80GB HBM3 · 570.86``, or ``cpu`` for a host without a GPU. Several hosts
of one type (or several shards) fill one column group.

For each (cell, host type), a result that ran (pass, fail, error, build failed) outranks a ``skipped``
one (another host of the type had no GPU of the vendor, or ran a different shard). When the results
that ran disagree, the entry is a **conflict**, shown as ``conflict: pass on host-a, fail on host-b`` —
never hidden behind one of them.

The merged JSON (``format: gpumatrix-merged``) carries every input result, so it can be merged again
and serves as a regression baseline (see :mod:`gpumatrix.gate`).
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from tabulate import tabulate

from gpumatrix.errors import ConfigError, Problem
from gpumatrix.report.table import LEGEND, MARKS, WORDS, footnote_text, short_reason, version_key
from gpumatrix.results.store import STATUSES, CellResult, ResultsDir

MERGED_FORMAT = "gpumatrix-merged"
MERGED_SCHEMA_VERSION = 1
RAN = ("pass", "fail", "error", "build_error")
FAILING = ("fail", "error", "build_error")
MERGE_FORMATS = ("text", "markdown", "json", "html", "junit")


# -- host types -------------------------------------------------------------
def host_type_of(host: Mapping[str, Any] | None) -> str:
    """The label of a host fingerprint's type: ``NVIDIA H100 80GB HBM3 · 570.86``, ``cpu`` without a GPU.

    The GPU count is left out: four or eight H100s on one driver answer the same compatibility question.
    """
    host = host or {}
    names = sorted({str(g.get("name") or "GPU") for g in host.get("gpus") or [] if isinstance(g, Mapping)})
    if not names:
        return "cpu"
    drivers = "/".join(str(d) for d in (host.get("nvidia_driver"), host.get("amd_driver")) if d)
    label = " + ".join(names)
    return f"{label} · {drivers}" if drivers else label


def host_type_facts(host: Mapping[str, Any] | None) -> dict[str, Any]:
    """The facts behind a host type label: vendors, GPU models, architectures, driver."""
    host = host or {}
    gpus = [g for g in host.get("gpus") or [] if isinstance(g, Mapping)]
    return {
        "label": host_type_of(host),
        "vendors": sorted({str(g.get("vendor")) for g in gpus if g.get("vendor")}) or ["cpu"],
        "gpus": sorted({str(g.get("name") or "GPU") for g in gpus}),
        "archs": sorted({str(g.get("arch")) for g in gpus if g.get("arch")} | set(host.get("gpu_archs") or [])),
        "driver": host.get("nvidia_driver") or host.get("amd_driver"),
    }


# -- the merged model -------------------------------------------------------
@dataclass(frozen=True)
class Sourced:
    """One host's result for a cell, and where it was read from (a folder, or a JSON file)."""

    hostname: str
    source: str
    result: CellResult


@dataclass
class Entry:
    """Everything known about one cell on one host type."""

    cell_id: str
    host_type: str
    results: list[Sourced]  # every input result, sorted by host
    considered: list[Sourced]  # those that decide the status (results that ran outrank skipped ones)

    @property
    def statuses(self) -> list[str]:
        return sorted({s.result.status for s in self.considered}, key=STATUSES.index)

    @property
    def conflict(self) -> bool:
        return len(self.statuses) > 1

    @property
    def status(self) -> str:
        """The agreed status, or ``conflict``."""
        return "conflict" if self.conflict else self.statuses[0]

    @property
    def result(self) -> CellResult:
        """The representative result: the worst one considered (a conflict is explained by its failure)."""
        worst = max(self.considered, key=lambda s: (STATUSES.index(s.result.status), s.hostname, s.source))
        return worst.result

    def host_names(self, items: Sequence[Sourced] | None = None) -> list[str]:
        """Host names, made unique with the source where one host appears twice."""
        items = self.considered if items is None else items
        names = [s.hostname for s in items]
        return [f"{s.hostname} ({s.source})" if names.count(s.hostname) > 1 else s.hostname for s in items]

    def conflict_text(self) -> str:
        """``conflict: pass on host-a, fail on host-b`` (hosts grouped by status, best status first)."""
        names = self.host_names()
        parts = []
        for status in self.statuses:
            hosts = sorted({n for n, s in zip(names, self.considered) if s.result.status == status})
            parts.append(f"{WORDS[status]} on {', '.join(hosts)}")
        return "conflict: " + ", ".join(parts)

    def failing(self) -> list[Sourced]:
        return [s for s in self.considered if s.result.status in FAILING]


@dataclass
class Merged:
    """Results of many hosts: cells × host types."""

    cells: dict[str, CellResult] = field(default_factory=dict)  # cell id -> one result (for base, torch, …)
    host_types: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> facts + hostnames
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def cell_ids(self) -> list[str]:
        """Rows: by base, then newest torch first."""
        def key(cid: str) -> tuple:
            r = self.cells[cid]
            return (r.base_id, tuple(-x if isinstance(x, int) else 0 for x in version_key(r.torch)[:4]), cid)
        return sorted(self.cells, key=key)

    def host_labels(self) -> list[str]:
        """Columns: GPU host types (by label), then ``cpu``."""
        return sorted(self.host_types, key=lambda h: (h == "cpu", h))

    def entry(self, cell_id: str, host_type: str) -> Entry | None:
        return self.entries.get((cell_id, host_type))

    def all_results(self) -> list[Sourced]:
        return [s for key in sorted(self.entries) for s in self.entries[key].results]

    def to_json_dict(self) -> dict[str, Any]:
        """The merged JSON: host types, and per (cell, host type) the status and every input result.

        Where results came from (folder names) is left out, so a merge of sharded runs equals the
        merge of the unsharded run.
        """
        entries = []
        for cid in self.cell_ids():
            for label in self.host_labels():
                e = self.entry(cid, label)
                if e is None:
                    continue
                entries.append({"cell_id": cid, "host_type": label, "status": e.status,
                                "statuses": {h: s.result.status for h, s in zip(e.host_names(), e.considered)},
                                "summary": e.conflict_text() if e.conflict else WORDS[e.status],
                                "results": [s.result.to_dict() for s in e.results]})
        hosts = [{**self.host_types[h], "hostnames": sorted(self.host_types[h]["hostnames"])}
                 for h in self.host_labels()]
        return {"format": MERGED_FORMAT, "schema_version": MERGED_SCHEMA_VERSION, "host_types": hosts,
                "entries": entries, "counts": merged_counts(self)}


def merge_results(results: Iterable[tuple[str, CellResult]], warnings: Sequence[str] = ()) -> Merged:
    """Merge ``(source, result)`` pairs (the source names where a result came from)."""
    merged = Merged(warnings=list(warnings))
    grouped: dict[tuple[str, str], list[Sourced]] = {}
    for source, r in results:
        label = host_type_of(r.host)
        hostname = str((r.host or {}).get("hostname") or "unknown host")
        facts = merged.host_types.setdefault(label, {**host_type_facts(r.host), "hostnames": set()})
        facts["hostnames"].add(hostname)
        grouped.setdefault((r.cell_id, label), []).append(Sourced(hostname, source, r))
        # keep the first result by cell id as the row's description (base, torch, vendor are the same in all)
        merged.cells.setdefault(r.cell_id, r)
    for key, items in grouped.items():
        items.sort(key=lambda s: (s.hostname, s.source, s.result.status))
        ran = [s for s in items if s.result.status in RAN]
        merged.entries[key] = Entry(key[0], key[1], items, ran or items)
    for facts in merged.host_types.values():
        facts["hostnames"] = sorted(facts["hostnames"])
    return merged


def _results_of_dir(path: Path) -> tuple[list[tuple[str, CellResult]], list[str]]:
    folder = ResultsDir(path)
    if not folder.cells_dir.is_dir():
        raise ConfigError([Problem(str(path), None, "no results here (no cells/ folder); pass the --results "
                                                    "folder of a run, or a merged JSON")])
    results, warnings = folder.load()
    summary_host = (folder.read_summary() or {}).get("host")
    out = []
    for r in results:
        if not r.host and summary_host:  # older results: the run's host is in the summary
            r.host = summary_host
        out.append((path.name or str(path), r))
    return out, warnings


def _results_of_json(path: Path) -> list[tuple[str, CellResult]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError([Problem(str(path), None, f"cannot read it as JSON: {err}")]) from err
    dicts: list[Mapping[str, Any]]
    if isinstance(data, dict) and data.get("format") == MERGED_FORMAT:
        if data.get("schema_version") != MERGED_SCHEMA_VERSION:
            raise ConfigError([Problem(str(path), None, f"merged schema_version {data.get('schema_version')!r} "
                                                        f"is not {MERGED_SCHEMA_VERSION}")])
        dicts = [r for e in data.get("entries") or [] for r in e.get("results") or []]
    elif isinstance(data, dict) and isinstance(data.get("cells"), list):  # `invoke report --format json`
        dicts = data["cells"]
    else:
        raise ConfigError([Problem(str(path), None, "not gpumatrix results: want the JSON of 'invoke merge "
                                                    "--format json' or 'invoke report --format json'")])
    out = []
    for i, d in enumerate(dicts):
        try:
            out.append((path.name, CellResult.from_dict(d)))
        except (ValueError, TypeError) as err:
            raise ConfigError([Problem(str(path), None, f"result {i}: {err}")]) from err
    return out


def expand_sources(paths: Sequence[str | Path]) -> list[Path]:
    """Results sources as given on the command line: globs are expanded (``'fleet/*'``), a folder of results
    folders stands for each of them (``fleet/`` as actions/download-artifact leaves it), and a
    ``summary.json`` for its folder."""
    out: list[Path] = []
    for raw in paths:
        text = str(raw)
        matched = sorted(glob.glob(text)) if any(ch in text for ch in "*?[") else [text]
        if not matched:
            raise ConfigError([Problem(text, None, "matches no results folder or file")])
        for item in map(Path, matched):
            if item.is_file() and item.name == "summary.json":
                item = item.parent
            if item.is_dir() and not (item / "cells").is_dir():
                inner = sorted(p for p in item.iterdir() if (p / "cells").is_dir())
                if inner:
                    out += inner
                    continue
            out.append(item)
    return out


def load_sources(paths: Sequence[str | Path]) -> Merged:
    """Merge results folders (or folders of them, or globs), and merged/report JSON files."""
    if not paths:
        raise ConfigError([Problem("merge", None, "name at least one results folder")])
    pairs: list[tuple[str, CellResult]] = []
    warnings: list[str] = []
    for path in expand_sources(paths):
        if path.is_dir():
            found, warned = _results_of_dir(path)
            pairs += found
            warnings += warned
        elif path.is_file():
            pairs += _results_of_json(path)
        else:
            raise ConfigError([Problem(str(path), None, "no such results folder or file")])
    return merge_results(pairs, warnings)


def restrict(merged: Merged, cell_ids: Iterable[str]) -> Merged:
    """``merged`` with only the given cells (e.g. those one run or one ``--only`` selected)."""
    keep = set(cell_ids)
    pairs = [(s.source, s.result) for s in merged.all_results() if s.result.cell_id in keep]
    return merge_results(pairs, merged.warnings)


# -- rendering --------------------------------------------------------------
def merged_counts(merged: Merged) -> dict[str, dict[str, int]]:
    """Per host type: how many cells have each status (``conflict`` included)."""
    out: dict[str, dict[str, int]] = {}
    for label in merged.host_labels():
        c = {s: 0 for s in (*STATUSES, "conflict")}
        for (cid, h), e in merged.entries.items():
            if h == label:
                c[e.status] += 1
        out[label] = c
    return out


def entry_text(e: Entry) -> str:
    """A table entry: mark, word and a few words; a conflict names who said what."""
    if e.conflict:
        return f"≠ {e.conflict_text()}"
    r = e.result
    text = f"{MARKS[r.status]} {WORDS[r.status]}"
    extra = short_reason(r)
    return f"{text} {extra}" if extra else text


def merged_grid(merged: Merged, markdown: bool = False) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, rows and footnotes of the merged table (identical notes share one number)."""
    labels = merged.host_labels()
    notes: dict[str, list[str]] = {}
    rows = []
    for cid in merged.cell_ids():
        row = [f"**{cid}**" if markdown else cid]
        for label in labels:
            e = merged.entry(cid, label)
            if e is None:
                row.append("")
                continue
            text = entry_text(e)
            if e.status != "pass":
                if e.conflict:
                    note = "; ".join(f"on {name}: {footnote_text(s.result)}"
                                     for name, s in zip(e.host_names(), e.considered) if s.result.status != "pass")
                else:
                    note = footnote_text(e.result)
                notes.setdefault(note, []).append(f"{cid} on {label}")
                text += f" [{list(notes).index(note) + 1}]"
            row.append(text)
        rows.append(row)
    header = ["cell"] + labels
    footnotes = [f"{', '.join(where)}: {note}" for note, where in notes.items()]
    return header, rows, footnotes


def render_merged(merged: Merged, fmt: str = "text", title: str | None = "gpumatrix fleet compatibility") -> str:
    """The merged table as ``text``, ``markdown`` (GitHub job summary), ``json``, ``html`` or ``junit``."""
    if fmt == "json":
        return json.dumps(merged.to_json_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt == "html":
        from gpumatrix.report.html import render_html
        return render_html(merged, title=title or "gpumatrix")
    if fmt == "junit":
        from gpumatrix.report.junit import render_junit
        return render_junit(merged)
    if fmt not in MERGE_FORMATS:
        raise ConfigError([Problem("--format", None, f"unknown format {fmt!r}; choose one of "
                                                     f"{', '.join(MERGE_FORMATS)}")])
    markdown = fmt == "markdown"
    lines = []
    if title:
        lines += [f"## {title}" if markdown else title, ""]
    if not merged.entries:
        return "\n".join(lines + ["(no results)"]) + "\n"
    lines.append("Host types: " + "; ".join(
        f"{h} ({', '.join(merged.host_types[h]['hostnames'])}"
        + (f"; {', '.join(merged.host_types[h]['archs'])}" if merged.host_types[h]["archs"] else "") + ")"
        for h in merged.host_labels()))
    lines.append("")
    header, rows, footnotes = merged_grid(merged, markdown=markdown)
    lines.append(tabulate(rows, headers=header, tablefmt="github" if markdown else "simple_grid"))
    lines.append("")
    for label, c in merged_counts(merged).items():
        lines.append(f"{label}: " + ", ".join(f"{n} {WORDS.get(s, s)}" for s, n in c.items() if n))
    lines.append("Legend: " + "; ".join(f"{MARKS[s]} {WORDS[s]} = {LEGEND[s]}" for s in STATUSES)
                 + "; ≠ conflict = hosts of one type disagree")
    if footnotes:
        lines += ["", "Notes:"]
        for i, note in enumerate(footnotes, 1):
            lines.append(f"{i}. {note}".replace("\n      ", "<br>") if markdown else f"  [{i}] {note}")
    for w in merged.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def merge_command(paths: Sequence[str], fmt: str = "text", output: str | None = None,
                  baseline: str | None = None) -> str:
    """``invoke merge``: the merged table in ``fmt`` (with ``output``, written to that file instead).

    With ``baseline``, the regression gate follows: its report is appended (text or markdown), and
    :class:`~gpumatrix.errors.RegressionFound` is raised — after the table is written — on a regression.
    """
    if fmt not in MERGE_FORMATS:
        raise ConfigError([Problem("--format", None, f"unknown format {fmt!r}; choose one of "
                                                     f"{', '.join(MERGE_FORMATS)}")])
    merged = load_sources(paths)
    text = render_merged(merged, fmt)
    if output:
        from gpumatrix.fsutil import write_text_atomic
        write_text_atomic(output, text)
        text = f"wrote {output}\n"
    if baseline:
        from gpumatrix.results.gate import compare, enforce, render_comparison
        comp = compare(load_sources([baseline]), merged)
        enforce(comp)
        text += "\n" + render_comparison(comp, "markdown" if fmt == "markdown" else "text")
    return text
