"""``invoke doctor``'s checks: engine, GPUs, NVIDIA toolkit / CDI, AMD devices, drivers, archs, disk, shm.

Each check returns a :class:`Check` (pass / warn / fail / skip, what was found, the fix). The per-cell
judgements (driver vs CUDA, arch vs build, passthrough) are :mod:`gpumatrix.run.preflight`'s, so a run and
the doctor never disagree; :mod:`gpumatrix.doctor.report` runs and renders them.
"""

from __future__ import annotations

import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from gpumatrix.config.matrix import Cell, Matrix, RunOptions
from gpumatrix.engine.models import EngineInfo
from gpumatrix.host import HostInfo
from gpumatrix.knowledge.versions import release
from gpumatrix.run.passthrough import (
    AUTO_ORDER,
    PassthroughUnavailable,
    amd_missing_kfd_hint,
    check_nvidia_modes,
    resolve_nvidia_mode,
    stale_cdi_specs,
)
from gpumatrix.run.preflight import arch_check, driver_check

STATUSES = ("pass", "warn", "fail", "skip")
GIB = 1024 ** 3
# Rough disk use, from the images this project builds (base layer per base, torch layer per cell):
# ROCm dev images are ~20 GB; a CUDA torch wheel with its nvidia-* libraries unpacks to ~5-7 GB.
DISK_PER_BASE_GIB = {"cpu": 0.2, "nvidia": 2.0, "amd": 20.0}
DISK_PER_CELL_GIB = {"cpu": 1.2, "nvidia": 7.0, "amd": 12.0}
DISK_FAIL_GIB = 5.0


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # pass | warn | fail | skip
    detail: str
    fix: str = ""


# ---------------------------------------------------------------------------
# CUDA version and driver requirements


# ---------------------------------------------------------------------------
# GPU architecture against the torch build


# ---------------------------------------------------------------------------
# Per cell: the reason it cannot work here


# ---------------------------------------------------------------------------
# Checks for the report


def check_engine(info: EngineInfo | None, error: str | None = None) -> Check:
    if info is None:
        return Check("engine", "fail", f"the Docker engine is not reachable{': ' + error if error else ''}",
                     "start it (sudo systemctl start docker) or point DOCKER_HOST at one; './dev engine' "
                     "starts a private one for development")
    api = info.api_version
    detail = f"Docker {info.version} (API {api}), {info.operating_system or 'unknown OS'}"
    if release(api) < (1, 40):
        return Check("engine", "warn", detail + ": too old for GPU device requests (needs API 1.40, Docker 19.03)",
                     "upgrade Docker")
    return Check("engine", "pass", detail)


def check_gpus(host: HostInfo) -> Check:
    if host.gpus:
        lines = [f"{g.vendor} {g.index}: {g.name} {g.arch or '(arch unknown)'}"
                 + (f" {g.memory_bytes / GIB:.0f} GiB" if g.memory_bytes else "") + (f" [{g.pci_bus}]" if g.pci_bus else "")
                 for g in host.gpus]
        drivers = ", ".join(f"{v} driver {d}" for v, d in (("NVIDIA", host.nvidia_driver), ("amdgpu", host.amd_driver)) if d)
        return Check("gpus", "pass", "; ".join(lines) + (f" ({drivers})" if drivers else ""))
    on_pci = [f"{v} {bus} ({dev})" for v, bus, dev in host.pci_gpus]
    if on_pci:
        return Check("gpus", "fail", f"GPU(s) on the PCI bus but no driver loaded: {', '.join(on_pci)}",
                     "install and load the driver (NVIDIA: the nvidia driver package, check nvidia-smi; "
                     "AMD: sudo modprobe amdgpu, check ls /dev/kfd)")
    return Check("gpus", "warn", "no NVIDIA or AMD GPU on this host: GPU cells will be skipped",
                 "run on a GPU host, or select CPU cells with --only")


def check_nvidia(host: HostInfo, cells: Sequence[Cell], run: RunOptions) -> list[Check]:
    wanted = any(c.vendor == "nvidia" and c.applicable for c in cells)
    if not host.vendor_gpus("nvidia"):
        return [Check("nvidia passthrough", "skip", "no NVIDIA GPU here" + (
            f"; {sum(c.vendor == 'nvidia' and c.applicable for c in cells)} NVIDIA cells will be skipped" if wanted else ""))]
    checks = check_nvidia_modes(host)
    summary = "; ".join(f"{m}: {'ok' if checks[m].ok else 'no'} ({checks[m].why})" for m in AUTO_ORDER)
    out = []
    try:
        mode, why = resolve_nvidia_mode(host, run.nvidia_mode)
        out.append(Check("nvidia passthrough", "pass", f"mode {mode}: {why}. [{summary}]"))
    except PassthroughUnavailable as err:
        first, _, rest = str(err).partition("\n")
        out.append(Check("nvidia passthrough", "fail", first, rest.strip()))
    stale = stale_cdi_specs(host)
    if stale:
        out.append(Check("nvidia cdi spec", "warn", "stale CDI spec: " + "; ".join(stale),
                         "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"))
    env = "NVIDIA_DRIVER_CAPABILITIES=compute,utility" + (", NVIDIA_DISABLE_REQUIRE=1 (opt-in)" if run.disable_require else "")
    out.append(Check("nvidia environment", "pass", env))
    return out


def _mode_string(mode: int) -> str:
    return stat.filemode(mode)


