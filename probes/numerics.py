"""Comparing device results with CPU references, with dtype-aware tolerances.

Errors are norm-wise relative: ||actual - expected||_F / ||expected||_F, computed in
float64 (complex128) on the CPU. References are computed from the same (already
rounded) inputs in float64, so the tolerance only has to cover the arithmetic of the
dtype under test, not the rounding of its inputs.
"""

import math
from typing import Any, Dict

# Unit roundoff: float32 6e-8, tf32 and float16 4.9e-4, bfloat16 3.9e-3. The bounds
# leave room for accumulation over a few hundred terms and for output rounding. TF32 is
# the exception to "same rounded inputs": the GEMM rounds its float32 inputs to 10 bits of
# mantissa inside, so that rounding counts too. Simulated on the CPU for the 256x512x192
# matmul probe (rounding modelled exactly, accumulation in float64): TF32 input rounding
# 2.9e-4; fp16 output rounding 2.1e-4, with a 4-way split-K reduced in fp16 (cuBLAS's
# allow_fp16_reduced_precision_reduction) 3.9e-4; bf16 output rounding 1.6e-3, split-K in
# bf16 3.1e-3. The bounds are about 10x those, and a wrong kernel is off by O(1).
TOLERANCES = {
    "float64": 1e-10,
    "float32": 1e-5,
    "tf32": 5e-3,
    "float16": 5e-3,
    "bfloat16": 3e-2,
}


def tolerance_for(kind: str, factor: float = 1.0) -> float:
    """The relative-error bound for ``kind`` ("float32", "tf32", "float16", ...)."""
    if kind not in TOLERANCES:
        raise KeyError("no tolerance for %r (known: %s)" % (kind, ", ".join(sorted(TOLERANCES))))
    return TOLERANCES[kind] * factor


def relative_error(actual: Any, expected: Any) -> float:
    """Norm-wise relative error of two tensors (any device, any dtype)."""
    import torch

    wide = torch.complex128 if (actual.is_complex() or expected.is_complex()) else torch.float64
    a = actual.detach().to(device="cpu").to(wide)
    e = expected.detach().to(device="cpu").to(wide)
    if a.shape != e.shape:
        raise ValueError("shape mismatch: %s vs %s" % (tuple(a.shape), tuple(e.shape)))
    diff = float(torch.linalg.vector_norm(a - e))
    scale = float(torch.linalg.vector_norm(e))
    if scale == 0.0:
        return diff
    return diff / scale


def within(error: float, tolerance: float) -> bool:
    """True only for a finite error not above the tolerance (NaN never passes)."""
    return math.isfinite(error) and error <= tolerance


def compare(actual: Any, expected: Any, kind: str, factor: float = 1.0) -> Dict[str, Any]:
    """``{"rel_error", "tolerance", "ok"}`` for one comparison."""
    error = relative_error(actual, expected)
    tolerance = tolerance_for(kind, factor)
    return {"rel_error": error, "tolerance": tolerance, "ok": within(error, tolerance)}
