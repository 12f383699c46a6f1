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
            "resume": "continue an interrupted run in the same results folder with the cells it did not finish"})
@_exits
def matrix(c, matrix=None, only=None, results=None, force=False, rebuild=False, quick=False, no_perf=False,
           format=None, resume=False):
    """Build every cell's image, run the probes inside it, and print the compatibility table."""
    s = _settings(c, matrix=matrix, results=results, format=format)
    return cli.run_matrix(s["matrix"], s["results"], only, force=force, rebuild=rebuild, quick=quick,
                          perf=False if no_perf else None, fmt=s["format"], resume=resume)


@task(name="list", help={"matrix": COMMON["matrix"], "only": COMMON["only"], "format": "text or json"})
@_exits
def list_(c, matrix=None, only=None, format="text"):
    """Show the expanded cells, and why each excluded or not-applicable one is so."""
    return cli.list_cells(_settings(c, matrix=matrix)["matrix"], only, format)


@task(help={**COMMON, "rebuild": "rebuild even when an image with the same inputs exists"})
@_exits
def build(c, matrix=None, only=None, results=None, rebuild=False):
    """Build the selected cells' images (no probes)."""
    s = _settings(c, matrix=matrix, results=results)
    return cli.run_matrix(s["matrix"], s["results"], only, probe=False, rebuild=rebuild)


@task(help={**COMMON, "force": "run GPU cells even where this host has no GPU of their vendor",
            "quick": "facts-and-smoke probes only", "no_perf": "skip the performance probes (layer 6)",
            "format": "table format: text, markdown or json"})
@_exits
def probe(c, matrix=None, only=None, results=None, force=False, quick=False, no_perf=False, format=None):
    """Run the probes in images already built (by 'invoke build' or an earlier 'invoke matrix')."""
    s = _settings(c, matrix=matrix, results=results, format=format)
    return cli.run_matrix(s["matrix"], s["results"], only, build=False, force=force, quick=quick,
                          perf=False if no_perf else None, fmt=s["format"])


@task(help={"results": COMMON["results"], "format": "text, markdown or json", "only": COMMON["only"]})
@_exits
def report(c, results=None, format=None, only=None):
    """Re-render the table from saved results (no engine needed)."""
    s = _settings(c, results=results, format=format)
    return cli.report(s["results"], s["format"], only=only)


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


ns = Collection(matrix, list_, build, probe, report, clean, diagnose_)
ns.configure({"gpumatrix": {"matrix": "matrix.yaml", "results": "results", "format": "text"}})
