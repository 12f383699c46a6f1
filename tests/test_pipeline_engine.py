"""End to end on the real engine: real builds with real torch, the real probes inside, the table.

The matrix here mirrors what a CPU-only host sees: a CPU cell that can be built (torch 2.13.0
from the local wheel folder), one whose wheel is not reachable, GPU cells with no GPU on the
host, and a combination that does not exist. Images are content-addressed, so the first test
pays for the build and the second shows that a rerun builds nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpumatrix import cli
from gpumatrix.run.request import RunRequest
from gpumatrix.config.matrix import expand_cells, load_matrix
from gpumatrix.engine.client import MANAGED_LABEL, ContainerSpec, tar_context
from gpumatrix.host import discover_host
from gpumatrix.results.store import ResultsDir
from gpumatrix.images.naming import NAMESPACE_LABEL
from gpumatrix.run.probe import probe_container_spec
from tests.isolation import SESSION

pytestmark = [pytest.mark.engine]

MATRIX = """\
schema_version: 1
python: "3.11"
bases:
  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
  - {id: cu128, vendor: nvidia, image: nvidia/cuda:12.8.1-base-ubuntu24.04, variant: cu128, python: "3.12"}
  - {id: rocm6.4, vendor: amd, image: rocm/dev-ubuntu-24.04:6.4.4, variant: rocm6.4, python: "3.12"}
torch:
  - {version: "2.13.0", variants: [cpu, cu128, cu130]}
  - {version: "2.12.0", variants: [cpu, cu128, rocm6.4]}
include:
  - {base: cpu, torch: "2.13.0", env: {GPUMATRIX_TEST_MARK: "included"}}
