"""Reading the host: files that may be missing, and vendor tools with a timeout (argv lists, never a shell)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Sequence


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _run_tool(argv: Sequence[str], timeout: float = 20) -> tuple[int, str] | None:
    """Run a vendor tool (argv list, timeout, no shell); None when it is absent or hangs."""
    exe = shutil.which(argv[0])
    if not exe:
        return None
    try:
        out = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.returncode, out.stdout + (out.stderr if out.returncode else "")
