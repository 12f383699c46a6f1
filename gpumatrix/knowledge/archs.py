"""Which GPU archs a torch build carries, and whether that code runs on a GPU.

The rule itself is :func:`gpumatrix.probes.archs.arch_compatibility` — one implementation, used by the
probes inside the container and by the host side (doctor, preflight, diagnosis) alike, with its data
in ``probes/data/arch_compat.json``. This module adds what only the host knows: the arch lists of the
published builds (``gpumatrix/data/torch_archs.yaml``).
"""

from __future__ import annotations

from typing import Any, Sequence

from gpumatrix.knowledge.releases import load_data
from gpumatrix.knowledge.versions import release
from gpumatrix.probes.archs import MATCHES, arch_compatibility, gfx_from_override, load_arch_rules

__all__ = ["MATCHES", "arch_compatibility", "gfx_from_override", "load_arch_rules", "torch_arch_list",
           "code_runs"]


def _in_range(version: str, spec: str) -> bool:
    lo, _, hi = str(spec).partition("-")
    return release(lo, 2) <= release(version, 2) <= release(hi or lo, 2)


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


def code_runs(device_arch: str, arch_list: Sequence[str], override: str | None = None) -> dict[str, Any]:
    """:func:`arch_compatibility` with an ``HSA_OVERRIDE_GFX_VERSION`` value (``"10.3.0"``) instead of an ISA.

    The result's ``match`` is "none" when no code in the build runs on the device.
    """
    return arch_compatibility(device_arch, list(arch_list), override=gfx_from_override(override) if override else None)