def check_amd(host: HostInfo, cells: Sequence[Cell], run: RunOptions) -> list[Check]:
    wanted = any(c.vendor == "amd" and c.applicable for c in cells)
    if not host.vendor_gpus("amd") and not host.dev_kfd:
        return [Check("amd passthrough", "skip", "no AMD GPU here" + (
            f"; {sum(c.vendor == 'amd' and c.applicable for c in cells)} AMD cells will be skipped" if wanted else ""))]
    out = []
    engine = host.engine or {}
    if engine.get("docker_desktop") or not host.dev_kfd:
        out.append(Check("amd /dev/kfd", "fail", "no /dev/kfd for containers", amd_missing_kfd_hint(host)))
        return out
    if engine.get("rootless"):
        out.append(Check("amd rootless", "warn", "rootless engine: host GIDs added with group_add do not map into "
                                                 "its user namespace", amd_missing_kfd_hint(host)))
    nodes = ["/dev/kfd", *host.render_nodes]
    names = {gid: name for name, gid in host.group_ids.items()}
    for node in nodes:
        entry = host.device_modes.get(node)
        if entry is None:
            out.append(Check(f"amd {node}", "fail", f"{node} is missing", amd_missing_kfd_hint(host)))
            continue
        mode, uid, gid = entry
        group = names.get(gid, str(gid))
        desc = f"{node} {_mode_string(mode)} uid {uid} gid {gid} ({group})"
        if not stat.S_ISCHR(mode):
            out.append(Check(f"amd {node}", "fail", desc + ": not a character device", "reload the amdgpu driver"))
        elif mode & 0o006 == 0o006 or (mode & 0o060 == 0o060 and gid != 0):
            out.append(Check(f"amd {node}", "pass", desc + f"; containers get group {gid} added"))
        else:
            out.append(Check(f"amd {node}", "fail", desc + ": a non-root container user cannot open it",
                             "give it to the render group with a udev rule, e.g. "
                             "/etc/udev/rules.d/70-amdgpu.rules: KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\" and "
                             "SUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"render\", MODE=\"0660\"; "
                             "then sudo udevadm control --reload && sudo udevadm trigger"))
    if "render" not in host.group_ids:
        out.append(Check("amd groups", "warn", f"no 'render' group on this host (groups: {dict(host.group_ids)})",
                         "older distributions use 'video' only; the device nodes' own GIDs are added regardless"))
    if run.seccomp_unconfined:
        out.append(Check("amd seccomp", "warn", "seccomp=unconfined is on (opt-in): containers run without a seccomp filter"))
    return out


def check_drivers(matrix: Matrix, host: HostInfo, cells: Sequence[Cell]) -> list[Check]:
    bases = {c.base.id: c.base for c in cells if c.vendor == "nvidia" and c.applicable}
    out = []
    for bid in sorted(bases):
        status, detail, fix = driver_check(bases[bid], host, matrix.run)
        out.append(Check(f"driver {bid}", status, detail, fix))
    return out


def check_archs(host: HostInfo, cells: Sequence[Cell]) -> list[Check]:
    out = []
    for cell in cells:
        if not cell.applicable:
            continue
        found = arch_check(cell, host)
        if found:
            out.append(Check(f"arch {cell.id}", *found))
    return out


def check_disk(engine_info: EngineInfo | None, cells: Sequence[Cell], host: HostInfo | None = None) -> Check:
    # Only the cells that will be built here: those of a vendor this host has (or CPU).
    applicable = [c for c in cells if c.applicable and (host is None or host.has_vendor(c.vendor))]
    bases = {(c.base.image, c.vendor) for c in applicable}
    need = sum(DISK_PER_BASE_GIB[v] for _, v in bases) + sum(DISK_PER_CELL_GIB[c.vendor] for c in applicable)
    root = engine_info.docker_root_dir if engine_info else None
    if not root or not Path(root).exists():
        return Check("disk", "skip", f"the engine's data root {root or '(unknown)'} is not on this machine; "
                                     f"the images need roughly {need:.0f} GiB")
    free = shutil.disk_usage(root).free / GIB
    detail = f"{free:.0f} GiB free under {root}; the selected images need roughly {need:.0f} GiB"
    fix = "free space ('invoke clean' removes gpumatrix's images; docker system prune), or select fewer cells with --only"
    if free < DISK_FAIL_GIB:
        return Check("disk", "fail", detail, fix)
    if free < need:
        return Check("disk", "warn", detail, fix)
    return Check("disk", "pass", detail)


def _size_bytes(size: str) -> int:
    m = re.fullmatch(r"(\d+)([kmgKMG]?)", size)
    if not m:
        return 0
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 ** 2, "g": GIB}[m.group(2).lower()]


def check_shm(host: HostInfo, run: RunOptions) -> Check:
    if run.ipc == "host":
        shm = host.dev_shm_bytes
        detail = "ipc: host: containers share the host's IPC namespace and /dev/shm" + (
            f" ({shm / GIB:.1f} GiB)" if shm else "")
        if shm is not None and shm < GIB:
            return Check("shm", "warn", detail + ": under 1 GiB", "enlarge /dev/shm on the host or drop ipc: host")
        return Check("shm", "pass", detail)
    want = _size_bytes(run.shm_size)
    detail = f"/dev/shm in containers: {run.shm_size}"
    if want < 1 * GIB:
        return Check("shm", "warn", detail + ": DataLoader workers and NCCL need more than Docker's 64m default",
                     "run: {shm_size: 8g}")
    if host.mem_total_bytes and want > host.mem_total_bytes // 2:
        return Check("shm", "warn", detail + f", over half the host's {host.mem_total_bytes / GIB:.0f} GiB of memory "
                                             f"(/dev/shm is memory)", "lower run.shm_size")
    return Check("shm", "pass", detail)


