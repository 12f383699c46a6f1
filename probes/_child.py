"""Child process entry point: ``python -m probes._child --mode M [--facts] [-- PROBE_ID...]``.

Runs the given probes in order in this one process and reports each result as soon as
it is known, as one line ``@@GPUMATRIX@@ {json}`` on stdout, after announcing each probe
as it starts (so the parent can hold it to its own time limit); other output (torch's
warnings, stray prints) is ignored by the parent. After a probe ends in an exception
while a GPU context is live, or with a CUDA/HIP error of any status (such errors are
sticky: the context is poisoned), the child asks to be restarted instead of running the
rest, so the next probe is not blamed for its predecessor's error. It leaves with ``os._exit`` so that teardown of
a broken GPU stack cannot turn a finished run into a crash.
"""

import argparse
import faulthandler
import json
import os
import re
import sys
import time
import traceback
import warnings
from typing import Any, Dict, List, Optional

from .context import ProbeContext, expected_vendor
from .model import (
    ERROR, FAIL, LAYER_NUMBERS, NEEDS_NOTHING, SKIP, STATUSES, Outcome, ProbeFailed, ProbeSkipped, jsonable, tail,
)

MARKER = "@@GPUMATRIX@@"
ON_CPU_MESSAGE = "ran on CPU: no GPU reached the process"
ARCH_PROBE = "programming_interface.arch_list"
# Probes of these layers run on the CPU when torch has no GPU; in a GPU cell that is no pass.
GPU_WORK_LAYERS = (LAYER_NUMBERS["math_libraries"], LAYER_NUMBERS["framework"], LAYER_NUMBERS["performance"])
# A CUDA or HIP error surfaced in Python: the device context is sticky-poisoned after one
# ("CUDA error: an illegal memory access", "HIP error: ...", hipErrorX, cudaErrorX, and
# the cuBLAS/cuDNN/hipBLAS statuses that follow a poisoned context).
STICKY_DEVICE_ERROR = re.compile(
    r"(CUDA error|HIP error|hipError[A-Z]\w+|cudaError[A-Z]\w+|device-side assert triggered|"
    r"illegal memory access|CUBLAS_STATUS_EXECUTION_FAILED|CUDNN_STATUS_EXECUTION_FAILED|"
    r"HIPBLAS_STATUS_EXECUTION_FAILED|unspecified launch failure)")


def emit(message: Dict[str, Any]) -> None:
    """Write one protocol line; the leading newline ends any partial line a library left."""
    line = json.dumps(jsonable(message), allow_nan=False, sort_keys=True)
    sys.stdout.write("\n%s %s\n" % (MARKER, line))
    sys.stdout.flush()


def on_cpu_under_expect(probe: Any, ctx: ProbeContext) -> Optional[Outcome]:
    """Under ``GPUMATRIX_EXPECT``, a math, framework or performance probe would run on the
    CPU when torch has no GPU: that is a failure, not a pass (nor a skip)."""
    if not ctx.expect or probe.needs == NEEDS_NOTHING or probe.layer not in GPU_WORK_LAYERS or ctx.on_gpu:
        return None
    details = {"expect": ctx.expect}  # type: Dict[str, Any]
    if ctx.init_warnings:
        details["init_warnings"] = ctx.init_warnings
    return Outcome(FAIL, ON_CPU_MESSAGE, details)


def run_one(probe: Any, ctx: ProbeContext) -> Dict[str, Any]:
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = on_cpu_under_expect(probe, ctx) or probe.func(ctx)
            if not isinstance(outcome, Outcome) or outcome.status not in STATUSES:
                outcome = Outcome(ERROR, "probe returned %r instead of an Outcome" % (outcome,), {})
        except ProbeSkipped as err:
            outcome = Outcome(SKIP, str(err), err.details)
        except ProbeFailed as err:
            outcome = Outcome(FAIL, str(err), err.details)
        except SystemExit as err:
            outcome = Outcome(ERROR, "probe called sys.exit(%r)" % (err.code,), {})
        except Exception as err:
            outcome = Outcome(
                ERROR,
                "%s: %s" % (type(err).__name__, str(err).strip().splitlines()[0] if str(err).strip() else ""),
                {"traceback": tail(traceback.format_exc(), 4000)},
            )
    details = dict(outcome.details)
    seen = []  # type: List[str]
    for warning in caught:
        text = "%s: %s" % (warning.category.__name__, str(warning.message).strip())
        if text not in seen:
            seen.append(text)
    if seen:
        details.setdefault("warnings", seen[:5])
    return {
        "id": probe.id,
        "status": outcome.status,
        "duration_s": time.monotonic() - started,
        "message": outcome.message,
        "details": details,
    }


def sticky_device_error(result: Dict[str, Any]) -> Optional[str]:
    """The CUDA/HIP error text in a result (message, error or traceback), or None."""
    details = result.get("details") or {}
    for text in (result.get("message"), details.get("error"), details.get("traceback")):
        if isinstance(text, str):
            found = STICKY_DEVICE_ERROR.search(text)
            if found:
                return found.group(0)
    return None


def run_probes(probe_ids: List[str], mode: str) -> None:
    from .registry import load_probes

    by_id = {probe.id: probe for probe in load_probes()}
    ctx = ProbeContext(mode=mode, expect=expected_vendor())
    for index, probe_id in enumerate(probe_ids):
        probe = by_id.get(probe_id)
        if probe is None:
            emit({"type": "result", "result": {"id": probe_id, "status": ERROR, "duration_s": 0.0,
                                               "message": "unknown probe id in child", "details": {}}})
            continue
        emit({"type": "start", "id": probe_id})
        if ctx.arch_problem and probe.needs != NEEDS_NOTHING and probe.layer >= 3:
            result = {"id": probe_id, "status": SKIP, "duration_s": 0.0, "message": ctx.arch_problem,
                      "details": {"blocked_by": ARCH_PROBE}}
        else:
            result = run_one(probe, ctx)
        emit({"type": "result", "result": result})
        if index + 1 >= len(probe_ids):
            continue
        sticky = sticky_device_error(result)
        if sticky:
            emit({"type": "restart", "reason": "%s hit a sticky device error (%s)" % (probe_id, sticky)})
            return
        if result["status"] == ERROR and ctx.gpu_initialized():
            emit({"type": "restart", "reason": "%s raised with a live GPU context" % probe_id})
            return


def run_facts() -> None:
    from .facts import collect_torch_facts

    emit({"type": "facts", "facts": collect_torch_facts()})


def main(argv: Optional[List[str]] = None) -> None:
    faulthandler.enable()  # a segfault leaves a Python traceback in the stderr tail
    parser = argparse.ArgumentParser(prog="python -m %s._child" % (__package__ or "probes"))
    parser.add_argument("--mode", default="full")
    parser.add_argument("--facts", action="store_true")
    parser.add_argument("probe_ids", nargs="*")
    args = parser.parse_args(argv)
    if args.facts:  # first, so that the parent has them even if a probe below kills the child
        run_facts()
    if args.probe_ids:
        run_probes(args.probe_ids, args.mode)
        if "torch" in sys.modules:  # which GPU/math libraries these probes really loaded
            from .facts import loaded_libraries

            emit({"type": "libraries", "libraries": loaded_libraries()})
    emit({"type": "done"})
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
