"""Layer 6, performance: matmul throughput per dtype, device memory bandwidth and
pinned host<->device bandwidth. Warm up, then time each iteration (CUDA/HIP events on a
GPU, perf_counter on the CPU) and report the median. With ``GPUMATRIX_PEAKS`` naming a
JSON file of peaks per device name, results also come as a fraction of peak.
Measurements pass unless they cannot be taken; there are no thresholds here.
"""

import json
import os
import statistics
import time
from typing import Any, Callable, Dict, List, Optional

from .context import PEAKS_ENV, ProbeContext
from .model import NEEDS_ACCELERATOR, NEEDS_TORCH, Outcome, Probe, passed

WARMUP = 3
ITERATIONS = 10


def load_peaks(device_name: str, environ: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Peaks for ``device_name`` from the ``GPUMATRIX_PEAKS`` file: ``{"peaks": {...}}``,
    ``{}`` when none is configured, or ``{"peaks_error": ...}``."""
    environ = os.environ if environ is None else environ
    path = environ.get(PEAKS_ENV)
    if not path:
        return {}
    try:
        with open(path) as handle:
            table = json.load(handle)
    except (OSError, ValueError) as err:
        return {"peaks_error": "cannot read %s: %s" % (path, err)}
    entry = table.get(device_name) if isinstance(table, dict) else None
    if not isinstance(entry, dict):
        return {"peaks_error": "no entry for %r in %s" % (device_name, path)}
    return {"peaks": entry}


def fraction_of_peak(measured: float, peaks: Dict[str, Any], key: str) -> Optional[float]:
    peak = peaks.get("peaks", {}).get(key)
    if not isinstance(peak, (int, float)) or peak <= 0:
        return None
    return round(measured / peak, 4)


def median_seconds(ctx: ProbeContext, work: Callable[[], Any], iterations: int = ITERATIONS) -> float:
    """Median wall time of ``work`` after warm-up; device-side events on a GPU."""
    torch = ctx.torch
    for _ in range(WARMUP):
        work()
    ctx.synchronize()
    times = []  # type: List[float]
    for _ in range(iterations):
        if ctx.on_gpu:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0)
        else:
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def _device_name(ctx: ProbeContext) -> str:
    return ctx.torch.cuda.get_device_name(ctx.device_index) if ctx.on_gpu else "cpu"


def matmul_tflops(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    name = _device_name(ctx)
    peaks = load_peaks(name)
    if ctx.on_gpu:
        big = torch.cuda.get_device_properties(ctx.device_index).total_memory >= 16 * 2**30
        sizes = {"fp32": 4096, "tf32": 4096, "fp16": 8192 if big else 4096, "bf16": 8192 if big else 4096}
    else:
        sizes = {"fp32": 512}
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    from .math_libraries import fp32_matmul_mode

    results = {}  # type: Dict[str, Any]
    for label, n in sizes.items():
        if label == "bf16" and ctx.accelerator == "cuda" and not torch.cuda.is_bf16_supported():
            continue
        a = torch.randn(n, n, device=ctx.device).to(dtypes[label])
        b = torch.randn(n, n, device=ctx.device).to(dtypes[label])
        if ctx.on_gpu:
            with fp32_matmul_mode(torch, tf32=label == "tf32"):
                seconds = median_seconds(ctx, lambda: torch.matmul(a, b))
        else:
            seconds = median_seconds(ctx, lambda: torch.matmul(a, b))
        tflops = 2.0 * n ** 3 / seconds / 1e12
        results[label] = {"n": n, "median_s": seconds, "tflops": round(tflops, 3),
                          "fraction_of_peak": fraction_of_peak(tflops, peaks, "%s_tflops" % label)}
        del a, b
    details = dict(peaks, device=name, results=results)
    return passed(", ".join("%s %.2f TFLOP/s" % (k, v["tflops"]) for k, v in results.items()), **details)


def memory_bandwidth(ctx: ProbeContext) -> Outcome:
    """Device-to-device copy; each copy reads and writes the buffer (2 x bytes moved)."""
    torch = ctx.torch
    name = _device_name(ctx)
    peaks = load_peaks(name)
    size = (512 << 20) if ctx.on_gpu else (64 << 20)
    src = torch.empty(size, dtype=torch.uint8, device=ctx.device).fill_(1)
    dst = torch.empty_like(src)
    seconds = median_seconds(ctx, lambda: dst.copy_(src))
    gbs = 2 * size / seconds / 1e9
    details = dict(peaks, device=name, bytes=size, median_s=seconds, gb_per_s=round(gbs, 2),
                   fraction_of_peak=fraction_of_peak(gbs, peaks, "mem_bw_gbs"))
    return passed("%s copy bandwidth %.1f GB/s" % ("device" if ctx.on_gpu else "host memory", gbs), **details)


def host_device_bandwidth(ctx: ProbeContext) -> Outcome:
    """Pinned host memory to and from the device (PCIe / NVLink-C2C / Infinity Fabric)."""
    ctx.require_accelerator()
    torch = ctx.torch
    size = 256 << 20
    host = torch.empty(size, dtype=torch.uint8).pin_memory()
    device = torch.empty(size, dtype=torch.uint8, device=ctx.device)
    h2d = median_seconds(ctx, lambda: device.copy_(host, non_blocking=True))
    d2h = median_seconds(ctx, lambda: host.copy_(device, non_blocking=True))
    details = {"bytes": size, "h2d_gb_per_s": round(size / h2d / 1e9, 2), "d2h_gb_per_s": round(size / d2h / 1e9, 2)}
    return passed("pinned H2D %.1f GB/s, D2H %.1f GB/s" % (details["h2d_gb_per_s"], details["d2h_gb_per_s"]),
                  **details)


PROBES = [
    Probe("performance.matmul_tflops", matmul_tflops, group="performance", needs=NEEDS_TORCH, perf=True),
    Probe("performance.memory_bandwidth", memory_bandwidth, group="performance", needs=NEEDS_TORCH, perf=True),
    Probe("performance.host_device_bandwidth", host_device_bandwidth, group="performance",
          needs=NEEDS_ACCELERATOR, perf=True),
]
