"""The run loop (``Runner``) against the fake engine: fast, no daemon, real payloads.

Everything goes through the public surface: a matrix parsed by ``parse_matrix``, hosts discovered from the
fake trees in ``tests/fixtures/host``, ``Runner(...).run(cells)``, and the files it writes (``summary.json``,
one result per cell, build logs). The engine is gpumatrix's real ``Engine`` over ``tests/fake_engine.py``.
Builds really resolve a (tiny, local) torch wheel through the host's wheelhouse: pip runs once per session,
in ``wheelhouse`` below, and every test after that finds the resolution in the wheelhouse.
"""

from __future__ import annotations

import _thread
import signal
import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from gpumatrix import cli
from gpumatrix.config import expand_cells, parse_matrix
from gpumatrix.errors import EngineUnavailable, UsageError
from gpumatrix.host import discover_host
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.pipeline import Runner
from gpumatrix.run.request import RunRequest
from tests._wheels import make_numpy, make_wheel
from tests.isolation import SESSION
from tests.fake_engine import FIXTURES, PROBE_FAIL, FakeAPI, fake_engine

HOST_ROOTS = Path(__file__).resolve().parent / "fixtures" / "host" / "roots"

# Two CPU bases (so one can fail while the other works), a CUDA base with a wheel of this torch, and a
# ROCm base without one (not applicable).
MATRIX = """\
schema_version: 1
python: "3.11"
wheelhouse: [{wheels}]
bases:
  - {{id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}}
  - {{id: cpu2, vendor: cpu, image: debian:bookworm-slim, variant: cpu}}
  - {{id: cu128, vendor: nvidia, image: nvidia/cuda:12.8.1-base-ubuntu24.04, variant: cu128}}
  - {{id: rocm6.4, vendor: amd, image: rocm/dev-ubuntu-24.04:6.4.4, variant: rocm6.4}}
torch:
  - {{version: "2.13.0", variants: [cpu, cu128]}}
{extra}"""
CPU, CPU2, CUDA, ROCM = "cpu-torch2.13.0", "cpu2-torch2.13.0", "cu128-torch2.13.0", "rocm6.4-torch2.13.0"
CUDA_BASE = "nvidia/cuda:12.8.1-base-ubuntu24.04"


def _pip_env(mp: pytest.MonkeyPatch, cache: Path) -> None:
    """Only the test's wheel folder for pip (no index, no host config), a private wheelhouse, no expiry."""
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT"):
        mp.delenv(var, raising=False)
    mp.setenv("PIP_CONFIG_FILE", "/dev/null")
    mp.setenv("PIP_NO_CACHE_DIR", "1")
    mp.setenv("PIP_NO_INDEX", "1")
    mp.setenv("GPUMATRIX_CACHE_DIR", str(cache))
    mp.setenv("GPUMATRIX_RESOLVE_TTL_S", "1000000")


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    """A wheel folder with tiny ``torch 2.13.0`` wheels, and a wheelhouse that has resolved them (pip runs here)."""
    root = tmp_path_factory.mktemp("wheelhouse")
    for variant in ("cpu", "cu128"):
        make_wheel(root / "wheels-src", "torch", f"2.13.0+{variant}")
    make_numpy(root / "wheels-src")
    with pytest.MonkeyPatch.context() as mp:
        _pip_env(mp, root / "cache")
        matrix = parse_matrix(MATRIX.format(wheels=root / "wheels-src", extra=""), root / "matrix.yaml")
        engine, api = fake_engine()
        api.add_image(CUDA_BASE)
        # build only: the run resolves torch once per variant, with the real pip
        cells = [c for c in expand_cells(matrix).cells if c.id in (CPU, CUDA)]
        Runner(engine, matrix, ResultsDir(root / "warmup"), RunRequest(probe=False, force=True),
               host=discover_host(engine.describe(), root=root)).run(cells)
    return root


@pytest.fixture(autouse=True)
def _wheelhouse_env(wheelhouse, monkeypatch):
    _pip_env(monkeypatch, wheelhouse / "cache")


