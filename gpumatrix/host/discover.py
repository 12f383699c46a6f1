"""Discovery of this host (or of a fake root tree in tests): everything the other modules read, in one HostInfo."""

from __future__ import annotations

import platform
import re
import shutil
import socket
from dataclasses import asdict
from pathlib import Path
from typing import Mapping

from gpumatrix.engine.models import EngineInfo
from gpumatrix.host._io import _read, _run_tool
from gpumatrix.host.amd import _amd_names_from_tools, amd_driver_version, amd_gpus_from_kfd
from gpumatrix.host.model import GPU, NVIDIA_TOOLKIT_BINARIES, HostInfo, ToolRunner
from gpumatrix.host.nvidia import nvidia_arch_from_name, nvidia_driver_version, nvidia_gpus_from_proc, query_nvidia_smi
from gpumatrix.host.plumbing import (
    _group_ids,
    _meminfo_total,
    _statvfs_bytes,
    cdi_specs,
    device_modes,
    engine_facts,
    group_ids_from_file,
    pci_display_devices,
)


def _merge_names(gpus: list[GPU], names: Mapping[str, str]) -> list[GPU]:
    out = []
    for g in gpus:
        name = names.get(g.pci_bus or "")
        out.append(GPU(**{**asdict(g), "name": name}) if name else g)
    return out


def discover_host(engine_info: EngineInfo | None = None, root: Path = Path("/"),
                  run: ToolRunner | None = None) -> HostInfo:
    """Discover this host's GPUs, drivers and container plumbing.

    ``root`` points the file readers at a fake tree; ``run`` replaces the vendor-tool runner
    (tests pass one that returns recorded outputs). With a fake root and no ``run``, no tool runs.
    """
    real = root == Path("/")
    tools: ToolRunner = run or (_run_tool if real else (lambda argv: None))
    nvidia, smi_driver = query_nvidia_smi(tools)
    if not nvidia:
        nvidia = nvidia_gpus_from_proc(root)
        nvidia = [GPU(**{**asdict(g), "arch": arch, "arch_source": "name"}) if (arch := nvidia_arch_from_name(g.name))
                  else g for g in nvidia]
    amd = amd_gpus_from_kfd(root)
    amd_tool_driver = None
    if amd:
        names, amd_tool_driver = _amd_names_from_tools(tools)
        amd = _merge_names(amd, names)
    render_dir = root / "dev/dri"
    render_nodes = tuple(sorted(f"/dev/dri/{p.name}" for p in render_dir.glob("renderD*"))) if render_dir.is_dir() else ()
    os_release = _read(root / "etc/os-release") or ""
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release, flags=re.M)
    toolkit = {}
    if real:
        toolkit = {b: p for b in NVIDIA_TOOLKIT_BINARIES if (p := shutil.which(b))}
    else:
        for b in NVIDIA_TOOLKIT_BINARIES:
            for d in ("usr/bin", "usr/local/bin"):
                if (root / d / b).exists():
                    toolkit[b] = f"/{d}/{b}"
                    break
    kernel = platform.release() if real else (_read(root / "proc/sys/kernel/osrelease") or "").strip()
    return HostInfo(
        hostname=socket.gethostname() if real else "test-host",
        kernel=kernel,
        os=pretty.group(1) if pretty else platform.system(),
        machine=platform.machine(),
        gpus=tuple(nvidia + amd),
        nvidia_driver=nvidia_driver_version(root) or smi_driver,
        amd_driver=amd_driver_version(root) or amd_tool_driver,
        dev_kfd=(root / "dev/kfd").exists(),
        render_nodes=render_nodes,
        group_ids=_group_ids() if real else group_ids_from_file(_read(root / "etc/group") or ""),
        engine=engine_facts(engine_info, root),
        device_modes=device_modes(["/dev/kfd", *render_nodes], root),
        nvidia_toolkit=toolkit,
        cdi_specs=cdi_specs(root),
        mem_total_bytes=_meminfo_total(root),
        dev_shm_bytes=_statvfs_bytes(root / "dev/shm"),
        pci_gpus=tuple(pci_display_devices(root)),
        dev_root=str(root),
    )
