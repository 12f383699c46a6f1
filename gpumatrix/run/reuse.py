"""When saved probe results may be reused: the key of everything a probe result depends on."""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from typing import Any, Mapping

from gpumatrix.config.matrix import Cell, RunOptions
from gpumatrix.host import HostInfo
from gpumatrix.resources import probes_dir

_suite_lock = threading.Lock()


def probe_suite_hash() -> str:
    """sha256 over the probe suite's files (names and bytes): a changed probe means new results.

    Read once per process: the cells of a run ask for it side by side, and wait for the first."""
    with _suite_lock:
        return _probe_suite_hash()


@functools.lru_cache(maxsize=None)
def _probe_suite_hash() -> str:
    h = hashlib.sha256()
    root = probes_dir()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def probe_key(cell: Cell, image: Mapping[str, Any], host: HostInfo, run: RunOptions, quick: bool,
              perf: bool | None) -> str:
    """What a probe result depends on: the image's id, the probe suite's files, this host's GPUs, drivers,
    kernel and engine (not its name), the cell's env and run options, and the probe mode."""
    fingerprint = {k: v for k, v in host.fingerprint().items() if k != "hostname"}
    payload = {"image": image.get("id"), "suite": probe_suite_hash(), "host": fingerprint, "env": dict(cell.env),
               "run": repr(run), "quick": quick, "perf": perf}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]