def matrix_at(tmp_path: Path, wheelhouse: Path, extra: str = ""):
    matrix = parse_matrix(MATRIX.format(wheels=wheelhouse / "wheels-src", extra=extra), tmp_path / "matrix.yaml")
    return matrix, expand_cells(matrix).cells


def cpu_host(engine, tmp_path: Path):
    (tmp_path / "cpu-root").mkdir(exist_ok=True)
    return discover_host(engine.describe(), root=tmp_path / "cpu-root")


def run(engine, matrix, results: Path, cells, host, lines: list[str] | None = None, **request):
    out = lines if lines is not None else []
    return Runner(engine, matrix, ResultsDir(results), RunRequest(**request), echo=out.append, host=host).run(cells)


def saved(results: Path) -> dict[str, dict]:
    """Each cell's result as written to disk."""
    return {data["cell_id"]: data for path in sorted(ResultsDir(results).cells_dir.glob("*.json"))
            if (data := json.loads(path.read_text()))}


def probed_cells(api: FakeAPI) -> list[str]:
    """The cells whose probe container the run created (the fake saw their create call)."""
    return sorted(c["labels"]["io.gpumatrix.cell"] for c in api.called("create_container"))


# -- planning -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("root, cuda_reason", [
    (None, "no NVIDIA GPU on this host (it has no GPU)"),
    ("amd-mi325x", "no NVIDIA GPU on this host (it has AMD GPU gfx942"),
    ("nvidia-a10g", "cannot work on this host: 1 NVIDIA GPU(s) (NVIDIA A10G), but containers cannot be given them"),
])
def test_each_cell_is_run_skipped_or_not_applicable_for_the_host(tmp_path, wheelhouse, root, cuda_reason):
    engine, api = fake_engine()
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    host = cpu_host(engine, tmp_path) if root is None else discover_host(engine.describe(), root=HOST_ROOTS / root)
    summary = run(engine, matrix, tmp_path / "results", [c for c in cells if c.id != CPU2], host)

    results = saved(tmp_path / "results")
    assert summary["cells"] == {CPU: "pass", CUDA: "skipped", ROCM: "not_applicable"}
    assert cuda_reason in results[CUDA]["reason"]
    assert results[ROCM]["reason"] == "torch 2.13.0 has no rocm6.4 wheel (it ships cpu, cu128)"
    assert probed_cells(api) == [CPU]  # nothing was built or started for the cells that do not run
    assert [b["tag"].split(":")[0] for b in api.called("build")] == [f"{SESSION.namespace}/cpu"]
    assert results[CPU]["host"]["engine"]["version"] == "20.10.24+dfsg1"  # the recorded /version answer
    assert not api.containers_by_id  # every probe container was removed


def test_force_runs_a_gpu_cell_on_a_host_without_that_gpu(tmp_path, wheelhouse):
    engine, api = fake_engine()
    api.add_image(CUDA_BASE)
    api.probe_output[CUDA] = PROBE_FAIL  # what the suite says in a container that was promised a GPU and got none
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    summary = run(engine, matrix, tmp_path / "results", [c for c in cells if c.id == CUDA],
                  cpu_host(engine, tmp_path), force=True)
    assert probed_cells(api) == [CUDA]  # planned to run, not skipped
    (created,) = api.called("create_container")
    assert created["env"]["GPUMATRIX_EXPECT"] == "nvidia"
    assert summary["cells"] == {CUDA: "fail"}
    assert saved(tmp_path / "results")[CUDA]["reason"].startswith("fail at layer 1 (kernel_driver)")


