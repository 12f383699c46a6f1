"""The facts of a saved cell result (``results/cells/<cell>.json``), validated where they enter."""

from __future__ import annotations

import re
from typing import Any, Mapping

from gpumatrix.knowledge.drivers import cuda_version_of_variant
from gpumatrix.probes.model import FAILING_STATUSES

from .vocabulary import FACTS


def _variant_versions(variant: str) -> dict[str, str]:
    """``cu128`` -> image_cuda 12.8, ``rocm6.2`` -> image_rocm 6.2, ``cpu`` -> nothing."""
    cuda = cuda_version_of_variant(variant.strip().lower())
    if cuda:
        return {"image_cuda": cuda}
    found = re.fullmatch(r"rocm(\d{1,2}\.\d{1,2})(?:\.\d{1,2})?", variant.strip().lower())
    if found:
        return {"image_rocm": found.group(1)}
    return {}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# The probe suite's device-node checks open each node read-write, as the user-mode driver will, and record why one
# failed. EACCES is the file's mode, owner or group (or a security module) refusing this user: a permission. EPERM
# (a device cgroup that does not allow the node, as after a daemon-reload drops a container's device rules) and
# ENXIO (no driver behind the major) are other causes, and are not counted.
_NODE_CHECKS = ("kernel_driver.nvidia_device_nodes", "kernel_driver.amd_device_nodes")


def _nodes_denied(probe_list: Any) -> list[str] | None:
    """The nodes whose open failed with EACCES in the suite's node checks; None when no check opened a node."""
    opened = [attempt for probe in probe_list or [] if isinstance(probe, Mapping) and probe.get("id") in _NODE_CHECKS
              for attempt in _mapping(probe.get("details")).get("open") or [] if isinstance(attempt, Mapping)]
    if not opened:
        return None
    return sorted({str(a.get("path")) for a in opened
                   if a.get("openable") is False and str(a.get("error") or "").startswith("EACCES")})


def facts_from_cell_result(document: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The facts :func:`gpumatrix.diagnose.diagnose` reads, from one cell-result JSON document.

    ``document`` is what ``gpumatrix.results.CellResult.to_dict()`` writes; the probe
    suite's facts are under ``probes.facts``. ``extra`` are facts the runner measured that
    the document does not hold (e.g. ``required_min_driver``, ``container_device_nodes``);
    they win. A value of the wrong type for its fact is dropped, never passed on, and an
    unknown name is ignored. Facts not known stay absent: an absent fact decides nothing.
    """
    doc = _mapping(document)
    facts: dict[str, Any] = {}
    vendor = doc.get("vendor")
    if isinstance(vendor, str):
        facts["vendor"] = vendor
    if isinstance(doc.get("variant"), str):
        facts.update(_variant_versions(doc["variant"]))
    cell_env = _mapping(doc.get("env"))
    if "HSA_OVERRIDE_GFX_VERSION" in cell_env:
        facts["hsa_override_gfx_version"] = cell_env.get("HSA_OVERRIDE_GFX_VERSION") or None

    host = _mapping(doc.get("host"))
    gpus = [g for g in host.get("gpus") or [] if isinstance(g, Mapping)]
    if gpus:
        facts["host_gpu_vendors"] = sorted({str(g.get("vendor")) for g in gpus if g.get("vendor")})
        arch = next((g.get("arch") for g in gpus if g.get("vendor") == vendor and g.get("arch")), None)
        if arch:
            facts["device_arch"] = arch
    if vendor == "nvidia" and "nvidia_driver" in host:
        facts["host_driver_version"] = host.get("nvidia_driver")  # None = no NVIDIA driver on the host
    if vendor == "amd" and "dev_kfd" in host:
        facts["dev_kfd_present"] = bool(host.get("dev_kfd"))
    runtimes = _mapping(host.get("engine")).get("runtimes")
    if isinstance(runtimes, (list, tuple)) and runtimes:  # every engine has one: none means it was not read
        facts["engine_runtimes"] = [str(r) for r in runtimes]

    probes = _mapping(doc.get("probes"))
    probe_facts = _mapping(probes.get("facts"))
    torch = _mapping(probe_facts.get("torch"))
    if torch.get("version"):  # torch imported: its None versions mean "not built in"
        facts["torch_version"] = torch.get("version")
        facts["torch_cuda"] = torch.get("cuda")
        facts["torch_hip"] = torch.get("hip")
        if isinstance(torch.get("available"), bool):
            facts["torch_cuda_available"] = torch["available"]
        if isinstance(torch.get("arch_list"), (list, tuple)) and torch["arch_list"]:
            facts["torch_arch_list"] = [str(a) for a in torch["arch_list"]]
    devices = probe_facts.get("devices")
    if isinstance(devices, (list, tuple)) and devices and isinstance(devices[0], Mapping) and devices[0].get("arch"):
        facts["device_arch"] = devices[0]["arch"]  # what the container saw beats the host's view
    if isinstance(probe_facts.get("shm_bytes"), int):
        facts["shm_bytes"] = probe_facts["shm_bytes"]
    probe_env = _mapping(probe_facts.get("env"))
    if "HSA_OVERRIDE_GFX_VERSION" in probe_env:
        facts["hsa_override_gfx_version"] = probe_env.get("HSA_OVERRIDE_GFX_VERSION") or None
    driver = _mapping(probe_facts.get("driver"))
    nvidia_version = _mapping(driver.get("nvidia")).get("version")
    if vendor == "nvidia" and nvidia_version and not facts.get("host_driver_version"):
        facts["host_driver_version"] = nvidia_version  # /proc/driver/nvidia/version is the host's module
    amdgpu = _mapping(driver.get("amdgpu"))
    if vendor == "amd" and isinstance(amdgpu.get("loaded"), bool):
        facts["amd_driver_loaded"] = amdgpu["loaded"]
    nodes = probe_facts.get("device_nodes")
    if isinstance(nodes, (list, tuple)):
        facts["container_device_nodes"] = [str(n) for n in nodes]
    denied = _nodes_denied(probes.get("probes"))
    if denied is not None:
        facts["container_device_nodes_denied"] = denied
    failures = [
        {k: p.get(k) for k in ("id", "layer", "status", "message")}
        for p in probes.get("probes") or [] if isinstance(p, Mapping) and p.get("status") in FAILING_STATUSES]
    if failures:
        facts["probe_failures"] = failures

    facts.update(dict(extra or {}))
    return {name: value for name, value in facts.items() if name in FACTS and FACTS[name].accepts(value)}


def failure_text_of_cell(document: Mapping[str, Any]) -> str:
    """The failure text a cell result holds: its reason and its failed probes' errors (never its old diagnosis)."""
    parts = [str(document.get("reason") or "")]
    for probe in ((document.get("probes") or {}).get("probes") or []):
        if isinstance(probe, dict) and probe.get("status") in FAILING_STATUSES:
            raw_details = probe.get("details")
            details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
            for key in ("error", "stderr_tail", "traceback"):
                if isinstance(details.get(key), str):
                    parts.append(details[key][-4000:])
    return "\n".join(p for p in parts if p)
