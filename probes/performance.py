"""Layer 6, performance: matmul throughput per dtype, device memory bandwidth and pinned
host<->device bandwidth, taken so that a user can trust the figure:

* warm-up by time (at least ``WARMUP_S``), not by a count that a slow first call eats;
* several operations between one pair of events (``TARGET_SAMPLE_S`` per sample), so event
  resolution and launch gaps do not dominate; the median of ``SAMPLES`` samples;
* clocks and power sampled during the run (NVML on NVIDIA, the amdgpu hwmon files on AMD),
  with the clock-limit reasons seen, so a throttled figure says so;
* host buffers of host<->device copies allocated with the process bound to the GPU's NUMA node;
* a figure taken while the host was busy (``GPUMATRIX_HOST_BUSY=1`` from the runner, or a
  load average above the core count measured here) is marked ``taken_under_load``;
* with ``GPUMATRIX_PEAKS``, a fraction of peak: the peak is looked up by device name, then by
  arch (``gfx942``); ``fp32_matrix_tflops`` is the fp32 peak where the hardware has matrix-core
  fp32; a ROCm "tf32" figure says whether TF32 was really in effect.

Measurements pass unless they cannot be taken; there are no thresholds here.
"""

import json
import math
import os
import statistics
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional

from .context import PEAKS_ENV, ProbeContext
from .model import NEEDS_ACCELERATOR, NEEDS_TORCH, Outcome, Probe, passed

WARMUP_S = 0.2
SAMPLES = 10
TARGET_SAMPLE_S = 0.025  # of work between one pair of events
MAX_REPS = 1000
HOST_BUSY_ENV = "GPUMATRIX_HOST_BUSY"
TELEMETRY_PERIOD_S = 0.05


# --------------------------------------------------------------------------- peaks


def load_peaks(device_name: str, environ: Optional[Mapping[str, str]] = None, arch: Optional[str] = None) -> Dict[str, Any]:
    """Peaks for a device from the ``GPUMATRIX_PEAKS`` file: ``{"peaks": {...}, "peaks_key": key}``
    (looked up by name, then by arch), ``{}`` when none is configured, or ``{"peaks_error": ...}``."""
    environ = os.environ if environ is None else environ
    path = environ.get(PEAKS_ENV)
    if not path:
        return {}
    try:
        with open(path) as handle:
            table = json.load(handle)
    except (OSError, ValueError) as err:
        return {"peaks_error": "cannot read %s: %s" % (path, err)}
    if not isinstance(table, dict):
        return {"peaks_error": "%s is not a JSON object" % path}
    keys = [device_name] + ([arch, arch.split(":", 1)[0]] if arch else [])
    for key in keys:
        entry = table.get(key)
        if isinstance(entry, dict):
            return {"peaks": entry, "peaks_key": key}
    return {"peaks_error": "no entry for %s in %s" % (" or ".join(repr(k) for k in dict.fromkeys(keys)), path)}


def peak_key(label: str, peaks: Mapping[str, Any]) -> str:
    """The peak a measurement is compared with: fp32 against the matrix-core fp32 peak where
    the table has one (AMD CDNA runs fp32 GEMMs on matrix cores)."""
    table = peaks.get("peaks", {})
    if label == "fp32" and isinstance(table.get("fp32_matrix_tflops"), (int, float)):
        return "fp32_matrix_tflops"
    return "%s_tflops" % label


def fraction_of_peak(measured: float, peaks: Mapping[str, Any], key: str) -> Optional[float]:
    peak = peaks.get("peaks", {}).get(key)
    if not isinstance(peak, (int, float)) or peak <= 0:
        return None
    return round(measured / peak, 4)


# --------------------------------------------------------------------------- host load


