"""The path from the host's GPUs into a container, for NVIDIA and AMD.

NVIDIA has three ways in, all served by the NVIDIA Container Toolkit:

* ``gpus`` — a GPU device request (``docker run --gpus``). dockerd serves it only when it
  finds ``nvidia-container-runtime-hook`` on its PATH (Docker >= 19.03, API >= 1.40).
* ``cdi`` — a CDI device request (driver ``cdi``, ids ``nvidia.com/gpu=all``): Docker >= 25
  with the ``cdi`` feature enabled (``"features": {"cdi": true}`` in daemon.json; on by default
  from Docker 28.2), and a spec made by ``nvidia-ctk cdi generate`` in /etc/cdi or /var/run/cdi.
* ``runtime`` — the legacy ``--runtime=nvidia`` registered in daemon.json, with
  ``NVIDIA_VISIBLE_DEVICES`` saying which GPUs.

:func:`resolve_nvidia_mode` picks the best that works here (``auto``) or checks the one asked
for, and explains in one message what is missing when none does. AMD needs no toolkit:
``/dev/kfd``, the render nodes and the host's numeric GIDs of the groups that own them.

:func:`gpu_slots` splits a host into one slot per GPU (plus an all-GPU slot for collective
cells); :func:`passthrough_options_for` gives the container options for a vendor and a slot.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from gpumatrix.config.matrix import NVIDIA_MODES, Base, Cell, Matrix, RunOptions
from gpumatrix.engine.client import ContainerSpec, DeviceRequestSpec
from gpumatrix.errors import ConfigError, ExitCode, GpumatrixError, Problem
from gpumatrix.host import GPU, HostInfo, device_gid
from gpumatrix.knowledge.versions import release

# Preference for ``auto``: the device request is what the toolkit's own install guide checks
# and survives driver upgrades; a CDI spec has to be regenerated after each one; the
# legacy runtime is last (deprecated in favour of the other two).
AUTO_ORDER = ("gpus", "cdi", "runtime")
CDI_MIN_DOCKER = (25,)
CDI_DEFAULT_DOCKER = (28, 2)
DEVICE_REQUEST_MIN_API = (1, 40)
HOST_HSA_OVERRIDE_ENV = "GPUMATRIX_HSA_OVERRIDE_GFX_VERSION"

TOOLKIT_INSTALL = (
    "install the NVIDIA Container Toolkit and register it with Docker:\n"
    "    curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg\n"
    "    curl -fsSL https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list \\\n"
    "      | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' \\\n"
    "      | sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list\n"
    "    sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit   # dnf/zypper: see the toolkit's install guide\n"
    "    sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker\n"
    "  check: docker run --rm --gpus all ubuntu nvidia-smi   (or: invoke doctor)")
CDI_SETUP = (
    "generate a CDI spec and enable CDI in Docker (>= 25):\n"
    "    sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml\n"
    "    add \"features\": {\"cdi\": true} to /etc/docker/daemon.json (default from Docker 28.2), then sudo systemctl restart docker\n"
    "  check: nvidia-ctk cdi list; docker run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi")
RUNTIME_SETUP = (
    "register the nvidia runtime: sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker\n"
    "  check: docker info | grep -i runtimes   (should list nvidia)")


class PassthroughUnavailable(GpumatrixError):
    """No way to give containers this host's GPUs; the message says what is missing and how to fix it."""

    exit_code = ExitCode.NO_PASSTHROUGH


@dataclass(frozen=True)
class Passthrough:
    """What a container needs to see a vendor's GPUs (and how the choice was made)."""

    devices: tuple[str, ...] = ()
    device_requests: tuple[DeviceRequestSpec, ...] = ()
    group_add: tuple[str, ...] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    runtime: str | None = None
    ipc_mode: str | None = None
    security_opt: tuple[str, ...] = ()  # added to the container's own (no-new-privileges)
    mode: str | None = None  # nvidia: gpus | cdi | runtime
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class GpuSlot:
    """The GPUs one container gets: one GPU, or all of a vendor's (``all_gpus``) for collective probes."""

    vendor: str
    gpus: tuple[GPU, ...]
    all_gpus: bool = False

    @property
    def label(self) -> str:
        return f"{self.vendor}:all" if self.all_gpus else f"{self.vendor}:{self.gpus[0].index}"


# ---------------------------------------------------------------------------
# Choosing the NVIDIA mode


