"""Merge the results of many hosts into one table: rows are cells, columns are host types.

A *host type* is what decides compatibility — the GPU model(s), their architecture and the driver —
read from the ``host`` fingerprint every :class:`~gpumatrix.results.CellResult` carries; it is
labelled like ``NVIDIA H100 80GB HBM3 · 570.86``, or ``cpu`` for a host without a GPU. Several hosts
of one type (or several shards) fill one column group.

For each (cell, host type), a result that ran (pass, fail, error, build failed) outranks a ``skipped``
one (another host of the type had no GPU of the vendor, or ran a different shard). When the results
that ran disagree, the entry is a **conflict**, shown as ``conflict: pass on host-a, fail on host-b`` —
never hidden behind one of them.

The merged JSON (``format: gpumatrix-merged``, written by :mod:`gpumatrix.report.formats`) carries every
input result, so it can be merged again and serves as a regression baseline (see :mod:`gpumatrix.results.gate`).
This module is the model only: it renders nothing and imports no renderer.
"""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from gpumatrix.errors import ConfigError, Problem
from gpumatrix.host import host_type_label
from gpumatrix.knowledge.versions import version_key
from gpumatrix.results.status import CONFLICT, FAILING, RAN, STATUSES
from gpumatrix.results.store import CellResult, ResultsDir

MERGED_FORMAT = "gpumatrix-merged"
MERGED_SCHEMA_VERSION = 1


# -- host types -------------------------------------------------------------
def host_type_facts(host: Mapping[str, Any] | None) -> dict[str, Any]:
    """The facts behind a host type label: vendors, GPU models, architectures, driver."""
    host = host if isinstance(host, Mapping) else {}
    gpus = [g for g in host.get("gpus") or [] if isinstance(g, Mapping)]
    return {
        "label": host_type_label(host),
        "vendors": sorted({str(g.get("vendor")) for g in gpus if g.get("vendor")}) or ["cpu"],
        "gpus": sorted({str(g.get("name") or "GPU") for g in gpus}),
        "archs": sorted({str(g.get("arch")) for g in gpus if g.get("arch")}
                        | {str(a) for a in host.get("gpu_archs") or []}),
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
        return CONFLICT if self.conflict else self.statuses[0]

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
        """Rows: by base, then newest torch first, then by id."""
        ids = sorted(self.cells)
        ids.sort(key=lambda cid: version_key(self.cells[cid].torch), reverse=True)  # stable: ties stay by id
        ids.sort(key=lambda cid: self.cells[cid].base_id)
        return ids

    def host_labels(self) -> list[str]:
        """Columns: GPU host types (by label), then ``cpu``."""
        return sorted(self.host_types, key=lambda h: (h == "cpu", h))

    def entry(self, cell_id: str, host_type: str) -> Entry | None:
        return self.entries.get((cell_id, host_type))

    def all_results(self) -> list[Sourced]:
        return [s for key in sorted(self.entries) for s in self.entries[key].results]

    def counts(self) -> dict[str, dict[str, int]]:
        """Per host type: how many cells have each status (``conflict`` included)."""
        out = {label: {s: 0 for s in (*STATUSES, CONFLICT)} for label in self.host_labels()}
        for (_, label), e in self.entries.items():
            out[label][e.status] += 1
        return out


def merge_results(results: Iterable[tuple[str, CellResult]], warnings: Sequence[str] = ()) -> Merged:
    """Merge ``(source, result)`` pairs (the source names where a result came from)."""
    merged = Merged(warnings=list(warnings))
    grouped: dict[tuple[str, str], list[Sourced]] = {}
    for source, r in results:
        label = host_type_label(r.host)
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
    summary_host = folder.load_summary().host
    out = []
    for r in results:
        if not r.host and summary_host:  # older results: the run's host is in the summary
            r.host = summary_host
        out.append((path.name or str(path), r))
    return out, warnings


def _results_of_json(path: Path) -> tuple[list[tuple[str, CellResult]], list[str]]:
    """The results in a merged or report JSON; a result that is not valid is named and skipped."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise ConfigError([Problem(str(path), None, f"cannot read it as JSON: {err}")]) from err
    dicts: list[Any]
    if isinstance(data, dict) and data.get("format") == MERGED_FORMAT:
        if data.get("schema_version") != MERGED_SCHEMA_VERSION:
            raise ConfigError([Problem(str(path), None, f"merged schema_version {data.get('schema_version')!r} "
                                                        f"is not {MERGED_SCHEMA_VERSION}")])
        raw_entries = data.get("entries")
        entries: list[Any] = raw_entries if isinstance(raw_entries, list) else []
        dicts = [r for e in entries if isinstance(e, dict) and isinstance(e.get("results"), list)
                 for r in e["results"]]
    elif isinstance(data, dict) and isinstance(data.get("cells"), list):  # a report JSON of gpumatrix <= 0.x
        dicts = data["cells"]
    else:
        raise ConfigError([Problem(str(path), None, "not gpumatrix results: want the JSON of 'invoke merge "
                                                    "--format json' or 'invoke report --format json'")])
    out, warnings = [], []
    for i, d in enumerate(dicts):
        try:
            out.append((path.name, CellResult.from_dict(d)))
        except ValueError as err:
            warnings.append(f"{path}: result {i} skipped, unreadable result ({err})")
    return out, warnings


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
            found, warned = _results_of_json(path)
            pairs += found
            warnings += warned
        else:
            raise ConfigError([Problem(str(path), None, "no such results folder or file")])
    return merge_results(pairs, warnings)


def restrict(merged: Merged, cell_ids: Iterable[str]) -> Merged:
    """``merged`` with only the given cells (e.g. those one run or one ``--only`` selected)."""
    keep = set(cell_ids)
    pairs = [(s.source, s.result) for s in merged.all_results() if s.result.cell_id in keep]
    return merge_results(pairs, merged.warnings)
