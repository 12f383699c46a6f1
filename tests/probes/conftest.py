"""Session fixtures for the probe-suite tests (each runs the real suite once)."""

import time

import pytest

from suite_helpers import HERE, run_json, suite_env


@pytest.fixture(scope="session")
def full_run():
    """One full run (performance included) on this CPU box: (document, seconds)."""
    started = time.monotonic()
    document = run_json()
    return document, time.monotonic() - started


@pytest.fixture(scope="session")
def quick_run():
    started = time.monotonic()
    document = run_json("--quick")
    return document, time.monotonic() - started


@pytest.fixture(scope="session")
def misbehaving_run():
    env = suite_env(PYTHONPATH=str(HERE), GPUMATRIX_PROBES_EXTRA="misbehaving_probes")
    return run_json("--only", "framework.zz_*,kernel_driver.*", env=env)