@dataclass(frozen=True)
class ModeCheck:
    mode: str
    ok: bool
    why: str  # what was found (ok) or what is missing (not ok)
    fix: str = ""


def cdi_nvidia_devices(host: HostInfo) -> list[str]:
    """``nvidia.com/gpu=…`` names in the host's CDI specs."""
    return sorted({f"nvidia.com/gpu={d}" for s in host.cdi_specs.values() if s.get("kind") == "nvidia.com/gpu"
                   for d in s.get("devices", ())})


def stale_cdi_specs(host: HostInfo) -> list[str]:
    """CDI specs generated for another driver than the one loaded (they name libraries that are gone)."""
    if not host.nvidia_driver:
        return []
    return [f"{path} (made for driver {s['driver_version']}, host has {host.nvidia_driver})"
            for path, s in sorted(host.cdi_specs.items())
            if s.get("kind") == "nvidia.com/gpu" and s.get("driver_version")
            and s["driver_version"] != host.nvidia_driver]


def check_nvidia_modes(host: HostInfo) -> dict[str, ModeCheck]:
    """Whether each NVIDIA mode can work with this host and engine, and why (not)."""
    engine = host.engine or {}
    version = release(engine.get("version"))
    api = release(engine.get("api_version"))
    where = f"Docker {engine.get('version') or '(unknown version)'}"
    out: dict[str, ModeCheck] = {}

    hook = host.nvidia_toolkit.get("nvidia-container-runtime-hook")
    if api and api < DEVICE_REQUEST_MIN_API:
        out["gpus"] = ModeCheck("gpus", False, f"{where} (API {engine.get('api_version')}) predates GPU device "
                                               "requests (Docker >= 19.03, API 1.40)", "upgrade Docker")
    elif hook:
        out["gpus"] = ModeCheck("gpus", True, f"NVIDIA Container Toolkit hook at {hook}")
    else:
        out["gpus"] = ModeCheck("gpus", False, "the NVIDIA Container Toolkit is not installed "
                                               "(no nvidia-container-runtime-hook on PATH)", TOOLKIT_INSTALL)

    devices = cdi_nvidia_devices(host)
    cdi_on = bool(engine.get("cdi_spec_dirs")) or (version >= CDI_DEFAULT_DOCKER)
    if version and version < CDI_MIN_DOCKER:
        out["cdi"] = ModeCheck("cdi", False, f"{where} has no CDI support (Docker >= 25 with CDI enabled)",
                               "upgrade Docker to >= 25 (28.2 enables CDI by default), or use mode gpus")
    elif not cdi_on:
        out["cdi"] = ModeCheck("cdi", False, f"CDI is not enabled in {where}", CDI_SETUP)
    elif "nvidia.com/gpu=all" not in devices:
        out["cdi"] = ModeCheck("cdi", False, "no CDI spec for nvidia.com/gpu in /etc/cdi or /var/run/cdi", CDI_SETUP)
    elif stale_cdi_specs(host):
        out["cdi"] = ModeCheck("cdi", False, "the CDI spec is stale: " + "; ".join(stale_cdi_specs(host)),
                               "regenerate it: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")
    else:
        out["cdi"] = ModeCheck("cdi", True, f"CDI spec with {len(devices)} nvidia.com/gpu devices")

    if "nvidia" in (engine.get("runtimes") or []):
        out["runtime"] = ModeCheck("runtime", True, "the engine has the nvidia runtime")
    else:
        out["runtime"] = ModeCheck("runtime", False, "the engine has no 'nvidia' runtime", RUNTIME_SETUP)
    return out


def nvidia_unavailable_message(host: HostInfo, checks: Mapping[str, ModeCheck], requested: str) -> str:
    """One message for 'no NVIDIA passthrough here': what is missing, how to install, how to check."""
    gpus = host.vendor_gpus("nvidia")
    what = (f"{len(gpus)} NVIDIA GPU(s) ({', '.join(sorted({g.name for g in gpus}))})" if gpus
            else "NVIDIA cells were asked for")
    if requested != "auto":
        c = checks[requested]
        return (f"{what}, but nvidia_mode '{requested}' cannot work here: {c.why}.\n  fix: {c.fix}\n"
                f"  or use run: {{nvidia_mode: auto}} to take whichever mode works")
    lines = [f"{what}, but containers cannot be given them: no NVIDIA passthrough mode works on this host."]
    for mode in AUTO_ORDER:
        lines.append(f"  {mode}: {checks[mode].why}")
    lines.append(f"  fix: {TOOLKIT_INSTALL}")
    if host.engine.get("docker_desktop"):
        lines.append("  Docker Desktop: enable GPU support in its settings (Windows/WSL2 only)")
    return "\n".join(lines)


