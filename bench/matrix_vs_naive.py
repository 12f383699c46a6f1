#!/usr/bin/env python3
"""gpumatrix against the way people do it today, on the same matrix, cold and warm, side by side.

The naive side is the shell loop users write: for each cell, ``docker build`` (same Dockerfiles,
same build args, classic builder) then ``docker run`` of the same probe suite. The gpumatrix side is
``invoke matrix --jobs N``. Both get the same inputs: the same base images, the same package
sources (local wheels are served to both on loopback, so the naive side is not charged for putting
the 190 MB torch wheel in its build context), the same probes.

* cold: both sides start with none of the cells' images, an empty build cache (the cells' layers
  are removed; the base images stay) and an empty gpumatrix wheel cache.
* warm: nothing changed since the last run. gpumatrix is measured twice: plain (probes run again)
  and with --reuse-probes (saved probe results stand when image, probe suite, host and settings are
  unchanged).

The matrix (bench/matrix-bench.yaml) has 12 cells: 4 CPU cells that really build here (two bases ×
torch 2.13.0 from the wheel folder and the same wheel as a local-wheel entry) and 8 GPU or
not-applicable cells, which gpumatrix plans and skips on a host without GPUs. The naive loop is
given only the 4 buildable cells.

Usage (needs an engine: ``eval "$(./dev engine)"`` first)::

    .venv/bin/python bench/matrix_vs_naive.py --cold-runs 1 --warm-runs 3 --jobs 2

Prints a table and writes bench/results/matrix-vs-naive.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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
from gpumatrix.engine.client import MANAGED_LABEL, Engine, tar_context  # noqa: E402
from gpumatrix.host import discover_host  # noqa: E402
from gpumatrix.images.build import TEMPLATE_FOR_VENDOR, render_build_context
from gpumatrix.resources import templates_dir  # noqa: E402
from gpumatrix.images.sources import PackageServer, host_pip_settings  # noqa: E402

MATRIX = ROOT / "bench" / "matrix-bench.yaml"
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


def buildable_cells():
    matrix = load_matrix(MATRIX)
    cells = [c for c in expand_cells(matrix).cells if c.applicable and c.vendor == "cpu"]
    return matrix, cells


def reset_cold(engine: Engine, cache_dir: Path) -> None:
    """Remove the cells' images (both sides), the layers only they used, and the wheel cache."""
    for img in engine.images_with_label(MANAGED_LABEL):
        if img.labels.get("io.gpumatrix.cell", "").startswith(("cpu-", "tools-")):
            engine.remove_image(img.id)
    for img in engine.api.images(name="naive-bench"):
        engine.remove_image(img["Id"])
    engine.api.prune_images(filters={"dangling": True})
    shutil.rmtree(cache_dir, ignore_errors=True)


def naive_loop(engine: Engine, matrix, cells, workdir: Path, port: int) -> dict:
    """The shell loop: docker build + docker run per cell, one after the other, via the docker CLI.

    Its package server keeps one port for the whole benchmark: the URLs are build args, and a naive
    user's build args do not change between runs, so the engine's layer cache must stay valid."""
    ctx = workdir / "ctx"
    shutil.rmtree(ctx, ignore_errors=True)
    shutil.copytree(templates_dir(), ctx, ignore=shutil.ignore_patterns('__init__.py', '__pycache__'))
    env = dict(os.environ, DOCKER_BUILDKIT="0")  # Debian's docker.io 20.10 engine has no buildx
    pip = host_pip_settings()
    started = time.monotonic()
    statuses = {}
    with PackageServer(proxy_remote=False, port=port) as server:
        for cell in cells:
            recipe = render_build_context(cell, matrix, pip, None)
            args = {**recipe.build_args, **server.build_args(recipe.sources)}
            args["TORCH_REQUIREMENT"] = (server.url_for_file(recipe.sources.wheel) if recipe.sources.wheel
                                         else recipe.torch_requirement)
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
    return {"seconds": time.monotonic() - started, "statuses": statuses}


