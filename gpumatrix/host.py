"""Host discovery: which GPUs, drivers and container plumbing this host has.

Vendor tools are used when present (``nvidia-smi``), never required: the
kernel's own files (``/proc/driver/nvidia``, KFD topology in sysfs) are read
first. Every reader takes a ``root`` so tests can point it at a fake tree.
"""

from __future__ import annotations

import grp
import os
import platform
import re
import shutil
import socket
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping


@dataclass(frozen=True)
class GPU:
    vendor: str  # nvidia | amd
    index: int
    name: str
    arch: str | None = None  # sm_90 / gfx942
    uuid: str | None = None
    memory_bytes: int | None = None
    pci_bus: str | None = None
    render_node: str | None = None


@dataclass(frozen=True)
class HostInfo:
    hostname: str
    kernel: str
    os: str
    machine: str
    gpus: tuple[GPU, ...] = ()
    nvidia_driver: str | None = None
    amd_driver: str | None = None
    dev_kfd: bool = False
    render_nodes: tuple[str, ...] = ()
    group_ids: Mapping[str, int] = field(default_factory=dict)  # host's video/render GIDs
    engine: Mapping[str, Any] = field(default_factory=dict)  # version, runtimes, cdi_spec_dirs

    def has_vendor(self, vendor: str) -> bool:
        if vendor == "cpu":
            return True
        return any(g.vendor == vendor for g in self.gpus)

    def vendor_gpus(self, vendor: str) -> list[GPU]:
        return [g for g in self.gpus if g.vendor == vendor]

    def fingerprint(self) -> dict[str, Any]:
        """What goes into every result: enough to group results by host type in a fleet."""
        return {
            "hostname": self.hostname, "kernel": self.kernel, "os": self.os, "machine": self.machine,
            "gpus": [asdict(g) for g in self.gpus],
            "nvidia_driver": self.nvidia_driver, "amd_driver": self.amd_driver,
            "engine": dict(self.engine),
        }

    def host_type(self) -> str:
        """A short label for the host's GPU configuration, e.g. ``2x NVIDIA H100 80GB HBM3 (570.86)`` or ``cpu``."""
        if not self.gpus:
            return "cpu"
        names: dict[str, int] = {}
        for g in self.gpus:
            names[g.name] = names.get(g.name, 0) + 1
        driver = self.nvidia_driver or self.amd_driver
        parts = ", ".join(f"{n}x {name}" if n > 1 else name for name, n in sorted(names.items()))
        return f"{parts} ({driver})" if driver else parts


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def nvidia_driver_version(root: Path = Path("/")) -> str | None:
    """Driver version from ``/proc/driver/nvidia/version`` ("NVRM version: NVIDIA UNIX ... 570.86.15 ...")."""
    text = _read(root / "proc/driver/nvidia/version")
    if not text:
        return None
    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text) or re.search(
        r"\b(\d{3}\.\d+(?:\.\d+)?)\b", text)
    return m.group(1) if m else None


def nvidia_gpus_from_proc(root: Path = Path("/")) -> list[GPU]:
    """GPUs from ``/proc/driver/nvidia/gpus/<bus>/information`` (no tools needed)."""
    gpus = []
    folder = root / "proc/driver/nvidia/gpus"
    for i, entry in enumerate(sorted(folder.iterdir()) if folder.is_dir() else []):
        info = _read(entry / "information") or ""
        fields = dict(re.findall(r"^([^:\n]+):\s*(.*)$", info, flags=re.M))
        gpus.append(GPU(vendor="nvidia", index=i, name=fields.get("Model", "NVIDIA GPU").strip(),
                        uuid=(fields.get("GPU UUID") or "").strip() or None, pci_bus=entry.name))
    return gpus


def parse_nvidia_smi_csv(text: str) -> list[GPU]:
    """Parse ``nvidia-smi --query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id --format=csv,noheader,nounits``."""
    gpus = []
    for line in text.strip().splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) < 6 or not cols[0].isdigit():
            continue
        index, name, uuid, mem, cap, bus = cols[:6]
        arch = f"sm_{cap.replace('.', '')}" if re.fullmatch(r"\d+\.\d+", cap) else None
        memory = int(float(mem)) * 1024 * 1024 if re.fullmatch(r"\d+(\.\d+)?", mem) else None
        gpus.append(GPU(vendor="nvidia", index=int(index), name=name, arch=arch, uuid=uuid or None,
                        memory_bytes=memory, pci_bus=bus or None))
    return gpus


