"""Issue 14, finding 8: the dev engine never signals a process it did not start, and has its own namespaces.

A stale pid file (the engine died, the pid was reused) names a live process of someone else's; ``down`` and
``up`` must leave it running. The start test runs a real second dockerd in a state folder of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tools import devengine


@pytest.fixture
def state(monkeypatch):
    folder = Path("/tmp") / f"gmx-dv-{uuid.uuid4().hex[:8]}"  # short: a unix socket path has 108 bytes
    monkeypatch.setenv("GPUMATRIX_STATE_DIR", str(folder))
    (folder / "engine").mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def bystander(tmp_path):
    """A live process that is not our dockerd: a plain sleep, and a sleep whose binary is named dockerd."""
    procs = []

    def start(name: str = "sleep") -> subprocess.Popen:
        exe = shutil.which("sleep")
        if name != "sleep":
            exe = str(tmp_path / name)
            shutil.copy(shutil.which("sleep"), exe)
        proc = subprocess.Popen([exe, "300"])
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()  # by the pid we started
        proc.wait()


@pytest.mark.parametrize("name", ["sleep", "dockerd"])
def test_down_never_signals_a_process_a_stale_pid_file_names(state, bystander, name):
    victim = bystander(name)
    (state / "engine" / "dockerd.pid").write_text(f"{victim.pid}\n")
    assert devengine._pid() is None  # not our dockerd: argv is not dockerd --host <ours> --data-root <ours>
    assert devengine.stop_private_engine(timeout_s=2) is False
    assert victim.poll() is None, "the stale pid file's process was signalled"


def test_the_shared_engine_is_still_recognised_as_ours():
    """The engine ./dev started (if any) is matched by its argv, so 'down' still stops it."""
    pidfile = devengine.engine_dir() / "dockerd.pid"
    if not pidfile.is_file() or not Path(f"/proc/{pidfile.read_text().strip()}").exists():
        pytest.skip("no private engine running under the default state folder")
    assert devengine._pid() == int(pidfile.read_text().strip())


def test_up_with_a_stale_pid_file_starts_its_own_engine_in_its_own_namespaces(state, bystander):
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        pytest.skip("needs dockerd and root to start a private engine")
    victim = bystander()
    (state / "engine" / "dockerd.pid").write_text(f"{victim.pid}\n")
    try:
        assert devengine.start_private_engine() is True
        pid = devengine._pid()
        assert pid is not None and pid != victim.pid
        argv = devengine._cmdline(pid)
        assert argv[argv.index("--containerd-namespace") + 1] == "gpumatrix-dev"
        assert argv[argv.index("--containerd-plugins-namespace") + 1] == "gpumatrix-dev-plugins"
        assert devengine._reachable(devengine.private_host())
    finally:
        stopped = devengine.stop_private_engine()
    assert stopped is True and devengine._pid() is None
    assert victim.poll() is None, "the stale pid file's process was signalled"
