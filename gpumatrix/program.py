"""The ``gpumatrix`` command: invoke's :class:`~invoke.program.Program` over the tasks of :mod:`gpumatrix.tasks`.

``gpumatrix matrix --matrix /some/where.yaml`` works from any directory once the package is installed
(``pip install .``); in a checkout, ``invoke matrix`` runs the same tasks through the repository's
``tasks.py``. Two differences from plain ``invoke``: a command-line parse error (an unknown flag, a
missing value) exits 2, as every other usage error does, and Ctrl-C exits 130 without a traceback.
"""

from __future__ import annotations

import sys
from typing import Any

from invoke import Program
from invoke.exceptions import ParseError

from gpumatrix import __version__
from gpumatrix.errors import ExitCode
from gpumatrix.tasks import ns


class GpumatrixProgram(Program):
    _parse_failed = False

    def run(self, argv: Any = None, exit: bool = True) -> None:
        try:
            super().run(argv, exit=exit)
        except SystemExit as done:
            if self._parse_failed and done.code == 1:  # invoke's code for a parse error
                sys.exit(int(ExitCode.USAGE))
            raise
        except KeyboardInterrupt:
            print("gpumatrix: interrupted", file=sys.stderr)
            sys.exit(int(ExitCode.INTERRUPTED))

    def parse_core(self, argv: Any) -> None:
        try:
            super().parse_core(argv)
        except ParseError:
            self._parse_failed = True
            raise

    def parse_tasks(self) -> None:
        try:
            super().parse_tasks()
        except ParseError:
            self._parse_failed = True
            raise


program = GpumatrixProgram(namespace=ns, name="gpumatrix", binary="gpumatrix", version=__version__)


def main() -> None:
    """Entry point of the ``gpumatrix`` console script."""
    program.run()
