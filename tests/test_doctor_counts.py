"""doctor's "N cells will be skipped" counts the cells that would run, not the not-applicable ones."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gpumatrix.config import expand_cells, parse_matrix
from gpumatrix.doctor.checks import check_amd, check_nvidia
from gpumatrix.host import discover_host

MATRIX = textwrap.dedent("""\
    schema_version: 1
    bases:
      - {id: cu130, vendor: nvidia, image: "nvidia/cuda:13.0.2-runtime-ubuntu24.04", variant: cu130, python: "3.12"}
      - {id: rocm7.2, vendor: amd, image: "rocm/dev-ubuntu-24.04:7.2.4", variant: rocm7.2, python: "3.12"}
    torch:
      - version: "2.15.0"
      - version: "2.14.1"
""")


def test_skipped_counts_are_of_applicable_cells_only(tmp_path):
    matrix = parse_matrix(MATRIX, tmp_path / "matrix.yaml")
    cells = expand_cells(matrix).cells
    by_vendor = {v: [c for c in cells if c.vendor == v] for v in ("nvidia", "amd")}
    assert any(not c.applicable for c in by_vendor["amd"])  # torch 2.15.0 ships no rocm7.2 wheel
    host = discover_host(root=Path(tmp_path))  # no GPU at all
    (nvidia,) = check_nvidia(host, cells, matrix.run)
    (amd,) = check_amd(host, cells, matrix.run)[:1]
    assert f"{sum(c.applicable for c in by_vendor['nvidia'])} NVIDIA cells will be skipped" in nvidia.detail
    assert f"{sum(c.applicable for c in by_vendor['amd'])} AMD cells will be skipped" in amd.detail
    assert f"{len(by_vendor['amd'])} AMD cells" not in amd.detail