# -- a passing cell, recorded payloads all the way ---------------------------------------------------------
def test_a_cell_is_built_probed_and_recorded(tmp_path, wheelhouse):
    engine, api = fake_engine()
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    lines: list[str] = []
    run(engine, matrix, tmp_path / "results", [c for c in cells if c.id == CPU], cpu_host(engine, tmp_path), lines)

    result = saved(tmp_path / "results")[CPU]
    (build,) = api.called("build")
    assert build["labels"]["io.gpumatrix.cell"] == CPU and build["buildargs"]["TORCH_REQUIREMENT"] == "torch==2.13.0+cpu"
    assert build["buildargs"]["WHEELS_URL"].startswith("http://127.0.0.1:")  # served by this run's wheel server
    assert result["image"]["tag"] == build["tag"] and result["image"]["reused"] is False
    assert result["image"]["id"] == api.images_by_ref[build["tag"]]["Id"]  # the build stream's aux ID
    assert result["status"] == "pass" and result["probes"] == json.loads((FIXTURES / "probe_quick_cpu.json").read_bytes())
    assert "Successfully tagged " + build["tag"] in Path(result["logs"]["build"]).read_text()
    (created,) = api.called("create_container")
    assert created["env"]["GPUMATRIX_CELL"] == CPU and created["image"] == build["tag"]
    assert api.called("remove_container") and not api.containers_by_id
    assert f"{CPU}: pass" in lines


# -- failures stay in their cell ------------------------------------------------------------------------
def test_a_build_error_in_one_cell_does_not_stop_the_others(tmp_path, wheelhouse):
    engine, api = fake_engine()
    api.failing_builds.add(f"{SESSION.namespace}/cpu2")  # replays the recorded failing build (pip found no wheel)
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    summary = run(engine, matrix, tmp_path / "results", [c for c in cells if c.vendor == "cpu"],
                  cpu_host(engine, tmp_path))

    results = saved(tmp_path / "results")
    assert summary["state"] == "complete" and summary["cells"] == {CPU: "pass", CPU2: "build_error"}
    broken = results[CPU2]
    # the reason is pip's own line from the build output, not the engine's "returned a non-zero code"
    assert broken["reason"] == "No matching distribution found for torch==2.12.0+cpu"
    assert "ERROR: No matching distribution found" in Path(broken["logs"]["build"]).read_text()
    assert broken["probes"] is None and probed_cells(api) == [CPU]


def test_a_failing_probe_document_gets_a_diagnosis(tmp_path, wheelhouse):
    engine, api = fake_engine()
    api.probe_output[CPU] = PROBE_FAIL  # the real suite told to expect an NVIDIA GPU it does not have
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    run(engine, matrix, tmp_path / "results", [c for c in cells if c.id == CPU], cpu_host(engine, tmp_path))

    result = saved(tmp_path / "results")[CPU]
    doc = json.loads((FIXTURES / PROBE_FAIL).read_bytes())
    assert result["status"] == "fail" and result["reason"] == doc["verdict"]["summary"]
    diagnosis = result["diagnosis"]
    assert diagnosis["cause"] == "driver_not_loaded" and diagnosis["remedy"]
    failing = {p["message"] for p in doc["probes"] if p["status"] == "fail"}
    assert any(message in diagnosis["evidence"] for message in failing)  # it cites the probe that failed


def test_unreadable_probe_output_is_an_error_with_its_reason(tmp_path, wheelhouse):
    engine, api = fake_engine()
    api.probe_output[CPU] = b"Segmentation fault (core dumped)\n"
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    summary = run(engine, matrix, tmp_path / "results", [c for c in cells if c.vendor == "cpu"],
                  cpu_host(engine, tmp_path))
    assert summary["cells"] == {CPU: "error", CPU2: "pass"}
    assert saved(tmp_path / "results")[CPU]["reason"] == ("probe output unreadable: not a JSON document "
                                                          "(container exit code 0)")


# -- the summary: written before the first cell and after every cell -------------------------------------
class RecordingResults(ResultsDir):
    """The results folder, noting each summary as written (and checking it reached the disk)."""

    def __init__(self, path: Path, api: FakeAPI):
        super().__init__(path)
        self.api = api

    def write_summary(self, summary: dict) -> None:
        super().write_summary(summary)
        on_disk = json.loads((self.path / "summary.json").read_text())
        self.api.calls.append(("summary", {"state": on_disk["state"], "cells": dict(on_disk["cells"]),
                                           "not_done": list(on_disk["not_done"]),
                                           "results_on_disk": sorted(p.stem for p in self.path.glob("cells/*.json"))}))


