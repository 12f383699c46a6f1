"""Faults on the real engine: misbehaving probes, a runner killed and resumed, an engine that restarts.

The probes are replaced (GPUMATRIX_PROBES_DIR) by a small module that misbehaves on demand, run in
a small image with Debian's python3 built once per session. Nothing here needs torch.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tools import devengine
from gpumatrix.config.matrix import RunOptions
from gpumatrix.engine.client import MANAGED_LABEL, Engine, tar_context
from gpumatrix.host import discover_host
from gpumatrix.run.request import RunRequest
from gpumatrix.run.pipeline import Runner
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.probe import parse_probe_output, probe_container_spec, run_probes
from tests.engine_helpers import PY_DOCKERFILE, PY_IMAGE, load_cells, tag_cells
from tests.isolation import SESSION

pytestmark = [pytest.mark.engine]

FAKE_PROBES = textwrap.dedent('''\
    """A stand-in probe suite that misbehaves as GPUMATRIX_FAULT says."""
    import json, os, signal, sys, time

    fault = os.environ.get("GPUMATRIX_FAULT", "ok")
    time.sleep(float(os.environ.get("GPUMATRIX_FAULT_SLEEP", "0")))
    doc = {"schema_version": 1, "accelerator": "cpu", "facts": {}, "mode": "full", "duration_s": 0.1,
           "suite": {"name": "fake", "version": "0"},
           "probes": [{"id": "framework.fake", "layer": 5, "layer_name": "framework", "status": "pass",
                       "duration_s": 0.0, "message": "ok", "details": {}}],
           "verdict": {"status": "pass", "lowest_failing_layer": None, "failed": [], "summary": "ok"}}
    if fault == "hang":
        time.sleep(3600)
    elif fault == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif fault == "oom":
        hog = []
        while True:
            hog.append(bytearray(16 * 1024 * 1024))
    elif fault == "flood":
        chunk = "x" * (1 << 20) + "\\n"
        for _ in range(200):
            sys.stdout.write(chunk)
    elif fault == "forkbomb":
        children = 0
        while children < 10000:
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                children += 1
            except OSError:
                break
        print(json.dumps(dict(doc, probes=[dict(doc["probes"][0], details={"children": children})])))
    elif fault == "garbage":
        sys.stdout.write("\\x00\\xff not json {{{")
    elif fault == "nested":
        sys.stdout.write("[" * 200000 + "]" * 200000)
    elif fault == "badshape":
        print(json.dumps(dict(doc, probes=[{"id": "x", "layer": 99, "status": "pass"}])))
    else:
        print(json.dumps(doc))
''')


@pytest.fixture(scope="session")
def python_image(engine):
    if engine.image_info(PY_IMAGE) is None:
        engine.build(tar_context({"Dockerfile": PY_DOCKERFILE}), PY_IMAGE, {},
                     {MANAGED_LABEL: "true", "io.gpumatrix.cell": "test-python", **SESSION.labels}, lambda s: None,
                     network_mode="host")
    return PY_IMAGE


@pytest.fixture
def fake_probes(tmp_path, monkeypatch):
    folder = tmp_path / "fake" / "probes"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "__main__.py").write_text(FAKE_PROBES)
    monkeypatch.setenv("GPUMATRIX_PROBES_DIR", str(folder))
    return folder


MATRIX = """\
schema_version: 1
bases:
  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
torch:
  - {version: "2.13.0", variants: [cpu]}
