"""gpumatrix tasks: `invoke --list` shows them, `invoke --help TASK` explains each flag.

A thin shell: every task parses its flags, calls one function of gpumatrix.cli, and turns a
gpumatrix error into invoke.Exit with that error's exit code. Defaults live in the collection's
configuration (override them in invoke.yaml or with INVOKE_GPUMATRIX_* variables).
"""

from __future__ import annotations

import sys
from functools import wraps

from invoke import Collection, Exit, task

from gpumatrix import cli
from gpumatrix.diagnose import main as diagnose_main
from gpumatrix.errors import GpumatrixError

COMMON = {
    "matrix": "path of the matrix file (default: matrix.yaml)",
    "only": "glob patterns over cell ids, comma-separated, e.g. 'cu12*-torch2.{8,9}*'",
    "results": "results folder (default: results)",
}


JOBS = ("builds to run at once (default 1; also INVOKE_GPUMATRIX_JOBS); probes always run one per GPU, "
        "CPU probes at most one per two cores")
NVIDIA_MODE = "how NVIDIA GPUs reach containers: auto, gpus, cdi or runtime (default: run.nvidia_mode)"
FLEET = {
    "shard": "run shard K of N (e.g. 2/4): cells sorted by id, split into N even contiguous shares",
    "baseline": "regression gate: exit 4 when a cell that passed in this baseline (merged JSON, report JSON or "
                "results folder) fails now on the same host type",
    "push": "push each built image to this registry (host[:port][/namespace]) and record its digest",
}


def _settings(c, **given):
    conf = c.config.gpumatrix
    return {k: (v if v is not None else conf.get(k)) for k, v in given.items()}


def _exits(fn):
    @wraps(fn)
    def wrapper(c, *args, **kwargs):
        try:
            out = fn(c, *args, **kwargs)
        except GpumatrixError as err:
            raise Exit(f"gpumatrix: {err}", code=err.exit_code) from None
        if out:
            sys.stdout.write(out)
    return wrapper


@task(help={**COMMON, "force": "run GPU cells even where this host has no GPU of their vendor",
            "rebuild": "rebuild images even when an image with the same inputs exists",
            "quick": "facts-and-smoke probes only (about 10 s per cell)",
            "no_perf": "skip the performance probes (layer 6)",
            "format": "table format: text, markdown or json",
            "resume": "continue an interrupted run in the same results folder with the cells it did not finish",
            "shard": FLEET["shard"], "baseline": FLEET["baseline"],
            "push": FLEET["push"], "nvidia_mode": NVIDIA_MODE, "jobs": JOBS,
            "reuse_probes": "reuse a cell's saved probe results when its image, the probe suite, this host "
                            "and the settings are all unchanged (no probe container runs)"})
@_exits
def matrix(c, matrix=None, only=None, results=None, force=False, rebuild=False, quick=False, no_perf=False,
           format=None, resume=False, shard=None, push=None, baseline=None, nvidia_mode=None, jobs=None,
           reuse_probes=False):
    """Build every cell's image, run the probes inside it, and print the compatibility table."""
    s = _settings(c, matrix=matrix, results=results, format=format, jobs=jobs)
    return cli.run_matrix(s["matrix"], s["results"], only, force=force, rebuild=rebuild, quick=quick,
                          perf=False if no_perf else None, fmt=s["format"], resume=resume, shard=shard,
                          push=push, baseline=baseline, nvidia_mode=nvidia_mode, jobs=int(s["jobs"]),
                          reuse_probes=reuse_probes)


@task(name="list", help={"matrix": COMMON["matrix"], "only": COMMON["only"],
                         "format": "text, json, or gha ({\"include\": [...]} for a GitHub Actions job matrix)"})
@_exits
def list_(c, matrix=None, only=None, format="text"):
    """Show the expanded cells, and why each excluded or not-applicable one is so."""
    return cli.list_cells(_settings(c, matrix=matrix)["matrix"], only, format)


@task(help={**COMMON, "rebuild": "rebuild even when an image with the same inputs exists",
            "shard": FLEET["shard"], "push": FLEET["push"], "jobs": JOBS})
@_exits
def build(c, matrix=None, only=None, results=None, rebuild=False, shard=None, push=None, jobs=None):
    """Build the selected cells' images (no probes); with --push, publish them for the fleet."""
    s = _settings(c, matrix=matrix, results=results, jobs=jobs)
    return cli.run_matrix(s["matrix"], s["results"], only, probe=False, rebuild=rebuild, shard=shard, push=push,
                          jobs=int(s["jobs"]))


