"""Layer 4, math_libraries: BLAS (cuBLAS/hipBLAS(Lt)/MKL), cuDNN/MIOpen convolutions,
solvers, FFT, sparse, RNG and collectives (NCCL/RCCL, gloo on CPU), each checked
against a float64 CPU reference with dtype-aware tolerances (``probes.numerics``).
Runs on the CPU too when there is no accelerator."""

import contextlib
import datetime
import math
import os
import queue
import tempfile
import time
from typing import Any, Dict, Iterator, List

from .context import ProbeContext
from .model import NEEDS_TORCH, Outcome, Probe, failed, passed, skipped
from .numerics import compare

DTYPE_KINDS = {"fp32": "float32", "tf32": "tf32", "fp16": "float16", "bf16": "bfloat16"}


def _generator(torch: Any, seed: int) -> Any:
    return torch.Generator().manual_seed(seed)


@contextlib.contextmanager
def fp32_matmul_mode(torch: Any, tf32: bool) -> Iterator[None]:
    """Let (or forbid) cuBLAS use TF32 for float32 matmuls, restoring the setting after.

    torch >= 2.9 has ``fp32_precision``; older releases only ``allow_tf32``.
    """
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        saved = matmul.fp32_precision
        matmul.fp32_precision = "tf32" if tf32 else "ieee"
        try:
            yield
        finally:
            matmul.fp32_precision = saved
    else:
        saved = matmul.allow_tf32
        matmul.allow_tf32 = tf32
        try:
            yield
        finally:
            matmul.allow_tf32 = saved


def check_outcome(what: str, checks: Dict[str, Dict[str, Any]], **details: Any) -> Outcome:
    bad = [name for name, check in checks.items() if not check["ok"]]
    worst = max((c["rel_error"] / c["tolerance"] for c in checks.values() if c["tolerance"] > 0), default=0.0)
    details["checks"] = checks
    if bad:
        return failed("%s: %s outside tolerance" % (what, ", ".join(bad)), **details)
    return passed("%s within tolerance (worst %.2g of the bound)" % (what, worst), **details)


def _matmul(ctx: ProbeContext, dtype_name: str) -> Outcome:
    torch = ctx.torch
    kind = DTYPE_KINDS[dtype_name]
    if dtype_name == "tf32":
        if not ctx.on_gpu:
            return skipped("TF32 is a GPU tensor-core mode; no accelerator")
        if ctx.accelerator == "cuda" and torch.cuda.get_device_capability(ctx.device_index)[0] < 8:
            return skipped("TF32 needs compute capability 8.0 or newer")
    dtype = {"float32": torch.float32, "tf32": torch.float32, "float16": torch.float16,
             "bfloat16": torch.bfloat16}[kind]
    gen = _generator(torch, 11)
    a = torch.randn(256, 512, generator=gen).to(dtype)
    b = torch.randn(512, 192, generator=gen).to(dtype)
    expected = a.double() @ b.double()
    if ctx.on_gpu:
        with fp32_matmul_mode(torch, tf32=dtype_name == "tf32"):
            out = a.to(ctx.device) @ b.to(ctx.device)
            ctx.synchronize()
    else:
        try:
            out = a @ b
        except RuntimeError as err:
            if "not implemented for" not in str(err):
                raise
            # Older CPU builds have no half-precision GEMM: a gap of the release, not a defect.
            return skipped("%s matmul is not implemented on the CPU in torch %s" % (dtype_name, torch.__version__),
                           error=str(err)[:300])
    details = {"device": str(ctx.device), "shape": [256, 512, 192], "dtype": str(dtype)}
    if ctx.accelerator == "rocm" and dtype_name == "tf32":
        details["note"] = "ROCm may compute this in full float32; only the result is checked"
    return check_outcome("%s matmul" % dtype_name, {"matmul": compare(out, expected, kind)}, **details)


def matmul_fp32(ctx: ProbeContext) -> Outcome:
    return _matmul(ctx, "fp32")


def matmul_tf32(ctx: ProbeContext) -> Outcome:
    return _matmul(ctx, "tf32")


def matmul_fp16(ctx: ProbeContext) -> Outcome:
    return _matmul(ctx, "fp16")


def matmul_bf16(ctx: ProbeContext) -> Outcome:
    if ctx.accelerator == "cuda" and not ctx.torch.cuda.is_bf16_supported():
        return skipped("the device does not support bfloat16")
    return _matmul(ctx, "bf16")