"""


def _run_fault(engine, python_image, tmp_path, fault, **options):
    matrix, cells = load_cells(tmp_path, MATRIX)
    cell = replace(cells[0], env=(("GPUMATRIX_FAULT", fault),))
    host = discover_host(engine.describe())
    spec = probe_container_spec(cell, python_image, host, replace(RunOptions(), **options))
    return run_probes(engine, spec)


def _no_containers_left(engine):
    from gpumatrix.run.probe import SESSION_ID

    return [c for c in engine.containers_with_label(MANAGED_LABEL)
            if c.labels.get("io.gpumatrix.session") == SESSION_ID]


def test_healthy_fake_suite_passes(engine, python_image, fake_probes, tmp_path):
    out = _run_fault(engine, python_image, tmp_path, "ok")
    assert out.ok and out.document["verdict"]["status"] == "pass"


@pytest.mark.parametrize("fault,options,expected", [
    ("hang", {"timeout_s": 4}, "did not finish within 4 s"),
    ("segv", {}, "printed nothing (container exit code 139)"),
    ("oom", {"mem_limit": "64m"}, "exceeding its memory limit"),
    ("flood", {}, "probe output unreadable"),
    ("garbage", {}, "probe output unreadable: not a JSON document"),
    ("nested", {}, "probe output unreadable"),
    ("badshape", {}, "has layer '99'"),
])
def test_misbehaving_probes_are_contained(engine, python_image, fake_probes, tmp_path, fault, options, expected):
    started = time.monotonic()
    out = _run_fault(engine, python_image, tmp_path, fault, **options)
    assert not out.ok and expected in out.error, out.error
    assert time.monotonic() - started < 60
    assert _no_containers_left(engine) == []  # killed and removed, whatever happened inside


def test_fork_bomb_hits_the_pids_limit(engine, python_image, fake_probes, tmp_path):
    out = _run_fault(engine, python_image, tmp_path, "forkbomb", pids_limit=64, timeout_s=90)
    children = out.document["probes"][0]["details"]["children"] if out.ok else None
    assert out.ok and children is not None and children < 64, (out.error, children)


def test_flood_is_bounded_in_memory(engine, python_image, fake_probes, tmp_path):
    from gpumatrix.run import probe as run

    cap = run.MAX_PROBE_OUTPUT
    matrix, cells = load_cells(tmp_path, MATRIX)
    cell = replace(cells[0], env=(("GPUMATRIX_FAULT", "flood"),))
    spec = probe_container_spec(cell, python_image, discover_host(), RunOptions())
    outcome = engine.run(spec)
    assert len(outcome.stdout) <= cap  # 200 MB printed, at most the cap kept
    with pytest.raises(ValueError):
        parse_probe_output(outcome.stdout)


RUNNER = textwrap.dedent("""\
    import sys
    from gpumatrix import cli
    from gpumatrix.run.request import RunRequest
    cli.run_matrix(RunRequest(matrix_path=sys.argv[1], results_path=sys.argv[2], build=False, resume=len(sys.argv) > 3))
""")


SLOW_MATRIX = """\
schema_version: 1
bases:
  - {id: cpu-a, vendor: cpu, image: debian:bookworm-slim, variant: cpu, env: {GPUMATRIX_FAULT_SLEEP: "0"}}
  - {id: cpu-b, vendor: cpu, image: debian:bookworm-slim, variant: cpu, env: {GPUMATRIX_FAULT_SLEEP: "30"}}
  - {id: cpu-c, vendor: cpu, image: debian:bookworm-slim, variant: cpu, env: {GPUMATRIX_FAULT_SLEEP: "30", C: "1"}}
torch:
  - {version: "2.13.0", variants: [cpu]}
"""


def _wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _probe_containers(engine, cell_prefix="cpu-", pid=None):
    """Probe containers of these tests' cells (of runner process ``pid`` when given)."""
    return [c for c in engine.containers_with_label(MANAGED_LABEL)
            if c.labels.get("io.gpumatrix.role") == "probe"
            and c.labels.get("io.gpumatrix.cell", "").startswith(cell_prefix)
            and (pid is None or c.labels.get("io.gpumatrix.pid") == str(pid))]


def test_sigkill_then_resume(engine, python_image, fake_probes, tmp_path, tracked):
    matrix, cells = load_cells(tmp_path, SLOW_MATRIX)
    results = tmp_path / "results"
    tracked["images"] += list(tag_cells(engine, python_image, matrix, cells, results))
    (tmp_path / "runner.py").write_text(RUNNER)
    log = open(tmp_path / "runner.log", "wb")
    proc = subprocess.Popen([sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "matrix.yaml"), str(results)],
                            stdout=log, stderr=log, env=os.environ.copy())
    log.close()
    rd = ResultsDir(results)
    try:
        # cells run in any order: wait until the quick one is done and a slow one is in its container
        assert _wait_for(lambda: rd.cell_path("cpu-a-torch2.13.0").is_file()
                         and _probe_containers(engine, pid=proc.pid)), \
            (tmp_path / "runner.log").read_text()
    finally:
        proc.kill()  # SIGKILL: no handler, no finally
        proc.wait()
    summary = rd.read_summary()
    all_ids = {"cpu-a-torch2.13.0", "cpu-b-torch2.13.0", "cpu-c-torch2.13.0"}
    assert summary["state"] == "running" and summary["cells"].get("cpu-a-torch2.13.0") == "pass"
    assert summary["not_done"] and set(summary["not_done"]) | set(summary["cells"]) == all_ids
    orphans = _probe_containers(engine, pid=proc.pid)
    assert len(orphans) == 1  # the killed runner left its container behind...
    done_mtime = rd.cell_path("cpu-a-torch2.13.0").stat().st_mtime_ns

    from gpumatrix import cli

    fast = SLOW_MATRIX.replace('"30"', '"0"')
    (tmp_path / "matrix.yaml").write_text(fast)  # same cells and images: only probe env differs
    lines: list[str] = []
    cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(results), build=False, resume=True), echo=lines.append)
    assert any("removed 1 stale probe containers" in line for line in lines)  # ...which the sweep removed
    assert not _probe_containers(engine, pid=proc.pid)
    assert rd.cell_path("cpu-a-torch2.13.0").stat().st_mtime_ns == done_mtime  # not redone
    summary = rd.read_summary()
    assert summary["state"] == "complete" and summary["not_done"] == []
    assert summary["cells"] == {c: "pass" for c in ("cpu-a-torch2.13.0", "cpu-b-torch2.13.0", "cpu-c-torch2.13.0")}
    again: list[str] = []
    cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(results), build=False, resume=True), echo=again.append)
    assert any("nothing to resume" in line for line in again)