def test_the_summary_is_written_before_the_first_cell_and_after_each(tmp_path, wheelhouse):
    engine, api = fake_engine()
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    results = RecordingResults(tmp_path / "results", api)
    Runner(engine, matrix, results, RunRequest(), host=cpu_host(engine, tmp_path)).run(cells)

    order = [m for m, _ in api.calls if m in ("summary", "build")]
    summaries = api.called("summary")
    assert order[0] == "summary"  # on disk before any build started
    first = summaries[0]
    assert first["state"] == "running" and first["cells"] == {}
    assert sorted(first["not_done"]) == sorted(c.id for c in cells)
    # then more cells after each write (cells that finished together share one write), until every cell is
    # in it, and the run says it completed; a cell is named only once its own result is on disk
    running = [s for s in summaries if s["state"] == "running"]
    counts = [len(s["cells"]) for s in running]
    assert counts == sorted(set(counts)) and counts[-1] == len(cells), counts
    assert all(len(s["cells"]) + len(s["not_done"]) == len(cells) for s in running)
    assert all(set(s["cells"]) <= set(s["results_on_disk"]) for s in summaries)
    assert summaries[-1]["state"] == "complete" and summaries[-1]["not_done"] == []
    print(f"{len(cells)} cells, {len(summaries)} summary writes: {counts}")
    assert len(summaries) < len(cells) + 2  # the cells planned as skipped or n/a finish together: one write


# -- an interrupted run, and resuming it ------------------------------------------------------------------
@pytest.mark.slow  # the run waits 1 s for cell threads before its last container sweep
def test_ctrl_c_removes_the_running_probe_and_resume_finishes_the_rest(tmp_path, wheelhouse):
    engine, api = fake_engine()
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    # the two CPU cells differ in env, so each runs its own probes (the same probe key would share one run)
    cells = [replace(c, env=(("CELL", c.id),)) if c.vendor == "cpu" else c
             for c in cells if c.vendor == "cpu" or c.id == ROCM]
    host = cpu_host(engine, tmp_path)

    probing: list[str] = []  # cells in the order their probes started

    def ctrl_c_during_the_second_probe(container: dict) -> None:
        probing.append(container["env"]["GPUMATRIX_CELL"])
        if len(probing) == 1:
            return  # the first probe finishes
        deadline = time.monotonic() + 10
        while probing[0] not in recorded_cells() and time.monotonic() < deadline:
            time.sleep(0.01)
        _thread.interrupt_main()  # Ctrl-C, as the main thread sees it, once the first cell is on record
        while container["id"] in api.containers_by_id and time.monotonic() < deadline:
            time.sleep(0.01)  # the probe "runs" until the interrupted run removes its container

    def recorded_cells() -> dict:
        try:
            return json.loads((tmp_path / "results" / "summary.json").read_text())["cells"]
        except (OSError, ValueError):
            return {}

    api.on_wait = ctrl_c_during_the_second_probe
    lines: list[str] = []
    # Ctrl-C reaches a foreground process; a test session started as a background job inherits SIGINT
    # ignored, and then interrupt_main() does nothing (found running .ci/run in the background).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(engine, matrix, tmp_path / "results", cells, host, lines)
    finally:
        signal.signal(signal.SIGINT, previous)

    done, cut = probing
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert summary["state"] == "interrupted" and summary["cells"][done] == "pass" and cut in summary["not_done"]
    assert sorted([*summary["cells"], *summary["not_done"]]) == sorted(c.id for c in cells)
    assert not api.containers_by_id  # the running probe container was removed on the way out
    assert any(line.startswith("interrupted: removed 1 running probe containers") for line in lines)

    engine, api = fake_engine()
    resumed = run(engine, matrix, tmp_path / "results", cells, host, resume=True)
    assert probed_cells(api) == [cut]  # the cell on record is not run again
    assert resumed["state"] == "complete" and resumed["run_id"] == summary["run_id"]
    assert resumed["cells"] == {CPU: "pass", CPU2: "pass", ROCM: "not_applicable"}


