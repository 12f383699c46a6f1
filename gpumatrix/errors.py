"""The one exception hierarchy of gpumatrix, and the exit code of each kind.

Every error a user can cause or meet derives from :class:`GpumatrixError` and
carries its own ``exit_code``; ``tasks.py`` turns it into ``invoke.Exit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


class GpumatrixError(Exception):
    """Root of all gpumatrix errors. ``str(err)`` is the complete user-facing message."""

    exit_code = 1


@dataclass(frozen=True)
class Problem:
    """One problem found in a configuration file, with its place."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class ConfigError(GpumatrixError):
    """``matrix.yaml`` (or a flag) is invalid. Carries every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the matrix; nothing was built:"
        super().__init__("\n".join([head] + [f"  {p}" for p in self.problems]))


class EngineUnavailable(GpumatrixError):
    """The Docker engine cannot be reached (or cannot be started for development)."""

    exit_code = 3


class RegressionFound(GpumatrixError):
    """A cell that passed in the baseline fails now."""

    exit_code = 4


class BuildError(GpumatrixError):
    """An image build failed. ``log_tail`` holds the last lines of the build log."""

    def __init__(self, reason: str, log_tail: str = "", log_path: str | None = None):
        self.reason = reason
        self.log_tail = log_tail
        self.log_path = log_path
        super().__init__(reason)



class ResultsLocked(GpumatrixError):
    """Another gpumatrix run holds the results folder."""

    exit_code = 5
