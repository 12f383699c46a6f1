"""Layer 5, framework: what a PyTorch user touches: autocast, scaled dot-product
attention and its backends, torch.compile, a training step and a multi-worker DataLoader.
(Whether the build carries kernels for the GPU's arch is checked earlier, in layer 3.)"""

import importlib.util
import math
import os
import shutil
import warnings
from typing import Any, Dict, Optional

from .context import ProbeContext
from .model import NEEDS_TORCH, Outcome, Probe, failed, passed, skipped
from .numerics import compare


# --------------------------------------------------------------------------- autocast


def autocast(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    if ctx.on_gpu:
        device_type = "cuda"
        dtypes = [("float16", torch.float16)]
        if torch.cuda.is_bf16_supported():
            dtypes.append(("bfloat16", torch.bfloat16))
    else:
        device_type, dtypes = "cpu", [("bfloat16", torch.bfloat16)]
    gen = torch.Generator().manual_seed(61)
    x = torch.randn(16, 64, generator=gen)
    layer = torch.nn.Linear(64, 32)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(32, 64, generator=gen) / 8)
        layer.bias.copy_(torch.randn(32, generator=gen))
    layer = layer.to(ctx.device)
    checks, dtypes_seen = {}, {}
    for name, dtype in dtypes:
        with torch.no_grad(), torch.autocast(device_type=device_type, dtype=dtype):
            out = layer(x.to(ctx.device))
        ctx.synchronize()
        dtypes_seen[name] = str(out.dtype)
        rounded = [t.detach().cpu().to(dtype).double() for t in (x, layer.weight, layer.bias)]
        expected = torch.nn.functional.linear(*rounded)
        checks[name] = compare(out, expected, name)
        if out.dtype != dtype:
            checks[name]["ok"] = False
    bad = [n for n, c in checks.items() if not c["ok"]]
    details = {"device_type": device_type, "output_dtypes": dtypes_seen, "checks": checks}
    if bad:
        return failed("autocast linear wrong for %s" % ", ".join(bad), **details)
    return passed("autocast(%s) runs linear in %s" % (device_type, ", ".join(dtypes_seen.values())), **details)


# --------------------------------------------------------------------------- attention


def _attention_inputs(ctx: ProbeContext) -> Any:
    torch = ctx.torch
    gen = torch.Generator().manual_seed(71)
    dtype = torch.float16 if ctx.on_gpu else torch.float32
    q, k, v = (torch.randn(2, 4, 64, 32, generator=gen).to(dtype) for _ in range(3))
    return q, k, v, ("float16" if ctx.on_gpu else "float32")


