"""AMD GPUs and driver: the KFD topology and DRM render nodes in sysfs first, amd-smi / rocm-smi for names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Mapping

from gpumatrix.host._io import _read
from gpumatrix.host.model import GPU, ToolRunner
from gpumatrix.host.nvidia import _normalise_bus


def gfx_name(target_version: int) -> str:
    """KFD ``gfx_target_version`` (major*10000 + minor*100 + stepping) → LLVM target (``90402`` → ``gfx942``).

    Minor and stepping are printed as hex digits: ``90010`` → ``gfx90a``.
    """
    major, rest = divmod(target_version, 10000)
    minor, stepping = divmod(rest, 100)
    return f"gfx{major}{minor:x}{stepping:x}"


def parse_kfd_properties(text: str) -> dict[str, int]:
    """A KFD topology node's ``properties`` file: ``name value`` lines → ints."""
    return {k: int(v) for k, v in re.findall(r"^(\w+)\s+(-?\d+)\s*$", text, flags=re.M)}


def _kfd_local_memory(node: Path) -> int | None:
    """VRAM of a KFD node: mem_banks with heap_type 1/2 (frame buffer public/private); 0 = system memory."""
    total = 0
    banks = node / "mem_banks"
    for bank in sorted(banks.iterdir()) if banks.is_dir() else []:
        props = parse_kfd_properties(_read(bank / "properties") or "")
        if props.get("heap_type") in (1, 2):
            total += props.get("size_in_bytes", 0)
    return total or None


def _kfd_memory(node: Path, props: Mapping[str, int]) -> int | None:
    return _kfd_local_memory(node) or (props.get("local_mem_size") or None)


def amd_gpus_from_kfd(root: Path = Path("/")) -> list[GPU]:
    """GPU agents from the KFD topology (``/sys/class/kfd/kfd/topology/nodes/*/properties``); CPU nodes skipped.

    The node's ``name`` file says ``ip discovery`` on recent kernels, so it is only used when it
    looks like a real name; amd-smi/rocm-smi supply marketing names when present.
    """
    gpus: list[GPU] = []
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    if not nodes.is_dir():
        return gpus
    for node in sorted(nodes.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 1 << 30):
        props = parse_kfd_properties(_read(node / "properties") or "")
        target = props.get("gfx_target_version", 0)
        if target == 0 or props.get("simd_count", 0) == 0:
            continue
        arch = gfx_name(target)
        name = (_read(node / "name") or "").strip()
        device_id = f"0x{props['device_id']:04x}" if props.get("device_id") else None
        if not name or name in ("ip discovery",) or re.fullmatch(r"gfx\w+", name):
            name = f"AMD GPU {arch}" + (f" ({device_id})" if device_id else "")
        render = props.get("drm_render_minor")
        bus = None
        if "location_id" in props:
            loc = props["location_id"]
            bus = f"{props.get('domain', 0):04x}:{loc >> 8:02x}:{(loc >> 3) & 0x1f:02x}.{loc & 0x7}"
        unique = props.get("unique_id")
        gpus.append(GPU(vendor="amd", index=len(gpus), name=name, arch=arch,
                        uuid=f"GPU-{unique:016x}" if unique else None, memory_bytes=_kfd_memory(node, props),
                        pci_bus=bus, render_node=f"/dev/dri/renderD{render}" if render and render > 0 else None,
                        device_id=device_id, source="kfd", arch_source="kfd"))
    return gpus


def parse_rocm_smi_json(text: str) -> dict[str, dict[str, str]]:
    """``rocm-smi --showproductname --showbus --json`` → ``{card: {field: value}}`` (keys lower-cased)."""
    try:
        data = json.loads(text[text.find("{"):]) if "{" in text else {}
    except json.JSONDecodeError:
        return {}
    return {str(card): {str(k).lower(): str(v) for k, v in fields.items()}
            for card, fields in data.items() if isinstance(fields, dict) and str(card).startswith("card")}


def parse_amd_smi_static(text: str) -> list[dict[str, str]]:
    """``amd-smi static`` (text output) → one flat ``{SECTION.KEY: value}`` dict per ``GPU: N`` block."""
    blocks: list[dict[str, str]] = []
    section = ""
    for raw in text.splitlines():
        m = re.match(r"^GPU:\s*(\d+)\s*$", raw)
        if m:
            blocks.append({"GPU": m.group(1)})
            section = ""
            continue
        if not blocks:
            continue
        m = re.match(r"^(\s+)([A-Z0-9_ ]+):\s*(.*)$", raw)
        if not m:
            continue
        indent, key, value = len(m.group(1)), m.group(2).strip(), m.group(3).strip()
        if indent <= 4 and not value:
            section = key
        elif value:
            blocks[-1][f"{section}.{key}" if section else key] = value
    return blocks


def _amd_names_from_tools(run: ToolRunner) -> tuple[dict[str, str], str | None]:
    """Marketing names by PCI bus (and the driver version) from amd-smi, else rocm-smi."""
    names: dict[str, str] = {}
    driver = None
    out = run(["amd-smi", "static", "--asic", "--bus", "--driver"])
    if out and out[0] == 0:
        for block in parse_amd_smi_static(out[1]):
            bus = _normalise_bus(block.get("BUS.BDF"))
            if bus and block.get("ASIC.MARKET_NAME"):
                names[bus] = block["ASIC.MARKET_NAME"]
            driver = driver or block.get("DRIVER.VERSION")
        if names:
            return names, driver
    out = run(["rocm-smi", "--showproductname", "--showbus", "--json"])
    if out and out[0] == 0:
        for fields in parse_rocm_smi_json(out[1]).values():
            bus = _normalise_bus(fields.get("pci bus"))
            name = fields.get("card series") or fields.get("device name")
            if bus and name and not name.startswith("0x"):
                names[bus] = name
    return names, driver


def amd_driver_version(root: Path = Path("/")) -> str | None:
    version = _read(root / "sys/module/amdgpu/version")
    if version and version.strip():
        return version.strip()
    return "in-tree" if (root / "sys/module/amdgpu").is_dir() else None
