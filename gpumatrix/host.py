"""Host discovery: which GPUs, drivers and container plumbing this host has.

Vendor tools are used when present (``nvidia-smi``, ``amd-smi``, ``rocm-smi``), never
required: the kernel's own files are read first and always —
``/proc/driver/nvidia``, the KFD topology and DRM render nodes in sysfs, and PCI
sysfs, which shows a GPU even when its driver is not loaded. Every reader takes a
``root`` so tests can point it at a fake tree; tool outputs are parsed by pure
functions that tests feed with recorded real outputs (``tests/fixtures/host``).

Discovery reads the machine gpumatrix runs on: with a local engine (a unix socket,
the normal case) that is the machine whose devices the containers get.
"""

from __future__ import annotations

import grp
import json
import os
import platform
import re
import shutil
import socket
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from gpumatrix.engine.models import EngineInfo

PCI_VENDOR_NVIDIA = "0x10de"
PCI_VENDOR_AMD = "0x1002"
VENDOR_OF_PCI = {PCI_VENDOR_NVIDIA: "nvidia", PCI_VENDOR_AMD: "amd"}
# Binaries of the NVIDIA Container Toolkit. dockerd registers the GPU device driver that
# serves ``--gpus`` only when it finds nvidia-container-runtime-hook on its PATH.
NVIDIA_TOOLKIT_BINARIES = ("nvidia-container-runtime-hook", "nvidia-container-runtime", "nvidia-ctk",
                           "nvidia-container-cli")
CDI_SPEC_DIRS = ("/etc/cdi", "/var/run/cdi")

# A tool runner: argv -> (exit code, stdout) or None when the tool is absent or hangs.
ToolRunner = Callable[[Sequence[str]], "tuple[int, str] | None"]


@dataclass(frozen=True)
class GPU:
    """One GPU as the host sees it. ``index`` counts within its vendor (what the vendor's tools call GPU N)."""

    vendor: str  # nvidia | amd
    index: int
    name: str
    arch: str | None = None  # sm_90 / gfx942
    uuid: str | None = None  # NVIDIA: GPU-…; AMD: the ROCr form GPU-<16 hex digits> of KFD's unique_id
    memory_bytes: int | None = None
    pci_bus: str | None = None  # 0000:65:00.0
    render_node: str | None = None  # AMD: /dev/dri/renderD128
    compute_capability: str | None = None  # NVIDIA: "9.0"
    device_id: str | None = None  # PCI device id, 0x2330
    source: str = ""  # where the facts came from: nvidia-smi, proc, kfd, pci, …
    arch_source: str | None = None  # "nvidia-smi" (measured) or "name" (looked up from the model name)


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
    engine: Mapping[str, Any] = field(default_factory=dict)  # version, runtimes, cdi_specs, rootless …
    device_modes: Mapping[str, tuple[int, int, int]] = field(default_factory=dict)  # path -> (mode, uid, gid)
    nvidia_toolkit: Mapping[str, str] = field(default_factory=dict)  # binary name -> path, where found
    cdi_specs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # path -> summary of the spec
    mem_total_bytes: int | None = None
    dev_shm_bytes: int | None = None
    pci_gpus: tuple[tuple[str, str, str], ...] = ()  # (vendor, bus, device id) of display-class PCI devices
    dev_root: str = "/"  # where the device nodes live on the engine's host ("/" except for fake trees)

    def host_path(self, device: str) -> str:
        """The host path of a device node named by its in-container path (``/dev/kfd``)."""
        return device if self.dev_root in ("", "/") else str(Path(self.dev_root) / device.lstrip("/"))

    def has_vendor(self, vendor: str) -> bool:
        if vendor == "cpu":
            return True
        return any(g.vendor == vendor for g in self.gpus)

    def vendor_gpus(self, vendor: str) -> list[GPU]:
        return [g for g in self.gpus if g.vendor == vendor]

    def device_gid(self, path: str) -> int | None:
        """The group owning a device node as discovered (None when it was not seen)."""
        entry = self.device_modes.get(path)
        return entry[2] if entry else None

    def fingerprint(self) -> dict[str, Any]:
        """What goes into every result: enough to group results by host type in a fleet."""
        engine = dict(self.engine)
        return {
            "hostname": self.hostname, "kernel": self.kernel, "os": self.os, "machine": self.machine,
            "gpus": [asdict(g) for g in self.gpus],
            "gpu_archs": sorted({g.arch for g in self.gpus if g.arch}),
            "nvidia_driver": self.nvidia_driver, "amd_driver": self.amd_driver,
            "engine": engine,
            "nvidia_runtime": "nvidia" in (engine.get("runtimes") or []),
            "nvidia_toolkit": sorted(self.nvidia_toolkit),
            "cdi_specs": sorted(self.cdi_specs),
            "cdi_nvidia_devices": sorted({d for s in self.cdi_specs.values() if s.get("kind") == "nvidia.com/gpu"
                                          for d in s.get("devices", ())}),
            "dev_kfd": self.dev_kfd,
            "render_nodes": list(self.render_nodes),
        }

    def host_type(self) -> str:
        """This host's type label (see :func:`host_type_label`), e.g. ``NVIDIA H100 80GB HBM3 · 570.86``."""
        return host_type_label(self.fingerprint())


def host_type_label(facts: Mapping[str, Any] | None) -> str:
    """The label of a host's type, from its fingerprint (:meth:`HostInfo.fingerprint`, as every result records it).

    ``NVIDIA H100 80GB HBM3 · 570.86``; GPU models joined by `` + ``, drivers by ``/``; ``cpu`` for a host
    without a GPU, ``unknown`` when no GPU facts were recorded. The GPU count is left out: four or eight
    H100s on one driver answer the same compatibility question. The one owner of this rule: the run side
    (``HostInfo.host_type``) and the results side (merge, recommend) both call it. Total over any input,
    since the facts may come from another host's results file.
    """
    if not isinstance(facts, Mapping) or not isinstance(facts.get("gpus"), (list, tuple)):
        return "unknown"
    names = sorted({str(g.get("name") or "GPU") for g in facts["gpus"] if isinstance(g, Mapping)})
    if not names:
        return "cpu"
    drivers = "/".join(str(facts.get(k)) for k in ("nvidia_driver", "amd_driver") if facts.get(k))
    label = " + ".join(names)
    return f"{label} · {drivers}" if drivers else label


# ---------------------------------------------------------------------------
# Small readers


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _run_tool(argv: Sequence[str], timeout: float = 20) -> tuple[int, str] | None:
    """Run a vendor tool (argv list, timeout, no shell); None when it is absent or hangs."""
    exe = shutil.which(argv[0])
    if not exe:
        return None
    try:
        out = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.returncode, out.stdout + (out.stderr if out.returncode else "")


# ---------------------------------------------------------------------------
# NVIDIA


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


# ---------------------------------------------------------------------------
# PCI sysfs (GPUs even without a loaded driver)


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


# ---------------------------------------------------------------------------
# AMD


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


# ---------------------------------------------------------------------------
# Container plumbing: groups, device nodes, toolkit, CDI specs, engine


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


def device_gid(path: str) -> int | None:
    try:
        return os.stat(path).st_gid
    except OSError:
        return None
