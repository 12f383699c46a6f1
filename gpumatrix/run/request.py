"""One run of the matrix as a single frozen object: which cells, what to do with them, and how.

The tasks build it once from their flags (:meth:`RunRequest.from_flags` checks every value and raises
:class:`~gpumatrix.errors.UsageError`, exit 2, naming the flag); everything downstream reads typed
fields instead of a dozen loose keyword arguments. The matrix's own ``run:`` section
(:class:`~gpumatrix.config.matrix.RunOptions`: shm, timeouts, limits) is separate: it describes the
containers, this describes the invocation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from gpumatrix.config.matrix import NVIDIA_MODES
from gpumatrix.config.select import parse_shard
from gpumatrix.errors import ConfigError, UsageError
from gpumatrix.images.registry import normalize_registry


@dataclass(frozen=True)
class RunRequest:
    matrix_path: str = "matrix.yaml"
    results_path: str = "results"
    only: str | None = None  # glob patterns over cell ids, comma-separated
    shard: str | None = None  # "K/N"
    build: bool = True  # False: probe images that exist (or are pulled with pull_from)
    probe: bool = True  # False: build only
    force: bool = False  # run GPU cells on a host without that vendor's GPU
    rebuild: bool = False  # from scratch, no layer cache
    quick: bool = False  # facts and smoke probes only
    perf: bool | None = None  # None: the matrix's run.perf
    resume: bool = False
    jobs: int = 1
    reuse_probes: bool = False
    compile_cache: bool = True  # keep the probes' compile caches per image (False: --no-compile-cache)
    push: str | None = None  # registry to publish built images to
    pull_from: str | None = None  # registry, or a build job's results folder
    baseline: str | None = None  # regression gate
    nvidia_mode: str | None = None  # None: the matrix's run.nvidia_mode
    fmt: str = "text"  # text, markdown, json, html or junit (checked by the renderer)
    output: str | None = None  # write the table to this file instead of returning it

    @classmethod
    def from_flags(cls, **flags: Any) -> "RunRequest":
        """A request from raw flag values (strings from the command line or config), every value checked."""
        request = cls(**{k: v for k, v in flags.items() if v is not None})
        return request.checked()

    def checked(self) -> "RunRequest":
        """This request with its values checked and normalised; :class:`UsageError` names the bad flag."""
        jobs = self.jobs
        if isinstance(jobs, bool) or not str(jobs).strip().isdigit() or int(str(jobs)) < 1:
            raise UsageError("--jobs", f"{jobs!r} is not a whole number of at least 1 (e.g. --jobs 2)")
        if self.nvidia_mode is not None and self.nvidia_mode not in NVIDIA_MODES:
            raise UsageError("--nvidia-mode", f"unknown mode {self.nvidia_mode!r}; choose one of "
                                              f"{', '.join(NVIDIA_MODES)}")
        if self.shard:
            _as_usage("--shard", lambda: parse_shard(str(self.shard)))
        push = _as_usage("--push", lambda: normalize_registry(self.push, "--push")) if self.push else None
        pull_from = self.pull_from
        if pull_from and not Path(pull_from).is_dir():
            pull_from = _as_usage("--from", lambda: normalize_registry(str(self.pull_from), "--from"))
        return replace(self, jobs=int(str(jobs)), push=push, pull_from=pull_from)


# What a run's selection and settings are: saved with the run, so ``--resume`` continues exactly them.
# (How many jobs, and how the table is printed, may differ between the run and its resume.)
REMEMBERED = ("matrix_path", "only", "shard", "build", "probe", "force", "rebuild", "quick", "perf",
              "reuse_probes", "compile_cache", "push", "pull_from", "nvidia_mode")
FLAG_OF = {"matrix_path": "--matrix", "pull_from": "--from", "perf": "--no-perf", "compile_cache": "--no-compile-cache"}


def remembered(request: RunRequest) -> dict[str, Any]:
    """The part of ``request`` a resume must repeat, as saved in ``summary.json``."""
    return {k: v for k, v in asdict(request).items() if k in REMEMBERED}


def resumed(request: RunRequest, saved: Any) -> RunRequest:
    """``request`` (a ``--resume``) completed with the interrupted run's saved selection and settings.

    A flag left at its default takes the saved value; a flag given with another value than the interrupted
    run had is refused (:class:`UsageError`, exit 2) naming each difference, because a resume that silently
    ran something else would mix two runs' results in one folder.
    """
    if not isinstance(saved, dict):
        return request
    defaults = {f.name: f.default for f in fields(RunRequest)}
    given = asdict(request)
    differ, merged = [], {}
    for key in REMEMBERED:
        if key not in saved:
            continue
        value = saved[key]
        if given[key] == defaults[key] or given[key] == value:
            merged[key] = value
        elif key == "matrix_path" and Path(str(given[key])).resolve() == Path(str(value)).resolve():
            merged[key] = value
        else:
            differ.append(f"{FLAG_OF.get(key, '--' + key.replace('_', '-'))} is {given[key]!r} now but "
                          f"was {value!r}")
    if differ:
        raise UsageError("--resume", "the interrupted run was started differently: " + "; ".join(differ)
                         + ". Resume it with the same flags (or none), or start a new run without --resume")
    return replace(request, **merged)


def _as_usage(flag: str, check: Any) -> Any:
    try:
        return check()
    except ConfigError as err:
        raise UsageError(flag, "; ".join(p.message for p in err.problems)) from err