"""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, engine):
    d = tmp_path_factory.mktemp("e2e")
    (d / "matrix.yaml").write_text(MATRIX)
    FIRST_RUN_WORKDIR[:] = [d]
    return d


@pytest.fixture(scope="module")
def first_run(workdir):
    # rebuild=True: a real build from scratch (no layer cache) every time the suite runs.
    table = cli.run_matrix(RunRequest(matrix_path=str(workdir / "matrix.yaml"), results_path=str(workdir / "results"), rebuild=True), echo=FIRST_RUN_LINES.append)
    return table, ResultsDir(workdir / "results")


class _Lines(list):
    """What the first run printed, and the build log as it stood when each build step was announced."""

    log_at_step: dict[str, str] = {}

    def append(self, line: str) -> None:
        super().append(line)
        if line.startswith("cpu-torch2.13.0 [") and "] step " in line:
            log = ResultsDir(FIRST_RUN_WORKDIR[0] / "results").log_path("cpu-torch2.13.0", "build")
            self.log_at_step[line.split("] ", 1)[1]] = log.read_text() if log.exists() else ""


FIRST_RUN_LINES = _Lines()
FIRST_RUN_WORKDIR: list[Path] = []


def _cells(results: ResultsDir) -> dict:
    cells, warnings = results.load()
    assert warnings == []
    return {c.cell_id: c for c in cells}


@pytest.mark.slow
def test_matrix_builds_probes_and_tabulates(first_run):
    table, results = first_run
    cells = _cells(results)
    assert set(cells) == {"cpu-torch2.13.0", "cpu-torch2.12.0", "cu128-torch2.13.0", "cu128-torch2.12.0",
                          "rocm6.4-torch2.13.0", "rocm6.4-torch2.12.0"}

    good = cells["cpu-torch2.13.0"]
    assert good.status == "pass", (good.reason, good.probes and good.probes.get("verdict"))
    doc = good.probes
    assert doc["schema_version"] == 1 and doc["accelerator"] == "cpu"
    assert doc["facts"]["torch"]["version"].startswith("2.13.0")
    assert any(p["id"].startswith("math_libraries.") and p["status"] == "pass" for p in doc["probes"])
    # named in the test session's namespace, never the user's gpumatrix/ (a rebuild there would leave theirs dangling)
    assert good.image["tag"].startswith(f"{SESSION.namespace}/cpu:torch2.13.0-") and good.image["id"].startswith("sha256:")
    assert good.env == {"GPUMATRIX_TEST_MARK": "included"}
    assert good.host["gpus"] == [] and good.host["engine"]["version"]
    assert good.timings["build_s"] >= 0 and good.timings["probe_s"] > 0
    assert good.image["reused"] is False
    downloads = good.image["downloads"]  # pip's remote fetches went through the host's wheel cache
    assert downloads["files"] >= 1 and downloads["upstream_bytes"] + downloads["cache_bytes"] > 0
    build_log = Path(good.logs["build"]).read_text()
    assert "Successfully built" in build_log and "Successfully installed" in build_log  # pip really ran

    # Live progress (plain lines here: not a terminal): each line names the cell and its elapsed time; the
    # Dockerfile steps and the probe layers are shown as they happen.
    steps = [line for line in FIRST_RUN_LINES if line.startswith("cpu-torch2.13.0 [")]
    assert any(re.search(r"\] step \d+/\d+: FROM ", line) for line in steps), steps
    assert any("] probing layer 1/6 (kernel driver): kernel_driver." in line for line in steps), steps
    assert any("] probing layer 4/6 (math libraries): math_libraries.matmul_fp32" in line for line in steps), steps
    assert all(re.match(r"^cpu-torch2\.13\.0 \[\d+:\d\d\] \S", line) for line in steps), steps
    # The build log is written as the build goes: when step N was announced, the file already held it.
    at_steps = FIRST_RUN_LINES.log_at_step
    assert len(at_steps) >= 3, at_steps
    for step, log_then in at_steps.items():
        number = step.split()[1].split("/")[0]
        assert f"Step {number}/" in log_then and "Successfully built" not in log_then, step

    missing = cells["cpu-torch2.12.0"]
    assert missing.status == "build_error"
    assert "torch==2.12.0+cpu" in missing.reason and "matching distribution" in missing.reason
    assert "No matching distribution found" in Path(missing.logs["build"]).read_text()

    assert cells["cu128-torch2.12.0"].status == "skipped"
    assert "no NVIDIA GPU on this host" in cells["cu128-torch2.12.0"].reason
    assert cells["rocm6.4-torch2.12.0"].status == "skipped" and "no AMD GPU" in cells["rocm6.4-torch2.12.0"].reason
    na = cells["rocm6.4-torch2.13.0"]
    assert na.status == "not_applicable" and "no rocm6.4 wheel" in na.reason

    # The table: cells as rows, this host's type as the column, marks and footnotes with the reasons.
    lines = table.splitlines()
    header = next(line for line in lines if line.strip("│┃ ").startswith("cell "))
    assert "cpu" in header.split("cell", 1)[1]  # the host type labels the column
    row = {cid: next(line for line in lines if f" {cid} " in line) for cid in ("cpu-torch2.13.0", "cpu-torch2.12.0")}
    assert "✔ pass" in row["cpu-torch2.13.0"] and "TFLOP/s fp32" in row["cpu-torch2.13.0"]
    assert "! build failed" in row["cpu-torch2.12.0"]
    assert lines.index(row["cpu-torch2.13.0"]) < lines.index(row["cpu-torch2.12.0"])  # newer torch first
    assert good.headline_tflops()[1] > 0  # the performance probes ran inside the container
    assert "matching distribution" in table and "no NVIDIA GPU on this host" in table
    assert (results.path / "table.md").read_text().count("|") > 10
    summary = json.loads((results.path / "summary.json").read_text())
    assert summary["cells"]["cpu-torch2.13.0"] == "pass" and summary["state"] == "complete" and not summary["not_done"]


@pytest.mark.slow
def test_rerun_with_nothing_changed_builds_nothing(first_run, workdir, engine):
    _, results = first_run
    before = _cells(results)["cpu-torch2.13.0"]
    log = results.log_path("cpu-torch2.13.0", "build")
    log_mtime = log.stat().st_mtime_ns if log.exists() else None
    lines: list[str] = []
    cli.run_matrix(RunRequest(matrix_path=str(workdir / "matrix.yaml"), results_path=str(workdir / "results"), only="cpu-torch2.13.0"), echo=lines.append)
    after = _cells(results)["cpu-torch2.13.0"]
    assert after.image["reused"] is True and after.image["tag"] == before.image["tag"]
    assert after.image["id"] == before.image["id"]
    assert not any("building" in line for line in lines)
    assert (log.stat().st_mtime_ns if log.exists() else None) == log_mtime  # no build ran, so no new log
    assert after.status == "pass" and after.probes_reused is False and after.probe_key

    # --reuse-probes: same image, suite, host and settings -> the saved probe results stand, no container runs
    lines.clear()
    cli.run_matrix(RunRequest(matrix_path=str(workdir / "matrix.yaml"), results_path=str(workdir / "results"), only="cpu-torch2.13.0",
                   reuse_probes=True), echo=lines.append)
    reused = _cells(results)["cpu-torch2.13.0"]
    assert reused.probes_reused is True and reused.timings["probe_s"] == 0.0
    assert reused.probes == after.probes and any("reusing probe results" in line for line in lines)
    assert not any("probing" in line for line in lines)


IMPORT_CHECK = "import torch, numpy; t = torch.from_numpy(numpy.ones(2)); print(torch.__version__, numpy.__version__, t.sum().item())"


@pytest.mark.slow
def test_a_built_image_imports_torch_with_numpy_and_no_warning(first_run, engine):
    """What a user does first with the image: `docker run --rm -it IMAGE python`, then import torch. NumPy is
    where torch wants it (the venv), so nothing is printed on stderr ("Failed to initialize NumPy", or the
    NumPy 1.x/2.x ABI complaint, would be)."""
    _, results = first_run
    good = _cells(results)["cpu-torch2.13.0"]
    image = engine.image_info(good.image["tag"])
    assert image is not None and image.labels[NAMESPACE_LABEL] == SESSION.namespace
    for code in ("import torch", IMPORT_CHECK):
        out = engine.run(ContainerSpec(image=good.image["tag"], command=["python", "-c", code], network_mode="none",
                                       labels=SESSION.labels, timeout_s=300.0))
        assert out.exit_code == 0 and out.stderr == b"", (code, out.stderr.decode(errors="replace")[-3000:])
    torch_version, numpy_version, total = out.stdout.decode().split()
    assert torch_version == "2.13.0+cpu" and float(total) == 2.0
    assert f"numpy=={numpy_version}" in Path(good.logs["build"]).read_text()  # the one the wheelhouse resolved


@pytest.mark.slow
def test_relative_results_folder(first_run, workdir, monkeypatch):
    """`invoke matrix --results results` from the project folder: relative paths must reach the engine
    as absolute bind sources (the engine reads a relative one as a volume name)."""
    monkeypatch.chdir(workdir)
    cli.run_matrix(RunRequest(matrix_path="matrix.yaml", results_path="results-relative", only="cpu-torch2.13.0", quick=True), echo=lambda s: None)
    cell = _cells(ResultsDir(workdir / "results-relative"))["cpu-torch2.13.0"]
    assert cell.status == "pass" and cell.probes["mode"] == "quick"


@pytest.mark.slow
def test_report_rerenders_without_engine(first_run, monkeypatch):
    _, results = first_run
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
    md = cli.report(str(results.path), "markdown")
    assert md.startswith("## gpumatrix compatibility") and "| **cpu-torch2.13.0** " in md
    data = json.loads(cli.report(str(results.path), "json"))
    assert data["format"] == "gpumatrix-merged" and data["counts"]["cpu"]["pass"] >= 1


def test_probe_container_is_least_privileged(engine, tracked, workdir):
    """Inspect the HostConfig the engine actually got for a CPU cell's probe container."""
    matrix = load_matrix(workdir / "matrix.yaml")
    cell = next(c for c in expand_cells(matrix).cells if c.id == "cpu-torch2.13.0")
    host = discover_host(engine.describe())
    spec = probe_container_spec(cell, "debian:bookworm-slim", host, matrix.run)
    cid = engine.create_container(spec)
    tracked["containers"].append(cid)
    data = engine.inspect_container(cid)
    hc = data.host_config
    assert hc["Privileged"] is False and hc["ReadonlyRootfs"] is True
    assert hc["NetworkMode"] == "none" and hc["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in hc["SecurityOpt"]
    assert hc["ShmSize"] == 8 * 1024 ** 3 and hc["PidsLimit"] == 4096
    assert hc["Devices"] in (None, []) and not hc.get("DeviceRequests")
    assert any(b.endswith(":/opt/gpumatrix/probes:ro") for b in hc["Binds"])
    assert data.user == "65534:65534"
    assert data.labels[MANAGED_LABEL] == "true"


def test_clean_removes_only_labelled_objects(engine, tracked, unique):
    dockerfile = b"FROM debian:bookworm-slim\nCMD [\"true\"]\n"
    ctx = tar_context({"Dockerfile": dockerfile})
    mine, theirs = f"{SESSION.namespace}/cleantest:{unique}", f"user/unlabelled:{unique}"
    engine.build(ctx, mine, {}, {MANAGED_LABEL: "true", "io.gpumatrix.cell": f"cleantest-{unique}", **SESSION.labels},
                 lambda s: None)
    engine.build(ctx, theirs, {}, SESSION.labels, lambda s: None)  # not gpumatrix's: no io.gpumatrix.managed
    tracked["images"] += [mine, theirs]
    user_container = engine.create_container(ContainerSpec(image=theirs, command=["true"], name=f"user-{unique}"))
    tracked["containers"].append(user_container)

    listing = cli.clean(dry_run=True, only=f"cleantest-{unique}")
    assert mine in listing and theirs not in listing and f"user-{unique}" not in listing
    assert engine.image_info(mine) is not None  # dry run removed nothing

    out = cli.clean(only=f"cleantest-{unique}")
    assert "removed 1 " in out
    assert engine.image_info(mine) is None
    assert engine.image_info(theirs) is not None
    assert engine.inspect_container(user_container).id == user_container
    unfiltered = cli.clean(dry_run=True)
    assert theirs not in unfiltered and f"user-{unique}" not in unfiltered