# -- resume and reuse_probes start from one finished run, copied -------------------------------------------
RUN_CELLS = (CPU, CPU2, ROCM)


@pytest.fixture(scope="module")
def finished_run(wheelhouse, tmp_path_factory):
    """A complete run of two CPU cells and a not-applicable one; returns its folder and the images it built."""
    root = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as mp:
        _pip_env(mp, wheelhouse / "cache")
        engine, api = fake_engine()
        matrix, cells = matrix_at(root, wheelhouse)
        summary = run(engine, matrix, root / "results", [c for c in cells if c.id in RUN_CELLS],
                      cpu_host(engine, root))
    assert summary["cells"] == {CPU: "pass", CPU2: "pass", ROCM: "not_applicable"}
    return root / "results", {b["tag"] for b in api.called("build")}


@pytest.fixture
def previous(finished_run, tmp_path):
    """A copy of the finished run's results folder, to change as an earlier run would have left it."""
    folder, _ = finished_run
    shutil.copytree(folder, tmp_path / "results")
    return ResultsDir(tmp_path / "results")


def engine_with_images(finished_run):
    """A fresh fake engine that has the images the finished run built (same tags, same ids)."""
    engine, api = fake_engine()
    for tag in finished_run[1]:
        api.add_image(tag)
    return engine, api


def cells_of(tmp_path, wheelhouse, ids=RUN_CELLS):
    matrix, cells = matrix_at(tmp_path, wheelhouse)
    return matrix, [c for c in cells if c.id in ids]


def test_resume_runs_only_the_cells_not_done(tmp_path, wheelhouse, previous):
    # What a run killed (SIGKILL) after recording its first CPU cell leaves: a summary still "running"
    # that lists only that cell, and no result for the others.
    first = previous.read_summary()
    killed = {**first, "state": "running", "cells": {CPU: "pass"}, "not_done": [CPU2, ROCM]}
    (previous.path / "summary.json").write_text(json.dumps(killed))
    for cell_id in (CPU2, ROCM):
        previous.cell_path(cell_id).unlink()
    kept = previous.cell_path(CPU).read_bytes()

    engine, api = fake_engine()  # a fresh engine: what the resumed run does is all it sees
    matrix, cells = cells_of(tmp_path, wheelhouse)
    lines: list[str] = []
    summary = run(engine, matrix, previous.path, cells, cpu_host(engine, tmp_path), lines, resume=True)

    assert probed_cells(api) == [CPU2]  # the cell already done is not built or probed again
    assert [b["labels"]["io.gpumatrix.cell"] for b in api.called("build")] == [CPU2]
    assert previous.cell_path(CPU).read_bytes() == kept
    assert summary["state"] == "complete" and summary["run_id"] == first["run_id"]
    assert summary["cells"] == {CPU: "pass", CPU2: "pass", ROCM: "not_applicable"}
    assert previous.cell_path(ROCM).is_file()
    assert "resuming: 1 cells already done, 2 to go" in lines


def test_resume_redoes_a_cell_whose_result_file_is_gone(tmp_path, wheelhouse, previous, finished_run):
    first = previous.read_summary()
    (previous.path / "summary.json").write_text(json.dumps({**first, "state": "interrupted"}))
    previous.cell_path(CPU2).unlink()  # listed as done, but its result is not there

    engine, api = engine_with_images(finished_run)
    matrix, cells = cells_of(tmp_path, wheelhouse)
    summary = run(engine, matrix, previous.path, cells, cpu_host(engine, tmp_path), resume=True, build=False)
    assert probed_cells(api) == [CPU2] and summary["cells"][CPU2] == "pass"
    assert previous.cell_path(CPU2).is_file()


