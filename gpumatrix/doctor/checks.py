"""``invoke doctor``: a preflight that says, before a long run, what will fail and how to fix it.

Each check returns a :class:`Check` (pass / warn / fail / skip, what was found, the fix).
:func:`preflight_cell` gives the reason one cell cannot work on this host (driver too old for
its CUDA, GPU arch not compiled into its torch, no passthrough), so a run can mark such cells
instead of spending an hour building them. Release facts come from ``gpumatrix/data``
(``cuda_drivers.yaml``, ``torch_archs.yaml``), never from code.
"""

from __future__ import annotations

import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from gpumatrix.config.matrix import Base, Cell, Matrix, RunOptions
from gpumatrix.engine.models import EngineInfo
from gpumatrix.errors import GpumatrixError
from gpumatrix.host import HostInfo, discover_host
from gpumatrix.run.passthrough import (AUTO_ORDER, PassthroughUnavailable, amd_missing_kfd_hint, check_nvidia_modes,
                          hsa_override_for, resolve_nvidia_mode, stale_cdi_specs)
from gpumatrix.knowledge.archs import code_runs, torch_arch_list
from gpumatrix.knowledge.drivers import (cuda_version_of_image, cuda_version_of_variant, driver_need,
                                         is_nvidia_cuda_image, max_cuda_for_driver)
from gpumatrix.knowledge.versions import release

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


def _upgrade_fix(need: str, host_driver: str) -> str:
    branch = need.split(".")[0]
    supported = max_cuda_for_driver(host_driver)
    return (f"install NVIDIA driver >= {need} (e.g. Ubuntu: sudo apt install nvidia-driver-{branch}-server, "
            f"or NVIDIA's CUDA repository: sudo apt install cuda-drivers), reboot, check with nvidia-smi"
            + (f"; or use a base with CUDA <= {supported}, which driver {host_driver} supports" if supported else ""))


def driver_check(base: Base, host: HostInfo, run: RunOptions | None = None,
                 variant: str | None = None) -> tuple[str, str, str]:
    """``(status, detail, fix)`` for an NVIDIA base's CUDA against the host driver."""
    run = run or RunOptions()
    driver = host.nvidia_driver
    cuda, source = cuda_version_of_image(base.image, base.variant)
    if cuda is None:
        return "skip", f"base {base.id}: no CUDA version in {base.image} or variant {base.variant}", ""
    if not driver:
        return "skip", f"base {base.id} (CUDA {cuda}): no NVIDIA driver on this host to compare with", ""
    have = release(driver)
    # The torch wheels bring their own CUDA runtime: they need the floor of their own major.
    wheel_cuda = cuda_version_of_variant(variant or base.variant)
    if wheel_cuda:
        wneed = driver_need(wheel_cuda)
        if wneed.floor and have < release(wneed.floor):
            return ("fail", f"host driver {driver} < {wneed.floor} needed by torch's {variant or base.variant} wheels "
                            f"(CUDA {wheel_cuda.split('.')[0]}.x, even with minor-version compatibility)",
                    _upgrade_fix(wneed.ga or wneed.floor, driver))
    need = driver_need(cuda)
    if need.full is None:
        return "warn", (f"base {base.id}: no driver data for CUDA {cuda} in cuda_drivers.yaml"
                        + (f" ({need.note})" if need.note else "")), "check NVIDIA's release notes"
    if need.floor and have < release(need.floor):
        return ("fail", f"host driver {driver} < {need.full} needed by CUDA {cuda} ({base.image}); "
                        f"even CUDA {cuda.split('.')[0]}.x minor-version compatibility needs >= {need.floor}",
                _upgrade_fix(need.full, driver) + "; data-center GPUs can instead use forward compatibility "
                                                  "(the image's cuda-compat package)")
    mode = None
    try:
        mode, _ = resolve_nvidia_mode(host, run.nvidia_mode)
    except PassthroughUnavailable:
        pass
    if (is_nvidia_cuda_image(base.image) and need.ga and have < release(need.ga)
            and not run.disable_require and mode != "cdi"):
        return ("fail", f"host driver {driver} < {need.ga}: {base.image} sets NVIDIA_REQUIRE_CUDA=cuda>={'.'.join(cuda.split('.')[:2])}"
                        f" and the container toolkit refuses to start it "
                        f"('requirement error: unsatisfied condition: cuda>=…')",
                _upgrade_fix(need.full, driver) + "; or set run: {disable_require: true} to start it anyway "
                                                  "and rely on minor-version compatibility (torch wheels carry their own CUDA runtime)")
    if have < release(need.full):
        return ("warn", f"host driver {driver} < {need.full} of CUDA {cuda} ({source}): runs through minor-version "
                        f"compatibility (no PTX JIT of newer PTX)", _upgrade_fix(need.full, driver))
    return "pass", f"base {base.id}: CUDA {cuda} ({source}) needs driver >= {need.full}; host has {driver}", ""


