"""Layer 3, programming_interface: the CUDA/HIP runtime as torch sees it: versions,
devices, a kernel launch, host<->device copies, streams and events, and whether an
asynchronous device error surfaces as a Python error."""

from typing import Any, Dict

from .context import ProbeContext
from .model import NEEDS_ACCELERATOR, NEEDS_TORCH, Outcome, Probe, ProbeFailed, failed, passed, skipped

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


def kernel_launch(ctx: ProbeContext) -> Outcome:
    ctx.require_accelerator()
    torch = ctx.torch
    x = torch.arange(1 << 20, dtype=torch.float32, device=ctx.device)
    y = x * 2 + 1
    ctx.synchronize()
    expected = torch.arange(1 << 20, dtype=torch.float32) * 2 + 1
    if not torch.equal(y.cpu(), expected):
        return failed("elementwise kernel produced wrong values")
    return passed("elementwise kernel on %d elements matches the CPU" % x.numel())


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
    Probe("programming_interface.kernel_launch", kernel_launch, group="programming_interface",
          needs=NEEDS_ACCELERATOR, quick=True),
    Probe("programming_interface.host_device_copies", host_device_copies, group="programming_interface",
          needs=NEEDS_ACCELERATOR),
    Probe("programming_interface.streams_events", streams_events, group="programming_interface",
          needs=NEEDS_ACCELERATOR),
    Probe("programming_interface.async_error", async_error, group="programming_interface.async_error",
          needs=NEEDS_ACCELERATOR),
]
