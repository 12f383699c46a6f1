"""``python -m probes``: collect facts, run the selected probes in child processes,
print the JSON document (``--json``) or a report. Exit 0 whenever a document was
produced, whatever the probes found; 2 for bad usage."""

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence

from . import SCHEMA_VERSION, SUITE_NAME, __version__
from .facts import collect_host_facts, torch_unavailable_facts
from ._child import ARCH_PROBE, GPU_WORK_LAYERS, ON_CPU_MESSAGE
from .isolation import Budget, run_facts_child, run_group
from .model import (
    FAIL,
    LAYERS,
    NEEDS_ACCELERATOR,
    NEEDS_NOTHING,
    SKIP,
    Probe,
    compute_verdict,
    jsonable,
    probe_result,
)
from .registry import RegistryError, groups_in_order, load_probes, select_probes, split_patterns

EXIT_OK = 0
EXIT_USAGE = 2
FACTS_TIMEOUT_S = 120.0
DEADLINE_S = 1500.0  # the whole suite; the runner's container limit is longer


class UsageError(Exception):
    """Bad flags or a selection that matches nothing."""


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % text)
    if not value > 0:
        raise argparse.ArgumentTypeError("the timeout must be positive, not %r" % text)
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m %s" % (__package__ or "probes"),
        description="Check this machine's GPU stack layer by layer (driver, runtime, "
        "programming interface, math libraries, framework, performance).",
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON document on stdout")
    parser.add_argument("--quick", action="store_true", help="facts and smoke probes only (about 10 s)")
    parser.add_argument("--no-perf", action="store_true", help="skip layer 6 (performance)")
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="time limit of each probe, from its start (default: per probe, 30 s without torch, 120 s or more with)",
    )
    parser.add_argument(
        "--deadline",
        type=positive_seconds,
        default=DEADLINE_S,
        metavar="SECONDS",
        help="time limit of the whole suite; probes not started by then are skipped (default: %(default)g)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PATTERN",
        help="run only probes whose id matches this glob (repeatable, or comma-separated)",
    )
    parser.add_argument("--list", action="store_true", help="list the selected probe ids and exit")
    parser.add_argument(
        "--progress",
        action="store_true",
        help="say on stderr which layer and probes run now (one '%s' line per group)" % PROGRESS_PREFIX.strip(),
    )
    return parser


CACHE_DIR_ENV = "GPUMATRIX_CACHE_DIR"
# Compile caches the stack keeps, and where under GPUMATRIX_CACHE_DIR each one goes.
CACHE_VARIABLES = (
    ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ("TRITON_CACHE_DIR", "triton"),
    ("TRITON_HOME", "triton-home"),
    ("MIOPEN_USER_DB_PATH", "miopen/db"),
    ("MIOPEN_CUSTOM_CACHE_DIR", "miopen/cache"),
    ("ROCFFT_RTC_CACHE_PATH", "rocfft/rocfft_kernel_cache.db"),  # a file, not a folder
    ("CUDA_CACHE_PATH", "cuda-compute-cache"),
)


def child_environment(base: Mapping[str, str]) -> Dict[str, str]:
    """The children's environment: the caller's, with writable compiler caches.

    With ``GPUMATRIX_CACHE_DIR`` (a persistent folder the runner mounts), every compile cache
    of CACHE_VARIABLES that is not set already points under it, so MIOpen's find database,
    rocFFT's runtime-compiled kernels, the CUDA JIT cache, Inductor and Triton are reused
    from one run to the next. Without it, Inductor's and Triton's caches go under the temp
    dir (images are read-only except /tmp and may run as a user without a home), and the
    others stay where the libraries put them.
    """
    env = dict(base)
    cache_dir = env.get(CACHE_DIR_ENV, "").strip()
    if cache_dir:
        for name, relative in CACHE_VARIABLES:
            if env.get(name):
                continue
            path = os.path.join(cache_dir, relative)
            folder = os.path.dirname(path) if name == "ROCFFT_RTC_CACHE_PATH" else path
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError:
                continue  # not writable: leave the library's default
            env[name] = path
        return env
    cache_root = os.path.join(tempfile.gettempdir(), "gpumatrix-probes-%d" % os.getuid())
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(cache_root, "inductor"))
    env.setdefault("TRITON_CACHE_DIR", os.path.join(cache_root, "triton"))
    env.setdefault("TRITON_HOME", os.path.join(cache_root, "triton-home"))
    return env