def gpumatrix_run(results: Path, jobs: int, cache_dir: Path, reuse: bool = False) -> dict:
    argv = [INVOKE, "matrix", "--matrix", str(MATRIX), "--results", str(results), "--jobs", str(jobs)]
    if reuse:
        argv.append("--reuse-probes")
    env = dict(os.environ, GPUMATRIX_CACHE_DIR=str(cache_dir))
    started = time.monotonic()
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"invoke matrix failed ({out.returncode}):\n{out.stderr[-3000:]}")
    statuses, downloads, probe_s = {}, {}, 0.0
    for f in sorted((results / "cells").glob("*.json")):
        d = json.loads(f.read_text())
        statuses[d["cell_id"]] = d["status"]
        probe_s += float((d.get("timings") or {}).get("probe_s") or 0.0)
        if (d.get("image") or {}).get("downloads"):
            downloads[d["cell_id"]] = d["image"]["downloads"]
    return {"seconds": seconds, "statuses": statuses, "downloads": downloads, "probe_container_s": probe_s}


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cold-runs", type=int, default=1)
    ap.add_argument("--warm-runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "matrix-vs-naive.json"))
    args = ap.parse_args()

    engine = Engine.connect()
    ensure_tools_base(engine)
    matrix, cells = buildable_cells()
    work = Path(tempfile.mkdtemp(prefix="gpumatrix-bench-"))
    with socket.socket() as probe_port:
        probe_port.bind(("127.0.0.1", 0))
        naive_port = probe_port.getsockname()[1]
    cache_dir = work / "wheel-cache"
    host = discover_host(engine.describe())
    runs: dict[str, list[dict]] = {"naive_cold": [], "gpumatrix_cold": [], "naive_warm": [],
                                   "gpumatrix_warm": [], "gpumatrix_warm_reuse": []}
    print(f"{len(expand_cells(matrix).cells)} cells in {MATRIX.name}; {len(cells)} buildable CPU cells: "
          f"{', '.join(c.id for c in cells)}", flush=True)
    for i in range(args.cold_runs):
        reset_cold(engine, cache_dir)
        runs["naive_cold"].append(naive_loop(engine, matrix, cells, work, naive_port))
        print(f"cold {i + 1}: naive {runs['naive_cold'][-1]['seconds']:.1f} s", flush=True)
        reset_cold(engine, cache_dir)
        shutil.rmtree(work / "results", ignore_errors=True)
        runs["gpumatrix_cold"].append(gpumatrix_run(work / "results", args.jobs, cache_dir))
        print(f"cold {i + 1}: gpumatrix {runs['gpumatrix_cold'][-1]['seconds']:.1f} s", flush=True)
    naive_loop(engine, matrix, cells, work, naive_port)  # make the naive side warm too (its images exist)
    for i in range(args.warm_runs):
        runs["naive_warm"].append(naive_loop(engine, matrix, cells, work, naive_port))
        runs["gpumatrix_warm"].append(gpumatrix_run(work / "results", args.jobs, cache_dir))
        runs["gpumatrix_warm_reuse"].append(gpumatrix_run(work / "results", args.jobs, cache_dir, reuse=True))
        print(f"warm {i + 1}: naive {runs['naive_warm'][-1]['seconds']:.1f} s, gpumatrix "
              f"{runs['gpumatrix_warm'][-1]['seconds']:.1f} s, with --reuse-probes "
              f"{runs['gpumatrix_warm_reuse'][-1]['seconds']:.2f} s", flush=True)

    m = {k: median([r["seconds"] for r in v]) for k, v in runs.items()}
    overhead = median([r["seconds"] - r["probe_container_s"] for r in runs["gpumatrix_warm"]])
    cold_dl = runs["gpumatrix_cold"][-1]["downloads"] if runs["gpumatrix_cold"] else {}
    rows = [
        ("cold", m["naive_cold"], m["gpumatrix_cold"]),
        ("warm (probes run again)", m["naive_warm"], m["gpumatrix_warm"]),
        ("warm, --reuse-probes", m["naive_warm"], m["gpumatrix_warm_reuse"]),
    ]
    print()
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {host.host_type()}; engine "
          f"{host.engine.get('version')}; jobs={args.jobs}; medians of {args.cold_runs} cold / {args.warm_runs} warm runs")
    print(f"{'':28}{'naive loop':>12}{'gpumatrix':>12}{'speed-up':>10}")
    for name, naive, gm in rows:
        print(f"{name:28}{naive:>11.1f}s{gm:>11.2f}s{naive / gm:>9.1f}x")
    print(f"gpumatrix's own overhead in a warm run (wall minus probe containers), 12 cells: {overhead:.2f} s")
    if cold_dl:
        print("downloads per cell, cold (upstream bytes / from the host's wheel cache):")
        for cid, d in sorted(cold_dl.items()):
            print(f"  {cid}: {d['upstream_bytes']} / {d['cache_bytes']} ({d['files']} files)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"runs": runs, "medians_s": m, "warm_overhead_s": overhead,
                                          "jobs": args.jobs, "cores": os.cpu_count(),
                                          "engine": host.engine.get("version")}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
