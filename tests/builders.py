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


def driver_too_old_cell(**overrides) -> dict:
    """A failed cell as ``CellResult.to_dict()`` writes it: driver 535 on the host, a cu128 image whose torch
    says the driver is too old (https://github.com/lllyasviel/Fooocus/issues/1313 for the message)."""
    doc = {
        "schema_version": 1, "cell_id": "cu128-torch2.9.1", "base_id": "cuda12.8", "base_image": "nvidia/cuda",
        "vendor": "nvidia", "variant": "cu128", "torch": "2.9.1", "python": "3.12", "status": "fail",
        "host": {"gpus": [{"vendor": "nvidia", "index": 0, "name": "NVIDIA GeForce RTX 3090", "arch": "sm_86"}],
                 "nvidia_driver": "535.104.05", "amd_driver": None, "dev_kfd": False,
                 "engine": {"runtimes": ["io.containerd.runc.v2", "nvidia", "runc"]}},
        "probes": {"facts": {"torch": {"version": "2.9.1+cu128", "cuda": "12.8", "hip": None, "available": False,
                                       "arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]},
                             "devices": [], "shm_bytes": 67108864, "env": {"HSA_OVERRIDE_GFX_VERSION": None},
                             "driver": {"nvidia": {"version": "535.104.05"}, "amdgpu": {"loaded": False}}},
                   "probes": [{"id": "cuda_init", "layer": 2, "status": "fail",
                               "message": "RuntimeError: The NVIDIA driver on your system is too old "
                                          "(found version 12020)."}]},
        "env": {},
    }
    doc.update(overrides)
    return doc
