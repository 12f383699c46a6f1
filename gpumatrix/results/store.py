"""Results: one JSON file per cell, a run summary, and loading them back.

Layout of a results folder::

    results/
      summary.json            the last run: host, counts, which cells ran
      cells/<cell id>.json    one CellResult each (schema_version 1)
      logs/<cell id>.build.log
      logs/<cell id>.probe.log

Every file is written atomically (temp + rename); a corrupt file is reported
with its path and skipped when loading, never fatal.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from gpumatrix.fsutil import write_json_atomic

RESULT_SCHEMA_VERSION = 1
# Ordered from best to worst; the report's legend follows this order.
STATUSES = ("pass", "fail", "error", "build_error", "skipped", "not_applicable")


@dataclass
class CellResult:
    """Everything known about one cell after a run."""

    cell_id: str
    base_id: str
    base_image: str
    vendor: str
    variant: str
    torch: str
    python: str
    status: str
    reason: str | None = None
    image: Mapping[str, Any] | None = None  # {tag, id, repo_digests, reused}
    host: Mapping[str, Any] = field(default_factory=dict)
    probes: Mapping[str, Any] | None = None  # the probe suite's JSON document
    diagnosis: Mapping[str, Any] | None = None  # {cause, remedy, evidence, ...}
    timings: Mapping[str, float] = field(default_factory=dict)
    logs: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    # Identifies what the probes saw (image, probe suite, host, env, mode); see Runner.probe_key.
    probe_key: str | None = None
    probes_reused: bool = False
    schema_version: int = RESULT_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CellResult":
        if data.get("schema_version") != RESULT_SCHEMA_VERSION:
            raise ValueError(f"schema_version {data.get('schema_version')!r} is not {RESULT_SCHEMA_VERSION}")
        known = {f for f in cls.__dataclass_fields__}
        missing = [k for k in ("cell_id", "base_id", "torch", "status") if k not in data]
        if missing:
            raise ValueError(f"missing keys: {', '.join(missing)}")
        if data["status"] not in STATUSES:
            raise ValueError(f"unknown status {data['status']!r}")
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def verdict(self) -> Mapping[str, Any]:
        return (self.probes or {}).get("verdict") or {}

    def headline_tflops(self) -> tuple[str, float] | None:
        """The best matmul throughput the performance probes measured, as (dtype, TFLOP/s)."""
        best = None
        for probe in (self.probes or {}).get("probes") or []:
            if probe.get("layer") != 6 or probe.get("status") != "pass":
                continue
            per_dtype = (probe.get("details") or {}).get("results") or {}
            for dtype, figures in per_dtype.items() if isinstance(per_dtype, dict) else ():
                value = figures.get("tflops") if isinstance(figures, dict) else None
                if isinstance(value, (int, float)) and (best is None or value > best[1]):
                    best = (str(dtype), float(value))
        return best


class ResultsDir:
    """A results folder on disk."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def cells_dir(self) -> Path:
        return self.path / "cells"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    def cell_path(self, cell_id: str) -> Path:
        return self.cells_dir / f"{cell_id}.json"

    def log_path(self, cell_id: str, kind: str) -> Path:
        return self.logs_dir / f"{cell_id}.{kind}.log"

    def write_cell(self, result: CellResult) -> Path:
        path = self.cell_path(result.cell_id)
        write_json_atomic(path, result.to_dict())
        return path

    def write_summary(self, summary: Mapping[str, Any]) -> Path:
        path = self.path / "summary.json"
        write_json_atomic(path, dict(summary))
        return path

    def read_summary(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.path / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def load(self) -> tuple[list[CellResult], list[str]]:
        """All readable cell results (sorted by id) and a warning for each unreadable file."""
        results, warnings = [], []
        if not self.cells_dir.is_dir():
            return results, warnings
        for path in sorted(self.cells_dir.glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                results.append(CellResult.from_dict(data))
            except (OSError, ValueError, TypeError) as err:
                warnings.append(f"{path}: skipped, unreadable result ({err})")
        return results, warnings
