"""GPU peak figures (``gpumatrix/data/gpu_peaks.yaml``) as the probes read them: a JSON file mounted into
each probe container, so a measured TFLOP/s can be shown as a share of what the card can do."""

from __future__ import annotations

from gpumatrix.knowledge.releases import load_data


def peaks_table() -> dict[str, dict[str, float]]:
    """``gpumatrix/data/gpu_peaks.yaml`` as the probes read it: device name → {"bf16_tflops": …, "mem_bw_gbs": …}."""
    table: dict[str, dict[str, float]] = {}
    for name, entry in (load_data("gpu_peaks").get("gpus") or {}).items():
        if not isinstance(entry, dict):
            continue
        figures = {f"{k}_tflops": float(v) for k, v in entry.items()
                   if k in ("fp32", "fp32_matrix", "tf32", "fp16", "bf16", "fp8") and isinstance(v, (int, float))}
        if isinstance(entry.get("mem_bw_gbs"), (int, float)):
            figures["mem_bw_gbs"] = float(entry["mem_bw_gbs"])
        for key in [name] + list(entry.get("aliases") or []):
            table[str(key)] = figures
    return table