def conv2d(ctx: ProbeContext) -> Outcome:
    """Forward and backward of a 3x3 convolution (cuDNN / MIOpen / oneDNN)."""
    torch = ctx.torch
    import torch.nn.functional as F

    gen = _generator(torch, 21)
    x0 = torch.randn(2, 3, 16, 16, generator=gen)
    w0 = torch.randn(8, 3, 3, 3, generator=gen)
    b0 = torch.randn(8, generator=gen)
    g0 = torch.randn(2, 8, 16, 16, generator=gen)
    dtypes = [("float32", torch.float32)]
    if ctx.on_gpu:
        dtypes.append(("float16", torch.float16))
    checks = {}
    for name, dtype in dtypes:
        x, w, b, g = (t.to(dtype) for t in (x0, w0, b0, g0))
        ref_in = [t.double().requires_grad_() for t in (x, w, b)]
        F.conv2d(ref_in[0], ref_in[1], ref_in[2], padding=1).backward(g.double())
        ref_out = F.conv2d(*(t.detach() for t in ref_in), padding=1)
        dev_in = [t.to(ctx.device).requires_grad_() for t in (x, w, b)]
        out = F.conv2d(dev_in[0], dev_in[1], dev_in[2], padding=1)
        out.backward(g.to(ctx.device))
        ctx.synchronize()
        # cuDNN may use TF32 for float32 convolutions by default (cudnn.allow_tf32 /
        # cudnn.conv.fp32_precision default to TF32). MIOpen keeps float32 but may pick
        # Winograd or FFT algorithms, whose rounding is several times a direct convolution's.
        kind = "tf32" if (name == "float32" and ctx.accelerator == "cuda") else name
        factor = 10.0 if (name == "float32" and ctx.accelerator == "rocm") else 1.0
        checks["%s_forward" % name] = compare(out, ref_out, kind, factor=factor)
        for label, dev_t, ref_t in zip(("input_grad", "weight_grad", "bias_grad"), dev_in, ref_in):
            checks["%s_%s" % (name, label)] = compare(dev_t.grad, ref_t.grad, kind, factor=2.0 * factor)
    backend = {}  # type: Dict[str, Any]
    if ctx.on_gpu:
        library = "miopen" if ctx.accelerator == "rocm" else "cudnn"
        backend[library] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        backend["enabled"] = bool(torch.backends.cudnn.enabled)
        if backend[library] is None:
            return failed("%s is not available to torch" % library, **backend)
    else:
        backend["mkldnn"] = bool(torch.backends.mkldnn.is_available())
    return check_outcome("conv2d forward+backward", checks, device=str(ctx.device), **backend)


def _spd_matrix(torch: Any, n: int, seed: int) -> Any:
    b = torch.randn(n, n, generator=_generator(torch, seed), dtype=torch.float64)
    return b @ b.T + n * torch.eye(n, dtype=torch.float64)


