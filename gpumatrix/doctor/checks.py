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
from typing import Any, Iterable, Mapping, Sequence

from gpumatrix.config.matrix import Base, Cell, Matrix, RunOptions
from gpumatrix.host import HostInfo, discover_host, gfx_from_override, version_tuple
from gpumatrix.run.passthrough import (AUTO_ORDER, PassthroughUnavailable, amd_missing_kfd_hint, check_nvidia_modes,
                          hsa_override_for, resolve_nvidia_mode, stale_cdi_specs)
from gpumatrix.knowledge.releases import load_data

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


def cuda_version_of_base(base: Base) -> tuple[str | None, str]:
    """The CUDA version a base carries and where it was read: the image tag
    (``nvidia/cuda:13.0.2-runtime-ubuntu24.04`` → ``13.0.2``), else the variant (``cu130`` → ``13.0``)."""
    ref = base.image.split("@", 1)[0]
    repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    if repo.endswith("/cuda") or repo == "cuda":
        m = re.match(r"(\d+\.\d+(?:\.\d+)?)", tag)
        if m:
            return m.group(1), "image tag"
    m = re.search(r"cuda[-_]?(\d+\.\d+(?:\.\d+)?)", tag, flags=re.I)
    if m:
        return m.group(1), "image tag"
    return cuda_version_of_variant(base.variant), "variant"


def cuda_version_of_variant(variant: str) -> str | None:
    """``cu130`` → ``13.0``, ``cu126`` → ``12.6``, ``cu118`` → ``11.8``."""
    m = re.fullmatch(r"cu(\d+)(\d)", variant)
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def is_nvidia_cuda_image(image: str) -> bool:
    """An official CUDA image (sets NVIDIA_REQUIRE_CUDA, which the toolkit enforces)."""
    repo = image.split("@", 1)[0].rsplit(":", 1)[0] if ":" in image.split("@", 1)[0].rsplit("/", 1)[-1] \
        else image.split("@", 1)[0]
    return repo in ("nvidia/cuda", "docker.io/nvidia/cuda", "nvcr.io/nvidia/cuda")


@dataclass(frozen=True)
class DriverNeed:
    cuda: str  # the CUDA version asked about
    full: str | None  # driver of that exact release (Update N), all features incl. PTX JIT
    ga: str | None  # driver of the x.y GA release (what NVIDIA_REQUIRE_CUDA=cuda>=x.y amounts to)
    floor: str | None  # minor-version compatibility floor of the major
    note: str | None = None


def driver_need(cuda: str) -> DriverNeed:
    """What a CUDA version needs from the host driver, from ``cuda_drivers.yaml``."""
    data = load_data("cuda_drivers")
    parts = cuda.split(".")
    xy = ".".join(parts[:2])
    entry = (data.get("toolkits") or {}).get(xy) or {}
    ga = entry.get("min_driver")
    full = (entry.get("update_drivers") or {}).get(cuda) if len(parts) > 2 else None
    floor = ((data.get("minor_version_compat") or {}).get(parts[0]) or {}).get("min_driver")
    return DriverNeed(cuda=cuda, full=str(full or ga) if (full or ga) else None, ga=str(ga) if ga else None,
                      floor=str(floor) if floor else None, note=entry.get("note"))


