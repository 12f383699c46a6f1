#!/usr/bin/env python3
"""gpumatrix against the way people do it today, on the same matrix, cold and warm, side by side.

The naive side is the shell loop users write: for each cell, fetch its wheels (``pip download`` into
a folder of that cell: nothing is shared between cells), ``docker build`` (same Dockerfiles, same build
args, classic builder) then ``docker run`` of the same probe suite. The gpumatrix side is
``invoke matrix --jobs N``. Both get the same inputs: the same base images, the same package
sources through the host's pip (wheels reach both sides' builds over loopback, so the naive side is
not charged for putting the 190 MB torch wheel in its build context), the same probes.

* cold: both sides start with none of the cells' images (those the benchmark built are removed, with
  the layers only they use; the base images stay) and empty wheel folders (gpumatrix's wheelhouse, the naive
  side's per-cell folders). gpumatrix's side names its images in a namespace of its own,
  ``gpumatrix-bench/…`` (``GPUMATRIX_IMAGE_NAMESPACE``), so removing "the images under the tags gpumatrix
  will build" never touches an image of the user's ``gpumatrix/…``.
* warm: nothing changed since the last run. gpumatrix is measured twice: plain (probes run again)
  and with --reuse-probes (saved probe results stand when image, probe suite, host and settings are
  unchanged).

The matrix (bench/matrix-bench.yaml) has 12 cells: 4 CPU cells that really build here (two bases ×
torch 2.13.0+cpu as a release and the same file as a local-wheel entry: one image per base) and 8 GPU
or not-applicable cells, which gpumatrix plans and skips on a host without GPUs. The naive loop is
given only the 4 buildable cells. The benchmark works on a copy of the matrix in a temporary folder
and puts the local wheel next to it, fetched with the host's pip (``pip download --no-deps``), so the
matrix names no path of one machine. ``--no-torch-index`` sets ``index_url: null`` in that copy, for
hosts that cannot reach download.pytorch.org (torch then comes from the host's own pip sources).

Usage (needs an engine: ``eval "$(./dev engine)"`` first)::

    .venv/bin/python bench/matrix_vs_naive.py --cold-runs 3 --warm-runs 3 --jobs 2

Prints medians with min-max of the runs, and writes bench/results/matrix-vs-naive.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpumatrix.config.matrix import expand_cells, load_matrix  # noqa: E402
from gpumatrix.engine.client import Engine, tar_context  # noqa: E402
from gpumatrix.host import discover_host  # noqa: E402
from gpumatrix.images.build import TEMPLATE_FOR_VENDOR, ensure_base, render_build_context  # noqa: E402
from gpumatrix.images.naming import NAMESPACE_ENV  # noqa: E402
from gpumatrix.images.serve import WheelServer  # noqa: E402
from gpumatrix.images.wheelhouse import Wheelhouse, platform_tags  # noqa: E402
from gpumatrix.resources import templates_dir  # noqa: E402

MATRIX = ROOT / "bench" / "matrix-bench.yaml"
BENCH_NAMESPACE = "gpumatrix-bench"  # the image namespace of gpumatrix's side: never the user's gpumatrix/
LOCAL_WHEEL_GLOB = "torch-2.13.0+cpu-cp311-*.whl"
TOOLS_BASE = "gpumatrix-bench/bookworm-tools:1"
TOOLS_DOCKERFILE = b"""FROM debian:bookworm-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends procps >/dev/null \\
    && rm -rf /var/lib/apt/lists/*
"""
INVOKE = str(ROOT / ".venv" / "bin" / "invoke")


def ensure_tools_base(engine: Engine) -> None:
    """The second CPU base: Debian with one more package, so its Python layer is really different."""
    if engine.image_info(TOOLS_BASE) is None:
        engine.build(tar_context({"Dockerfile": TOOLS_DOCKERFILE}), TOOLS_BASE, {},
                     {"io.gpumatrix.bench": "base"}, lambda s: None, network_mode="host")


def prepare_matrix(work: Path, no_torch_index: bool) -> Path:
    """A copy of the benchmark matrix in ``work``, with its local wheel beside it (fetched by pip)."""
    text = MATRIX.read_text()
    if no_torch_index:
        text = text.replace("schema_version: 1\n", "schema_version: 1\nindex_url: null\n", 1)
    wheels = work / "wheels"
    if not any(wheels.glob(LOCAL_WHEEL_GLOB)):
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version",
                "3.11", "--implementation", "cp", "--abi", "cp311", "-d", str(wheels), "torch==2.13.0+cpu"]
        for tag in platform_tags():
            argv += ["--platform", tag]
        subprocess.run(argv, check=True, capture_output=True, timeout=3600)
    (work / MATRIX.name).write_text(text)
    return work / MATRIX.name


def buildable_cells(matrix_path: Path):
    matrix = load_matrix(matrix_path)
    cells = [c for c in expand_cells(matrix).cells if c.applicable and c.vendor == "cpu"]
    return matrix, cells


def reset_cold(engine: Engine, created: set[str], cache_dir: Path, naive_dir: Path) -> None:
    """Remove the images this benchmark built (both sides), any image under the tags gpumatrix will build,
    and both sides' wheel folders.

    Only what it built: the engine may be shared, so nothing is pruned; removing an image removes its
    parent layers that no other image uses (layers another image shares, e.g. another user's Python
    layer on the same base, stay: then a "cold" run finds that layer cached)."""
    for img in engine.api.images(name="naive-bench"):
        created.add(img["Id"])
    for ref in sorted(created):
        if engine.image_info(ref) is not None:
            engine.remove_image(ref)
    shutil.rmtree(cache_dir, ignore_errors=True)
    shutil.rmtree(naive_dir, ignore_errors=True)


def naive_loop(engine: Engine, matrix, cells, workdir: Path, port: int, secret: str) -> dict:
    """The shell loop: per cell, pip download its wheels into its own folder, docker build, docker run.

    Its wheel server keeps one port and secret for the whole benchmark: the URL is a build arg, and a
    naive user's build args do not change between runs, so the engine's layer cache must stay valid."""
    ctx = workdir / "ctx"
    shutil.rmtree(ctx, ignore_errors=True)
    shutil.copytree(templates_dir(), ctx, ignore=shutil.ignore_patterns('__init__.py', '__pycache__'))
    env = dict(os.environ, DOCKER_BUILDKIT="0")  # Debian's docker.io 20.10 engine has no buildx
    started = time.monotonic()
    statuses, downloaded = {}, 0
    for cell in cells:
        house = Wheelhouse(workdir / "naive-wheels" / cell.id, resolve_ttl_s=0)  # nothing shared between cells
        try:
            recipe = render_build_context(cell, matrix, house, None)
        except Exception:  # noqa: BLE001 - the naive loop records a failed cell and goes on
            statuses[cell.id] = "build_error"
            continue
        downloaded += recipe.wheels.fetched_bytes
        with WheelServer(house, port=port) as server:
            server.secret = secret
            args = {**recipe.build_args, "WHEELS_URL": server.publish(recipe.wheels)}
            tag = f"naive-bench:{cell.id.replace('+', '_')}"
            argv = ["docker", "build", "-q", "--network", "host", "-t", tag,
                    "-f", str(ctx / TEMPLATE_FOR_VENDOR[cell.vendor])]
            for k, v in args.items():
                argv += ["--build-arg", f"{k}={v}"]
            built = subprocess.run(argv + [str(ctx)], env=env, capture_output=True, text=True)
        if built.returncode != 0:
            statuses[cell.id] = "build_error"
            continue
        ran = subprocess.run(["docker", "run", "--rm", "--network", "none", "--shm-size", "8g",
                              "-v", f"{ROOT / 'probes'}:/opt/gpumatrix/probes:ro", "-w", "/opt/gpumatrix",
                              tag, "python3", "-m", "probes", "--json"], env=env, capture_output=True, text=True)
        try:
            statuses[cell.id] = json.loads(ran.stdout)["verdict"]["status"]
        except (ValueError, KeyError):
            statuses[cell.id] = "error"
    return {"seconds": time.monotonic() - started, "statuses": statuses, "downloaded_bytes": downloaded}


def gpumatrix_run(matrix_path: Path, results: Path, jobs: int, cache_dir: Path, reuse: bool = False) -> dict:
    argv = [INVOKE, "matrix", "--matrix", str(matrix_path), "--results", str(results), "--jobs", str(jobs)]
    if reuse:
        argv.append("--reuse-probes")
    env = dict(os.environ, GPUMATRIX_CACHE_DIR=str(cache_dir))
    started = time.monotonic()
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"invoke matrix failed ({out.returncode}):\n{out.stderr[-3000:]}")
    statuses, downloads, images, probe_s = {}, {}, {}, 0.0
    for f in sorted((results / "cells").glob("*.json")):
        d = json.loads(f.read_text())
        statuses[d["cell_id"]] = d["status"]
        probe_s += float((d.get("timings") or {}).get("probe_s") or 0.0)
        if (d.get("image") or {}).get("downloads"):
            downloads[d["cell_id"]] = d["image"]["downloads"]
        if d.get("image"):
            images[d["cell_id"]] = d["image"]["id"]
    wheelhouse = cache_dir / "wheelhouse" / "wheels"
    held = sum(p.stat().st_size for p in wheelhouse.iterdir()) if wheelhouse.is_dir() else 0
    builds = [line.split("building ", 1)[1].split(" ", 1)[0] for line in (out.stdout + out.stderr).splitlines()
              if ": building " in line]
    return {"seconds": seconds, "statuses": statuses, "downloads": downloads, "probe_container_s": probe_s,
            "images": images, "builds": builds,
            "downloaded_bytes": sum(d["upstream_bytes"] for d in downloads.values()),
            "wheelhouse_bytes": held}


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(runs: list[dict], key: str = "seconds") -> dict:
    xs = [r[key] for r in runs]
    return {"median": median(xs), "min": min(xs) if xs else float("nan"), "max": max(xs) if xs else float("nan"),
            "n": len(xs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cold-runs", type=int, default=1)
    ap.add_argument("--warm-runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-torch-index", action="store_true",
                    help="index_url: null in the benchmark's matrix (for hosts without download.pytorch.org)")
    ap.add_argument("--keep-images", action="store_true", help="leave the images it built (default: remove them)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "matrix-vs-naive.json"))
    args = ap.parse_args()

    os.environ[NAMESPACE_ENV] = BENCH_NAMESPACE  # here and in the `invoke matrix` runs it starts
    engine = Engine.connect()
    ensure_tools_base(engine)
    work = Path(tempfile.mkdtemp(prefix="gpumatrix-bench-"))
    matrix_path = prepare_matrix(work, args.no_torch_index)
    matrix, cells = buildable_cells(matrix_path)
    with socket.socket() as probe_port:
        probe_port.bind(("127.0.0.1", 0))
        naive_port = probe_port.getsockname()[1]
    naive_secret = secrets.token_urlsafe(24)
    cache_dir = work / "cache"
    naive_dir = work / "naive-wheels"
    host = discover_host(engine.describe())
    runs: dict[str, list[dict]] = {"naive_cold": [], "gpumatrix_cold": [], "naive_warm": [],
                                   "gpumatrix_warm": [], "gpumatrix_warm_reuse": []}
    print(f"{len(expand_cells(matrix).cells)} cells in {MATRIX.name}; {len(cells)} buildable CPU cells: "
          f"{', '.join(c.id for c in cells)}", flush=True)
    # The content-addressed tags gpumatrix will look for: an image that already carries one (built by an
    # earlier run or test with the same wheels and base) would be reused, and the cold run would not be cold.
    probe_house = Wheelhouse(work / "tag-probe", resolve_ttl_s=0)
    gm_tags = {render_build_context(c, matrix, probe_house, ensure_base(engine, c.base.image)).tag for c in cells}
    shutil.rmtree(work / "tag-probe", ignore_errors=True)
    created: set[str] = set(gm_tags)  # images this benchmark built (ids) or will build (tags), removed when cold
    for i in range(args.cold_runs):
        reset_cold(engine, created, cache_dir, naive_dir)
        runs["naive_cold"].append(naive_loop(engine, matrix, cells, work, naive_port, naive_secret))
        print(f"cold {i + 1}: naive {runs['naive_cold'][-1]['seconds']:.1f} s", flush=True)
        reset_cold(engine, created, cache_dir, naive_dir)
        shutil.rmtree(work / "results", ignore_errors=True)
        runs["gpumatrix_cold"].append(gpumatrix_run(matrix_path, work / "results", args.jobs, cache_dir))
        created.update(runs["gpumatrix_cold"][-1]["images"].values())
        print(f"cold {i + 1}: gpumatrix {runs['gpumatrix_cold'][-1]['seconds']:.1f} s", flush=True)
    naive_loop(engine, matrix, cells, work, naive_port, naive_secret)  # make the naive side warm too
    for i in range(args.warm_runs):
        runs["naive_warm"].append(naive_loop(engine, matrix, cells, work, naive_port, naive_secret))
        runs["gpumatrix_warm"].append(gpumatrix_run(matrix_path, work / "results", args.jobs, cache_dir))
        runs["gpumatrix_warm_reuse"].append(gpumatrix_run(matrix_path, work / "results", args.jobs, cache_dir,
                                                          reuse=True))
        print(f"warm {i + 1}: naive {runs['naive_warm'][-1]['seconds']:.1f} s, gpumatrix "
              f"{runs['gpumatrix_warm'][-1]['seconds']:.1f} s, with --reuse-probes "
              f"{runs['gpumatrix_warm_reuse'][-1]['seconds']:.2f} s", flush=True)

    for run in runs["gpumatrix_warm"] + runs["gpumatrix_warm_reuse"]:
        created.update(run["images"].values())
    if not args.keep_images:
        reset_cold(engine, created, cache_dir, naive_dir)

    stats = {k: spread(v) for k, v in runs.items()}
    m = {k: v["median"] for k, v in stats.items()}
    # Own overhead: wall time minus the probe containers' time (each cell's timings.probe_s). A cell whose
    # saved probe results stand (--reuse-probes) records probe_s 0: such a run's wall time is all overhead.
    for run in runs["gpumatrix_warm"] + runs["gpumatrix_warm_reuse"]:
        run["overhead_s"] = run["seconds"] - run["probe_container_s"]
    overhead = spread(runs["gpumatrix_warm"], "overhead_s")
    overhead_reuse = spread(runs["gpumatrix_warm_reuse"], "overhead_s")
    cold_dl = runs["gpumatrix_cold"][-1]["downloads"] if runs["gpumatrix_cold"] else {}
    rows = [
        ("cold", "naive_cold", "gpumatrix_cold"),
        ("warm (probes run again)", "naive_warm", "gpumatrix_warm"),
        ("warm, --reuse-probes", "naive_warm", "gpumatrix_warm_reuse"),
    ]

    def cell(name: str) -> str:
        st = stats[name]
        return f"{st['median']:.2f} s ({st['min']:.2f}-{st['max']:.2f})"

    print()
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {host.host_type()}; engine "
          f"{host.engine.get('version')}; jobs={args.jobs}; median (min-max) of {args.cold_runs} cold / "
          f"{args.warm_runs} warm runs")
    print(f"{'':26}{'naive loop':>28}{'gpumatrix':>28}{'speed-up':>10}")
    for name, naive, gm in rows:
        print(f"{name:26}{cell(naive):>28}{cell(gm):>28}{m[naive] / m[gm]:>9.1f}x")
    print(f"gpumatrix's own overhead in a warm run (wall minus probe containers), 12 cells: "
          f"{overhead['median']:.2f} s ({overhead['min']:.2f}-{overhead['max']:.2f}); with --reuse-probes "
          f"{overhead_reuse['median']:.2f} s ({overhead_reuse['min']:.2f}-{overhead_reuse['max']:.2f})")
    if cold_dl:
        last = runs["gpumatrix_cold"][-1]
        print("gpumatrix, cold: bytes each cell's resolution fetched into the wheelhouse / found there:")
        for cid, d in sorted(cold_dl.items()):
            print(f"  {cid}: {d['upstream_bytes']} / {d['cache_bytes']} ({d['files']} wheels)")
        print(f"  fetched in all: {last['downloaded_bytes']} bytes; the wheelhouse holds {last['wheelhouse_bytes']} "
              f"bytes (each wheel once); images built: {len(set(last['images'].values()))} for "
              f"{len(last['images'])} cells; builds started by gpumatrix: {len(last['builds'])}")
        print(f"naive loop, cold: fetched {runs['naive_cold'][-1]['downloaded_bytes']} bytes (every cell its own)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"runs": runs, "stats_s": stats, "medians_s": m, "warm_overhead_s": overhead,
                                          "warm_reuse_overhead_s": overhead_reuse,
                                          "jobs": args.jobs, "cores": os.cpu_count(),
                                          "no_torch_index": args.no_torch_index,
                                          "engine": host.engine.get("version")}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
