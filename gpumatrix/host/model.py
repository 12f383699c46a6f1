"""What a host is, as discovery describes it: its GPUs, drivers and container plumbing, and its host-type label."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

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
