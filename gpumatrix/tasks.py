"""The gpumatrix tasks: one invoke Collection behind both ``gpumatrix …`` and ``invoke …`` in a checkout.

A thin shell, as in invoke's own ``tasks.py``: every task parses its flags, calls one function of
:mod:`gpumatrix.cli`, and turns a :class:`~gpumatrix.errors.GpumatrixError` into ``invoke.Exit`` with that
error's exit code (the table is :class:`~gpumatrix.errors.ExitCode`). Defaults live in the collection's
configuration (override them in ``invoke.yaml`` or with ``INVOKE_GPUMATRIX_*`` variables), not in the
signatures.

Short flags are chosen by hand, once, in :data:`SHORT_FLAGS`: a letter means the same flag in every task,
and ``-h`` is always help.
"""

from __future__ import annotations

import sys
from functools import wraps
from typing import Any, Callable

from invoke import Collection, Exit, Task, task

from gpumatrix import cli
from gpumatrix.errors import ExitCode, GpumatrixError, UsageError, exit_codes_text
from gpumatrix.images.naming import DEFAULT_NAMESPACE, NAMESPACE_ENV
from gpumatrix.run.request import RunRequest

# One letter, one meaning, in every task. Flags not listed have only their long form.
SHORT_FLAGS = {
    "matrix": "m",
    "results": "r",
    "format": "f",
    "output": "o",
    "jobs": "j",
    "quick": "q",
    "baseline": "b",
    "dry-run": "n",
}
assert "h" not in SHORT_FLAGS.values() and len(set(SHORT_FLAGS.values())) == len(SHORT_FLAGS)

DEFAULTS = {"matrix": "matrix.yaml", "results": "results", "format": "text", "jobs": 1}
# Tasks that name images: their help says how (the image namespace, gpumatrix.images.naming).
IMAGE_TASKS = ("matrix", "build", "probe", "clean")
IMAGE_NAMES_HELP = (f"Images are named NAMESPACE/BASE:torchVERSION-HASH, pushed as REGISTRY/NAMESPACE/BASE:…;\n"
                    f"NAMESPACE is ${NAMESPACE_ENV} (default {DEFAULT_NAMESPACE}). clean removes only names in it;\n"
                    f"a fleet's build and probe hosts use the same one.")


class GpumatrixTask(Task):
    """An invoke task whose short flags come from :data:`SHORT_FLAGS` and whose help ends with the exit codes."""

    def __init__(self, body: Callable, *args: Any, **kwargs: Any) -> None:
        kwargs["auto_shortflags"] = False
        super().__init__(body, *args, **kwargs)
        doc = (self.__doc__ or "").rstrip()
        if body.__name__ in IMAGE_TASKS:
            doc += "\n\n" + IMAGE_NAMES_HELP
        self.__doc__ = doc + "\n\nExit codes:\n" + exit_codes_text() + "\n"

    def arg_opts(self, name: str, default: str, taken_names: set[str]) -> dict[str, Any]:
        opts = super().arg_opts(name, default, taken_names)
        long_name = opts["names"][0]
        if long_name in SHORT_FLAGS:
            opts["names"] = [long_name, SHORT_FLAGS[long_name]]
        return opts


def gtask(*args: Any, **kwargs: Any) -> Any:
    return task(*args, klass=GpumatrixTask, **kwargs)


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
RUN_FLAGS = {
    "force": "run GPU cells even where this host has no GPU of their vendor",
    "rebuild": "rebuild images from scratch (no layer cache), even when an image with the same inputs exists",
    "quick": "facts-and-smoke probes only (about 10 s per cell)",
    "no_perf": "skip the performance probes (layer 6)",
    "format": "table format: text, markdown, json, html (one self-contained page) or junit",
    "output": "write the table to this file (atomically) instead of standard output",
    "resume": "continue the interrupted run in this results folder with the cells it did not finish",
    "reuse_probes": "reuse a cell's saved probe results when its image, the probe suite, this host and the "
                    "settings are all unchanged (no probe container runs)",
    "no_compile_cache": "do not keep the probes' compile caches (MIOpen, rocFFT, CUDA, Inductor, Triton) per "
                        "image between runs; every run then compiles afresh",
}


