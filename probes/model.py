"""The suite's vocabulary: layers, statuses, probe specs, outcomes and the verdict.

Nothing here touches the GPU or imports torch, so both the parent process and the
children can use it.
"""

import math
import re
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence

# Layer number -> name, lowest first: a failure low in the stack explains failures above it.
LAYERS = {
    1: "kernel_driver",
    2: "system_runtime",
    3: "programming_interface",
    4: "math_libraries",
    5: "framework",
    6: "performance",
}
LAYER_NUMBERS = {name: number for number, name in LAYERS.items()}

PASS = "pass"
FAIL = "fail"
SKIP = "skip"
ERROR = "error"  # the probe itself raised, exited or spoke garbage
TIMEOUT = "timeout"  # its child process had to be killed
CRASH = "crash"  # its child process died by a signal
STATUSES = (PASS, FAIL, SKIP, ERROR, TIMEOUT, CRASH)
FAILING_STATUSES = frozenset((FAIL, ERROR, TIMEOUT, CRASH))

# What a probe needs before it can run; the parent uses this to skip without a child.
NEEDS_NOTHING = "nothing"
NEEDS_TORCH = "torch"
NEEDS_ACCELERATOR = "accelerator"

_PROBE_ID = re.compile(r"^([a-z_]+)\.([a-z0-9_]+)$")


class Outcome(NamedTuple):
    """What a probe function returns."""

    status: str
    message: str
    details: Dict[str, Any]


def passed(message: str, **details: Any) -> Outcome:
    return Outcome(PASS, message, details)


def failed(message: str, **details: Any) -> Outcome:
    return Outcome(FAIL, message, details)


def skipped(message: str, **details: Any) -> Outcome:
    return Outcome(SKIP, message, details)


class ProbeSkipped(Exception):
    """Raised inside a probe (or a helper it calls) to end it with status "skip"."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


class ProbeFailed(Exception):
    """Raised inside a probe (or a helper it calls) to end it with status "fail"."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


class Probe(NamedTuple):
    """A registered probe.

    ``group`` names the child process it runs in: probes in one group share a process
    (and so a GPU context), in registry order. ``timeout_s`` is this probe's own time
    limit, counted from the moment the child announces that the probe starts.
    ``gpu_init``: the probe is the first to initialise a GPU runtime (cuInit, hsa_init,
    torch.cuda.init); when it times out, the driver is hung and the GPU probes after it
    are skipped instead of hanging one by one.
    """

    id: str
    func: Callable[[Any], Outcome]
    group: str
    needs: str = NEEDS_TORCH
    quick: bool = False
    perf: bool = False
    timeout_s: float = 120.0
    gpu_init: bool = False

    @property
    def layer_name(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def layer(self) -> int:
        return LAYER_NUMBERS[self.layer_name]


def validate_probe_id(probe_id: str) -> Optional[str]:
    """Return why ``probe_id`` is not a valid ``<layer_name>.<thing>`` id, or None."""
    match = _PROBE_ID.match(probe_id)
    if not match:
        return "probe id %r is not of the form <layer_name>.<thing> (lowercase, digits, _)" % probe_id
    if match.group(1) not in LAYER_NUMBERS:
        return "probe id %r names unknown layer %r (known: %s)" % (
            probe_id,
            match.group(1),
            ", ".join(LAYERS.values()),
        )
    return None


def probe_result(
    probe: Probe, status: str, duration_s: float, message: str, details: Optional[Mapping[str, Any]] = None
) -> Dict[str, Any]:
    """Build one entry of the document's ``probes`` list."""
    return {
        "id": probe.id,
        "layer": probe.layer,
        "layer_name": probe.layer_name,
        "status": status,
        "duration_s": round(max(duration_s, 0.0), 3),
        "message": message,
        "details": jsonable(dict(details or {})),
    }


def compute_verdict(results: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Summarise probe results: "fail" if any probe failed, errored, timed out or crashed."""
    failing = [r for r in results if r["status"] in FAILING_STATUSES]
    counts = {status: 0 for status in STATUSES}
    for result in results:
        counts[result["status"]] = counts.get(result["status"], 0) + 1
    tally = ", ".join("%d %s" % (counts[s], s) for s in STATUSES if counts[s])
    if not failing:
        return {
            "status": PASS,
            "lowest_failing_layer": None,
            "lowest_failing_layer_name": None,
            "failed": [],
            "summary": "pass: %s" % (tally or "no probes"),
        }
    lowest = min(int(r["layer"]) for r in failing)
    at_lowest = [r["id"] for r in failing if int(r["layer"]) == lowest]
    return {
        "status": FAIL,
        "lowest_failing_layer": lowest,
        "lowest_failing_layer_name": LAYERS[lowest],
        "failed": [r["id"] for r in failing],
        "summary": "fail at layer %d (%s): %s; %s"
        % (lowest, LAYERS[lowest], ", ".join(at_lowest), tally),
    }


def jsonable(value: Any) -> Any:
    """Turn ``value`` into something ``json.dumps(..., allow_nan=False)`` accepts.

    Non-finite floats become strings, tuples and sets become lists, unknown objects
    their ``str``, so a probe's details can never break the document.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=str)
    return str(value)


def tail(text: str, limit: int = 2000) -> str:
    """The last ``limit`` characters of ``text``, marked when cut."""
    if len(text) <= limit:
        return text
    return "...[%d chars cut]...%s" % (len(text) - limit, text[-limit:])


def probes_in_layer_order(probes: Sequence[Probe]) -> List[Probe]:
    """Stable sort by layer, keeping registry order inside a layer."""
    return sorted(probes, key=lambda p: p.layer)
