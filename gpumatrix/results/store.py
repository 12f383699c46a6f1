"""Results: one JSON file per cell, a run summary, and loading them back.

Layout of a results folder::

    results/
      summary.json            the last run: host, counts, which cells ran
      cells/<cell id>.json    one CellResult each (schema_version 1)
      logs/<cell id>.build.log
      logs/<cell id>.probe.log

Every file is written atomically (temp + rename); a write that fails (disk full, permissions) is a
:class:`ResultWriteError` naming the cell, and :meth:`ResultsDir.save_cell` turns it into that cell's
``error`` so one cell cannot end the run. A results file may come from another host or a
hostile container, so it is validated where it enters (:meth:`CellResult.from_dict`): every field the
tool reads has its type checked, and a file that fails is named and skipped, never fatal.
"""

from __future__ import annotations

import errno
import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from gpumatrix.errors import GpumatrixError
from gpumatrix.fsutil import write_json_atomic
from gpumatrix.results.status import STATUSES

RESULT_SCHEMA_VERSION = 1
__all__ = ["RESULT_SCHEMA_VERSION", "CellResult", "InvalidResult", "ResultWriteError", "ResultsDir", "RunSummary",
           "SUMMARY_STATES"]


class ResultWriteError(GpumatrixError):
    """A result file could not be written (disk full, permissions, a document JSON cannot hold).

    ``cell_id`` is the cell whose result it was (None for ``summary.json``); ``reason`` says what the
    system said; ``path`` is the file. Nothing was written: the previous file, if any, is intact.
    """

    def __init__(self, cell_id: str | None, reason: str, path: Path | None = None,
                 error_number: int | None = None):
        self.cell_id = cell_id
        self.reason = reason
        self.path = path
        self.errno = error_number  # the OSError's errno (ENOSPC, EDQUOT, EACCES …), None for a document problem
        what = f"the result of {cell_id}" if cell_id is not None else "the run summary"
        super().__init__(f"could not save {what}{f' to {path}' if path else ''}: {reason}")


def _write_error_reason(err: BaseException) -> str:
    if isinstance(err, OSError):
        return f"{err.strerror or err} (errno {err.errno})" if err.errno else str(err)
    if isinstance(err, RecursionError):
        return "the document is nested too deeply to be saved"
    return f"the document cannot be saved as JSON: {err}"