def host_load(environ: Optional[Mapping[str, str]] = None, loadavg_path: str = "/proc/loadavg") -> Dict[str, Any]:
    """Whether the host was busy: the runner's ``GPUMATRIX_HOST_BUSY=1`` (it knows about other
    cells on the same GPU host), or a 1-minute load average above the usable core count."""
    environ = os.environ if environ is None else environ
    reasons = []
    if environ.get(HOST_BUSY_ENV, "").strip() not in ("", "0"):
        reasons.append("%s=%s" % (HOST_BUSY_ENV, environ[HOST_BUSY_ENV].strip()[:40]))
    load = None  # type: Optional[float]
    try:
        with open(loadavg_path) as handle:
            load = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if load is not None and load > cores:
        reasons.append("load average %.1f on %d core(s)" % (load, cores))
    return {"busy": bool(reasons), "reasons": reasons, "loadavg_1m": load, "cores": cores}


# --------------------------------------------------------------------------- telemetry


def nvml_reader(pci_bus_id: Optional[str]) -> Optional[Callable[[], Dict[str, Any]]]:
    """A function returning the SM clock, power and clock-limit reasons of one NVIDIA GPU (found
    by PCI address, since CUDA and NVML number devices differently), or None."""
    import ctypes

    from .system_runtime import clock_reasons, load_library

    lib, _, _ = load_library(["libnvidia-ml.so.1"])
    if lib is None or not pci_bus_id or lib.nvmlInit_v2() != 0:
        return None
    handle = ctypes.c_void_p()
    if lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(handle)) != 0:
        return None
    reasons_call = getattr(lib, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        lib, "nvmlDeviceGetCurrentClocksThrottleReasons")

    def read() -> Dict[str, Any]:
        clock, power, reasons = ctypes.c_uint(0), ctypes.c_uint(0), ctypes.c_ulonglong(0)
        sample = {}  # type: Dict[str, Any]
        if lib.nvmlDeviceGetClockInfo(handle, ctypes.c_int(1), ctypes.byref(clock)) == 0:
            sample["sm_clock_mhz"] = clock.value
        if lib.nvmlDeviceGetPowerUsage(handle, ctypes.byref(power)) == 0:
            sample["power_w"] = power.value / 1000.0
        if reasons_call(handle, ctypes.byref(reasons)) == 0:
            sample["clock_reasons"] = clock_reasons(reasons.value)
        return sample

    return read


def amdgpu_reader(pci: Optional[str], sys_root: str = "/sys") -> Optional[Callable[[], Dict[str, Any]]]:
    """The amdgpu hwmon of one GPU (``freq1_input`` Hz = sclk, ``power1_average``/``power1_input``
    microwatts), found by PCI address; None when there is none."""
    if not pci:
        return None
    import glob

    folders = glob.glob(os.path.join(sys_root, "bus", "pci", "devices", pci + "*", "hwmon", "hwmon*"))
    if not folders:
        return None
    folder = folders[0]

    def number(name: str) -> Optional[float]:
        try:
            with open(os.path.join(folder, name)) as handle:
                return float(handle.read().strip())
        except (OSError, ValueError):
            return None

    def read() -> Dict[str, Any]:
        sample = {}  # type: Dict[str, Any]
        clock = number("freq1_input")
        power = number("power1_average")
        power = number("power1_input") if power is None else power
        if clock is not None:
            sample["sm_clock_mhz"] = clock / 1e6
        if power is not None:
            sample["power_w"] = power / 1e6
        return sample

    return read


class Telemetry:
    """Samples ``reader`` every ``period_s`` in a thread while a measurement runs."""

    def __init__(self, reader: Optional[Callable[[], Dict[str, Any]]], period_s: float = TELEMETRY_PERIOD_S) -> None:
        self.reader = reader
        self.period_s = period_s
        self.samples = []  # type: List[Dict[str, Any]]
        self._stop = threading.Event()
        self._thread = None  # type: Optional[threading.Thread]

    def __enter__(self) -> "Telemetry":
        if self.reader is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self.reader())  # type: ignore[misc]
            except Exception:
                return
            self._stop.wait(self.period_s)

    def summary(self) -> Dict[str, Any]:
        """min/mean/max of clocks and power, and every clock-limit reason seen (idle excluded)."""
        if not self.samples:
            return {"available": self.reader is not None, "samples": 0}
        out = {"available": True, "samples": len(self.samples)}  # type: Dict[str, Any]
        for key in ("sm_clock_mhz", "power_w"):
            values = [s[key] for s in self.samples if isinstance(s.get(key), (int, float))]
            if values:
                out[key] = {"min": round(min(values), 1), "mean": round(statistics.mean(values), 1),
                            "max": round(max(values), 1)}
        reasons = sorted(set(r for s in self.samples for r in s.get("clock_reasons", []) if r != "gpu_idle"))
        out["clock_reasons"] = reasons
        return out


