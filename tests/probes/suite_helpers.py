"""Helpers for the probe-suite tests: run ``python -m probes`` as the runner does."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

with warnings.catch_warnings():
    # CPU torch wheels warn at import when numpy is absent, which it is here on purpose.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    import torch  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# Variables that would change what the suite does on this box.
_SCRUBBED = ("GPUMATRIX_EXPECT", "GPUMATRIX_PEAKS", "GPUMATRIX_PROBES_EXTRA", "CUDA_VISIBLE_DEVICES")


def suite_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env.update(extra)
    return env


def run_probes(*args, env=None, timeout=240):
    """Run the suite from the repository root; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "probes"] + list(args),
        cwd=str(REPO),
        env=env if env is not None else suite_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=timeout,
        check=False,
    )


def run_json(*args, env=None, timeout=240):
    done = run_probes("--json", *args, env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout.decode())


def by_id(document):
    return {p["id"]: p for p in document["probes"]}