class InvalidResult(ValueError):
    """A result document whose fields do not have the types the schema says; ``problems`` lists each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        super().__init__(shown)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _scrub(value: Any, depth: int = 0) -> Any:
    """JSON as loaded, made safe to re-encode: lone surrogates become U+FFFD, NaN/Infinity become strings."""
    if depth > 64:
        raise InvalidResult(["nested more than 64 levels deep"])
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {_scrub(k, depth + 1): _scrub(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, depth + 1) for v in value]
    return value


# -- the types of a result document: what the tool reads, checked once at load ----------------
_STR, _OPT_STR = "a string", "a string or null"


def _kind(value: Any, want: str) -> bool:
    if want == _STR:
        return isinstance(value, str)
    if want == _OPT_STR:
        return value is None or isinstance(value, str)
    if want == "an integer or null":
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
    if want == "a number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if want == "a boolean":
        return isinstance(value, bool)
    if want == "an object":
        return isinstance(value, dict)
    if want == "an object or null":
        return value is None or isinstance(value, dict)
    if want == "a list of strings":
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    if want == "a list of objects":
        return isinstance(value, list) and all(isinstance(x, dict) for x in value)
    raise AssertionError(want)


def _typename(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _check(problems: list[str], where: str, mapping: Mapping[str, Any], fields: Mapping[str, str]) -> None:
    """Append a problem for each field of ``mapping`` present with the wrong type."""
    for key, want in fields.items():
        if key in mapping and not _kind(mapping[key], want):
            problems.append(f"{where}{key}: want {want}, got {_typename(mapping[key])}")


_TOP = {"cell_id": _STR, "base_id": _STR, "base_image": _STR, "vendor": _STR, "variant": _STR, "torch": _STR,
        "python": _STR, "status": _STR, "reason": _OPT_STR, "image": "an object or null", "host": "an object",
        "probes": "an object or null", "diagnosis": "an object or null", "timings": "an object",
        "logs": "an object", "env": "an object", "probe_key": _OPT_STR, "probes_reused": "a boolean",
        "probes_from": _OPT_STR}
_REQUIRED = ("cell_id", "base_id", "base_image", "vendor", "variant", "torch", "python", "status")
_IMAGE = {"id": _OPT_STR, "tag": _OPT_STR, "pushed": _OPT_STR, "pulled": _OPT_STR, "repo_digests": "a list of strings"}
_HOST = {"hostname": _OPT_STR, "gpus": "a list of objects", "gpu_archs": "a list of strings",
         "nvidia_driver": _OPT_STR, "amd_driver": _OPT_STR}
_GPU = {"name": _OPT_STR, "vendor": _OPT_STR, "arch": _OPT_STR}
_DOC = {"probes": "a list of objects", "verdict": "an object or null"}
_PROBE = {"id": _STR, "layer": "an integer or null", "layer_name": _OPT_STR, "status": _STR, "message": _OPT_STR,
          "details": "an object or null"}
_VERDICT = {"status": _OPT_STR, "lowest_failing_layer": "an integer or null", "lowest_failing_layer_name": _OPT_STR}
_DIAGNOSIS = {"cause": _OPT_STR, "remedy": _OPT_STR, "evidence": _OPT_STR, "explanation": _OPT_STR,
              "rule": _OPT_STR}


def result_problems(data: Any) -> list[str]:
    """Every way ``data`` is not a valid result document (empty when it is one)."""
    if not isinstance(data, dict):
        return [f"want a JSON object, got {_typename(data)}"]
    problems: list[str] = []
    version = data.get("schema_version")
    if version != RESULT_SCHEMA_VERSION or isinstance(version, bool):
        return [f"schema_version {version!r} is not {RESULT_SCHEMA_VERSION}"]
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        problems.append(f"missing keys: {', '.join(missing)}")
    _check(problems, "", data, _TOP)
    if isinstance(data.get("cell_id"), str) and not data["cell_id"].strip():
        problems.append("cell_id: empty")
    if isinstance(data.get("status"), str) and data["status"] not in STATUSES:
        problems.append(f"status: unknown status {data['status']!r} (want one of {', '.join(STATUSES)})")
    if isinstance(data.get("image"), dict):
        _check(problems, "image.", data["image"], _IMAGE)
    if isinstance(data.get("host"), dict):
        _check(problems, "host.", data["host"], _HOST)
        gpus = data["host"].get("gpus")
        for i, gpu in enumerate(gpus if isinstance(gpus, list) else []):
            if isinstance(gpu, dict):
                _check(problems, f"host.gpus[{i}].", gpu, _GPU)
    if isinstance(data.get("probes"), dict):
        doc = data["probes"]
        _check(problems, "probes.", doc, _DOC)
        for i, probe in enumerate(doc.get("probes") or [] if isinstance(doc.get("probes"), list) else []):
            if isinstance(probe, dict):
                _check(problems, f"probes.probes[{i}].", probe, _PROBE)
        if isinstance(doc.get("verdict"), dict):
            _check(problems, "probes.verdict.", doc["verdict"], _VERDICT)
    if isinstance(data.get("diagnosis"), dict):
        _check(problems, "diagnosis.", data["diagnosis"], _DIAGNOSIS)
    for key, want in (("timings", "a number"), ("logs", _STR), ("env", _STR)):
        if isinstance(data.get(key), dict):
            _check(problems, f"{key}.", data[key], {k: want for k in data[key]})
    return problems


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
    probes_reused: bool = False  # the probes did not run for this result: a saved or a twin's run stands
    probes_from: str | None = None  # the cell of this run whose probe run it shares (the same probe key)
    schema_version: int = RESULT_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "CellResult":
        """A result from its JSON document, every field's type checked; :class:`InvalidResult` says what is wrong."""
        problems = result_problems(data)
        if problems:
            raise InvalidResult(problems)
        data = _scrub(data)
        known = {f for f in cls.__dataclass_fields__}
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
                if (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                        and (best is None or value > best[1])):
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
        """Write ``result`` atomically; any failure is a :class:`ResultWriteError` naming the cell.

        Never raises for the document's text (lone surrogates are written as U+FFFD); disk and
        permission errors (ENOSPC, EACCES …) and documents JSON cannot hold become ``ResultWriteError``.
        """
        path = self.cell_path(result.cell_id)
        try:
            write_json_atomic(path, result.to_dict())
        except (OSError, ValueError, TypeError, RecursionError) as err:
            raise ResultWriteError(result.cell_id, _write_error_reason(err), path,
                                   getattr(err, "errno", None)) from err
        return path

    def save_cell(self, result: CellResult) -> tuple[CellResult, ResultWriteError | None]:
        """Write ``result``; if it cannot be written, record the cell as an ``error`` instead.

        Returns the result as it now stands and the write error (None when the full result was saved).
        On an error the cell becomes ``status: error`` with the reason, and that small result is written
        if it fits; if even that fails the file is left as it was (a ``--resume`` runs the cell again).
        Never raises :class:`ResultWriteError`, so one cell's unwritable result cannot end the run.
        """
        try:
            self.write_cell(result)
            return result, None
        except ResultWriteError as err:
            full = err.errno in (errno.ENOSPC, errno.EDQUOT)
            failed = replace(result, status="error", reason=str(err), probes=None, probes_reused=False,
                             probes_from=None, diagnosis={"cause": "disk_full" if full else "unknown", "evidence": err.reason,
                                        "remedy": "free space on the results folder's disk" if full else
                                        "fix the results folder (permissions, space)", "rule": None})
            try:
                self.write_cell(failed)
            except ResultWriteError:
                pass  # the disk is full even for the small record; the run still records it in memory
            return failed, err

    def write_summary(self, summary: Mapping[str, Any]) -> Path:
        """Write ``summary.json`` atomically; a failure is a :class:`ResultWriteError` (``cell_id`` None)."""
        path = self.path / "summary.json"
        try:
            write_json_atomic(path, dict(summary))
        except (OSError, ValueError, TypeError, RecursionError) as err:
            raise ResultWriteError(None, _write_error_reason(err), path, getattr(err, "errno", None)) from err
        return path

    @property
    def summary_path(self) -> Path:
        return self.path / "summary.json"

    def read_summary(self) -> dict[str, Any] | None:
        """The summary's JSON object, or None when it is missing *or* unreadable.

        Only for facts that may be absent (the run's host); to decide whether the last run completed,
        use :meth:`load_summary`, which tells a missing or corrupt summary from a complete run.
        """
        summary = self.load_summary()
        return dict(summary.data) if summary.readable else None

    def load_summary(self) -> "RunSummary":
        """The last run's summary with a definite :attr:`RunSummary.state`."""
        path = self.summary_path
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return RunSummary("missing", {}, f"{path}: no summary (no run recorded here)")
        except (OSError, ValueError) as err:
            return RunSummary("unreadable", {}, f"{path}: cannot be read ({err})")
        try:
            data = _scrub(json.loads(text))
        except (ValueError, RecursionError, InvalidResult) as err:
            return RunSummary("unreadable", {}, f"{path}: not valid JSON ({err})")
        if not isinstance(data, dict):
            return RunSummary("unreadable", {}, f"{path}: not a JSON object")
        state = data.get("state")
        if state not in SUMMARY_STATES:
            return RunSummary("unknown", data, f"{path}: state {state!r} is not one of "
                                               f"{', '.join(SUMMARY_STATES)}")
        if not isinstance(data.get("cells", {}), dict):
            return RunSummary("unknown", data, f"{path}: 'cells' is not an object")
        return RunSummary(state, data, None)

    def load(self) -> tuple[list[CellResult], list[str]]:
        """All readable cell results (sorted by id) and a warning for each unreadable file."""
        results: list[CellResult] = []
        warnings: list[str] = []
        if not self.cells_dir.is_dir():
            return results, warnings
        for path in sorted(self.cells_dir.glob("*.json")):
            try:
                results.append(CellResult.from_dict(json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, RecursionError) as err:
                warnings.append(f"{path}: skipped, unreadable result ({err})")
        return results, warnings


# What a run writes in summary.json: "running" while it runs (or if it was killed), then one of the others.
SUMMARY_STATES = ("running", "complete", "interrupted")


@dataclass(frozen=True)
class RunSummary:
    """``summary.json`` as read: ``state`` is the run's (running, complete, interrupted), or what went wrong
    reading it — ``missing`` (no run recorded), ``unreadable`` (corrupt) or ``unknown`` (no known state).

    Only ``complete`` means the last run finished; every other state means it did not, or cannot be known.
    """

    state: str
    data: Mapping[str, Any]
    problem: str | None = None  # why the state is missing/unreadable/unknown, naming the file

    @property
    def readable(self) -> bool:
        return self.state not in ("missing", "unreadable")

    @property
    def complete(self) -> bool:
        return self.state == "complete"

    @property
    def host(self) -> Mapping[str, Any] | None:
        host = self.data.get("host")
        return host if isinstance(host, dict) else None

    @property
    def cells(self) -> dict[str, str]:
        """Cells the run finished, by id (their statuses); only entries of the right types."""
        cells = self.data.get("cells")
        return {k: v for k, v in cells.items() if isinstance(k, str) and isinstance(v, str)} \
            if isinstance(cells, dict) else {}