def reference_attention(torch: Any, q: Any, k: Any, v: Any, causal: bool) -> Any:
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = scores.shape[-1]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def sdpa(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    attention = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if attention is None:
        return skipped("scaled_dot_product_attention needs torch >= 2.0")
    q, k, v, kind = _attention_inputs(ctx)
    dev = [t.to(ctx.device) for t in (q, k, v)]
    checks = {}
    for causal in (False, True):
        out = attention(*dev, is_causal=causal)
        ctx.synchronize()
        checks["causal" if causal else "full"] = compare(out, reference_attention(torch, q, k, v, causal), kind,
                                                         factor=2.0)
    bad = [n for n, c in checks.items() if not c["ok"]]
    if bad:
        return failed("scaled_dot_product_attention wrong (%s)" % ", ".join(bad), checks=checks)
    return passed("scaled_dot_product_attention (default dispatch) matches the reference", checks=checks)


def _sdpa_backend_contexts(torch: Any) -> Dict[str, Any]:
    """Backend name -> a callable returning a context manager that forces that backend.

    torch >= 2.3: ``torch.nn.attention.sdpa_kernel([SDPBackend.X])`` (CUDNN_ATTENTION from
    2.4; the submodule is imported explicitly, as older releases do not import it with
    torch.nn). torch 2.0-2.2: ``torch.backends.cuda.sdp_kernel(enable_*=...)``, deprecated
    since 2.3, which has no cuDNN switch.
    """
    try:
        attention_module = importlib.import_module("torch.nn.attention")
    except ImportError:
        attention_module = None
    sdpa_kernel = getattr(attention_module, "sdpa_kernel", None)
    backend_enum = getattr(attention_module, "SDPBackend", None)
    if sdpa_kernel is not None and backend_enum is not None:
        names = {"flash": "FLASH_ATTENTION", "mem_efficient": "EFFICIENT_ATTENTION", "math": "MATH",
                 "cudnn": "CUDNN_ATTENTION"}
        return {name: (lambda member=getattr(backend_enum, attr): sdpa_kernel([member]))
                for name, attr in names.items() if hasattr(backend_enum, attr)}
    legacy = getattr(torch.backends.cuda, "sdp_kernel", None)
    if legacy is None:
        return {}
    flags = {"flash": (True, False, False), "mem_efficient": (False, False, True), "math": (False, True, False)}
    return {name: (lambda f=f: legacy(enable_flash=f[0], enable_math=f[1], enable_mem_efficient=f[2]))
            for name, f in flags.items()}


def sdpa_backends(ctx: ProbeContext) -> Outcome:
    """Which SDPA backends run here, and whether each one that runs is right."""
    torch = ctx.torch
    attention = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if attention is None:
        return skipped("scaled_dot_product_attention needs torch >= 2.0")
    contexts = _sdpa_backend_contexts(torch)
    if not contexts:
        return skipped("this torch has no way to select SDPA backends")
    q, k, v, kind = _attention_inputs(ctx)
    dev = [t.to(ctx.device) for t in (q, k, v)]
    expected = reference_attention(torch, q, k, v, False)
    backends = {}  # type: Dict[str, Dict[str, Any]]
    for name, make_context in contexts.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with make_context():
                    out = attention(*dev)
                ctx.synchronize()
                backends[name] = dict(compare(out, expected, kind, factor=2.0), usable=True)
            except RuntimeError as err:
                reasons = sorted(set(str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()))
                backends[name] = {"usable": False, "error": str(err).strip().splitlines()[0][:300],
                                  "reasons": reasons[:4]}
    usable = [n for n, b in backends.items() if b["usable"]]
    wrong = [n for n in usable if not backends[n]["ok"]]
    details = {"backends": backends, "usable": usable, "dtype": kind}
    if wrong:
        return failed("SDPA backend(s) %s give wrong results" % ", ".join(wrong), **details)
    if "math" in backends and not backends["math"]["usable"]:
        return failed("the math SDPA backend does not run", **details)
    return passed("usable SDPA backends: %s" % (", ".join(usable) or "none"), **details)


# --------------------------------------------------------------------------- compile


def cxx_compiler() -> Optional[str]:
    candidates = [os.environ.get("CXX", "")] + ["c++", "g++", "clang++"]
    for name in candidates:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def c_compiler() -> Optional[str]:
    """The C compiler Triton would use to build its launcher (``$CC``, then cc, gcc, clang)."""
    for name in [os.environ.get("CC", "")] + ["cc", "gcc", "clang"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


# Triton builds a small C launcher with the system C compiler the first time it runs a
# kernel (triton/runtime/build.py); runtime images usually have none.
_NO_C_COMPILER = ("Failed to find C compiler", "Please specify via CC", "C compiler")
_UNSUPPORTED_PYTHON = ("not supported on Python",)


def compile_failure(err: BaseException, on_gpu: bool, details: Dict[str, Any]) -> Outcome:
    """What a torch.compile exception means: a gap of the image or release (skip) or a failure."""
    text = str(err).strip()
    first = text.splitlines()[0][:300] if text else ""
    if any(marker in text for marker in _UNSUPPORTED_PYTHON):
        # e.g. torch 2.1 on Python 3.12: a gap of the release, not a defect of the image.
        return skipped("torch.compile is not supported here: %s" % first, error=text[-2000:], **details)
    if on_gpu and details.get("cc") is None and any(marker in text for marker in _NO_C_COMPILER):
        return skipped("no C compiler: Triton needs one (gcc, or $CC) to build its kernel launcher, and this "
                       "image has none", error=text[-2000:], **details)
    return failed("torch.compile failed: %s: %s" % (type(err).__name__, first), error=text[-2000:], **details)


def compile_probe(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    if not hasattr(torch, "compile"):
        return skipped("torch.compile needs torch >= 2.0")
    details = {"device": str(ctx.device)}  # type: Dict[str, Any]
    if ctx.on_gpu:
        if importlib.util.find_spec("triton") is None:
            return failed("triton is not installed: torch.compile cannot generate GPU kernels", **details)
        import triton

        details["triton"] = getattr(triton, "__version__", None)
        details["cc"] = c_compiler()
    else:
        details["cxx"] = cxx_compiler()
        if details["cxx"] is None:
            return skipped("no C++ compiler: torch.compile on CPU needs one (runtime images often lack it)",
                           **details)

    def fn(x: Any) -> Any:
        return torch.sin(x) * 2 + torch.cos(x).pow(2)

    x = torch.randn(4096, generator=torch.Generator().manual_seed(81)).to(ctx.device)
    try:
        compiled = torch.compile(fn, backend="inductor", dynamic=False)
        out = compiled(x)
        ctx.synchronize()
    except Exception as err:
        return compile_failure(err, ctx.on_gpu, details)
    check = compare(out, fn(x), "float32", factor=10.0)
    details["check"] = check
    if not check["ok"]:
        return failed("compiled function disagrees with eager", **details)
    backend = "Triton" if ctx.on_gpu else "C++"
    return passed("inductor (%s codegen) result matches eager" % backend, **details)


# --------------------------------------------------------------------------- training


def training_step(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    torch.manual_seed(91)
    gen = torch.Generator().manual_seed(92)
    x = torch.randn(256, 16, generator=gen)
    y = x @ torch.randn(16, 1, generator=gen) + 0.01 * torch.randn(256, 1, generator=gen)
    x, y = x.to(ctx.device), y.to(ctx.device)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(ctx.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    details = {"device": str(ctx.device), "first_loss": losses[0], "last_loss": losses[-1], "steps": len(losses)}
    if not all(math.isfinite(v) for v in losses):
        return failed("loss became non-finite", losses=losses, **details)
    if not losses[-1] < 0.5 * losses[0]:
        return failed("loss did not go down (%.4g -> %.4g)" % (losses[0], losses[-1]), **details)
    return passed("Adam on an MLP: loss %.4g -> %.4g in %d steps" % (losses[0], losses[-1], len(losses)), **details)


# --------------------------------------------------------------------------- data loading


def dataloader(ctx: ProbeContext) -> Outcome:
    """Two worker processes pass batches through shared memory (/dev/shm)."""
    torch = ctx.torch
    from torch.utils.data import DataLoader, TensorDataset

    from .facts import filesystem_size

    shm = filesystem_size("/dev/shm")
    data = torch.arange(256, dtype=torch.float32).reshape(64, 4)
    loader = DataLoader(TensorDataset(data), batch_size=8, num_workers=2, timeout=60,
                        pin_memory=ctx.on_gpu, persistent_workers=False)
    batches = [batch[0] for batch in loader]
    details = {"shm_bytes": shm, "workers": 2, "batches": len(batches), "pin_memory": ctx.on_gpu}
    if shm is not None and shm < 256 * 2**20:
        details["warning"] = "/dev/shm is %d MiB: real workloads need more (docker run --shm-size / --ipc=host)" % (
            shm // 2**20)
    if not torch.equal(torch.cat(batches), data):
        return failed("batches from worker processes are wrong or out of order", **details)
    shm_text = "%d MiB" % (shm // 2**20) if shm is not None else "absent"
    return passed("2 workers delivered %d batches; /dev/shm %s" % (len(batches), shm_text), **details)


PROBES = [
    Probe("framework.autocast", autocast, group="framework", needs=NEEDS_TORCH),
    Probe("framework.sdpa", sdpa, group="framework", needs=NEEDS_TORCH),
    Probe("framework.sdpa_backends", sdpa_backends, group="framework", needs=NEEDS_TORCH),
    Probe("framework.training_step", training_step, group="framework", needs=NEEDS_TORCH),
    Probe("framework.dataloader", dataloader, group="framework.dataloader", needs=NEEDS_TORCH),
    Probe("framework.compile", compile_probe, group="framework.compile", needs=NEEDS_TORCH, timeout_s=300.0),
]
