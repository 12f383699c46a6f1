"""Run the probe suite inside a cell's image, with the host's GPUs passed through.

The container gets least privilege: only its vendor's devices, no network, a
read-only root with a tmpfs ``/tmp``, no capabilities, ``no-new-privileges``,
a non-root user, pids and output limits. ``probes/`` is bind-mounted read-only,
so images stay generic and reusable.
"""

from __future__ import annotations

import json
import os
import re
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from gpumatrix.config.matrix import Cell, RunOptions
from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, ContainerSpec, Engine, EngineOperationError, Mount
from gpumatrix.fsutil import write_json_atomic
from gpumatrix.host import HostInfo
from gpumatrix.knowledge.peaks import peaks_table
from gpumatrix.probes.model import FAIL, PASS
from gpumatrix.probes.model import STATUSES as PROBE_STATUS_VOCABULARY
from gpumatrix.resources import probes_dir
from gpumatrix.run.passthrough import GpuSlot, apply_passthrough, explain_engine_error, passthrough_options_for

VERDICTS = (PASS, FAIL)

PROBES_PARENT = "/opt/gpumatrix"
PROBE_SCHEMA_VERSION = 1
MAX_PROBE_OUTPUT = 8 * 1024 * 1024
SESSION_ID = uuid.uuid4().hex[:12]


PEAKS_IN_CONTAINER = f"{PROBES_PARENT}/peaks.json"
CACHE_IN_CONTAINER = f"{PROBES_PARENT}/cache"


def write_peaks_file(folder: Path) -> Path:
    path = folder / "peaks.json"
    write_json_atomic(path, peaks_table(), mode=0o644)  # read by the probe user inside the container
    return path


@dataclass(frozen=True)
class ProbeRun:
    """The outcome of running the suite in one container."""

    ok: bool  # a readable probe document came back
    document: Mapping[str, Any] | None
    error: str | None
    exit_code: int | None
    duration_s: float
    stderr_tail: str = ""
    host_config: Mapping[str, Any] = field(default_factory=dict)


def probe_container_spec(cell: Cell, image: str, host: HostInfo, options: RunOptions,
                         quick: bool = False, perf: bool | None = None,
                         peaks_file: Path | None = None, slot: GpuSlot | None = None,
                         host_busy: bool = False, cache_dir: Path | None = None) -> ContainerSpec:
    """The container that runs the probes for ``cell``.

    ``peaks_file``: see :func:`write_peaks_file`; ``slot``: the GPU(s) it is pinned to, handed out by
    :class:`gpumatrix.run.schedule.Scheduler`; ``host_busy``: other work shares the host right now, so the
    probes mark their figures as taken under load; ``cache_dir``: a host folder kept per image for the
    compile caches (MIOpen, rocFFT, CUDA, Inductor, Triton), so a second run of the cell does not recompile.
    """
    passthrough = passthrough_options_for(cell.vendor, host, run=options, base=cell.base, slot=slot)
    command = ["python3", "-m", "probes", "--json", "--progress"]
    if quick:
        command.append("--quick")
    elif not (options.perf if perf is None else perf):
        command.append("--no-perf")
    env = {"HOME": "/tmp", "USER": "nobody", "PYTHONDONTWRITEBYTECODE": "1", "GPUMATRIX_CELL": cell.id,
           **dict(cell.env), **dict(passthrough.environment)}
    mounts = [Mount(str(probes_dir()), f"{PROBES_PARENT}/probes", read_only=True)]
    if peaks_file is not None:
        mounts.append(Mount(str(peaks_file), PEAKS_IN_CONTAINER, read_only=True))
        env["GPUMATRIX_PEAKS"] = PEAKS_IN_CONTAINER
    if host_busy:
        env["GPUMATRIX_HOST_BUSY"] = "1"
    if cache_dir is not None:
        mounts.append(Mount(str(cache_dir), CACHE_IN_CONTAINER, read_only=False))
        env["GPUMATRIX_CACHE_DIR"] = CACHE_IN_CONTAINER
    return apply_passthrough(ContainerSpec(
        image=image, command=command, name=f"gpumatrix-{SESSION_ID}-{uuid.uuid4().hex[:8]}",
        environment=env, mounts=tuple(mounts),
        devices=passthrough.devices, device_requests=passthrough.device_requests, group_add=passthrough.group_add,
        runtime=passthrough.runtime, shm_size=options.shm_size, network_mode="none", read_only=True,
        tmpfs={"/tmp": "rw,nosuid,nodev,size=4g"}, user="65534:65534", working_dir=PROBES_PARENT,
        pids_limit=options.pids_limit, mem_limit=options.mem_limit,
        labels={MANAGED_LABEL: "true", f"{LABEL_NS}.cell": cell.id, f"{LABEL_NS}.session": SESSION_ID,
                f"{LABEL_NS}.role": "probe", f"{LABEL_NS}.hostname": socket.gethostname(),
                f"{LABEL_NS}.pid": str(os.getpid())},
        timeout_s=float(options.timeout_s), output_cap=MAX_PROBE_OUTPUT,
    ), passthrough)