def resolve_nvidia_mode(host: HostInfo, requested: str = "auto") -> tuple[str, str]:
    """``(mode, why)`` for NVIDIA containers here; :class:`PassthroughUnavailable` when none works."""
    if requested not in NVIDIA_MODES:
        raise ConfigError([Problem("nvidia_mode", None, f"unknown nvidia_mode {requested!r}; "
                                                        f"choose one of {', '.join(NVIDIA_MODES)}")])
    checks = check_nvidia_modes(host)
    order = AUTO_ORDER if requested == "auto" else (requested,)
    for mode in order:
        if checks[mode].ok:
            why = checks[mode].why + (" (chosen automatically)" if requested == "auto" else " (as configured)")
            return mode, why
    raise PassthroughUnavailable(nvidia_unavailable_message(host, checks, requested))


def with_nvidia_mode(matrix: Matrix, mode: str | None) -> Matrix:
    """``matrix`` with ``run.nvidia_mode`` replaced by a flag's value (``None``: unchanged)."""
    if mode is None:
        return matrix
    if mode not in NVIDIA_MODES:
        raise ConfigError([Problem("--nvidia-mode", None, f"unknown mode {mode!r}; choose one of "
                                                          f"{', '.join(NVIDIA_MODES)}")])
    return replace(matrix, run=replace(matrix.run, nvidia_mode=mode))


# ---------------------------------------------------------------------------
# Slots: which GPU(s) each container gets


def gpu_slots(host: HostInfo, vendor: str) -> list[GpuSlot]:
    """One slot per GPU of ``vendor`` (in the vendor's own index order); empty for cpu or none."""
    if vendor not in ("nvidia", "amd"):
        return []
    return [GpuSlot(vendor, (g,)) for g in sorted(host.vendor_gpus(vendor), key=lambda g: g.index)]


def all_gpus_slot(host: HostInfo, vendor: str) -> GpuSlot | None:
    """The slot holding every GPU of ``vendor`` (for cells with ``gpus: all``)."""
    gpus = tuple(sorted(host.vendor_gpus(vendor), key=lambda g: g.index))
    return GpuSlot(vendor, gpus, all_gpus=True) if gpus else None


def wants_all_gpus(cell: Cell) -> bool:
    return getattr(cell.base, "gpus", "1") == "all"


def assign_slots(cells: Sequence[Cell], host: HostInfo) -> list[tuple[Cell, GpuSlot | None]]:
    """Pin every cell to GPU(s): round-robin over one-GPU slots per vendor, the all-GPU slot for
    ``gpus: all`` cells, ``None`` for CPU cells or a vendor this host lacks. Deterministic.

    A scheduler running cells in parallel must not run an all-GPU cell beside another cell of
    its vendor; cells on different one-GPU slots may run together.
    """
    counters: dict[str, int] = {}
    out: list[tuple[Cell, GpuSlot | None]] = []
    for cell in cells:
        slots = gpu_slots(host, cell.vendor)
        if not slots:
            out.append((cell, None))
        elif wants_all_gpus(cell):
            out.append((cell, all_gpus_slot(host, cell.vendor)))
        else:
            n = counters.get(cell.vendor, 0)
            counters[cell.vendor] = n + 1
            out.append((cell, slots[n % len(slots)]))
    return out


# ---------------------------------------------------------------------------
# Container options