@task(help={**COMMON, "force": "run GPU cells even where this host has no GPU of their vendor",
            "quick": "facts-and-smoke probes only", "no_perf": "skip the performance probes (layer 6)",
            "format": "table format: text, markdown or json", "shard": FLEET["shard"],
            "from_": "pull each cell's image by digest instead of using a local one: from a registry (its latest "
                     "push of the cell) or from a build job's results folder (exactly the digests it pushed)",
            "baseline": FLEET["baseline"], "nvidia_mode": NVIDIA_MODE})
@_exits
def probe(c, matrix=None, only=None, results=None, force=False, quick=False, no_perf=False, format=None,
          shard=None, from_=None, baseline=None, nvidia_mode=None):
    """Run the probes in images already built here, or pulled by digest with --from."""
    s = _settings(c, matrix=matrix, results=results, format=format)
    return cli.run_matrix(s["matrix"], s["results"], only, build=False, force=force, quick=quick,
                          perf=False if no_perf else None, fmt=s["format"], shard=shard, pull_from=from_,
                          baseline=baseline, nvidia_mode=nvidia_mode)


@task(help={"results": COMMON["results"], "format": "text, markdown, json, html (one self-contained page) or junit",
            "only": COMMON["only"], "baseline": FLEET["baseline"]})
@_exits
def report(c, results=None, format=None, only=None, baseline=None):
    """Re-render the table from saved results (no engine needed)."""
    s = _settings(c, results=results, format=format)
    return cli.report(s["results"], s["format"], only=only, baseline=baseline)


@task(iterable=["results"],
      help={"results": "a results folder, a folder of them (one per host or shard), a glob, or a merged/report "
                       "JSON file; repeat the flag for more (default: results)",
            "format": "text, markdown (GitHub job summary), json (merged; a baseline), html or junit",
            "output": "write the table to this file instead of standard output",
            "baseline": FLEET["baseline"]})
@_exits
def merge(c, results=None, format=None, output=None, baseline=None):
    """Merge the results of many hosts into one table: cells × host types, conflicts shown."""
    s = _settings(c, format=format)
    return cli.merge(results or [c.config.gpumatrix.results], s["format"], output=output, baseline=baseline)


@task(iterable=["results", "require"],
      help={"results": "results folders or merged JSON to choose from; repeat for more (default: results)",
            "host_type": "the host type to recommend for, as the merged table labels it "
                         "(default: this host's, e.g. 'NVIDIA H100 80GB HBM3 · 570.86' or 'cpu')",
            "vendor": "only images for this vendor: nvidia, amd or cpu",
            "min_torch": "only torch at least this version, e.g. 2.14",
            "require": "probe ids (globs) that must pass, not just skip, e.g. 'math_libraries.collectives'; "
                       "repeat for more",
            "format": "text or json"})
@_exits
def recommend(c, results=None, host_type=None, vendor=None, min_torch=None, require=None, format="text"):
    """Name the known-good image for this host type (newest torch, critical probes pass), pinned by digest."""
    return cli.recommend(results or [c.config.gpumatrix.results], host_type=host_type, vendor=vendor,
                         min_torch=min_torch, require=require or [], fmt=format)


@task(help={"dry_run": "only list what would be removed", "only": COMMON["only"]})
@_exits
def clean(c, dry_run=False, only=None):
    """Remove the containers and images gpumatrix made (those carrying its label), nothing else."""
    return cli.clean(dry_run=dry_run, only=only)


@task(name="diagnose", help={"log": "the log to classify: a file, or - for standard input",
                             "json": "print only {\"cause\", \"remedy\", \"evidence\"} as JSON"})
def diagnose_(c, log="-", json=False):
    """Say why a pasted log failed (traceback, build log, docker CLI error): the cause and the remedy."""
    code = diagnose_main((["--json"] if json else []) + [log])
    if code:
        raise Exit(code=code)


@task(help={"matrix": COMMON["matrix"], "only": COMMON["only"], "nvidia_mode": NVIDIA_MODE})
def doctor(c, matrix=None, only=None, nvidia_mode=None):
    """Preflight: engine, GPU passthrough, drivers vs CUDA, GPU archs vs torch, disk and shm, each with its fix."""
    try:
        text, ok = cli.doctor(_settings(c, matrix=matrix)["matrix"], only, nvidia_mode=nvidia_mode)
    except GpumatrixError as err:
        raise Exit(f"gpumatrix: {err}", code=err.exit_code) from None
    sys.stdout.write(text)
    if not ok:
        raise Exit(code=1)


ns = Collection(matrix, list_, build, probe, report, merge, recommend, clean, diagnose_, doctor)
ns.configure({"gpumatrix": {"matrix": "matrix.yaml", "results": "results", "format": "text", "jobs": 1}})
