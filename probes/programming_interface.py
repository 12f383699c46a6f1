"""Layer 3, programming_interface: the CUDA/HIP runtime as torch sees it: versions,
devices, a kernel launch, host<->device copies, streams and events, and whether an
asynchronous device error surfaces as a Python error."""

import os
from typing import Any, Dict, List, Optional

from .archs import arch_compatibility, gfx_from_override
from .context import ProbeContext
from .model import FAIL, NEEDS_ACCELERATOR, NEEDS_TORCH, Outcome, Probe, ProbeFailed, failed, passed, skipped

VENDOR_OF = {"cuda": "nvidia", "rocm": "amd"}


def runtime(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    cuda, hip = getattr(torch.version, "cuda", None), getattr(torch.version, "hip", None)
    details = {"torch": torch.__version__, "cuda": cuda, "hip": hip}  # type: Dict[str, Any]
    accelerator = ctx.accelerator
    details["accelerator"] = accelerator
    if ctx.init_warnings:
        details["init_warnings"] = ctx.init_warnings
    if not cuda and not hip:
        if ctx.expect:
            return failed("torch %s is a CPU-only build but GPUMATRIX_EXPECT=%s" % (torch.__version__, ctx.expect),
                          **details)
        return skipped("torch %s is built without CUDA or ROCm" % torch.__version__, **details)
    build = "CUDA %s" % cuda if cuda else "ROCm/HIP %s" % hip
    if accelerator == "cpu":
        why = "; ".join(ctx.init_warnings) or "torch.cuda.is_available() is False"
        if ctx.expect:
            return failed("torch built for %s cannot use the GPU: %s" % (build, why), **details)
        return skipped("no accelerator (torch built for %s): %s" % (build, why), **details)
    if ctx.expect and VENDOR_OF[accelerator] != ctx.expect:
        return failed("GPUMATRIX_EXPECT=%s but torch uses %s" % (ctx.expect, accelerator), **details)
    torch.cuda.init()
    details["device_count"] = torch.cuda.device_count()
    details["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if details["device_count"] < 1:
        return failed("torch reports the GPU available but no device", **details)
    return passed("%s runtime initialised, %d device(s)" % (build, details["device_count"]), **details)


def devices(ctx: ProbeContext) -> Outcome:
    ctx.require_accelerator()
    from .facts import describe_devices

    torch = ctx.torch
    found = describe_devices(torch)
    for entry in found:
        free, total = torch.cuda.mem_get_info(entry["index"])
        entry["free_memory_bytes"], entry["mem_get_info_total_bytes"] = int(free), int(total)
    summary = ", ".join("%s (%s, %.0f GiB)" % (d["name"], d["arch"], d["total_memory_bytes"] / 2**30) for d in found)
    return passed(summary, devices=found)


def _kfd_location(gpu: Dict[str, Any]) -> Optional[str]:
    """A KFD node's PCI address ("0000:c1:00") from its domain and location_id (bus<<8 | dev<<3 | fn)."""
    if "location_id" not in gpu:
        return None
    location = gpu["location_id"]
    return "%04x:%02x:%02x" % (gpu.get("domain", 0), location >> 8, (location >> 3) & 0x1F)


def real_gfx(device: Dict[str, Any], kfd: List[Dict[str, Any]]) -> Optional[str]:
    """The device's real ISA from the KFD topology: the node at the same PCI address, else the
    only discrete gfx the topology has. None when it cannot tell."""
    if device.get("pci"):
        for gpu in kfd:
            if _kfd_location(gpu) == device["pci"]:
                return gpu["gfx"]
    discrete = sorted(set(g["gfx"] for g in kfd if not g.get("integrated")))
    if len(discrete) == 1 and not device.get("integrated"):
        return discrete[0]
    return None


def check_arch(archs: List[str], found: List[Dict[str, Any]], rocm: bool, kfd: List[Dict[str, Any]],
               override_env: Optional[str]) -> Outcome:
    """Whether the build's arch list has code for every device, cross-checking on ROCm the
    ISA the runtime reports (gcnArchName) with the KFD topology's real one."""
    override = gfx_from_override(override_env) if rocm else None
    results, problems = [], []
    for device in found:
        reported = device.get("arch") or "?"
        arch = reported
        entry = {"index": device.get("index"), "reported": reported}  # type: Dict[str, Any]
        if rocm:
            real = real_gfx(device, kfd)
            entry["kfd_gfx"] = real
            if real and real != reported:
                if override and reported == override:
                    arch = real  # the runtime runs it as the override; judge the real ISA with it
                else:
                    problems.append("device %s: the runtime reports %s but the KFD topology says %s%s" % (
                        device.get("index"), reported, real,
                        " (HSA_OVERRIDE_GFX_VERSION=%s selects %s)" % (override_env, override) if override_env
                        else ""))
            features = str(device.get("gcn_arch_name") or "")
            if ":" in features:  # keep the xnack/sramecc mode: it decides which code objects load
                arch = arch + features[features.index(":"):]
        result = arch_compatibility(arch, archs, override=override if rocm else None)
        entry.update(result)
        results.append(entry)
    details = {"arch_list": archs, "devices": results, "hsa_override_gfx_version": override_env}
    if not archs:
        return failed("torch.cuda.get_arch_list() is empty: cannot tell which GPUs this build supports", **details)
    missing = [r for r in results if r["match"] == "none"]
    if missing:
        return failed("no kernels for %s in this build (built for %s)" % (", ".join(
            "%s%s (device %s)" % (r["device"], " running as %s" % r["runs_as"] if r.get("runs_as") else "", r["index"])
            for r in missing), " ".join(archs)), **details)
    if problems:
        return failed("; ".join(problems), **details)
    return passed(", ".join(r["description"] for r in results), **details)


def arch_list(ctx: ProbeContext) -> Outcome:
    """Does the build carry code for every device's sm/gfx? Runs before any kernel launch,
    so that a missing arch is reported as such and not as a launch failure."""
    ctx.require_accelerator()
    from .facts import describe_devices
    from .kernel_driver import kfd_gpus

    torch = ctx.torch
    rocm = ctx.accelerator == "rocm"
    outcome = check_arch(list(torch.cuda.get_arch_list()), describe_devices(torch), rocm,
                         kfd_gpus() if rocm else [], os.environ.get("HSA_OVERRIDE_GFX_VERSION"))
    if outcome.status == FAIL and any(d["match"] == "none" for d in outcome.details.get("devices", [])):
        ctx.arch_problem = "not run: %s (programming_interface.arch_list)" % outcome.message
    return outcome


def kernel_launch(ctx: ProbeContext) -> Outcome:
    """An elementwise kernel and a small GEMM on every visible device, against the CPU."""
    ctx.require_accelerator()
    torch = ctx.torch
    count = torch.cuda.device_count()
    expected = torch.arange(1 << 20, dtype=torch.float32) * 2 + 1
    gen = torch.Generator().manual_seed(7)
    a, b = torch.randn(128, 96, generator=gen), torch.randn(96, 64, generator=gen)
    reference = a.double() @ b.double()
    from .math_libraries import fp32_matmul_mode
    from .numerics import compare

    per_device, bad = [], []
    for index in range(count):
        device = torch.device("cuda", index)
        x = torch.arange(1 << 20, dtype=torch.float32, device=device)
        y = x * 2 + 1
        with fp32_matmul_mode(torch, tf32=False):
            product = a.to(device) @ b.to(device)
        torch.cuda.synchronize(index)
        entry = {"index": index, "elementwise_ok": bool(torch.equal(y.cpu(), expected)),
                 "gemm": compare(product, reference, "float32")}
        per_device.append(entry)
        if not (entry["elementwise_ok"] and entry["gemm"]["ok"]):
            bad.append(index)
    if bad:
        return failed("wrong results on device(s) %s" % ", ".join(str(i) for i in bad), devices=per_device)
    return passed("elementwise kernel (1 Mi elements) and a 128x96x64 GEMM match the CPU on %d device(s)" % count,
                  devices=per_device)


def host_device_copies(ctx: ProbeContext) -> Outcome:
    ctx.require_accelerator()
    torch = ctx.torch
    size = 64 << 20
    host = torch.randint(0, 256, (size,), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    checks = {}
    on_device = host.to(ctx.device)
    checks["pageable_round_trip"] = torch.equal(on_device.cpu(), host)
    pinned = host.pin_memory()
    staged = pinned.to(ctx.device, non_blocking=True)
    back = torch.empty(size, dtype=torch.uint8).pin_memory()
    back.copy_(staged, non_blocking=True)
    ctx.synchronize()
    checks["pinned_async_round_trip"] = torch.equal(back, host)
    checks["device_to_device"] = torch.equal(on_device.clone().cpu(), host)
    if not all(checks.values()):
        return failed("copies corrupted data: %s" % ", ".join(k for k, v in checks.items() if not v), checks=checks)
    return passed("64 MiB pageable, pinned (async) and device-to-device copies intact", checks=checks)


def streams_events(ctx: ProbeContext) -> Outcome:
    ctx.require_accelerator()
    torch = ctx.torch
    x = torch.randn(1024, 1024, device=ctx.device, generator=torch.Generator(device=ctx.device).manual_seed(5))
    expected = (x @ x).sum()
    side = torch.cuda.Stream()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        start.record(side)
        y = x @ x
        end.record(side)
    torch.cuda.current_stream().wait_event(end)
    total = y.sum()
    torch.cuda.synchronize()
    elapsed_ms = start.elapsed_time(end)
    details = {"elapsed_ms": elapsed_ms, "event_query": end.query(), "stream_query": side.query()}
    if not (details["event_query"] and details["stream_query"]):
        return failed("event or stream not complete after synchronize", **details)
    if not elapsed_ms >= 0:
        return failed("event elapsed_time is %r" % elapsed_ms, **details)
    if not torch.allclose(total, expected, rtol=1e-4, atol=1e-3):
        return failed("work on a side stream gave a different result", **details)
    return passed("side-stream matmul ordered by events (%.3f ms)" % elapsed_ms, **details)


def async_error(ctx: ProbeContext) -> Outcome:
    """An out-of-bounds index trips a device-side assert; torch must raise it."""
    ctx.require_accelerator()
    torch = ctx.torch
    if ctx.accelerator == "rocm":
        return skipped("ROCm builds do not report kernel asserts as Python errors (a failed assert aborts)")
    values = torch.zeros(8, device=ctx.device)
    index = torch.tensor([1 << 20], device=ctx.device)
    try:
        gathered = values[index]
        torch.cuda.synchronize()
    except RuntimeError as err:
        text = str(err).strip()
        first = text.splitlines()[0] if text else type(err).__name__
        if "device-side assert" in text or "CUDA error" in text:
            return passed("device-side assert surfaced as %s: %s" % (type(err).__name__, first), error=text[:1000])
        raise ProbeFailed("unexpected error instead of a device-side assert: %s" % first, error=text[:1000])
    return failed("an out-of-bounds index kernel completed without any error", value=str(gathered.cpu()))


PROBES = [
    Probe("programming_interface.runtime", runtime, group="programming_interface", needs=NEEDS_TORCH, quick=True),
    Probe("programming_interface.devices", devices, group="programming_interface", needs=NEEDS_ACCELERATOR,
          quick=True),
    Probe("programming_interface.arch_list", arch_list, group="programming_interface", needs=NEEDS_ACCELERATOR,
          quick=True),
    Probe("programming_interface.kernel_launch", kernel_launch, group="programming_interface",
          needs=NEEDS_ACCELERATOR, quick=True),
    Probe("programming_interface.host_device_copies", host_device_copies, group="programming_interface",
          needs=NEEDS_ACCELERATOR),
    Probe("programming_interface.streams_events", streams_events, group="programming_interface",
          needs=NEEDS_ACCELERATOR),
    Probe("programming_interface.async_error", async_error, group="programming_interface.async_error",
          needs=NEEDS_ACCELERATOR),
]