def parse_probe_output(stdout: bytes) -> Mapping[str, Any]:
    """Read the suite's JSON document; raise ``ValueError`` with a reason when it is unreadable."""
    text = stdout.decode("utf-8", errors="replace").strip()
    if not text:
        raise ValueError("the probe suite printed nothing")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        # Tolerate stray lines before the document (a library printing to stdout at import).
        start = text.rfind("\n{")
        try:
            doc = json.loads(text[start + 1:]) if start >= 0 else None
        except (json.JSONDecodeError, RecursionError):
            doc = None
        if doc is None:
            raise ValueError("probe output unreadable: not a JSON document") from None
    if not isinstance(doc, dict):
        raise ValueError("probe output unreadable: not a JSON object")
    if doc.get("schema_version") != PROBE_SCHEMA_VERSION:
        raise ValueError(f"probe output has schema_version {str(doc.get('schema_version'))[:40]!r}, "
                         f"expected {PROBE_SCHEMA_VERSION}")
    problem = _shape_problem(doc)
    if problem:
        raise ValueError(f"probe output unreadable: {problem}")
    return doc


PROBE_STATUSES = frozenset(PROBE_STATUS_VOCABULARY)  # the probe suite owns its statuses


def _shape_problem(doc: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a probe document, or None. The container's output is untrusted."""
    probes, verdict = doc.get("probes"), doc.get("verdict")
    if not isinstance(probes, list) or not isinstance(verdict, dict):
        return "missing 'probes' or 'verdict'"
    if verdict.get("status") not in VERDICTS:
        return f"verdict status {str(verdict.get('status'))[:40]!r} is not pass or fail"
    if not isinstance(doc.get("facts", {}), dict):
        return "'facts' is not an object"
    for i, probe in enumerate(probes):
        if not isinstance(probe, dict) or not isinstance(probe.get("id"), str):
            return f"probe {i} has no id"
        if not isinstance(probe.get("status"), str) or probe["status"] not in PROBE_STATUSES:
            return f"probe {probe['id'][:80]!r} has status {str(probe.get('status'))[:40]!r}"
        layer = probe.get("layer")
        if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= 6:
            return f"probe {probe['id'][:80]!r} has layer {str(layer)[:20]!r}"
        if not isinstance(probe.get("details", {}), dict):
            return f"probe {probe['id'][:80]!r} has details that are not an object"
    return None


# The suite's ``--progress`` line (probes/cli.py ``say_progress``). The container's stderr is hostile: only
# a line of exactly this shape is taken, and what is shown is rebuilt from its parts.
_PROGRESS_LINE = re.compile(r"^gpumatrix-probes: layer ([1-6]) ([a-z_]{1,40}): ([A-Za-z0-9_., -]{1,2000})$")


def probe_activity(line: str) -> str | None:
    """``layer 4 math_libraries: math_libraries.matmul_fp32, …`` from the suite's progress line, else None."""
    m = _PROGRESS_LINE.match(line.rstrip("\r\n"))
    if not m:
        return None
    return f"probing layer {m.group(1)}/6 ({m.group(2).replace('_', ' ')}): {m.group(3)}"


def _tail(data: bytes, lines: int = 20) -> str:
    """The last ``lines`` lines of stderr, without the suite's progress lines (they say nothing of a failure)."""
    kept = [line for line in data.decode("utf-8", errors="replace").splitlines() if not _PROGRESS_LINE.match(line)]
    return "\n".join(kept[-lines:])


def run_probes(engine: Engine, spec: ContainerSpec, on_activity: Callable[[str], None] | None = None) -> ProbeRun:
    """Run the suite; every failure becomes a :class:`ProbeRun` with a reason, never an exception.

    ``on_activity`` hears which layer the suite runs now, as it goes."""
    def on_stderr(line: str) -> None:
        text = probe_activity(line)
        if text is not None and on_activity is not None:
            on_activity(text)

    try:
        outcome = engine.run(spec, on_stderr=on_stderr if on_activity is not None else None)
    except EngineOperationError as err:
        return ProbeRun(False, None, explain_engine_error(err.reason) or err.reason, None, 0.0)
    stderr_tail = _tail(outcome.stderr)
    if outcome.timed_out:
        return ProbeRun(False, None, f"the probe container did not finish within {spec.timeout_s:.0f} s and was killed",
                        None, outcome.duration_s, stderr_tail, outcome.host_config)
    if outcome.oom_killed:
        return ProbeRun(False, None, "the probe container was killed for exceeding its memory limit",
                        outcome.exit_code, outcome.duration_s, stderr_tail, outcome.host_config)
    try:
        doc = parse_probe_output(outcome.stdout)
    except ValueError as err:
        reason = f"{err} (container exit code {outcome.exit_code})"
        return ProbeRun(False, None, reason, outcome.exit_code, outcome.duration_s, stderr_tail, outcome.host_config)
    return ProbeRun(True, doc, None, outcome.exit_code, outcome.duration_s, stderr_tail, outcome.host_config)


def compile_cache_dir(root: Path, image_id: str) -> Path:
    """The compile-cache folder of one image under ``root``, made writable for the probe user.

    One folder per image id: caches never cross images (a cache from another torch or ROCm would be wrong
    or useless), and ``clean`` may remove them with the images. The mode is 1777 as for /tmp: the probes
    run as uid 65534 in a read-only container, and this is the one place they may write that persists.
    """
    folder = root / "compile-caches" / image_id.replace("sha256:", "")[:24]
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o1777)
    return folder