def test_sigterm_removes_containers_and_records_the_cut(engine, python_image, fake_probes, tmp_path, tracked):
    matrix, cells = load_cells(tmp_path, SLOW_MATRIX.replace('"0"}', '"30"}', 1))  # every cell is slow
    results = tmp_path / "results"
    tracked["images"] += list(tag_cells(engine, python_image, matrix, cells, results))
    (tmp_path / "runner.py").write_text(RUNNER)
    proc = subprocess.Popen([sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "matrix.yaml"), str(results)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())
    try:
        assert _wait_for(lambda: _probe_containers(engine, pid=proc.pid))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode != 0
    summary = ResultsDir(results).read_summary()
    assert summary["state"] == "interrupted" and len(summary["not_done"]) == 3
    assert not _probe_containers(engine, pid=proc.pid)  # removed on the way out, not left running


@pytest.fixture
def second_engine(engine, python_image, monkeypatch):
    """A private engine of this test's own, so stopping it disturbs nothing else."""
    monkeypatch.setenv("GPUMATRIX_STATE_DIR", str(Path("/tmp") / f"gmx-e2-{os.getpid()}"))
    started = devengine.start_private_engine()
    assert started
    url = devengine.private_host()
    other = Engine.connect(url)
    # Copy the base and the small python image over (save on one engine, load on the other).
    for ref in ("debian:bookworm-slim", python_image):
        other.api.load_image(b"".join(engine.api.get_image(ref)))
    yield other, url
    other.close()
    devengine.stop_private_engine()


# Killing the engine under a live client leaves docker-py's pooled sockets broken; they are
# collected later as "unclosed". That is the client library's cleanup, not a gpumatrix leak.
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_engine_restart_mid_run_fails_only_the_cells_it_hit(second_engine, fake_probes, tmp_path, monkeypatch):
    other, url = second_engine
    monkeypatch.setenv("DOCKER_HOST", url)
    matrix, cells = load_cells(tmp_path, SLOW_MATRIX.replace('"0"}', '"20"}', 1).replace('"30"', '"0"'))
    results = tmp_path / "results"
    list(tag_cells(other, PY_IMAGE, matrix, cells, results))
    pid = int((devengine.engine_dir() / "dockerd.pid").read_text())

    def restart_engine():  # cpu-a is the slow one (20 s): kill the engine while it runs
        _wait_for(lambda: _probe_containers(other, "cpu-a"), timeout=60)
        os.kill(pid, signal.SIGKILL)
        time.sleep(2)
        devengine.start_private_engine()

    killer = threading.Thread(target=restart_engine)
    killer.start()
    client = Engine.connect(url)
    try:
        summary = Runner(client, matrix, ResultsDir(results), RunRequest(build=False)).run(cells)
    finally:
        client.close()
    killer.join()
    assert summary["state"] == "complete"
    cells_by_id = {c.cell_id: c for c in ResultsDir(results).load()[0]}
    hit = cells_by_id["cpu-a-torch2.13.0"]
    assert hit.status == "error" and "connection to the Docker engine" in hit.reason
    assert cells_by_id["cpu-b-torch2.13.0"].status == "pass"
    assert cells_by_id["cpu-c-torch2.13.0"].status == "pass"
    gc.collect()  # collect the dead engine's broken sockets here, under this test's warning filter
