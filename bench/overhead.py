#!/usr/bin/env python3
"""gpumatrix's own overhead in a warm ``--reuse-probes`` run of the benchmark matrix, and where it goes.

With ``--reuse-probes`` and nothing changed, no probe container runs (each reused cell records
``probe_s`` 0), so the run's wall time *is* gpumatrix's own overhead as ``matrix_vs_naive.py`` defines
it (wall time minus the probe containers' time). This script:

1. prepares the benchmark matrix as ``matrix_vs_naive.py`` does (a copy in ``--work`` with its local
   wheel beside it), and runs ``gpumatrix matrix --jobs N --reuse-probes`` on it once to warm up (this
   builds and probes on a cold ``--work``: minutes);
2. times ``--runs`` more runs of ``python -m gpumatrix matrix … --reuse-probes`` (median, min-max), with
   Python's bytecode cache (as for an installed package) and with the environment as it is (where
   PYTHONDONTWRITEBYTECODE is set, every run compiles gpumatrix's modules again);
3. prints what one such run imports (``python -X importtime``, modules by cumulative time; bytecode cached);
4. profiles one run in-process with cProfile, every thread included (cell threads and the wheel
   server are merged into one table), and prints the top functions by cumulative and own time and
   the engine round trips (HTTP requests) it made.

Usage (needs an engine: ``eval "$(./dev engine)"`` first)::

    .venv/bin/python bench/overhead.py --work /tmp/gpumatrix-overhead --no-torch-index --private-bases

``--private-bases`` gives the matrix copy bases of its own (the same bases plus a label), so that on an
engine shared with other test runs nobody rebuilds its cells' images under the same content-addressed
tags while it measures (a rebuild is a new image id: the next run probes again). Its images stay, so a
second invocation is warm at once; remove them with ``docker rmi`` (``gpumatrix-overhead/*`` and the
``gpumatrix/*`` tags its runs print).

``--baseline DIR`` also times another copy of the repository (e.g. ``git archive main | tar -x -C DIR``)
with the same interpreter, its runs interleaved with this checkout's, so both see the same load on a
shared machine: before and after side by side in one go. The wheelhouse (``--work``/cache) is shared,
so within ``GPUMATRIX_RESOLVE_TTL_S`` neither side asks pip again.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import platform
import pstats
import re
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX_NAME = "matrix-bench.yaml"


def _env(work: Path, src: Path | None, bytecode: bool = True) -> dict[str, str]:
    """The runs' environment; ``bytecode``: Python keeps compiled modules (in ``work``), as it does for an
    installed package (pip compiles on install), even where PYTHONDONTWRITEBYTECODE is set."""
    env = dict(os.environ, GPUMATRIX_CACHE_DIR=str(work / "cache"))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")  # mirrors each source path: one for all copies
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _argv(work: Path, matrix: Path, jobs: int) -> list[str]:
    return ["matrix", "--matrix", str(matrix), "--results", str(work / "results"), "--jobs", str(jobs),
            "--reuse-probes"]


PRIVATE_REPO = "gpumatrix-overhead/base"


def prepare(work: Path, no_torch_index: bool, private_bases: bool) -> Path:
    """The benchmark's matrix copy and local wheel in ``work``; with ``private_bases``, its two CPU bases
    replaced by images of their own (the base plus a label: another id), so that no other user of a shared
    engine builds the same content-addressed tags (a rebuild is a new image id, and the cells probe again)."""
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    import matrix_vs_naive as bench  # the benchmark's own set-up: same matrix, same local wheel

    from gpumatrix.engine.client import Engine, tar_context

    work.mkdir(parents=True, exist_ok=True)
    engine = Engine.connect()
    try:
        bench.ensure_tools_base(engine)
        matrix = bench.prepare_matrix(work, no_torch_index)
        if private_bases:
            text = matrix.read_text()
            for i, ref in enumerate(("debian:bookworm-slim", bench.TOOLS_BASE)):
                mine = f"{PRIVATE_REPO}{i}:{work.name}"
                if engine.image_info(mine) is None:
                    dockerfile = f"FROM {ref}\nLABEL io.gpumatrix.bench=overhead\n".encode()
                    engine.build(tar_context({"Dockerfile": dockerfile}), mine, {}, {}, lambda s: None)
                text = text.replace(ref, mine)
            matrix.write_text(text)
    finally:
        engine.close()
    return matrix


def warm_up(work: Path, matrix: Path, jobs: int, src: Path | None) -> None:
    """Run until a run probes nothing (the first builds and probes on a cold ``--work``; on a shared engine,
    another user's rebuild of the same tag is a new image id, so its cells probe once more)."""
    for _ in range(3):
        try:
            timed_runs(work, matrix, jobs, 1, src)
            return
        except NotWarm:
            continue
    raise SystemExit("three runs in a row ran probe containers: the image ids keep changing")


class NotWarm(Exception):
    pass


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_runs(work: Path, matrix: Path, jobs: int, runs: int, src: Path | None, bytecode: bool = True,
               cpu: list[float] | None = None) -> list[float]:
    """Wall seconds of ``runs`` warm runs; their CPU seconds (user + system) are appended to ``cpu``: on a
    machine shared with other work, CPU time varies less than wall time."""
    out = []
    for _ in range(runs):
        cpu_before = _cpu_of_children()
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "gpumatrix", *_argv(work, matrix, jobs)], cwd=work,
                              env=_env(work, src, bytecode), capture_output=True, text=True)
        out.append(time.monotonic() - started)
        if cpu is not None:
            cpu.append(_cpu_of_children() - cpu_before)
        if done.returncode != 0:
            raise SystemExit(f"gpumatrix failed ({done.returncode}):\n{done.stderr[-3000:]}")
        if "probing" in done.stderr:
            raise NotWarm("a probe container ran: the run was not warm\n" + done.stderr[-3000:])
    return out


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)$")