def telemetry_reader(ctx: ProbeContext) -> Optional[Callable[[], Dict[str, Any]]]:
    if not ctx.on_gpu:
        return None
    from .facts import describe_devices

    try:
        device = describe_devices(ctx.torch)[ctx.device_index]
    except Exception:
        return None
    pci = device.get("pci")
    try:
        if ctx.accelerator == "cuda":
            return nvml_reader(pci + ".0" if pci else None)  # NVML takes "domain:bus:device.function"
        return amdgpu_reader(pci + ".0" if pci else None)
    except Exception:
        return None


# --------------------------------------------------------------------------- timing


def measure(ctx: ProbeContext, work: Callable[[], Any], samples: int = SAMPLES, warmup_s: float = WARMUP_S,
            target_sample_s: float = TARGET_SAMPLE_S) -> Dict[str, Any]:
    """Seconds per call of ``work``: warm up for ``warmup_s`` (at least 2 calls), then time
    ``samples`` samples of ``reps`` calls each between one pair of events (device events on a
    GPU, perf_counter on the CPU); ``reps`` makes a sample about ``target_sample_s`` long."""
    torch = ctx.torch
    started = time.perf_counter()
    calls = 0
    while True:
        work()
        calls += 1
        ctx.synchronize()
        elapsed = time.perf_counter() - started
        if calls >= 2 and elapsed >= warmup_s:
            break
    per_call = elapsed / calls
    reps = int(max(1, min(MAX_REPS, math.ceil(target_sample_s / max(per_call, 1e-9)))))
    times = []  # type: List[float]
    for _ in range(samples):
        if ctx.on_gpu:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                work()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0 / reps)
        else:
            begin = time.perf_counter()
            for _ in range(reps):
                work()
            times.append((time.perf_counter() - begin) / reps)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times), "reps": reps,
            "samples": samples, "warmup_s": round(elapsed, 3), "warmup_calls": calls}


def _device_name(ctx: ProbeContext) -> str:
    return ctx.torch.cuda.get_device_name(ctx.device_index) if ctx.on_gpu else "cpu"


def _device_arch(ctx: ProbeContext) -> Optional[str]:
    if not ctx.on_gpu:
        return None
    from .facts import describe_devices

    try:
        return describe_devices(ctx.torch)[ctx.device_index].get("arch")
    except Exception:
        return None


def _context_details(ctx: ProbeContext, telemetry: Telemetry, load_before: Dict[str, Any]) -> Dict[str, Any]:
    load_after = host_load()
    busy = load_before["busy"] or load_after["busy"]
    return {"telemetry": telemetry.summary(), "taken_under_load": busy,
            "host_load": {"before": load_before, "after": load_after}}


def _prefix(details: Mapping[str, Any]) -> str:
    notes = []
    if details.get("taken_under_load"):
        notes.append("taken under load")
    reasons = details.get("telemetry", {}).get("clock_reasons")
    if reasons:
        notes.append("clocks held back: %s" % "/".join(reasons))
    return "(%s) " % "; ".join(notes) if notes else ""


