"""What containers need from the host: PCI display devices, device node modes and groups, CDI specs, engine facts."""

from __future__ import annotations

import grp
import os
import re
from pathlib import Path
from typing import Any, Sequence

from gpumatrix.engine.models import EngineInfo
from gpumatrix.host._io import _read
from gpumatrix.host.model import CDI_SPEC_DIRS, VENDOR_OF_PCI


def pci_display_devices(root: Path = Path("/")) -> list[tuple[str, str, str]]:
    """``(vendor, bus, device id)`` of NVIDIA/AMD display-class devices (PCI class 0x03xxxx) in sysfs.

    Display controllers only: an AMD CPU's PCI functions share vendor 0x1002's sibling 0x1022,
    and NVIDIA audio/USB functions of a card are class 0x04/0x0c, so the class filter matters.
    """
    out = []
    folder = root / "sys/bus/pci/devices"
    for dev in sorted(folder.iterdir()) if folder.is_dir() else []:
        vendor = (_read(dev / "vendor") or "").strip().lower()
        klass = (_read(dev / "class") or "").strip().lower()
        if vendor in VENDOR_OF_PCI and klass.startswith("0x03"):
            out.append((VENDOR_OF_PCI[vendor], dev.name, (_read(dev / "device") or "").strip().lower()))
    return out


def _group_ids() -> dict[str, int]:
    out = {}
    for name in ("video", "render"):
        try:
            out[name] = grp.getgrnam(name).gr_gid
        except KeyError:
            continue
    return out


def group_ids_from_file(text: str) -> dict[str, int]:
    """The ``video``/``render`` GIDs from an ``/etc/group`` text (for fake roots)."""
    out = {}
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[0] in ("video", "render") and parts[2].isdigit():
            out[parts[0]] = int(parts[2])
    return out


def device_modes(paths: Sequence[str], root: Path = Path("/")) -> dict[str, tuple[int, int, int]]:
    """``{path: (mode, uid, gid)}`` of the device nodes that exist under ``root``."""
    out = {}
    for p in paths:
        try:
            st = os.stat(root / p.lstrip("/"))
        except OSError:
            continue
        out[p] = (st.st_mode, st.st_uid, st.st_gid)
    return out


def summarise_cdi_spec(text: str) -> dict[str, Any]:
    """Kind, device names and the driver version a CDI spec was generated for (``libcuda.so.<version>``).

    JSON specs parse as YAML too. A spec names the driver's library files; after a driver
    upgrade it points at files that no longer exist until it is regenerated.
    """
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {"kind": None, "devices": [], "error": "unreadable"}
    if not isinstance(data, dict):
        return {"kind": None, "devices": [], "error": "not a mapping"}
    devices = sorted(str(d.get("name")) for d in data.get("devices") or [] if isinstance(d, dict) and d.get("name"))
    versions = sorted(set(re.findall(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)", text)))
    return {"kind": data.get("kind"), "devices": devices, "driver_version": versions[0] if versions else None,
            "cdi_version": data.get("cdiVersion")}


def cdi_specs(root: Path = Path("/")) -> dict[str, dict[str, Any]]:
    """CDI spec files in ``/etc/cdi`` and ``/var/run/cdi``, summarised."""
    out = {}
    for d in CDI_SPEC_DIRS:
        folder = root / d.lstrip("/")
        for p in sorted(folder.iterdir()) if folder.is_dir() else []:
            if p.suffix in (".json", ".yaml", ".yml") and p.is_file():
                out[f"{d}/{p.name}"] = summarise_cdi_spec(_read(p) or "")
    return out


def engine_facts(info: EngineInfo | None, root: Path = Path("/")) -> dict[str, Any]:
    """What the engine offers for GPUs (version, runtimes, CDI, rootless / Docker Desktop), as saved with results."""
    info = info or EngineInfo()
    cdi = []
    for d in CDI_SPEC_DIRS:
        folder = root / d.lstrip("/")
        if folder.is_dir():
            cdi += sorted(f"{d}/{p.name}" for p in folder.iterdir() if p.suffix in (".json", ".yaml", ".yml"))
    return {
        "version": info.version,
        "api_version": info.api_version,
        "runtimes": list(info.runtimes),
        "default_runtime": info.default_runtime,
        "rootless": info.rootless,
        "docker_desktop": info.docker_desktop,
        "operating_system": info.operating_system,
        "cdi_spec_dirs": list(info.cdi_spec_dirs),
        "cdi_specs": cdi,
        "docker_root_dir": info.docker_root_dir,
    }


def _meminfo_total(root: Path) -> int | None:
    m = re.search(r"^MemTotal:\s+(\d+)\s*kB", _read(root / "proc/meminfo") or "", flags=re.M)
    return int(m.group(1)) * 1024 if m else None


def _statvfs_bytes(path: Path) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_blocks * st.f_frsize


def device_gid(path: str) -> int | None:
    try:
        return os.stat(path).st_gid
    except OSError:
        return None