def _settings(c: Any, **given: Any) -> dict[str, Any]:
    conf = c.config.gpumatrix
    return {k: (v if v is not None else conf.get(k)) for k, v in given.items()}


def _exits(fn: Callable) -> Callable:
    """Print what ``fn`` returns; turn gpumatrix errors and Ctrl-C into one line and an exit code."""
    @wraps(fn)
    def wrapper(c: Any, *args: Any, **kwargs: Any) -> None:
        try:
            out = fn(c, *args, **kwargs)
        except GpumatrixError as err:
            raise Exit(f"gpumatrix: {err}", code=int(err.exit_code)) from None
        except KeyboardInterrupt:
            raise Exit("gpumatrix: interrupted", code=int(ExitCode.INTERRUPTED)) from None
        if out:
            sys.stdout.write(out)
    return wrapper


def _request(c: Any, **flags: Any) -> RunRequest:
    s = _settings(c, matrix=flags.pop("matrix"), results=flags.pop("results"),
                  **{k: flags.pop(k) for k in ("format", "jobs") if k in flags})
    return RunRequest.from_flags(matrix_path=s["matrix"], results_path=s["results"], fmt=s.get("format"),
                                 jobs=s.get("jobs"), **flags)


@gtask(help={**COMMON, **RUN_FLAGS, "shard": FLEET["shard"], "baseline": FLEET["baseline"],
             "push": FLEET["push"], "nvidia_mode": NVIDIA_MODE, "jobs": JOBS})
@_exits
def matrix(c, matrix=None, only=None, results=None, force=False, rebuild=False, quick=False, no_perf=False,
           format=None, output=None, resume=False, shard=None, push=None, baseline=None, nvidia_mode=None,
           jobs=None, reuse_probes=False, no_compile_cache=False):
    """Build every cell's image, run the probes inside it, and print the compatibility table."""
    return cli.run_matrix(_request(c, matrix=matrix, results=results, format=format, jobs=jobs, only=only,
                                   output=output, force=force, rebuild=rebuild, quick=quick,
                                   perf=False if no_perf else None, resume=resume, shard=shard, push=push,
                                   baseline=baseline, nvidia_mode=nvidia_mode, reuse_probes=reuse_probes,
                                   compile_cache=False if no_compile_cache else None))


@gtask(name="list", help={"matrix": COMMON["matrix"], "only": COMMON["only"],
                          "format": "text, json, or gha ({\"include\": [...]} for a GitHub Actions job matrix)"})
@_exits
def list_(c, matrix=None, only=None, format=None):
    """Show the expanded cells, and why each excluded or not-applicable one is so."""
    s = _settings(c, matrix=matrix, format=format)
    return cli.list_cells(s["matrix"], only, s["format"])


@gtask(help={**COMMON, "rebuild": RUN_FLAGS["rebuild"], "shard": FLEET["shard"], "push": FLEET["push"],
             "jobs": JOBS})
@_exits
def build(c, matrix=None, only=None, results=None, rebuild=False, shard=None, push=None, jobs=None):
    """Build the selected cells' images (no probes); with --push, publish them for the fleet."""
    return cli.run_matrix(_request(c, matrix=matrix, results=results, jobs=jobs, only=only, probe=False,
                                   rebuild=rebuild, shard=shard, push=push))


@gtask(help={**COMMON, "force": RUN_FLAGS["force"], "quick": RUN_FLAGS["quick"], "no_perf": RUN_FLAGS["no_perf"],
             "format": RUN_FLAGS["format"], "output": RUN_FLAGS["output"], "shard": FLEET["shard"],
             "no_compile_cache": RUN_FLAGS["no_compile_cache"],
             "from_": "pull each cell's image by digest instead of using a local one: from a registry (its latest "
                      "push of the cell) or from a build job's results folder (exactly the digests it pushed)",
             "baseline": FLEET["baseline"], "nvidia_mode": NVIDIA_MODE})