def rocm_tf32_state(torch: Any, arch: Optional[str], environ: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """Whether a ROCm fp32 matmul with TF32 allowed really uses TF32 (XF32): only hipBLASLt on
    gfx94x/gfx95x does, and only with ``HIPBLASLT_ALLOW_TF32=1``."""
    environ = os.environ if environ is None else environ
    allow = environ.get("HIPBLASLT_ALLOW_TF32", "").strip() == "1"
    hardware = bool(arch) and str(arch).startswith(("gfx94", "gfx95"))
    blas = None
    try:
        blas = str(torch.backends.cuda.preferred_blas_library()).split(".")[-1]
    except Exception:
        pass
    return {"enabled": allow and hardware, "HIPBLASLT_ALLOW_TF32": environ.get("HIPBLASLT_ALLOW_TF32"),
            "arch_has_xf32": hardware, "preferred_blas_library": blas}


# --------------------------------------------------------------------------- probes


def matmul_tflops(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    name, arch = _device_name(ctx), _device_arch(ctx)
    peaks = load_peaks(name, arch=arch)
    if ctx.on_gpu:
        big = torch.cuda.get_device_properties(ctx.device_index).total_memory >= 16 * 2**30
        sizes = {"fp32": 4096, "tf32": 4096, "fp16": 8192 if big else 4096, "bf16": 8192 if big else 4096}
    else:
        sizes = {"fp32": 512}
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    from .math_libraries import fp32_matmul_mode

    load_before = host_load()
    results = {}  # type: Dict[str, Any]
    with Telemetry(telemetry_reader(ctx)) as telemetry:
        for label, n in sizes.items():
            if label == "bf16" and ctx.accelerator == "cuda" and not torch.cuda.is_bf16_supported():
                continue
            a = torch.randn(n, n, device=ctx.device).to(dtypes[label])
            b = torch.randn(n, n, device=ctx.device).to(dtypes[label])
            if ctx.on_gpu:
                with fp32_matmul_mode(torch, tf32=label == "tf32"):
                    timing = measure(ctx, lambda: torch.matmul(a, b))
            else:
                timing = measure(ctx, lambda: torch.matmul(a, b))
            tflops = 2.0 * n ** 3 / timing["median_s"] / 1e12
            key = peak_key(label, peaks)
            results[label] = dict(timing, n=n, tflops=round(tflops, 3), peak_key=key,
                                  fraction_of_peak=fraction_of_peak(tflops, peaks, key))
            del a, b
    details = dict(peaks, device=name, arch=arch, results=results)
    details.update(_context_details(ctx, telemetry, load_before))
    labels = {k: k for k in results}
    if ctx.accelerator == "rocm" and "tf32" in results:
        state = rocm_tf32_state(torch, arch)
        results["tf32"]["tf32_in_effect"] = state
        if not state["enabled"]:
            labels["tf32"] = "tf32 (not in effect: fp32 math)"
    return passed(_prefix(details) + ", ".join("%s %.2f TFLOP/s" % (labels[k], v["tflops"])
                                               for k, v in results.items()), **details)


def memory_bandwidth(ctx: ProbeContext) -> Outcome:
    """Device-to-device copy; each copy reads and writes the buffer (2 x bytes moved)."""
    torch = ctx.torch
    name, arch = _device_name(ctx), _device_arch(ctx)
    peaks = load_peaks(name, arch=arch)
    size = (512 << 20) if ctx.on_gpu else (64 << 20)
    src = torch.empty(size, dtype=torch.uint8, device=ctx.device).fill_(1)
    dst = torch.empty_like(src)
    load_before = host_load()
    with Telemetry(telemetry_reader(ctx)) as telemetry:
        timing = measure(ctx, lambda: dst.copy_(src))
    gbs = 2 * size / timing["median_s"] / 1e9
    details = dict(peaks, device=name, bytes=size, gb_per_s=round(gbs, 2),
                   fraction_of_peak=fraction_of_peak(gbs, peaks, "mem_bw_gbs"), **timing)
    details.update(_context_details(ctx, telemetry, load_before))
    return passed(_prefix(details) + "%s copy bandwidth %.1f GB/s" % ("device" if ctx.on_gpu else "host memory", gbs),
                  **details)


def gpu_numa_node(pci: Optional[str], sys_root: str = "/sys") -> Optional[int]:
    """The NUMA node of a PCI device (``/sys/bus/pci/devices/<addr>/numa_node``), None if unknown (-1)."""
    if not pci:
        return None
    import glob

    for path in glob.glob(os.path.join(sys_root, "bus", "pci", "devices", pci + "*", "numa_node")):
        try:
            with open(path) as handle:
                node = int(handle.read().strip())
        except (OSError, ValueError):
            return None
        return node if node >= 0 else None
    return None


def node_cpus(node: int, sys_root: str = "/sys") -> Optional[set]:
    """The CPUs of a NUMA node, from its ``cpulist`` ("0-15,32-47")."""
    try:
        with open(os.path.join(sys_root, "devices", "system", "node", "node%d" % node, "cpulist")) as handle:
            text = handle.read().strip()
    except OSError:
        return None
    cpus = set()
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.update(range(int(low), int(high) + 1))
        elif part.strip().isdigit():
            cpus.add(int(part))
    return cpus or None


class bound_to_node:
    """Run the block on the CPUs of one NUMA node (first-touch puts pinned pages there), then
    restore the affinity. Does nothing when the node or affinity is unknown."""

    def __init__(self, node: Optional[int]) -> None:
        self.node = node
        self.saved = None  # type: Optional[set]
        self.applied = False

    def __enter__(self) -> "bound_to_node":
        cpus = node_cpus(self.node) if self.node is not None else None
        if cpus and hasattr(os, "sched_setaffinity"):
            try:
                self.saved = os.sched_getaffinity(0)
                usable = cpus & self.saved
                if usable:
                    os.sched_setaffinity(0, usable)
                    self.applied = True
            except OSError:
                pass
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.applied and self.saved:
            os.sched_setaffinity(0, self.saved)


def host_device_bandwidth(ctx: ProbeContext) -> Outcome:
    """Pinned host memory to and from the device (PCIe / NVLink-C2C / Infinity Fabric), with the
    host buffer on the GPU's NUMA node."""
    ctx.require_accelerator()
    torch = ctx.torch
    from .facts import describe_devices

    pci = describe_devices(torch)[ctx.device_index].get("pci")
    node = gpu_numa_node(pci + ".0" if pci else None)
    size = 256 << 20
    load_before = host_load()
    with bound_to_node(node) as binding, Telemetry(telemetry_reader(ctx)) as telemetry:
        host = torch.empty(size, dtype=torch.uint8).pin_memory()
        host.fill_(1)  # first touch on this node
        device = torch.empty(size, dtype=torch.uint8, device=ctx.device)
        h2d = measure(ctx, lambda: device.copy_(host, non_blocking=True))
        d2h = measure(ctx, lambda: host.copy_(device, non_blocking=True))
    details = {"bytes": size, "h2d_gb_per_s": round(size / h2d["median_s"] / 1e9, 2),
               "d2h_gb_per_s": round(size / d2h["median_s"] / 1e9, 2), "h2d": h2d, "d2h": d2h,
               "numa_node": node, "bound_to_numa_node": binding.applied}
    details.update(_context_details(ctx, telemetry, load_before))
    return passed(_prefix(details) + "pinned H2D %.1f GB/s, D2H %.1f GB/s%s" % (
        details["h2d_gb_per_s"], details["d2h_gb_per_s"],
        " (host buffer on NUMA node %d)" % node if binding.applied else ""), **details)


PROBES = [
    Probe("performance.matmul_tflops", matmul_tflops, group="performance", needs=NEEDS_TORCH, perf=True),
    Probe("performance.memory_bandwidth", memory_bandwidth, group="performance", needs=NEEDS_TORCH, perf=True),
    Probe("performance.host_device_bandwidth", host_device_bandwidth, group="performance",
          needs=NEEDS_ACCELERATOR, perf=True),
]