# ---------------------------------------------------------------------------
# GPU architecture against the torch build


def arch_check(cell: Cell, host: HostInfo) -> tuple[str, str, str] | None:
    """``(status, detail, fix)`` of the host's GPUs of the cell's vendor against its torch build; None if unknown."""
    if cell.torch.wheel is not None or cell.vendor not in ("nvidia", "amd"):
        return None
    gpus = [g for g in host.vendor_gpus(cell.vendor) if g.arch]
    arch_list = torch_arch_list(cell.torch.version, cell.base.variant)
    if not gpus or arch_list is None:
        return None
    build = f"torch {cell.torch.version}+{cell.base.variant}"
    override = hsa_override_for(cell.base) if cell.vendor == "amd" else None
    fits, misfits = [], []
    for g in gpus:
        verdict = code_runs(g.arch, arch_list, override=override)
        ok, how = verdict["match"] != "none", verdict["description"]
        (fits if ok else misfits).append((g, how))
    listed = ", ".join(arch_list)
    if not misfits:
        return "pass", f"{cell.id}: " + "; ".join(f"GPU {g.index} {g.arch}: {how}" for g, how in fits), ""
    names = ", ".join(sorted({f"{g.arch} ({g.name})" for g, _ in misfits}))
    fix = ("use a torch build that lists the arch (see gpumatrix/data/torch_archs.yaml)"
           + ("; for a consumer card close to a supported one set hsa_override_gfx_version on the base "
              "(e.g. \"11.0.0\" for gfx1100-like RDNA3)" if cell.vendor == "amd" else ""))
    detail = f"{build} has no kernels for {names}: it ships {listed}"
    return ("warn" if fits else "fail"), detail + (f" (GPUs {', '.join(str(g.index) for g, _ in fits)} fit)" if fits else ""), fix


# ---------------------------------------------------------------------------
# Per cell: the reason it cannot work here


def passthrough_problem(vendor: str, host: HostInfo, run: RunOptions | None = None) -> str | None:
    """Why containers cannot get ``vendor``'s GPUs here (full message), or None."""
    run = run or RunOptions()
    if vendor == "nvidia":
        if not host.vendor_gpus("nvidia"):
            return None
        try:
            resolve_nvidia_mode(host, run.nvidia_mode)
        except PassthroughUnavailable as err:
            return str(err)
        return None
    if vendor == "amd":
        engine = host.engine or {}
        if host.vendor_gpus("amd") and (engine.get("docker_desktop") or not host.dev_kfd):
            return f"AMD GPU(s) found but containers cannot get them: no /dev/kfd. {amd_missing_kfd_hint(host)}"
        return None
    return None