def import_times(work: Path, matrix: Path, jobs: int, src: Path | None, top: int,
                 runs: int = 3) -> tuple[float, list[str]]:
    """Total import time of a warm run (median of ``runs``), and the ``top`` imports of the run with the
    median total by cumulative time."""
    measured = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "gpumatrix", *_argv(work, matrix, jobs)],
                              cwd=work, env=_env(work, src), capture_output=True, text=True)
        rows = []
        for line in done.stderr.splitlines():
            m = _IMPORT_LINE.match(line)
            if m:
                rows.append((int(m.group(2)), len(m.group(3)), m.group(4)))
        measured.append((sum(us for us, depth, _ in rows if depth == 1), rows))  # top level holds the nested
    total, rows = sorted(measured, key=lambda m: m[0])[len(measured) // 2]
    wanted = ("gpumatrix", "docker", "requests", "urllib3", "jinja2", "jsonschema", "tabulate", "torch", "yaml",
              "invoke", "platformdirs", "packaging")
    shown = sorted((r for r in rows if r[2].split(".")[0] in wanted), reverse=True)[:top]
    return total / 1e6, [f"{us / 1000:8.1f} ms  {name}" for us, _, name in shown]


def profile_child(work: Path, matrix: Path, jobs: int, top: int) -> None:
    """In this process: run gpumatrix once under cProfile, every thread profiled, and print the tables."""
    profiles: list[cProfile.Profile] = []
    original_run = threading.Thread.run

    def profiled_run(self: threading.Thread) -> None:
        p = cProfile.Profile()
        p.enable()
        try:
            original_run(self)
        finally:
            p.disable()
            profiles.append(p)

    threading.Thread.run = profiled_run  # type: ignore[method-assign]
    main = cProfile.Profile()
    started = time.monotonic()
    main.enable()
    try:
        from gpumatrix.program import program

        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            program.run(["gpumatrix", *_argv(work, matrix, jobs)], exit=False)
    finally:
        main.disable()
    wall = time.monotonic() - started
    time.sleep(0.2)  # let the daemon threads' finally blocks record their profiles
    buf = io.StringIO()
    stats = pstats.Stats(main, stream=buf)
    for p in list(profiles):
        stats.add(p)
    print(f"\nwall time under the profiler: {wall:.3f} s (threads merged: cumulative times overlap)")
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    print(_strip(buf.getvalue()))
    counts = {}
    for (filename, _, name), row in stats.stats.items():  # type: ignore[attr-defined]
        if (filename.endswith("requests/sessions.py") and name == "request") or (
                filename.endswith("subprocess.py") and name == "__init__") or (
                filename.endswith("yaml/__init__.py") and name in ("load", "safe_load")) or (
                "jsonschema" in filename and name == "iter_errors") or (
                "gpumatrix" in filename and name in ("_hash_file", "_run_pip", "image_info", "load_matrix")):
            counts[f"{Path(filename).parent.name}/{Path(filename).name}:{name}"] = (row[1], row[3])
    print("calls of interest (calls, cumulative s):")
    for key, (n, cum) in sorted(counts.items()):
        print(f"  {n:5d}  {cum:7.3f}  {key}")


def _commit() -> str | None:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or None


def _spread(xs: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(xs), 4), "min": round(min(xs), 4), "max": round(max(xs), 4)}


