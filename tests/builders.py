"""Builders of results, hosts and probe documents shared by the report and fleet tests (not a test module)."""

from __future__ import annotations

from gpumatrix.results.store import CellResult

H100 = {"hostname": "gpu-a", "gpus": [{"vendor": "nvidia", "index": 0, "name": "NVIDIA H100 80GB HBM3",
                                       "arch": "sm_90"}], "nvidia_driver": "570.86", "amd_driver": None}
MI300 = {"hostname": "amd-a", "gpus": [{"vendor": "amd", "index": 0, "name": "AMD Instinct MI300X",
                                        "arch": "gfx942"}], "nvidia_driver": None, "amd_driver": "6.10.5"}
CPU = {"hostname": "cpu-a", "gpus": [], "nvidia_driver": None, "amd_driver": None}
H100_LABEL = "NVIDIA H100 80GB HBM3 · 570.86"


def probes_doc(fail_layer: int | None = None, tflops: float = 500.0) -> dict:
    probes = [{"id": "kernel_driver.nvidia_driver", "layer": 1, "status": "pass", "message": "570.86"},
              {"id": "math_libraries.conv2d", "layer": 4, "status": "pass", "message": "ok"},
              {"id": "math_libraries.collectives", "layer": 4, "status": "skip", "message": "one GPU"},
              {"id": "framework.compile", "layer": 5, "status": "pass", "message": "ok"},
              {"id": "performance.matmul_tflops", "layer": 6, "status": "pass", "message": f"bf16 {tflops}",
               "details": {"results": {"bf16": {"tflops": tflops}}}}]
    if fail_layer:
        probes.append({"id": f"layer{fail_layer}.broken", "layer": fail_layer, "status": "fail", "message": "boom"})
    verdict = {"status": "fail" if fail_layer else "pass", "lowest_failing_layer": fail_layer}
    return {"schema_version": 1, "probes": probes, "verdict": verdict}


def result(cell_id: str, status: str, host: dict, reason: str | None = None, vendor: str = "nvidia", **kw):
    base, torch = cell_id.split("-torch")
    return CellResult(cell_id=cell_id, base_id=base, base_image=f"img/{base}", vendor=vendor, variant=base,
                      torch=torch, python="3.12", status=status, reason=reason, host=host, **kw)