def test_resume_after_a_complete_run_does_nothing(tmp_path, wheelhouse, previous):
    engine, api = fake_engine()
    matrix, cells = cells_of(tmp_path, wheelhouse)
    lines: list[str] = []
    summary = run(engine, matrix, previous.path, cells, cpu_host(engine, tmp_path), lines, resume=True)
    assert summary["state"] == "complete" and not api.called("build") and not api.called("create_container")
    assert lines == [f"nothing to resume in {previous.path}: its last run completed"]


# -- reuse_probes ---------------------------------------------------------------------------------------
def test_reuse_probes_reuses_a_saved_result_when_its_probe_key_matches(tmp_path, wheelhouse, previous, finished_run):
    first = saved(previous.path)[CPU]
    assert first["probe_key"] and first["probes_reused"] is False
    engine, api = engine_with_images(finished_run)
    matrix, cells = cells_of(tmp_path, wheelhouse, [CPU])
    lines: list[str] = []
    # Same image, suite, host and settings: the saved probes stand and no container runs.
    run(engine, matrix, previous.path, cells, cpu_host(engine, tmp_path), lines, reuse_probes=True, build=False)
    again = saved(previous.path)[CPU]
    assert probed_cells(api) == []
    assert again["probes_reused"] is True and again["timings"]["probe_s"] == 0.0
    assert again["probes"] == first["probes"] and again["probe_key"] == first["probe_key"]
    assert f"{CPU}: reusing probe results: same image, probe suite, host and settings (pass)" in lines


@pytest.mark.parametrize("change", ["no --reuse-probes", "--quick", "run options", "another image"])
def test_reuse_probes_runs_the_probes_again_when_anything_in_the_key_changed(
        tmp_path, wheelhouse, previous, finished_run, change):
    first = saved(previous.path)[CPU]
    engine, api = engine_with_images(finished_run)
    matrix, cells = cells_of(tmp_path, wheelhouse, [CPU])
    request = {"reuse_probes": change != "no --reuse-probes", "quick": change == "--quick", "build": False}
    if change == "run options":
        matrix = matrix_at(tmp_path, wheelhouse, "run: {shm_size: 2g}\n")[0]
    if change == "another image":  # same tag, rebuilt: another image id
        (tag,) = (t for t in finished_run[1] if t.startswith(f"{SESSION.namespace}/cpu:"))
        api.images_by_ref[tag]["Id"] = "sha256:" + "0" * 64
    run(engine, matrix, previous.path, cells, cpu_host(engine, tmp_path), **request)
    now = saved(previous.path)[CPU]
    assert probed_cells(api) == [CPU] and now["probes_reused"] is False
    assert (now["probe_key"] == first["probe_key"]) is (change == "no --reuse-probes")


def test_reuse_probes_does_not_reuse_an_error(tmp_path, wheelhouse, previous, finished_run):
    engine, api = engine_with_images(finished_run)
    api.probe_output[CPU] = b""
    matrix, cells = cells_of(tmp_path, wheelhouse, [CPU])
    host = cpu_host(engine, tmp_path)
    run(engine, matrix, previous.path, cells, host, build=False)
    assert saved(previous.path)[CPU]["status"] == "error"
    del api.probe_output[CPU]
    api.calls.clear()
    run(engine, matrix, previous.path, cells, host, reuse_probes=True, build=False)
    assert probed_cells(api) == [CPU] and saved(previous.path)[CPU]["status"] == "pass"


# -- no engine ------------------------------------------------------------------------------------------
def test_an_unreachable_engine_is_a_clear_error_before_anything_runs(tmp_path, wheelhouse, monkeypatch):
    (tmp_path / "matrix.yaml").write_text(MATRIX.format(wheels=wheelhouse / "wheels-src", extra=""))
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(EngineUnavailable) as info:
        cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(tmp_path / "results")),
                       echo=lambda s: None)
    assert info.value.exit_code == 3
    assert "cannot reach the Docker engine at unix:///nonexistent/docker.sock: no such socket" in str(info.value)
    assert "DOCKER_HOST" in str(info.value)
    assert not (tmp_path / "results" / "summary.json").exists()


