"""Planning a run: per cell, run it, skip it (and why), or record it as not applicable — before any work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from gpumatrix.config.matrix import Cell, RunOptions
from gpumatrix.host import HostInfo
from gpumatrix.run.preflight import preflight_cell

VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "cpu": "CPU"}


@dataclass(frozen=True)
class PlannedCell:
    cell: Cell
    action: str  # "run" | "skip" | "not_applicable"
    reason: str | None = None


def plan_cells(cells: Sequence[Cell], host: HostInfo, force: bool = False,
               run: RunOptions | None = None) -> list[PlannedCell]:
    """Decide per cell: run it, skip it (no GPU of its vendor here, or the cheap preflight says it cannot
    work: driver too old, arch not compiled in), or record it as not applicable."""
    planned = []
    for cell in cells:
        reason = None if force or not cell.applicable else preflight_cell(cell, host, run)
        if not cell.applicable:
            planned.append(PlannedCell(cell, "not_applicable", cell.reason))
        elif reason is not None:
            planned.append(PlannedCell(cell, "skip", f"cannot work on this host: {reason}"))
        elif not force and not host.has_vendor(cell.vendor):
            vendor = VENDOR_NAMES[cell.vendor]
            has = "no GPU" if not host.gpus else host.host_type()
            planned.append(PlannedCell(cell, "skip", f"no {vendor} GPU on this host (it has {has}); "
                                                     f"run it on a host with one, or pass --force to try anyway"))
        else:
            planned.append(PlannedCell(cell, "run"))
    return planned