def cholesky(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    a = _spd_matrix(torch, 96, 31).float()
    low = torch.linalg.cholesky(a.to(ctx.device))
    ctx.synchronize()
    low64 = low.double().cpu()
    checks = {
        "reconstruction": compare(low64 @ low64.T, a.double(), "float32", factor=10.0),
        "reference": compare(low, torch.linalg.cholesky(a.double()), "float32", factor=10.0),
    }
    upper = float(torch.triu(low64, diagonal=1).abs().max())
    checks["lower_triangular"] = {"rel_error": upper, "tolerance": 0.0, "ok": upper == 0.0}
    return check_outcome("cholesky", checks, device=str(ctx.device))


def svd(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    a = torch.randn(80, 48, generator=_generator(torch, 32))
    u, s, vh = torch.linalg.svd(a.to(ctx.device), full_matrices=False)
    ctx.synchronize()
    u, s, vh = u.double().cpu(), s.double().cpu(), vh.double().cpu()
    eye = torch.eye(48, dtype=torch.float64)
    checks = {
        "reconstruction": compare(u @ torch.diag(s) @ vh, a.double(), "float32", factor=10.0),
        "singular_values": compare(s, torch.linalg.svdvals(a.double()), "float32", factor=10.0),
        "u_orthonormal": compare(u.T @ u, eye, "float32", factor=10.0),
        "v_orthonormal": compare(vh @ vh.T, eye, "float32", factor=10.0),
    }
    return check_outcome("svd", checks, device=str(ctx.device))


def solve(ctx: ProbeContext) -> Outcome:
    torch = ctx.torch
    gen = _generator(torch, 33)
    a = (torch.randn(64, 64, generator=gen) + 64 * torch.eye(64))  # well conditioned
    b = torch.randn(64, 8, generator=gen)
    x = torch.linalg.solve(a.to(ctx.device), b.to(ctx.device))
    ctx.synchronize()
    checks = {
        "solution": compare(x, torch.linalg.solve(a.double(), b.double()), "float32", factor=10.0),
        "residual": compare(a.double() @ x.double().cpu(), b.double(), "float32", factor=10.0),
    }
    return check_outcome("solve", checks, device=str(ctx.device))


def fft(ctx: ProbeContext) -> Outcome:
    """cuFFT / rocFFT / pocketfft against an explicit O(n^2) DFT."""
    torch = ctx.torch
    n = 96  # not a power of two: exercises the mixed-radix paths
    gen = _generator(torch, 41)
    signal = torch.complex(torch.randn(4, n, generator=gen), torch.randn(4, n, generator=gen))
    k = torch.arange(n, dtype=torch.float64)
    dft = torch.exp(-2j * math.pi * torch.outer(k, k) / n)  # complex128
    expected = signal.to(torch.complex128) @ dft.T
    on_dev = signal.to(ctx.device)
    spectrum = torch.fft.fft(on_dev)
    real = signal.real.contiguous()
    rspectrum = torch.fft.rfft(real.to(ctx.device))
    back = torch.fft.ifft(spectrum)
    ctx.synchronize()
    checks = {
        "fft": compare(spectrum, expected, "float32", factor=10.0),
        "rfft": compare(rspectrum, (real.double().to(torch.complex128) @ dft.T)[:, : n // 2 + 1], "float32",
                        factor=10.0),
        "ifft_round_trip": compare(back, signal, "float32", factor=10.0),
    }
    return check_outcome("fft", checks, device=str(ctx.device))


def sparse_matmul(ctx: ProbeContext) -> Outcome:
    """Sparse (COO and CSR) times dense: cuSPARSE / hipSPARSE / MKL."""
    torch = ctx.torch
    gen = _generator(torch, 51)
    dense = torch.randn(128, 96, generator=gen)
    dense = dense * (torch.rand(128, 96, generator=gen) < 0.1)
    other = torch.randn(96, 32, generator=gen)
    expected = dense.double() @ other.double()
    sparse = dense.to_sparse().to(ctx.device)
    other_dev = other.to(ctx.device)
    checks = {"coo": compare(torch.sparse.mm(sparse, other_dev), expected, "float32", factor=10.0)}
    if hasattr(dense, "to_sparse_csr"):
        csr = dense.to_sparse_csr().to(ctx.device)
        checks["csr"] = compare(csr @ other_dev, expected, "float32", factor=10.0)
    ctx.synchronize()
    return check_outcome("sparse matmul", checks, device=str(ctx.device), nnz=int((dense != 0).sum()))


def rng(ctx: ProbeContext) -> Outcome:
    """Seeded generators are reproducible and their output looks like the distribution."""
    torch = ctx.torch
    n = 1 << 20 if ctx.on_gpu else 1 << 17
    gen = torch.Generator(device=ctx.device)
    gen.manual_seed(1234)
    first = torch.randn(n, generator=gen, device=ctx.device)
    gen.manual_seed(1234)
    again = torch.randn(n, generator=gen, device=ctx.device)
    uniform = torch.rand(n, generator=gen, device=ctx.device)
    ctx.synchronize()
    first64 = first.double().cpu()
    mean, std = float(first64.mean()), float(first64.std())
    low, high = float(uniform.min()), float(uniform.max())
    details = {"n": n, "normal_mean": mean, "normal_std": std, "uniform_min": low, "uniform_max": high,
               "device": str(ctx.device)}
    # Bounds at 6 standard errors: a seeded healthy generator is nowhere near them.
    problems = []
    if not torch.equal(first, again):
        problems.append("same seed gave different numbers")
    if not abs(mean) < 6 / math.sqrt(n):
        problems.append("normal mean %.4g" % mean)
    if not abs(std - 1) < 6 / math.sqrt(2 * n):
        problems.append("normal std %.4g" % std)
    if not (0.0 <= low and high < 1.0):
        problems.append("uniform outside [0, 1)")
    if not abs(float(uniform.double().mean()) - 0.5) < 6 * math.sqrt(1 / 12 / n):
        problems.append("uniform mean %.4g" % float(uniform.double().mean()))
    if problems:
        return failed("RNG: " + "; ".join(problems), **details)
    return passed("seeded normal/uniform reproducible and well distributed (n=%d)" % n, **details)


def _collective_rank(rank: int, world_size: int, init_file: str, backend: str, on_gpu: bool, results: Any) -> None:
    """One rank of the collectives probe (runs in a spawned process)."""
    try:
        import torch
        import torch.distributed as dist

        device = torch.device("cuda", rank) if on_gpu else torch.device("cpu")
        if on_gpu:
            torch.cuda.set_device(device)
        dist.init_process_group(backend, init_method="file://" + init_file, rank=rank, world_size=world_size,
                                timeout=datetime.timedelta(seconds=60))
        tensor = torch.full((1024,), float(rank + 1), device=device)
        dist.all_reduce(tensor)
        if on_gpu:
            torch.cuda.synchronize()
            # NCCL's barrier otherwise guesses the device (and warns about it).
            dist.barrier(device_ids=[rank])
        else:
            dist.barrier()
        results.put((rank, float(tensor[0]), float(tensor[-1]), None))
        dist.destroy_process_group()
    except Exception as err:  # reported to the parent instead of a bare traceback
        results.put((rank, None, None, "%s: %s" % (type(err).__name__, str(err)[:500])))


def collectives(ctx: ProbeContext) -> Outcome:
    """all_reduce across all visible GPUs (NCCL/RCCL), or two CPU ranks over gloo."""
    torch = ctx.torch
    import multiprocessing

    dist = torch.distributed
    if not dist.is_available():
        return skipped("torch.distributed is not available in this build")
    if ctx.on_gpu:
        backend, world_size = "nccl", torch.cuda.device_count()
        if not dist.is_nccl_available():
            return failed("the NCCL/RCCL backend is not available in this GPU build")
    else:
        backend, world_size = "gloo", 2
        if not dist.is_gloo_available():
            return skipped("the gloo backend is not available in this build")
    spawn = multiprocessing.get_context("spawn")  # CUDA cannot be used in forked children
    results = spawn.Queue()
    with tempfile.TemporaryDirectory(prefix="gpumatrix-dist-") as folder:
        init_file = os.path.join(folder, "store")
        ranks = [spawn.Process(target=_collective_rank, args=(r, world_size, init_file, backend, ctx.on_gpu, results),
                               daemon=True) for r in range(world_size)]
        for process in ranks:
            process.start()
        reports = []  # type: List[Any]
        # One deadline for every rank, then one short grace for all of them together, so
        # that hung ranks end as a "fail" with their reports well inside the group's time limit.
        deadline = 90.0
        ends = time.monotonic() + deadline
        try:
            for _ in ranks:
                reports.append(results.get(timeout=max(0.1, ends - time.monotonic())))
        except queue.Empty:
            pass
        grace_ends = time.monotonic() + 10.0
        for process in ranks:
            process.join(timeout=max(0.1, grace_ends - time.monotonic()))
        for process in ranks:
            if process.is_alive():
                process.kill()
                process.join(timeout=5)
    expected = world_size * (world_size + 1) / 2
    details = {"backend": backend, "world_size": world_size, "expected": expected,
               "ranks": [{"rank": r, "first": a, "last": b, "error": e} for r, a, b, e in sorted(reports)],
               "exit_codes": [p.exitcode for p in ranks]}
    if len(reports) < world_size:
        return failed("only %d of %d ranks reported within %ds" % (len(reports), world_size, deadline), **details)
    errors = [e for _, _, _, e in reports if e]
    if errors:
        return failed("%s all_reduce failed: %s" % (backend, errors[0]), **details)
    if any(a != expected or b != expected for _, a, b, _ in reports):
        return failed("%s all_reduce gave wrong sums" % backend, **details)
    return passed("%s all_reduce over %d rank(s) correct" % (backend, world_size), **details)


PROBES = [
    Probe("math_libraries.matmul_fp32", matmul_fp32, group="math_libraries", needs=NEEDS_TORCH, quick=True),
    Probe("math_libraries.matmul_tf32", matmul_tf32, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.matmul_fp16", matmul_fp16, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.matmul_bf16", matmul_bf16, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.conv2d", conv2d, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.cholesky", cholesky, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.svd", svd, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.solve", solve, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.fft", fft, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.sparse_matmul", sparse_matmul, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.rng", rng, group="math_libraries", needs=NEEDS_TORCH),
    Probe("math_libraries.collectives", collectives, group="math_libraries.collectives", needs=NEEDS_TORCH,
          timeout_s=150.0),
]
