"""``invoke doctor``'s report: every check in order, rendered with its fix."""

from __future__ import annotations

from typing import Any, Sequence

from gpumatrix.config.matrix import Cell, Matrix
from gpumatrix.doctor.checks import (
    STATUSES,
    Check,
    check_amd,
    check_archs,
    check_disk,
    check_drivers,
    check_engine,
    check_gpus,
    check_nvidia,
    check_shm,
)
from gpumatrix.engine.models import EngineInfo
from gpumatrix.errors import GpumatrixError
from gpumatrix.host import HostInfo, discover_host


def run_checks(engine: Any, matrix: Matrix, cells: Sequence[Cell], host: HostInfo | None = None) -> list[Check]:
    """Every doctor check, in report order."""
    info: EngineInfo | None = None
    error = None
    if engine is not None:
        try:
            info = engine.describe()
        except GpumatrixError as err:
            error = str(err)
    host = host or discover_host(info)
    checks = [check_engine(info, error), check_gpus(host)]
    checks += check_nvidia(host, cells, matrix.run)
    checks += check_amd(host, cells, matrix.run)
    checks += check_drivers(matrix, host, cells)
    checks += check_archs(host, cells)
    checks.append(check_disk(info, cells, host) if info is not None else
                  Check("disk", "skip", "no engine to ask where images are stored"))
    checks.append(check_shm(host, matrix.run))
    return checks


def render_checks(checks: Sequence[Check], header: str = "") -> str:
    lines = [header] if header else []
    width = max((len(c.name) for c in checks), default=10)
    for c in checks:
        lines.append(f"{c.status.upper():5} {c.name:<{width}}  {c.detail}")
        if c.fix and c.status in ("fail", "warn"):
            for i, fix_line in enumerate(c.fix.splitlines()):
                lines.append(f"{'':5} {'':<{width}}  {'fix: ' if i == 0 else '     '}{fix_line.strip() if i == 0 else fix_line}")
    counts = {s: sum(c.status == s for c in checks) for s in STATUSES}
    lines.append("")
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no checks")
    return "\n".join(lines) + "\n"


def doctor_report(engine: Any, matrix: Matrix, cells: Sequence[Cell],
                  host: HostInfo | None = None) -> tuple[str, bool]:
    """Run every check; return the printable report and whether nothing failed."""
    checks = run_checks(engine, matrix, cells, host)
    applicable = sum(c.applicable for c in cells)
    header = f"gpumatrix doctor: {matrix.path} ({len(cells)} cells, {applicable} applicable)"
    return render_checks(checks, header), not any(c.status == "fail" for c in checks)