def cache_facts(env: Mapping[str, str]) -> Dict[str, Optional[str]]:
    """Where the children's compile caches are."""
    return {name: env.get(name) for name, _ in CACHE_VARIABLES}


def decide_in_parent(probe: Probe, torch_facts: Mapping[str, Any], facts_ok: bool,
                     expect: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """A result for ``probe`` that needs no child, or None to run it.

    Only when the facts child positively established it: torch failed to import, or
    torch imported and sees no accelerator. If the facts child itself died we know
    nothing, and every probe runs (and meets the same fate, honestly reported).
    """
    if probe.needs == NEEDS_NOTHING or not facts_ok:
        return None
    if torch_facts.get("import_error"):
        return probe_result(
            probe,
            FAIL,
            0.0,
            "torch cannot be imported: %s" % torch_facts["import_error"],
            {"import_error": torch_facts["import_error"]},
        )
    if expect and probe.layer in GPU_WORK_LAYERS and not torch_facts.get("available"):
        details = {"expect": expect}  # type: Dict[str, Any]
        if torch_facts.get("init_warnings"):
            details["init_warnings"] = torch_facts["init_warnings"]
        return probe_result(probe, FAIL, 0.0, ON_CPU_MESSAGE, details)
    if probe.needs == NEEDS_ACCELERATOR and not torch_facts.get("available"):
        details = {}
        if torch_facts.get("init_warnings"):
            details["init_warnings"] = torch_facts["init_warnings"]
        return probe_result(probe, SKIP, 0.0, "no accelerator", details)
    return None


QUICK_TORCH_GROUP = "quick.torch"


def smoke_groups(probes: Sequence[Probe]) -> List[Probe]:
    """``--quick``: the few torch smoke probes share one child (one torch import, which is most
    of the smoke run's time); per-probe limits, blame and sticky-error restarts still apply."""
    return [p._replace(group=QUICK_TORCH_GROUP) if p.needs != NEEDS_NOTHING else p for p in probes]


PROGRESS_PREFIX = "gpumatrix-probes: "


def say_progress(group: Sequence[Probe]) -> None:
    """One stderr line before a group runs: ``gpumatrix-probes: layer 3 programming_interface: id, id``."""
    layer = min(p.layer for p in group)
    sys.stderr.write("%slayer %d %s: %s\n" % (PROGRESS_PREFIX, layer, LAYERS.get(layer, "?"),
                                              ", ".join(p.id for p in group)))
    sys.stderr.flush()


def run_suite(
    probes: Sequence[Probe], quick: bool, timeout_s: Optional[float], environ: Mapping[str, str],
    deadline_s: Optional[float] = DEADLINE_S, progress: bool = False,
) -> Dict[str, Any]:
    """Collect facts and run ``probes``; return the JSON document (schema_version 1).

    With ``progress``, a line on stderr says which layer and probes run now (see :func:`say_progress`)."""
    started = time.monotonic()
    budget = Budget(deadline_s)
    mode = "quick" if quick else "full"
    env = child_environment(environ)
    facts = collect_host_facts()
    facts["caches"] = cache_facts(env)
    state = {"have_facts": False, "facts_ok": False, "accelerator": "cpu"}  # type: Dict[str, Any]

    def absorb(child_facts: Mapping[str, Any]) -> None:
        """Take the torch facts (or why there are none) into the document."""
        state["have_facts"] = True
        state["facts_ok"] = "error" not in child_facts
        if state["facts_ok"]:
            for key, value in child_facts.items():
                if key != "accelerator":
                    facts[key] = value
            state["accelerator"] = child_facts["accelerator"]
            return
        facts["torch"] = torch_unavailable_facts("facts child failed: %s" % child_facts["error"])
        facts["devices"] = []
        if child_facts.get("timed_out") and not budget.blocked:
            budget.blocked = "not run: torch's GPU initialisation timed out in the facts child (%s)" % (
                child_facts["error"])

    results = []  # type: List[Dict[str, Any]]
    arch_problem = None  # type: Optional[str]
    for group in groups_in_order(smoke_groups(probes) if quick else probes):
        if progress:
            say_progress(group)
        needs_torch = [p.needs != NEEDS_NOTHING for p in group]
        decided = {}  # type: Dict[str, Dict[str, Any]]
        if not state["have_facts"] and any(needs_torch):
            if all(needs_torch) and not budget.blocked:
                # this group's first child collects the facts too: one torch import fewer
                decided = {r["id"]: r for r in run_group(group, mode, timeout_s, env, budget,
                                                         facts_timeout_s=timeout_s or FACTS_TIMEOUT_S)}
                absorb(budget.facts if budget.facts is not None else (budget.facts_error or {"error": "no facts"}))
            else:
                absorb(run_facts_child(timeout_s or FACTS_TIMEOUT_S, env, budget))
        for probe in group:
            if probe.id in decided:
                continue
            if arch_problem and probe.needs != NEEDS_NOTHING and probe.layer >= 3:
                result = probe_result(probe, SKIP, 0.0, arch_problem, {"blocked_by": ARCH_PROBE})  # type: Any
            else:
                result = decide_in_parent(probe, facts.get("torch", {}), state["facts_ok"], facts.get("expect"))
            if result is not None:
                decided[probe.id] = result
        to_run = [p for p in group if p.id not in decided]
        if to_run:
            for result in run_group(to_run, mode, timeout_s, env, budget):
                decided[result["id"]] = result
        results.extend(decided[p.id] for p in group)
        arch = decided.get(ARCH_PROBE)
        if arch and arch["status"] == FAIL and any(
                d.get("match") == "none" for d in arch["details"].get("devices", []) if isinstance(d, dict)):
            # no kernels for this GPU: later GPU work would only fail as launch errors
            arch_problem = "not run: %s (%s)" % (arch["message"], ARCH_PROBE)
    if not state["have_facts"]:
        if budget.blocked:  # a hung driver would hang torch's initialisation too
            absorb({"error": budget.blocked.replace("not run: ", "not collected: ", 1)})
        else:
            absorb(run_facts_child(timeout_s or FACTS_TIMEOUT_S, env, budget))
    accelerator = state["accelerator"]

    budget.add_libraries(facts.pop("loaded_libraries", None) or [])
    facts["loaded_libraries"] = sorted(budget.libraries.values(), key=lambda e: (str(e.get("name")), e["path"]))
    order = {probe.id: index for index, probe in enumerate(probes)}
    results.sort(key=lambda r: (r["layer"], order[r["id"]]))
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": {"name": SUITE_NAME, "version": __version__},
        "mode": mode,
        "duration_s": round(time.monotonic() - started, 3),
        "accelerator": accelerator,
        "facts": jsonable(facts),
        "probes": results,
        "verdict": compute_verdict(results),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 on bad usage
    try:
        registered = load_probes()
    except RegistryError as err:
        parser.print_usage(sys.stderr)
        print("error: %s" % err, file=sys.stderr)
        return EXIT_USAGE
    patterns = split_patterns(args.only)
    probes = select_probes(registered, patterns, quick=args.quick, perf=not args.no_perf)
    if not probes:
        parser.print_usage(sys.stderr)
        print("error: no probe matches --only %s" % " ".join(patterns), file=sys.stderr)
        return EXIT_USAGE
    if args.list:
        for probe in probes:
            print(probe.id)
        return EXIT_OK
    document = run_suite(probes, quick=args.quick, timeout_s=args.timeout, environ=os.environ,
                         deadline_s=args.deadline, progress=args.progress)
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2, sort_keys=True, allow_nan=False) + "\n")
    else:
        from .report import render_text

        sys.stdout.write(render_text(document))
    sys.stdout.flush()
    return EXIT_OK