def max_cuda_for_driver(driver: str) -> str | None:
    """The newest CUDA x.y whose GA driver is <= ``driver`` (what the driver fully supports)."""
    best = None
    for xy, entry in (load_data("cuda_drivers").get("toolkits") or {}).items():
        ga = (entry or {}).get("min_driver")
        if ga and version_tuple(str(ga)) <= version_tuple(driver):
            if best is None or version_tuple(xy) > version_tuple(best):
                best = xy
    return best


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
    cuda, source = cuda_version_of_base(base)
    if cuda is None:
        return "skip", f"base {base.id}: no CUDA version in {base.image} or variant {base.variant}", ""
    if not driver:
        return "skip", f"base {base.id} (CUDA {cuda}): no NVIDIA driver on this host to compare with", ""
    have = version_tuple(driver)
    # The torch wheels bring their own CUDA runtime: they need the floor of their own major.
    wheel_cuda = cuda_version_of_variant(variant or base.variant)
    if wheel_cuda:
        wneed = driver_need(wheel_cuda)
        if wneed.floor and have < version_tuple(wneed.floor):
            return ("fail", f"host driver {driver} < {wneed.floor} needed by torch's {variant or base.variant} wheels "
                            f"(CUDA {wheel_cuda.split('.')[0]}.x, even with minor-version compatibility)",
                    _upgrade_fix(wneed.ga or wneed.floor, driver))
    need = driver_need(cuda)
    if need.full is None:
        return "warn", (f"base {base.id}: no driver data for CUDA {cuda} in cuda_drivers.yaml"
                        + (f" ({need.note})" if need.note else "")), "check NVIDIA's release notes"
    if need.floor and have < version_tuple(need.floor):
        return ("fail", f"host driver {driver} < {need.full} needed by CUDA {cuda} ({base.image}); "
                        f"even CUDA {cuda.split('.')[0]}.x minor-version compatibility needs >= {need.floor}",
                _upgrade_fix(need.full, driver) + "; data-center GPUs can instead use forward compatibility "
                                                  "(the image's cuda-compat package)")
    mode = None
    try:
        mode, _ = resolve_nvidia_mode(host, run.nvidia_mode)
    except PassthroughUnavailable:
        pass
    if (is_nvidia_cuda_image(base.image) and need.ga and have < version_tuple(need.ga)
            and not run.disable_require and mode != "cdi"):
        return ("fail", f"host driver {driver} < {need.ga}: {base.image} sets NVIDIA_REQUIRE_CUDA=cuda>={'.'.join(cuda.split('.')[:2])}"
                        f" and the container toolkit refuses to start it "
                        f"('requirement error: unsatisfied condition: cuda>=…')",
                _upgrade_fix(need.full, driver) + "; or set run: {disable_require: true} to start it anyway "
                                                  "and rely on minor-version compatibility (torch wheels carry their own CUDA runtime)")
    if have < version_tuple(need.full):
        return ("warn", f"host driver {driver} < {need.full} of CUDA {cuda} ({source}): runs through minor-version "
                        f"compatibility (no PTX JIT of newer PTX)", _upgrade_fix(need.full, driver))
    return "pass", f"base {base.id}: CUDA {cuda} ({source}) needs driver >= {need.full}; host has {driver}", ""


# ---------------------------------------------------------------------------
# GPU architecture against the torch build


def _minor_of(version: str) -> tuple[int, ...]:
    return version_tuple(version.split("+", 1)[0])[:2]


def _in_range(version: str, spec: str) -> bool:
    lo, _, hi = str(spec).partition("-")
    v = _minor_of(version)
    return version_tuple(lo)[:2] <= v <= version_tuple(hi or lo)[:2]


def torch_arch_list(torch_version: str, variant: str) -> list[str] | None:
    """Archs compiled into torch ``torch_version`` for ``variant`` (``torch_archs.yaml``), or None if unknown."""
    data = load_data("torch_archs")
    if variant.startswith("cu"):
        for entry in data.get("cuda") or []:
            if entry.get("variant") == variant and _in_range(torch_version, entry.get("torch", "")):
                return list(entry.get("arch_list") or [])
    elif variant.startswith("rocm"):
        for entry in data.get("rocm") or []:
            if variant in (entry.get("variants") or []) and _in_range(torch_version, entry.get("torch", "")):
                return list(entry.get("arch_list") or [])
    return None


def _sm(arch: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"(?:sm|compute)_(\d+)(\d)[a-z]?", arch)
    return (int(m.group(1)), int(m.group(2))) if m else None


