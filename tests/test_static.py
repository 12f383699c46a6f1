"""Static checks as part of the suite, so CI runs them: ruff (lint, import order) and mypy on gpumatrix/."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; it is in the [test] extra (pip install -e '.[test]')")
    return found


def test_ruff_finds_nothing():
    done = subprocess.run([_tool("ruff"), "check", "gpumatrix", "tools", "tasks.py"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_finds_nothing():
    done = subprocess.run([_tool("mypy")], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
