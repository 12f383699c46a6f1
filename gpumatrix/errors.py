"""The one exception hierarchy of gpumatrix, and the one table of exit codes.

Every error a user can cause or meet derives from :class:`GpumatrixError` and carries its own
``exit_code`` from :class:`ExitCode`; ``gpumatrix.tasks`` turns it into ``invoke.Exit``. The table is
printed by ``--help`` and copied in the README (a test keeps them equal).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence


class ExitCode(enum.IntEnum):
    """What a gpumatrix command's exit status means. The descriptions are user-facing."""

    OK = 0
    FAILED = 1
    USAGE = 2
    ENGINE_UNAVAILABLE = 3
    REGRESSION = 4
    RESULTS_LOCKED = 5
    NO_PASSTHROUGH = 6
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    ExitCode.OK: "the command completed (in a matrix run, cells may still fail: the table says which)",
    ExitCode.FAILED: "doctor found a failing check, recommend found no known-good image, or another error",
    ExitCode.USAGE: "invalid matrix.yaml, flag or value (nothing was built)",
    ExitCode.ENGINE_UNAVAILABLE: "the Docker engine is unreachable",
    ExitCode.REGRESSION: "a cell that passed in the baseline fails now",
    ExitCode.RESULTS_LOCKED: "another run holds the results folder",
    ExitCode.NO_PASSTHROUGH: "no way to pass this host's GPUs into containers (the message says what to install)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C or SIGTERM); finished cells are saved, --resume continues",
}


def exit_codes_text() -> str:
    """The exit-code table as ``--help`` prints it."""
    return "\n".join(f"  {int(code):>3}  {code.meaning}" for code in ExitCode)


class GpumatrixError(Exception):
    """Root of all gpumatrix errors. ``str(err)`` is the complete user-facing message."""

    exit_code: int = ExitCode.FAILED


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

    exit_code = ExitCode.USAGE

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the matrix; nothing was built:"
        super().__init__("\n".join([head] + [f"  {p}" for p in self.problems]))


class UsageError(ConfigError):
    """A flag or its value is invalid: one line that names the flag and what it takes.

    A :class:`ConfigError` of the invocation (one problem, the flag as its place), printed as one line.
    """

    exit_code = ExitCode.USAGE

    def __init__(self, flag: str, message: str):
        self.flag = flag
        self.problems = [Problem(flag, None, message)]
        GpumatrixError.__init__(self, f"{flag}: {message}")


class EngineUnavailable(GpumatrixError):
    """The Docker engine cannot be reached (or cannot be started for development)."""

    exit_code = ExitCode.ENGINE_UNAVAILABLE


class RegressionFound(GpumatrixError):
    """A cell that passed in the baseline fails now."""

    exit_code = ExitCode.REGRESSION


class BuildError(GpumatrixError):
    """An image build failed. ``log_tail`` holds the last lines of the build log."""

    def __init__(self, reason: str, log_tail: str = "", log_path: str | None = None):
        self.reason = reason
        self.log_tail = log_tail
        self.log_path = log_path
        super().__init__(reason)



class ResultsLocked(GpumatrixError):
    """Another gpumatrix run holds the results folder."""

    exit_code = ExitCode.RESULTS_LOCKED
