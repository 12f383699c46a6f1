"""Child process entry point: ``python -m probes._child --mode M (--facts | PROBE_ID...)``.

Runs the given probes in order in this one process and reports each result as soon as
it is known, as one line ``@@GPUMATRIX@@ {json}`` on stdout; other output (torch's
warnings, stray prints) is ignored by the parent. After a probe ends in an exception
while a GPU context is live, the child asks to be restarted (the context may be
poisoned) instead of running the rest. It leaves with ``os._exit`` so that teardown of
a broken GPU stack cannot turn a finished run into a crash.
"""

import argparse
import faulthandler
import json
import os
import sys
import time
import traceback
import warnings
from typing import Any, Dict, List, Optional

from .context import ProbeContext, expected_vendor
from .model import ERROR, FAIL, SKIP, STATUSES, Outcome, ProbeFailed, ProbeSkipped, jsonable, tail

MARKER = "@@GPUMATRIX@@"


def emit(message: Dict[str, Any]) -> None:
    """Write one protocol line; the leading newline ends any partial line a library left."""
    line = json.dumps(jsonable(message), allow_nan=False, sort_keys=True)
    sys.stdout.write("\n%s %s\n" % (MARKER, line))
    sys.stdout.flush()


def run_one(probe: Any, ctx: ProbeContext) -> Dict[str, Any]:
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = probe.func(ctx)
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
        result = run_one(probe, ctx)
        emit({"type": "result", "result": result})
        if result["status"] == ERROR and index + 1 < len(probe_ids) and ctx.gpu_initialized():
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
    if args.facts:
        run_facts()
    else:
        run_probes(args.probe_ids, args.mode)
    emit({"type": "done"})
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