def hsa_override_for(base: Base | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """``HSA_OVERRIDE_GFX_VERSION`` for a base's containers: the host's setting
    (``GPUMATRIX_HSA_OVERRIDE_GFX_VERSION``, about this host's card) wins over the base's."""
    host_value = (environ.get(HOST_HSA_OVERRIDE_ENV) or "").strip()
    if host_value:
        return host_value
    return getattr(base, "hsa_override_gfx_version", None) if base is not None else None


def _nvidia_options(host: HostInfo, slot: GpuSlot | None, mode: str, why: str, run: RunOptions) -> Passthrough:
    env = {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility", "GPUMATRIX_EXPECT": "nvidia"}
    if run.disable_require:
        # Skips the toolkit's NVIDIA_REQUIRE_CUDA check of nvidia/cuda images: the container then
        # starts on an older driver and relies on minor-version compatibility (opt-in).
        env["NVIDIA_DISABLE_REQUIRE"] = "1"
    pinned_gpus = list(slot.gpus) if slot is not None and not slot.all_gpus else []
    pinned = bool(pinned_gpus)
    ids = [g.uuid or str(g.index) for g in pinned_gpus]
    notes = (f"nvidia mode {mode}: {why}",)
    if mode == "gpus":
        request = (DeviceRequestSpec(count=0, device_ids=tuple(ids), capabilities=(("gpu",),)) if pinned
                   else DeviceRequestSpec(count=-1, capabilities=(("gpu",),)))
        return Passthrough(device_requests=(request,), environment=env, mode=mode, notes=notes)
    if mode == "cdi":
        names = tuple(f"nvidia.com/gpu={g.index}" for g in pinned_gpus) if pinned else ("nvidia.com/gpu=all",)
        request = DeviceRequestSpec(driver="cdi", count=0, device_ids=names, capabilities=())
        return Passthrough(device_requests=(request,), environment=env, mode=mode, notes=notes)
    env["NVIDIA_VISIBLE_DEVICES"] = ",".join(ids) if pinned else "all"
    return Passthrough(runtime="nvidia", environment=env, mode=mode, notes=notes)


def _amd_options(host: HostInfo, slot: GpuSlot | None, base: Base | None) -> Passthrough:
    env = {"GPUMATRIX_EXPECT": "amd"}
    notes: list[str] = []
    first = slot.gpus[0] if slot is not None and not slot.all_gpus and slot.gpus else None
    if slot is not None and first is not None and first.render_node:
        # AMD's documented way to restrict a container: pass only that GPU's render node.
        # ROCR_VISIBLE_DEVICES by UUID as well, so the pin holds whatever else ROCr can see.
        render = [first.render_node]
        if first.uuid:
            env["ROCR_VISIBLE_DEVICES"] = first.uuid
        notes.append(f"pinned to {slot.label} ({render[0]})")
    else:
        render = list(host.render_nodes) or sorted({g.render_node for g in host.vendor_gpus("amd") if g.render_node})
    nodes = ["/dev/kfd"] + render
    # Group names differ between host and image: add the host's numeric GIDs.
    gids = {str(gid) for gid in host.group_ids.values()}
    for n in nodes:
        gid = host.device_gid(n)
        if gid is None:
            gid = device_gid(host.host_path(n))
        if gid is not None and gid != 0:
            gids.add(str(gid))
    override = hsa_override_for(base)
    if override:
        env["HSA_OVERRIDE_GFX_VERSION"] = override
        notes.append(f"HSA_OVERRIDE_GFX_VERSION={override}")
    return Passthrough(devices=tuple(f"{host.host_path(n)}:{n}:rwm" for n in nodes),
                       group_add=tuple(sorted(gids, key=int)),
                       environment=env, notes=tuple(notes))


def passthrough_options_for(vendor: str, host: HostInfo, *, run: RunOptions | None = None,
                            base: Base | None = None, slot: GpuSlot | None = None,
                            nvidia_mode: str | None = None) -> Passthrough:
    """Devices, device requests, groups, environment, IPC and security options for ``vendor`` on ``host``.

    NVIDIA: the mode from ``nvidia_mode`` / ``run.nvidia_mode`` (see :func:`resolve_nvidia_mode`);
    when no mode works the plain ``--gpus`` request is returned, so the engine's own error
    shows — run :func:`gpumatrix.doctor.preflight_cell` first to avoid that.
    AMD: ``/dev/kfd`` and the render nodes (all, or the slot's), plus the host's numeric GIDs.
    ``slot`` pins the container to one GPU (or all, for ``gpus: all`` cells); None = all GPUs.
    """
    run = run or RunOptions()
    ipc = "host" if run.ipc == "host" else None
    # ROCm's debugger/profiler paths need unconfined seccomp; NVIDIA never does, so the option is AMD-only
    # (an NVIDIA container keeps the engine's default seccomp profile even when the matrix asks for it).
    security = ("seccomp=unconfined",) if run.seccomp_unconfined and vendor == "amd" else ()
    if vendor == "nvidia":
        try:
            mode, why = resolve_nvidia_mode(host, nvidia_mode or run.nvidia_mode)
        except PassthroughUnavailable:
            mode, why = "gpus", "no mode checked out; trying the device request"
        p = _nvidia_options(host, slot, mode, why, run)
    elif vendor == "amd":
        p = _amd_options(host, slot, base)
    else:
        return Passthrough(ipc_mode=ipc)
    return replace(p, ipc_mode=ipc, security_opt=security)


# ---------------------------------------------------------------------------
# Translating the engine's own errors


def explain_engine_error(reason: str, host: HostInfo | None = None) -> str | None:
    """The clear message for an engine error about GPU passthrough, or None when it is something else.

    Messages as the engine gives them (recorded in tests/fixtures/host/engine_errors.json).
    """
    text = reason or ""
    checks = check_nvidia_modes(host) if host is not None else None
    if 'could not select device driver "" with capabilities: [[gpu]]' in text or (
            'could not select device driver "nvidia"' in text):
        why = checks["gpus"].why if checks else "the NVIDIA Container Toolkit is not installed"
        return (f"the engine cannot serve the GPU request (--gpus): {why}.\n  fix: {TOOLKIT_INSTALL}\n"
                f"  engine said: {text.strip()}")
    if 'could not select device driver "cdi"' in text:
        return (f"the engine does not have CDI enabled (Docker >= 25 with \"features\": {{\"cdi\": true}}).\n"
                f"  fix: {CDI_SETUP}\n  engine said: {text.strip()}")
    if "unresolvable CDI devices" in text:
        return f"the engine knows no such CDI device.\n  fix: {CDI_SETUP}\n  engine said: {text.strip()}"
    if re.search(r"[Uu]nknown runtime specified nvidia", text):
        return f"the engine has no 'nvidia' runtime.\n  fix: {RUNTIME_SETUP}\n  engine said: {text.strip()}"
    m = re.search(r'error gathering device information while adding custom device "(/dev/[^"]+)"', text)
    if m:
        dev = m.group(1)
        if dev == "/dev/kfd" or dev.startswith("/dev/dri/"):
            return (f"{dev} does not exist on the engine's host. {amd_missing_kfd_hint(host)}\n"
                    f"  engine said: {text.strip()}")
        return f"{dev} does not exist on the engine's host.\n  engine said: {text.strip()}"
    m = re.search(r"requirement error: unsatisfied condition: (cuda>=[\d.]+)", text)
    if m:
        return (f"the image requires {m.group(1)} and the host driver is older (NVIDIA_REQUIRE_CUDA).\n"
                "  fix: upgrade the host driver, or set run: {disable_require: true} to start it anyway "
                "and rely on CUDA minor-version compatibility\n"
                f"  engine said: {text.strip()}")
    return None


def amd_missing_kfd_hint(host: HostInfo | None) -> str:
    engine = (host.engine if host else None) or {}
    if engine.get("docker_desktop"):
        return ("Docker Desktop runs containers in a VM that has no /dev/kfd: AMD GPUs cannot be passed "
                "through; use Docker Engine on a Linux host with the amdgpu driver.")
    if engine.get("rootless"):
        return ("This is a rootless engine: it sees the devices of its user namespace; /dev/kfd must exist on "
                "the host and be accessible to the engine's user (member of the render and video groups), "
                "or use a rootful engine.")
    return ("Load the amdgpu driver (sudo modprobe amdgpu; install amdgpu-dkms from AMD's repository for ROCm "
            "support) and check: ls -l /dev/kfd /dev/dri/renderD*")


def apply_passthrough(spec: ContainerSpec, p: Passthrough, run: RunOptions | None = None) -> ContainerSpec:
    """``spec`` with the passthrough's IPC mode and extra security options; with ``ipc: host`` the
    container uses the host's /dev/shm, so no ``shm_size`` is sent."""
    return replace(spec, devices=tuple(p.devices), device_requests=tuple(p.device_requests),
                   group_add=tuple(p.group_add), runtime=p.runtime,
                   environment={**dict(spec.environment), **dict(p.environment)},
                   ipc_mode=p.ipc_mode, shm_size=None if p.ipc_mode == "host" else spec.shm_size,
                   security_opt=tuple(dict.fromkeys([*spec.security_opt, *p.security_opt])))