# -- one probe run per probe key within a run ---------------------------------------------------------------
def test_cells_with_the_same_image_and_settings_share_one_probe_run(tmp_path, wheelhouse):
    """A release and the same file as a local wheel entry: one image, and one probe run for both cells."""
    engine, api = fake_engine()
    (wheel,) = (wheelhouse / "wheels-src").glob("torch-2.13.0+cpu-*.whl")
    matrix, cells = matrix_at(tmp_path, wheelhouse, f"  - {{wheel: {wheel}, vendor: cpu}}\n")
    chosen = [c for c in cells if c.base.id == "cpu"]
    assert sorted(c.id for c in chosen) == [CPU, f"{CPU}+cpu"]
    lines: list[str] = []
    summary = run(engine, matrix, tmp_path / "results", chosen, cpu_host(engine, tmp_path), lines, jobs=2)
    results = saved(tmp_path / "results")
    assert summary["cells"] == {CPU: "pass", f"{CPU}+cpu": "pass"}
    assert len(api.called("build")) == 1 and len(api.called("create_container")) == 1
    (ran,) = [r for r in results.values() if not r["probes_reused"]]
    (shared,) = [r for r in results.values() if r["probes_reused"]]
    assert shared["probes_from"] == ran["cell_id"] and ran["probes_from"] is None
    assert shared["probes"] == ran["probes"] and shared["probe_key"] == ran["probe_key"]
    assert shared["image"]["id"] == ran["image"]["id"] and shared["timings"]["probe_s"] == 0.0
    assert f"{shared['cell_id']}: pass: probes shared with {ran['cell_id']}" in " ".join(lines)


def test_a_twin_probes_itself_when_the_first_probe_run_ended_in_an_error(tmp_path, wheelhouse):
    engine, api = fake_engine()
    (wheel,) = (wheelhouse / "wheels-src").glob("torch-2.13.0+cpu-*.whl")
    matrix, cells = matrix_at(tmp_path, wheelhouse, f"  - {{wheel: {wheel}, vendor: cpu}}\n")
    api.probe_output[CPU] = api.probe_output[f"{CPU}+cpu"] = b""  # prints nothing: an error, not a verdict
    chosen = [c for c in cells if c.base.id == "cpu"]
    summary = run(engine, matrix, tmp_path / "results", chosen, cpu_host(engine, tmp_path), jobs=1)
    assert len(api.called("create_container")) == 2  # an error is not assumed to repeat: the twin probed
    assert summary["cells"] == {CPU: "error", f"{CPU}+cpu": "error"}
    assert not any(r["probes_from"] or r["probes_reused"] for r in saved(tmp_path / "results").values())


def test_a_resume_names_images_as_the_interrupted_run_did(tmp_path, wheelhouse, previous, monkeypatch):
    first = previous.read_summary()
    assert first["image_namespace"]  # every run records it (the session's own namespace here)
    killed = {**first, "state": "interrupted", "cells": {CPU: "pass"}, "not_done": [CPU2, ROCM],
              "request": {**first["request"], "matrix_path": str(tmp_path / "matrix.yaml")}}
    (previous.path / "summary.json").write_text(json.dumps(killed))
    (tmp_path / "matrix.yaml").write_text(MATRIX.format(wheels=wheelhouse / "wheels-src", extra=""))
    monkeypatch.setenv("GPUMATRIX_IMAGE_NAMESPACE", "someone-else")
    with pytest.raises(UsageError) as info:  # refused before the engine is asked anything
        cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(previous.path),
                                  resume=True), echo=lambda s: None)
    assert info.value.exit_code == 2
    assert f"named its images {first['image_namespace']}/…" in str(info.value)
    assert "would name them someone-else/…" in str(info.value)
    assert previous.read_summary() == killed  # nothing was touched