def cuda_arch_runs(gpu_arch: str, arch_list: Sequence[str]) -> tuple[bool, str]:
    """Whether a GPU of ``gpu_arch`` (sm_XY) runs a build with ``arch_list``, and how."""
    gpu = _sm(gpu_arch)
    if gpu is None:
        return True, "unknown arch"
    if gpu_arch in arch_list:
        return True, f"{gpu_arch} SASS"
    same_major = [a for a in arch_list if a.startswith("sm_") and (s := _sm(a)) and s[0] == gpu[0] and s[1] <= gpu[1]]
    if same_major:
        return True, f"{max(same_major, key=_sm)} SASS (binary compatible within the major)"
    ptx = [a for a in arch_list if a.startswith("compute_") and (s := _sm(a)) and s <= gpu]
    if ptx:
        return True, f"PTX JIT from {max(ptx, key=_sm)}"
    return False, "no SASS for its major and no PTX it can JIT"


def arch_check(cell: Cell, host: HostInfo) -> tuple[str, str, str] | None:
    """``(status, detail, fix)`` of the host's GPUs of the cell's vendor against its torch build; None if unknown."""
    if cell.torch.wheel is not None or cell.vendor not in ("nvidia", "amd"):
        return None
    gpus = [g for g in host.vendor_gpus(cell.vendor) if g.arch]
    arch_list = torch_arch_list(cell.torch.version, cell.base.variant)
    if not gpus or arch_list is None:
        return None
    build = f"torch {cell.torch.version}+{cell.base.variant}"
    fits, misfits = [], []
    for g in gpus:
        if cell.vendor == "nvidia":
            ok, how = cuda_arch_runs(g.arch, arch_list)
        else:
            override = hsa_override_for(cell.base)
            effective = gfx_from_override(override) if override else None
            ok = g.arch in arch_list or (effective in arch_list if effective else False)
            how = (f"{g.arch} compiled in" if g.arch in arch_list
                   else f"HSA_OVERRIDE_GFX_VERSION={override} → {effective}" if ok else "not compiled in")
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


def check_engine(engine: Any, version: Mapping[str, Any] | None, error: str | None = None) -> Check:
    if engine is None or version is None:
        return Check("engine", "fail", f"the Docker engine is not reachable{': ' + error if error else ''}",
                     "start it (sudo systemctl start docker) or point DOCKER_HOST at one; './dev engine' "
                     "starts a private one for development")
    api = version.get("ApiVersion")
    detail = f"Docker {version.get('Version')} (API {api}), {version.get('Os')}/{version.get('Arch')}"
    if version_tuple(str(api)) < (1, 40):
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


def check_disk(engine_info: Mapping[str, Any] | None, cells: Sequence[Cell], host: HostInfo | None = None) -> Check:
    # Only the cells that will be built here: those of a vendor this host has (or CPU).
    applicable = [c for c in cells if c.applicable and (host is None or host.has_vendor(c.vendor))]
    bases = {(c.base.image, c.vendor) for c in applicable}
    need = sum(DISK_PER_BASE_GIB[v] for _, v in bases) + sum(DISK_PER_CELL_GIB[c.vendor] for c in applicable)
    root = (engine_info or {}).get("DockerRootDir")
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
    version = info = None
    error = None
    if engine is not None:
        try:
            version, info = engine.version(), engine.info()
        except Exception as err:  # noqa: BLE001 - any failure here means "not reachable" for the report
            error = str(err)
            engine = None
    host = host or discover_host(version, info)
    checks = [check_engine(engine, version, error), check_gpus(host)]
    checks += check_nvidia(host, cells, matrix.run)
    checks += check_amd(host, cells, matrix.run)
    checks += check_drivers(matrix, host, cells)
    checks += check_archs(host, cells)
    checks.append(check_disk(info, cells, host) if engine is not None else
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
