"""NVIDIA GPUs and driver: /proc/driver/nvidia first (always there with the driver), nvidia-smi when present."""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from gpumatrix.host._io import _read, _run_tool
from gpumatrix.host.model import GPU, ToolRunner


def parse_nvidia_driver_version(text: str) -> str | None:
    """The version in ``/proc/driver/nvidia/version`` (proprietary and open kernel modules)."""
    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text) or re.search(
        r"\b(\d{3}\.\d+(?:\.\d+)?)\b", text)
    return m.group(1) if m else None


def nvidia_driver_version(root: Path = Path("/")) -> str | None:
    """Driver version from ``/proc/driver/nvidia/version``, else ``/sys/module/nvidia/version``."""
    text = _read(root / "proc/driver/nvidia/version")
    if text:
        found = parse_nvidia_driver_version(text)
        if found:
            return found
    sys_version = (_read(root / "sys/module/nvidia/version") or "").strip()
    return sys_version or None


def parse_nvidia_information(text: str) -> dict[str, str]:
    """``/proc/driver/nvidia/gpus/<bus>/information``: ``Key: \\t value`` lines → dict."""
    return {k.strip(): v.strip() for k, v in re.findall(r"^([^:\n]+):\s*(.*)$", text, flags=re.M)}


def nvidia_gpus_from_proc(root: Path = Path("/")) -> list[GPU]:
    """GPUs from ``/proc/driver/nvidia/gpus/<bus>/information`` (no tools needed)."""
    gpus: list[GPU] = []
    folder = root / "proc/driver/nvidia/gpus"
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    for entry in entries:
        fields = parse_nvidia_information(_read(entry / "information") or "")
        name = fields.get("Model") or "NVIDIA GPU"
        minor = fields.get("Device Minor")
        gpus.append(GPU(vendor="nvidia", index=int(minor) if minor and minor.isdigit() else len(gpus), name=name,
                        uuid=fields.get("GPU UUID") or None, pci_bus=fields.get("Bus Location") or entry.name,
                        source="proc"))
    # nvidia-smi numbers GPUs by PCI bus order; do the same (Device Minor can differ).
    gpus.sort(key=lambda g: g.pci_bus or "")
    return [GPU(**{**asdict(g), "index": i}) for i, g in enumerate(gpus)]


NVIDIA_QUERY_FIELDS = ("index", "name", "uuid", "memory.total", "compute_cap", "pci.bus_id", "driver_version")


def _normalise_bus(bus: str | None) -> str | None:
    """``00000000:65:00.0`` (nvidia-smi) → ``0000:65:00.0`` (sysfs), lower case."""
    if not bus:
        return None
    m = re.fullmatch(r"(?:([0-9A-Fa-f]+):)?([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])", bus.strip())
    if not m:
        return bus.strip().lower()
    domain = int(m.group(1) or "0", 16)
    return f"{domain:04x}:{m.group(2).lower()}:{m.group(3).lower()}.{m.group(4)}"


def parse_nvidia_smi_csv(text: str, fields: Sequence[str] = NVIDIA_QUERY_FIELDS[:6]) -> list[GPU]:
    """Parse ``nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]``.

    With a header line the columns are taken from it (any order, ``[MiB]`` units allowed);
    without one they are ``fields`` in order.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return []
    first = [c.strip() for c in lines[0].split(",")]
    if first and not first[0].isdigit() and any(c.split(" ")[0] in NVIDIA_QUERY_FIELDS + ("gpu_name",) for c in first):
        fields = [re.sub(r"\s*\[.*\]$", "", c).strip() for c in first]
        lines = lines[1:]
    gpus: list[GPU] = []
    for line in lines:
        # GPU names never contain commas; the split is safe.
        cols = [c.strip() for c in line.split(",")]
        if len(cols) < len(fields):
            continue
        row = dict(zip(fields, cols))
        index = row.get("index", str(len(gpus)))
        if not index.isdigit():
            continue
        cap = row.get("compute_cap", "")
        has_cap = bool(re.fullmatch(r"\d+\.\d+", cap))
        mem = re.sub(r"\s*MiB$", "", row.get("memory.total", ""))
        memory = int(float(mem)) * 1024 * 1024 if re.fullmatch(r"\d+(\.\d+)?", mem) else None
        gpus.append(GPU(vendor="nvidia", index=int(index), name=row.get("name") or row.get("gpu_name") or "NVIDIA GPU",
                        arch=f"sm_{cap.replace('.', '')}" if has_cap else None,
                        uuid=row.get("uuid") or None, memory_bytes=memory,
                        pci_bus=_normalise_bus(row.get("pci.bus_id")), compute_capability=cap if has_cap else None,
                        source="nvidia-smi", arch_source="nvidia-smi" if has_cap else None))
    return gpus


def nvidia_smi_driver(text: str) -> str | None:
    """The ``driver_version`` column of an ``nvidia-smi --query-gpu`` CSV with a header."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    header = [re.sub(r"\s*\[.*\]$", "", c).strip() for c in lines[0].split(",")]
    if "driver_version" not in header:
        return None
    cols = [c.strip() for c in lines[1].split(",")]
    value = cols[header.index("driver_version")] if len(cols) > header.index("driver_version") else ""
    return value if re.fullmatch(r"\d+\.\d+(\.\d+)?", value) else None


def query_nvidia_smi(run: ToolRunner = _run_tool) -> tuple[list[GPU], str | None]:
    """GPUs and driver version from ``nvidia-smi``; ``([], None)`` when it is absent or fails.

    Drivers before 510 do not know ``compute_cap`` (``Field "compute_cap" is not a valid field
    to query.``, exit code 2): the query is repeated without it.
    """
    for fields in (NVIDIA_QUERY_FIELDS, tuple(f for f in NVIDIA_QUERY_FIELDS if f != "compute_cap")):
        out = run(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,nounits"])
        if out is None:
            return [], None
        code, text = out
        if code == 0:
            return parse_nvidia_smi_csv(text), nvidia_smi_driver(text)
        if "compute_cap" not in text:
            break
    return [], None


def nvidia_arch_from_name(name: str) -> str | None:
    """The sm_XY of a GPU model name via ``torch_archs.yaml`` ``gpu_targets`` (when no tool reports it)."""
    from gpumatrix.knowledge.releases import load_data

    for names, arch in (load_data("torch_archs").get("gpu_targets") or {}).items():
        if not str(arch).startswith("sm_"):
            continue
        for alias in str(names).split(" / "):
            alias = alias.strip()
            if not alias or "(" in alias:
                continue
            pattern = re.escape(alias).replace("xx", r"\d\d")
            if re.search(rf"(?<![\w-]){pattern}(?![\w])", name):
                return str(arch)
    return None
