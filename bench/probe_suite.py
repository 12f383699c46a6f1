"""How long the probe suite takes, and whether its performance figures are honest.

    .venv/bin/python bench/probe_suite.py                      # native: full and --quick, 3 runs each
    .venv/bin/python bench/probe_suite.py --runs 5 --out bench/results/probes-native.json
    .venv/bin/python bench/probe_suite.py --in-cell            # also inside a built CPU cell image
    .venv/bin/python bench/probe_suite.py --compare-bare       # layer 6 vs a bare measurement (GPU only)
    .venv/bin/python bench/probe_suite.py --baseline-ref main  # also time main's probes/, interleaved

Native runs call ``python -m probes --json [--quick]`` from the repository root with this
interpreter, exactly as a user would; the wall time is measured around the whole process.
``--in-cell`` runs the same command in a container of the newest image labelled
``io.gpumatrix.cell`` whose vendor is ``cpu`` (built by ``invoke matrix``), the way the runner
does (probes mounted read-only, non-root, no network); it says so and goes on when there is none.
``--compare-bare`` times a bf16 8192x8192x8192 matmul loop and a 512 MiB device-to-device copy
without the suite's harness and prints the ratio of the suite's figures to them; without a
GPU it prints "no GPU: skipped".

Each run records the 1-minute load average when it started and the CPU seconds its process
tree used (user + system), since wall time on a shared box says as much about the neighbours as
about the suite. ``--baseline-ref REF`` extracts ``probes/`` of that git commit into a temporary
folder and runs it alternately with the working tree's, so both see the same load.

The table goes to stdout (``--json`` prints the JSON document instead); ``--out`` also writes
the JSON document to a file.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# Variables that would change what the suite does (the same ones the probe tests scrub).
SCRUBBED = ("GPUMATRIX_EXPECT", "GPUMATRIX_PEAKS", "GPUMATRIX_PROBES_EXTRA")
CELL_LABEL = "io.gpumatrix.cell"
BARE_MATMUL_N = 8192
BARE_COPY_BYTES = 512 << 20
BARE_ITERATIONS = 20


def machine() -> dict[str, Any]:
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "cpu": _cpu_model()}


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


# --------------------------------------------------------------------------- native


def run_suite(extra: list[str], timeout_s: float, root: Path = REPO) -> tuple[float, dict[str, Any]]:
    """One ``python -m probes --json`` process from ``root``: (wall seconds, document); the
    document gains ``_bench`` with the load average at the start and the CPU seconds used."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "probes", "--json", *extra], cwd=str(root), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout_s, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit("probe suite exited %d: %s" % (done.returncode, done.stderr.decode()[-2000:]))
    document = json.loads(done.stdout.decode())
    document["_bench"] = {"loadavg_1m": round(load, 2),
                          "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 3)}
    return wall, document


def extract_ref(ref: str, into: Path) -> Path:
    """``probes/`` of git commit ``ref`` under ``into`` (read from git, no checkout)."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", ref, "probes"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(str(into), **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return into


def summarise(walls: list[float], documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Median wall time, the suite's own duration, and each probe's median duration and status."""
    per_probe: dict[str, list[float]] = {}
    statuses: dict[str, set[str]] = {}
    for document in documents:
        for probe in document["probes"]:
            per_probe.setdefault(probe["id"], []).append(float(probe["duration_s"]))
            statuses.setdefault(probe["id"], set()).add(probe["status"])
    return {
        "runs": len(walls),
        "wall_s": [round(w, 3) for w in walls],
        "median_wall_s": round(statistics.median(walls), 3),
        "median_suite_duration_s": round(statistics.median(float(d["duration_s"]) for d in documents), 3),
        "loadavg_1m_at_start": [d.get("_bench", {}).get("loadavg_1m") for d in documents],
        "cpu_s": [d.get("_bench", {}).get("cpu_s") for d in documents],
        "median_cpu_s": round(statistics.median(d.get("_bench", {}).get("cpu_s", 0.0) for d in documents), 3),
        "verdicts": sorted({d["verdict"]["summary"] for d in documents}),
        "probes": {pid: {"median_s": round(statistics.median(v), 3), "status": "/".join(sorted(statuses[pid]))}
                   for pid, v in per_probe.items()},
    }


MODES = {"full": [], "quick": ["--quick"]}


def bench_native(runs: int, timeout_s: float, baseline: Path | None = None,
                 modes: tuple[str, ...] = ("full", "quick")) -> dict[str, Any]:
    """Full and --quick runs of the working tree's probes (and, interleaved, of ``baseline``'s)."""
    results: dict[str, Any] = {}
    roots = {"native": REPO} if baseline is None else {"native": REPO, "baseline": baseline}
    for mode, extra in ((m, MODES[m]) for m in modes):
        walls: dict[str, list[float]] = {name: [] for name in roots}
        documents: dict[str, list[dict[str, Any]]] = {name: [] for name in roots}
        for index in range(runs):
            for name, root in roots.items():
                wall, document = run_suite(extra, timeout_s, root)
                print("%-8s %-5s run %d/%d: %.2f s (load %.1f, cpu %.1f s)" % (
                    name, mode, index + 1, runs, wall, document["_bench"]["loadavg_1m"],
                    document["_bench"]["cpu_s"]), file=sys.stderr)
                walls[name].append(wall)
                documents[name].append(document)
        for name in roots:
            results.setdefault(name, {})[mode] = summarise(walls[name], documents[name])
    return results


# --------------------------------------------------------------------------- in a cell image


def find_cpu_cell_image(engine: Any) -> tuple[str, dict[str, str]] | None:
    """The newest tagged image labelled as a CPU cell, or None."""
    found = []
    for info in engine.images_with_label(CELL_LABEL):
        tags = [t for t in info.tags if t and t != "<none>:<none>"]
        if tags and info.labels.get("io.gpumatrix.vendor") == "cpu":
            found.append((tags[0], dict(info.labels)))
    return sorted(found)[-1] if found else None


def bench_in_cell(runs: int, timeout_s: float) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    try:
        from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, ContainerSpec, Engine, Mount
        from gpumatrix.errors import GpumatrixError
    except ImportError as err:
        return {"skipped": "gpumatrix is not importable here: %s" % err}
    try:
        engine = Engine.connect(timeout=int(timeout_s) + 60)
    except GpumatrixError as err:
        return {"skipped": "no Docker engine: %s" % str(err).splitlines()[0]}
    try:
        found = find_cpu_cell_image(engine)
        if found is None:
            return {"skipped": "no image labelled %s with vendor cpu (build one with 'invoke matrix')" % CELL_LABEL}
        image, labels = found
        results: dict[str, Any] = {"image": image, "cell": labels.get(CELL_LABEL)}
        for mode, extra in (("full", []), ("quick", ["--quick"])):
            walls, container_walls, documents = [], [], []
            for index in range(runs):
                spec = ContainerSpec(
                    image=image, command=["python3", "-m", "probes", "--json", *extra],
                    environment={"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"},
                    mounts=(Mount(str(REPO / "probes"), "/opt/gpumatrix/probes", read_only=True),),
                    network_mode="none", read_only=True, tmpfs={"/tmp": "rw,nosuid,nodev,size=4g"},
                    shm_size="1g", user="65534:65534", working_dir="/opt/gpumatrix", pids_limit=4096,
                    labels={MANAGED_LABEL: "true", LABEL_NS + ".role": "bench"}, timeout_s=timeout_s)
                started = time.perf_counter()
                outcome = engine.run(spec)
                walls.append(time.perf_counter() - started)  # create + start + run + logs + remove
                container_walls.append(outcome.duration_s)
                if outcome.exit_code != 0:
                    return dict(results, error="exit %s: %s" % (outcome.exit_code, outcome.stderr.decode()[-2000:]))
                documents.append(json.loads(outcome.stdout.decode()))
                print("cell   %-5s run %d/%d: %.2f s" % (mode, index + 1, runs, walls[-1]), file=sys.stderr)
            results[mode] = dict(summarise(walls, documents),
                                 median_container_run_s=round(statistics.median(container_walls), 3))
        return results
    finally:
        engine.close()


# --------------------------------------------------------------------------- bare measurements


def _import_torch() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU wheels warn when numpy is absent
        import torch
    return torch


def bare_matmul_tflops(torch: Any, n: int = BARE_MATMUL_N, iterations: int = BARE_ITERATIONS) -> float:
    """bf16 n^3 matmuls back to back, timed with CUDA events around the whole loop."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.matmul(a, b, out=out)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        torch.matmul(a, b, out=out)
    end.record()
    end.synchronize()
    seconds = start.elapsed_time(end) / 1000.0 / iterations
    return 2.0 * n ** 3 / seconds / 1e12


def bare_copy_gbs(torch: Any, size: int = BARE_COPY_BYTES, iterations: int = BARE_ITERATIONS) -> float:
    """Device-to-device copies back to back; read + write counted, as the probe counts them."""
    src = torch.empty(size, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        dst.copy_(src)
    end.record()
    end.synchronize()
    seconds = start.elapsed_time(end) / 1000.0 / iterations
    return 2.0 * size / seconds / 1e9


def compare_bare(timeout_s: float) -> dict[str, Any]:
    """The suite's layer-6 figures next to bare loops on the same GPU; ratio = suite / bare."""
    torch = _import_torch()
    if not torch.cuda.is_available():
        return {"skipped": "no GPU: skipped"}
    device = torch.cuda.get_device_name(0)
    bf16_ok = bool(getattr(torch.version, "hip", None)) or torch.cuda.is_bf16_supported()
    bare: dict[str, Any] = {"copy_gb_per_s": round(bare_copy_gbs(torch), 2)}
    if bf16_ok:
        bare["bf16_tflops"] = round(bare_matmul_tflops(torch), 2)
    torch.cuda.empty_cache()
    # The suite runs in its own processes, after this one has freed its memory.
    _, document = run_suite(["--only", "performance.matmul_tflops,performance.memory_bandwidth"], timeout_s)
    probes = {p["id"]: p for p in document["probes"]}
    matmul = probes.get("performance.matmul_tflops", {})
    copy = probes.get("performance.memory_bandwidth", {})
    bf16 = ((matmul.get("details") or {}).get("results") or {}).get("bf16") or {}
    suite = {"bf16_tflops": bf16.get("tflops"), "bf16_n": bf16.get("n"),
             "copy_gb_per_s": (copy.get("details") or {}).get("gb_per_s"),
             "statuses": {k: probes[k]["status"] for k in probes}}
    ratios = {}
    for key in ("bf16_tflops", "copy_gb_per_s"):
        if isinstance(suite.get(key), (int, float)) and bare.get(key):
            ratios[key] = round(suite[key] / bare[key], 3)
    note = None
    if suite.get("bf16_n") not in (None, BARE_MATMUL_N):
        note = "the suite used n=%s for bf16 (GPU under 16 GiB); the bare loop used %d" % (suite["bf16_n"],
                                                                                          BARE_MATMUL_N)
    return {"device": device, "torch": torch.__version__, "bare": bare, "suite": suite, "ratio_suite_to_bare": ratios,
            "note": note}


# --------------------------------------------------------------------------- output


def table(report: dict[str, Any]) -> str:
    lines = ["machine: %s, %s CPUs (%s), Python %s" % (report["machine"]["platform"], report["machine"]["cpus"],
                                                      report["machine"]["cpu"], report["machine"]["python"])]
    for where in ("native", "baseline", "cell"):
        section = report.get(where)
        if not section:
            continue
        if "skipped" in section or "error" in section:
            lines.append("%s: %s" % (where, section.get("skipped") or section.get("error")))
            continue
        title = {"native": "native", "baseline": "baseline %s" % report.get("baseline_ref")}.get(
            where) or "cell image %s" % section["image"]
        lines.append("")
        empty = {"runs": 0, "median_wall_s": float("nan"), "median_suite_duration_s": float("nan"), "probes": {},
                 "median_cpu_s": float("nan"), "loadavg_1m_at_start": []}
        section = dict(section, full=section.get("full", empty), quick=section.get("quick", empty))
        lines.append("%s, %d run(s) each: median wall full %.2f s, quick %.2f s" % (
            title, max(section["full"]["runs"], section["quick"]["runs"]), section["full"]["median_wall_s"],
            section["quick"]["median_wall_s"]))
        lines.append("  suite's own duration_s (median): full %.2f s, quick %.2f s" % (
            section["full"]["median_suite_duration_s"], section["quick"]["median_suite_duration_s"]))
        if "median_cpu_s" in section["full"]:
            lines.append("  CPU seconds (median): full %.2f s, quick %.2f s; load average at start: full %s, quick %s" % (
                section["full"]["median_cpu_s"], section["quick"]["median_cpu_s"],
                section["full"]["loadavg_1m_at_start"], section["quick"]["loadavg_1m_at_start"]))
        ids = list(section["full"]["probes"])
        ids += [i for i in section["quick"]["probes"] if i not in ids]
        lines.append("  %-44s %10s %10s  %s" % ("probe", "full s", "quick s", "status"))
        for pid in ids:
            full = section["full"]["probes"].get(pid)
            quick = section["quick"]["probes"].get(pid)
            lines.append("  %-44s %10s %10s  %s" % (
                pid, "%.3f" % full["median_s"] if full else "-", "%.3f" % quick["median_s"] if quick else "-",
                (full or quick)["status"]))
    compare = report.get("compare_bare")
    if compare:
        lines.append("")
        if "skipped" in compare:
            lines.append("compare-bare: %s" % compare["skipped"])
        else:
            lines.append("compare-bare on %s (torch %s): ratio = suite / bare" % (compare["device"], compare["torch"]))
            for key, label in (("bf16_tflops", "bf16 matmul TFLOP/s"), ("copy_gb_per_s", "D2D copy GB/s")):
                lines.append("  %-22s suite %-10s bare %-10s ratio %s" % (
                    label, compare["suite"].get(key), compare["bare"].get(key),
                    compare["ratio_suite_to_bare"].get(key, "-")))
            if compare.get("note"):
                lines.append("  note: " + compare["note"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each mode (default 3)")
    parser.add_argument("--timeout", type=float, default=900.0, help="time limit of one suite run, seconds")
    parser.add_argument("--no-native", action="store_true", help="skip the native runs")
    parser.add_argument("--in-cell", action="store_true", help="also run inside the newest CPU cell image")
    parser.add_argument("--compare-bare", action="store_true",
                        help="compare layer 6 with a bare bf16 matmul loop and D2D copy (GPU only)")
    parser.add_argument("--mode", choices=("both", "full", "quick"), default="both",
                        help="which suite modes to run natively (default both)")
    parser.add_argument("--baseline-ref", metavar="REF",
                        help="also run probes/ of this git commit, interleaved with the working tree's")
    parser.add_argument("--json", action="store_true", help="print the JSON document instead of the table")
    parser.add_argument("--out", type=Path, help="also write the JSON document here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    report: dict[str, Any] = {"machine": machine(), "command": " ".join([Path(sys.executable).name] + sys.argv)}
    if not args.no_native:
        with tempfile.TemporaryDirectory(prefix="gpumatrix-baseline-") as folder:
            baseline = extract_ref(args.baseline_ref, Path(folder)) if args.baseline_ref else None
            native = bench_native(args.runs, args.timeout, baseline,
                                  tuple(MODES) if args.mode == "both" else (args.mode,))
        report["native"] = native["native"]
        if "baseline" in native:
            report["baseline"], report["baseline_ref"] = native["baseline"], args.baseline_ref
    if args.in_cell:
        report["cell"] = bench_in_cell(args.runs, args.timeout)
    if args.compare_bare:
        report["compare_bare"] = compare_bare(args.timeout)
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text if args.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