def preflight_cell(cell: Cell, host: HostInfo, run: RunOptions | None = None) -> str | None:
    """The reason ``cell`` cannot work on ``host`` (one line plus its fix), or None when nothing is known against it.

    Cells whose vendor has no GPU here return None (the run skips them for that reason already),
    except when the GPU is on the PCI bus without its driver loaded.
    """
    run = run or RunOptions()
    if not cell.applicable or cell.vendor not in ("nvidia", "amd"):
        return None
    if not host.vendor_gpus(cell.vendor):
        on_pci = [bus for vendor, bus, _ in host.pci_gpus if vendor == cell.vendor]
        if on_pci:
            driver = "nvidia" if cell.vendor == "nvidia" else "amdgpu"
            return (f"{cell.vendor.upper() if cell.vendor == 'amd' else 'NVIDIA'} GPU at {', '.join(on_pci)} "
                    f"but its driver ({driver}) is not loaded (fix: install/load it, e.g. sudo modprobe {driver}; "
                    f"check: {'nvidia-smi' if driver == 'nvidia' else 'ls -l /dev/kfd'})")
        return None
    problem = passthrough_problem(cell.vendor, host, run)
    if problem:
        first, _, rest = problem.partition("\n")
        return first + (" (run 'invoke doctor' for the fix)" if rest else "")
    if cell.vendor == "nvidia":
        status, detail, fix = driver_check(cell.base, host, run, cell.base.variant)
        if status == "fail":
            return f"{detail} (fix: {fix})"
    found = arch_check(cell, host)
    if found and found[0] == "fail":
        return f"{found[1]} (fix: {found[2]})"
    return None


def passthrough_blockers(cells: Iterable[Cell], host: HostInfo, run: RunOptions | None = None) -> list[str]:
    """The distinct full passthrough messages for the selected cells: print each once before a run."""
    out: list[str] = []
    for vendor in sorted({c.vendor for c in cells if c.applicable}):
        problem = passthrough_problem(vendor, host, run)
        if problem and problem not in out:
            out.append(problem)
    return out


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
            f"; {sum(c.vendor == 'nvidia' for c in cells)} NVIDIA cells will be skipped" if wanted else ""))]
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
            f"; {sum(c.vendor == 'amd' for c in cells)} AMD cells will be skipped" if wanted else ""))]
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


def run_checks(engine: Any, matrix: Matrix, cells: Sequence[Cell], host: HostInfo | None = None) -> list[Check]:
    """Every doctor check, in report order."""
    info: EngineInfo | None = None
    error = None
    if engine is not None:
        try:
            info = engine.describe()
        except GpumatrixError as err:
            error = str(err)
    host = host or discover_host(info)
    checks = [check_engine(info, error), check_gpus(host)]
    checks += check_nvidia(host, cells, matrix.run)
    checks += check_amd(host, cells, matrix.run)
    checks += check_drivers(matrix, host, cells)
    checks += check_archs(host, cells)
    checks.append(check_disk(info, cells, host) if info is not None else
                  Check("disk", "skip", "no engine to ask where images are stored"))
    checks.append(check_shm(host, matrix.run))
    return checks


def render_checks(checks: Sequence[Check], header: str = "") -> str:
    lines = [header] if header else []
    width = max((len(c.name) for c in checks), default=10)
    for c in checks:
        lines.append(f"{c.status.upper():5} {c.name:<{width}}  {c.detail}")
        if c.fix and c.status in ("fail", "warn"):
            for i, fix_line in enumerate(c.fix.splitlines()):
                lines.append(f"{'':5} {'':<{width}}  {'fix: ' if i == 0 else '     '}{fix_line.strip() if i == 0 else fix_line}")
    counts = {s: sum(c.status == s for c in checks) for s in STATUSES}
    lines.append("")
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no checks")
    return "\n".join(lines) + "\n"


def doctor_report(engine: Any, matrix: Matrix, cells: Sequence[Cell],
                  host: HostInfo | None = None) -> tuple[str, bool]:
    """Run every check; return the printable report and whether nothing failed."""
    checks = run_checks(engine, matrix, cells, host)
    applicable = sum(c.applicable for c in cells)
    header = f"gpumatrix doctor: {matrix.path} ({len(cells)} cells, {applicable} applicable)"
    return render_checks(checks, header), not any(c.status == "fail" for c in checks)