def _nvidia_smi() -> list[GPU]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "--query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return parse_nvidia_smi_csv(out.stdout) if out.returncode == 0 else []


def gfx_name(target_version: int) -> str:
    """KFD ``gfx_target_version`` (major*10000 + minor*100 + stepping) → LLVM target (``90402`` → ``gfx942``)."""
    major, rest = divmod(target_version, 10000)
    minor, stepping = divmod(rest, 100)
    return f"gfx{major}{minor:x}{stepping:x}"


def amd_gpus_from_kfd(root: Path = Path("/")) -> list[GPU]:
    """GPU agents from the KFD topology (``/sys/class/kfd/kfd/topology/nodes/*/properties``); CPU nodes skipped."""
    gpus = []
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    if not nodes.is_dir():
        return gpus
    for node in sorted(nodes.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 1 << 30):
        props = dict(re.findall(r"^(\w+)\s+(-?\d+)$", _read(node / "properties") or "", flags=re.M))
        target = int(props.get("gfx_target_version", "0"))
        if target == 0 or int(props.get("simd_count", "0")) == 0:
            continue
        name = (_read(node / "name") or "").strip() or "AMD GPU"
        render = props.get("drm_render_minor")
        gpus.append(GPU(vendor="amd", index=len(gpus), name=name, arch=gfx_name(target),
                        uuid=props.get("unique_id"),
                        render_node=f"/dev/dri/renderD{render}" if render and int(render) > 0 else None))
    return gpus


def amd_driver_version(root: Path = Path("/")) -> str | None:
    version = _read(root / "sys/module/amdgpu/version")
    if version and version.strip():
        return version.strip()
    return "in-tree" if (root / "sys/module/amdgpu").is_dir() else None


def _group_ids() -> dict[str, int]:
    out = {}
    for name in ("video", "render"):
        try:
            out[name] = grp.getgrnam(name).gr_gid
        except KeyError:
            continue
    return out


def engine_facts(version: Mapping[str, Any] | None, info: Mapping[str, Any] | None,
                 root: Path = Path("/")) -> dict[str, Any]:
    """What the engine offers for GPUs: its version, runtimes, and CDI spec files present."""
    cdi = []
    for d in ("etc/cdi", "var/run/cdi"):
        folder = root / d
        if folder.is_dir():
            cdi += sorted(str(Path("/") / d / p.name) for p in folder.iterdir() if p.suffix in (".json", ".yaml"))
    return {
        "version": (version or {}).get("Version"),
        "api_version": (version or {}).get("ApiVersion"),
        "runtimes": sorted(((info or {}).get("Runtimes") or {}).keys()),
        "default_runtime": (info or {}).get("DefaultRuntime"),
        "rootless": "rootless" in str((info or {}).get("SecurityOptions") or ""),
        "cdi_specs": cdi,
    }


def discover_host(engine_version: Mapping[str, Any] | None = None, engine_info: Mapping[str, Any] | None = None,
                  root: Path = Path("/")) -> HostInfo:
    """Discover this host's GPUs and drivers (pass ``root`` to read a fake tree)."""
    nvidia = _nvidia_smi() if root == Path("/") else []
    if not nvidia:
        nvidia = nvidia_gpus_from_proc(root)
    amd = amd_gpus_from_kfd(root)
    render_dir = root / "dev/dri"
    render_nodes = tuple(sorted(f"/dev/dri/{p.name}" for p in render_dir.glob("renderD*"))) if render_dir.is_dir() else ()
    os_release = _read(root / "etc/os-release") or ""
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release, flags=re.M)
    return HostInfo(
        hostname=socket.gethostname() if root == Path("/") else "test-host",
        kernel=platform.release() if root == Path("/") else (_read(root / "proc/sys/kernel/osrelease") or "").strip(),
        os=pretty.group(1) if pretty else platform.system(),
        machine=platform.machine(),
        gpus=tuple(nvidia + amd),
        nvidia_driver=nvidia_driver_version(root),
        amd_driver=amd_driver_version(root),
        dev_kfd=(root / "dev/kfd").exists(),
        render_nodes=render_nodes,
        group_ids=_group_ids() if root == Path("/") else {},
        engine=engine_facts(engine_version, engine_info, root),
    )


def device_gid(path: str) -> int | None:
    try:
        return os.stat(path).st_gid
    except OSError:
        return None
