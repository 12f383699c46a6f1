"""Helpers shared by the engine tests (not a test module): a local registry, a tiny python image, cells."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gpumatrix.config.matrix import expand_cells, load_matrix
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.pipeline import Runner
from tests.isolation import SESSION

# -- a registry on loopback (Debian's docker-registry) --------------------------------------------------
REGISTRY_BIN = shutil.which("docker-registry") or "/usr/bin/docker-registry"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_registry(folder: Path, extra: str = "") -> tuple[subprocess.Popen, str]:
    if not os.access(REGISTRY_BIN, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail("CI needs docker-registry (apt-get install docker-registry)")
        pytest.skip("docker-registry is not installed (./dev installs it: apt-get install docker-registry)")
    port = free_port()
    (folder / "storage").mkdir(parents=True, exist_ok=True)
    config = folder / "config.yml"
    config.write_text(f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n"
                      f"    rootdirectory: {folder / 'storage'}\n  delete:\n    enabled: true\n"
                      f"http:\n  addr: 127.0.0.1:{port}\n{extra}")
    log = open(folder / "registry.log", "wb")
    proc = subprocess.Popen([REGISTRY_BIN, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1)
            break
        except urllib.error.HTTPError:  # 401 from an authenticating registry: it is up
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"docker-registry exited: {(folder / 'registry.log').read_text()[-2000:]}")
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"docker-registry did not answer on /v2/: {(folder / 'registry.log').read_text()[-2000:]}")
    return proc, f"127.0.0.1:{port}"


def stop_registry(proc: subprocess.Popen) -> None:
    proc.terminate()  # by the pid we started, nothing else
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class FleetCell:
    """The fields of a Cell the fleet helpers read."""

    def __init__(self, unique: str):
        self.id = f"fleettest-torch{unique}"
        self.vendor = "cpu"
        self.applicable = True
        self.base = type("B", (), {"id": "fleettest"})()
        self.torch = type("T", (), {"version": unique})()


# -- a small image with Debian's python3, standing in for a cell image ------------------------------------
PY_DOCKERFILE = b"""FROM debian:bookworm-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 >/dev/null \\
    && rm -rf /var/lib/apt/lists/*
"""
PY_IMAGE = f"{SESSION.namespace}/test-python:" + hashlib.sha256(PY_DOCKERFILE).hexdigest()[:12]  # built once a session


def load_cells(tmp_path, text):
    (tmp_path / "matrix.yaml").write_text(text)
    matrix = load_matrix(tmp_path / "matrix.yaml")
    return matrix, expand_cells(matrix).cells


def tag_cells(engine, python_image, matrix, cells, results):
    """Probe-only runs use images already built; give the python image each cell's content tag (in the
    session's namespace, as every tag a test makes)."""
    runner = Runner(engine, matrix, ResultsDir(results))
    for cell in cells:
        tag = runner.recipe(cell).tag
        engine.tag(python_image, tag)
        yield tag