@_exits
def probe(c, matrix=None, only=None, results=None, force=False, quick=False, no_perf=False, format=None,
          output=None, shard=None, from_=None, baseline=None, nvidia_mode=None, no_compile_cache=False):
    """Run the probes in images already built here, or pulled by digest with --from."""
    return cli.run_matrix(_request(c, matrix=matrix, results=results, format=format, only=only, build=False,
                                   output=output,
                                   force=force, quick=quick, perf=False if no_perf else None, shard=shard,
                                   pull_from=from_, baseline=baseline, nvidia_mode=nvidia_mode,
                                   compile_cache=False if no_compile_cache else None))


@gtask(help={"results": COMMON["results"], "format": RUN_FLAGS["format"], "output": RUN_FLAGS["output"],
             "only": COMMON["only"], "baseline": FLEET["baseline"]})
@_exits
def report(c, results=None, format=None, output=None, only=None, baseline=None):
    """Re-render the table from saved results (no engine needed)."""
    s = _settings(c, results=results, format=format)
    return cli.report(s["results"], s["format"], only=only, baseline=baseline, output=output)


@gtask(iterable=["results"],
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


@gtask(iterable=["results", "require"],
       help={"results": "results folders or merged JSON to choose from; repeat for more (default: results)",
             "host_type": "the host type to recommend for, as the merged table labels it "
                          "(default: this host's, e.g. 'NVIDIA H100 80GB HBM3 · 570.86' or 'cpu')",
             "vendor": "only images for this vendor: nvidia, amd or cpu",
             "min_torch": "only torch at least this version, e.g. 2.14",
             "require": "probe ids (globs) that must pass, not just skip, e.g. 'math_libraries.collectives'; "
                        "repeat for more",
             "format": "text or json"})
@_exits
def recommend(c, results=None, host_type=None, vendor=None, min_torch=None, require=None, format=None):
    """Name the known-good image for this host type (newest torch, critical probes pass), pinned by digest."""
    s = _settings(c, format=format)
    return cli.recommend(results or [c.config.gpumatrix.results], host_type=host_type, vendor=vendor,
                         min_torch=min_torch, require=require or [], fmt=s["format"])


@gtask(help={"dry_run": "only list what would be removed", "only": COMMON["only"]})
@_exits
def clean(c, dry_run=False, only=None):
    """Remove the containers and images gpumatrix made (those carrying its label), nothing else."""
    return cli.clean(dry_run=dry_run, only=only)


@gtask(name="diagnose", help={"log": "the log to classify: a file, or - for standard input",
                              "cell": "a saved cell result (results/cells/<cell>.json): diagnose its failure with "
                                      "the facts measured for that cell (driver, torch build, device nodes, ...)",
                              "json": "print {\"cause\", \"remedy\", \"evidence\", \"confidence\", "
                                      "\"alternatives\"} as JSON"})
@_exits
def diagnose_(c, log=None, cell=None, json=False):
    """Say why a pasted log or a saved cell failed (traceback, build log, docker CLI error): the cause and the remedy."""
    if log is not None and cell is not None:
        raise UsageError("--cell", "give either --log or --cell, not both")
    if cell is not None:
        source = ["--cell", cell]
    else:
        if log is None:
            if sys.stdin.isatty():
                raise UsageError("--log", "give the log to classify: a file, or '-' to read it from standard input "
                                          "(e.g. 'docker run … 2>&1 | gpumatrix diagnose --log -'), or a saved "
                                          "cell with --cell results/cells/<cell>.json")
            log = "-"
        source = [log]
    from gpumatrix.diagnose import main as diagnose_main  # its rules load only for this task

    code = diagnose_main((["--json"] if json else []) + source)
    if code:
        raise Exit(code=code)


@gtask(help={"matrix": COMMON["matrix"], "only": COMMON["only"], "nvidia_mode": NVIDIA_MODE})
@_exits
def doctor(c, matrix=None, only=None, nvidia_mode=None):
    """Preflight: engine, GPU passthrough, drivers vs CUDA, GPU archs vs torch, disk and shm, each with its fix."""
    text, ok = cli.doctor(_settings(c, matrix=matrix)["matrix"], only, nvidia_mode=nvidia_mode)
    sys.stdout.write(text)
    if not ok:
        raise Exit(code=int(ExitCode.FAILED))


ns = Collection(matrix, list_, build, probe, report, merge, recommend, clean, diagnose_, doctor)
ns.configure({"gpumatrix": dict(DEFAULTS)})
