"""One run of the matrix as a single frozen object: which cells, what to do with them, and how.

The tasks build it once from their flags (:meth:`RunRequest.from_flags` checks every value and raises
:class:`~gpumatrix.errors.UsageError`, exit 2, naming the flag); everything downstream reads typed
fields instead of a dozen loose keyword arguments. The matrix's own ``run:`` section
(:class:`~gpumatrix.config.matrix.RunOptions`: shm, timeouts, limits) is separate: it describes the
containers, this describes the invocation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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


def _as_usage(flag: str, check: Any) -> Any:
    try:
        return check()
    except ConfigError as err:
        raise UsageError(flag, "; ".join(p.message for p in err.problems)) from err