def _strip(text: str) -> str:
    return "\n".join(line.replace(str(ROOT) + "/", "").replace(sys.prefix + "/", "")[:160]
                     for line in text.splitlines())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/tmp/gpumatrix-overhead", help="folder for the matrix copy, its "
                    "wheel, results and wheelhouse (kept between invocations: a second one is warm at once)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5, help="timed warm runs (median, min-max)")
    ap.add_argument("--top", type=int, default=30, help="rows of each table")
    ap.add_argument("--src", help="a copy of the repository whose gpumatrix/ to run instead of this checkout's")
    ap.add_argument("--baseline", help="a copy of the repository (e.g. 'git archive main | tar -x -C DIR') to time "
                                       "too, its runs interleaved with this checkout's: before/after side by side")
    ap.add_argument("--no-torch-index", action="store_true",
                    help="index_url: null in the matrix copy (hosts without download.pytorch.org)")
    ap.add_argument("--private-bases", action="store_true",
                    help="bases of this work folder's own, so another user of a shared engine cannot rebuild its "
                         "cells' images under the same tags while it measures")
    ap.add_argument("--out", help="also write the timings as JSON to this file (e.g. bench/results/overhead.json)")
    ap.add_argument("--no-profile", action="store_true", help="only the timed runs and the import times")
    ap.add_argument("--profile-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    work = Path(args.work).resolve()
    src = Path(args.src).resolve() if args.src else None
    matrix = work / MATRIX_NAME
    if args.profile_child:
        profile_child(work, matrix, args.jobs, args.top)
        return 0

    matrix = prepare(work, args.no_torch_index, args.private_bases)
    baseline = Path(args.baseline).resolve() if args.baseline else None
    sides = [(baseline, f"baseline ({baseline})"), (src, "this checkout" if src is None else str(src))] \
        if baseline else [(src, "this checkout" if src is None else str(src))]
    for side, _ in sides:
        warm_up(work, matrix, args.jobs, side)
    print(f"warm --reuse-probes runs of {matrix.name} (jobs={args.jobs}), {args.runs} each"
          f"{', interleaved' if baseline else ''}; no probe container runs, so a run's wall time is gpumatrix's "
          f"own overhead. Median (min-max):")
    document: dict = {"matrix": MATRIX_NAME, "jobs": args.jobs, "runs": args.runs, "cores": os.cpu_count(),
                      "machine": platform.machine(), "python": platform.python_version(),
                      "private_bases": args.private_bases, "checkout_commit": _commit(), "sides": {}}
    for bytecode, how in ((True, "bytecode cached, as installed"), (False, "environment as it is")):
        times: dict[Path | None, list[float]] = {side: [] for side, _ in sides}
        cpu: dict[Path | None, list[float]] = {side: [] for side, _ in sides}
        for _ in range(args.runs):  # interleaved: both sides see the same load on a shared machine
            for side, _ in sides:
                times[side] += timed_runs(work, matrix, args.jobs, 1, side, bytecode, cpu[side])
        for side, name in sides:
            t, c = times[side], cpu[side]
            entry = document["sides"].setdefault("baseline" if side is baseline and baseline else "checkout", {})
            entry["bytecode_cached" if bytecode else "environment_as_is"] = {
                "wall_s": _spread(t), "cpu_s": _spread(c), "wall_runs_s": [round(x, 4) for x in t],
                "cpu_runs_s": [round(x, 4) for x in c]}
            print(f"  {how:31} {name:36} wall {statistics.median(t):.3f} s ({min(t):.3f}-{max(t):.3f}), "
                  f"CPU {statistics.median(c):.3f} s ({min(c):.3f}-{max(c):.3f})")
        if baseline:
            print(f"  {'':31} {'ratio of medians':36} wall "
                  f"{statistics.median(times[baseline]) / statistics.median(times[src]):.2f}x, CPU "
                  f"{statistics.median(cpu[baseline]) / statistics.median(cpu[src]):.2f}x")
    for side, name in sides:
        imports_s, imports = import_times(work, matrix, args.jobs, side, args.top)
        document["sides"]["baseline" if side is baseline and baseline else "checkout"]["imports_s"] = round(imports_s, 4)
        print(f"\nimports of one run, {name}: {imports_s:.3f} s (python -X importtime, median of 3); the largest "
              f"(cumulative):")
        print("\n".join(imports))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        print(f"\nwrote {args.out}")
    if not args.no_profile:
        sys.stdout.flush()
        subprocess.run([sys.executable, __file__, "--profile-child", "--work", str(work), "--jobs", str(args.jobs),
                        "--top", str(args.top)], cwd=work, env=_env(work, src), check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
