"""The table (text, markdown, JSON), results on disk, and `invoke list` — no engine needed."""

from __future__ import annotations

import json
import os
import re
import textwrap

import pytest

from gpumatrix import cli
from gpumatrix.errors import ConfigError, ResultsLocked, UsageError
from gpumatrix.knowledge.versions import version_key
from gpumatrix.report.formats import render_results
from gpumatrix.results.store import CellResult, ResultsDir
from gpumatrix.run.safety import results_lock


def render(results, fmt="text", title=None, host=None):
    return render_results(results, host, fmt, title)


def result(cell_id, status, reason=None, **kw):
    base, torch = cell_id.split("-torch")
    return CellResult(cell_id=cell_id, base_id=base, base_image=f"img/{base}", vendor="cpu", variant="cpu",
                      torch=torch, python="3.11", status=status, reason=reason, **kw)


PERF_DOC = {"schema_version": 1, "verdict": {"status": "pass"}, "probes": [
    {"id": "performance.matmul_tflops", "layer": 6, "status": "pass",
     "details": {"results": {"bf16": {"tflops": 612.4}, "fp32": {"tflops": 51.0}}}},
    {"id": "performance.memory_bandwidth", "layer": 6, "status": "pass", "details": {"gb_per_s": 3000.0}},
]}
FAIL_DOC = {"schema_version": 1, "probes": [],
            "verdict": {"status": "fail", "lowest_failing_layer": 4, "lowest_failing_layer_name": "math_libraries"}}


def sample():
    return [
        result("cu130-torch2.15.0", "pass", probes=PERF_DOC),
        result("cu130-torch2.9.1", "fail", "math_libraries.conv2d failed", probes=FAIL_DOC,
               diagnosis={"cause": "dnn_library_failure", "remedy": "use a matching cuDNN", "evidence": "CUDNN_STATUS_X"}),
        result("cu130-torch2.10.0", "skipped", "no NVIDIA GPU on this host"),
        result("rocm7.2-torch2.15.0", "not_applicable", "torch 2.15.0 has no rocm7.2 wheel"),
        result("rocm7.2-torch2.10.0", "skipped", "no NVIDIA GPU on this host"),
        result("rocm7.2-torch2.9.1", "build_error", "No matching distribution found for torch==2.9.1+rocm7.2"),
    ]


HOST = {"hostname": "gpu-a", "gpus": [{"vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3", "arch": "sm_90"}],
        "nvidia_driver": "570.86"}


def test_text_table_layout_marks_and_notes():
    text = render(sample(), "text", host=HOST)
    lines = text.splitlines()
    # one host-type column, labelled with the host type; rows by base, newest torch first (2.15 > 2.10 > 2.9)
    header = next(line for line in lines if "│ cell" in line)
    assert "NVIDIA H100 80GB HBM3 · 570.86" in header
    assert "Host type:\n  NVIDIA H100 80GB HBM3 · 570.86: gpu-a (sm_90) — 1 pass, 1 fail, 1 build failed" in text
    rows = [line.strip("│ ").split(" ")[0] for line in lines if line.startswith("│ cu") or line.startswith("│ rocm")]
    assert rows == ["cu130-torch2.15.0", "cu130-torch2.10.0", "cu130-torch2.9.1",
                    "rocm7.2-torch2.15.0", "rocm7.2-torch2.10.0", "rocm7.2-torch2.9.1"]
    assert "✔ pass 612.4 TFLOP/s bf16" in text and "✘ fail at math_libraries (dnn_library_failure)" in text
    assert "cause: dnn_library_failure; fix: use a matching cuDNN" in text and "evidence: CUDNN_STATUS_X" in text
    # identical notes are shared: both skipped cells point at one note listing both
    assert "cu130-torch2.10.0, rocm7.2-torch2.10.0: skipped — no NVIDIA GPU on this host" in text
    assert "Legend:" in text and "1 pass, 1 fail, 1 build failed, 2 skipped, 1 n/a" in text


def test_markdown_and_json():
    md = render(sample(), "markdown", title="T", host=HOST)
    assert md.startswith("## T")
    assert re.search(r"^\| \*\*cu130-torch2\.15\.0\*\* +\| ✔ pass 612\.4 TFLOP/s bf16", md, flags=re.M)
    assert re.search(r"^\|-+\|", md, flags=re.M)
    assert len([line for line in md.splitlines() if line.startswith("| **")]) == len(sample())
    data = json.loads(render(sample(), "json", host=HOST))
    assert data["format"] == "gpumatrix-merged"  # one JSON for a host and a fleet: mergeable, a baseline
    assert data["counts"] == {"NVIDIA H100 80GB HBM3 · 570.86": {
        "pass": 1, "fail": 1, "error": 0, "build_error": 1, "skipped": 2, "not_applicable": 1, "conflict": 0}}
    ids = [e["cell_id"] for e in data["entries"]]
    assert sorted(ids) == sorted(r.cell_id for r in sample())
    assert all(e["results"][0]["host"]["hostname"] == "gpu-a" for e in data["entries"])  # the run's host filled in
    assert render(sample(), "text") == render(list(reversed(sample())), "text")  # deterministic


def test_version_order():
    assert sorted(["2.9.1", "2.10.0", "2.9.0a0+rocm6.4", "2.15.0"], key=version_key) == \
        ["2.9.0a0+rocm6.4", "2.9.1", "2.10.0", "2.15.0"]


def test_results_round_trip_and_corrupt_files_are_skipped(tmp_path):
    rd = ResultsDir(tmp_path)
    for r in sample():
        rd.write_cell(r)
    (rd.cells_dir / "broken.json").write_text('{"schema_version": 1, "cell_id": ')
    (rd.cells_dir / "alien.json").write_text('{"schema_version": 99}')
    loaded, warnings = rd.load()
    assert sorted(r.cell_id for r in loaded) == sorted(r.cell_id for r in sample())
    assert loaded[0].to_dict() == next(r for r in sample() if r.cell_id == loaded[0].cell_id).to_dict()
    assert len(warnings) == 2 and all("skipped, unreadable result" in w for w in warnings)
    assert not [p for p in rd.cells_dir.iterdir() if p.name.startswith(".")]  # no temp files left
    text = cli.report(str(tmp_path))
    assert "cu130" in text


def test_report_without_results_is_a_clear_error(tmp_path):
    with pytest.raises(UsageError, match="--results: no results in") as err:
        cli.report(str(tmp_path / "nothing"))
    assert err.value.exit_code == 2 and "nothing was built" not in str(err.value)


def test_results_lock_excludes_a_second_run(tmp_path):
    rd = ResultsDir(tmp_path)
    with results_lock(rd):
        pid = os.fork()
        if pid == 0:  # another process trying to take the same lock
            try:
                with results_lock(rd):
                    os._exit(1)
            except ResultsLocked:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0


def test_list_shows_exclusions_and_na(tmp_path):
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent("""\
        schema_version: 1
        bases:
          - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
          - {id: cu130, vendor: nvidia, image: nvidia/cuda:13.0.2-runtime-ubuntu24.04, variant: cu130, python: "3.12"}
        torch:
          - {version: "2.13.0", variants: [cpu, cu130]}
          - {version: "2.12.0", variants: [cpu]}
        exclude:
          - {base: cpu, torch: "2.12.*"}
        """))
    text = cli.list_cells(str(tmp_path / "matrix.yaml"))
    assert "cpu-torch2.12.0: excluded by {base: cpu, torch: 2.12.*} at" in text and "matrix.yaml:9" in text
    assert "n/a: torch 2.12.0 has no cu130 wheel (it ships cpu)" in text
    data = json.loads(cli.list_cells(str(tmp_path / "matrix.yaml"), fmt="json"))
    assert [c["id"] for c in data["cells"]] == ["cpu-torch2.13.0", "cu130-torch2.13.0", "cu130-torch2.12.0"]
    assert data["excluded"][0]["line"] == 9
    only = cli.list_cells(str(tmp_path / "matrix.yaml"), only="cu*")
    assert "cpu-torch2.13.0" not in only
    with pytest.raises(ConfigError, match="'nothing\\*' matches no cell; cells are: cpu-torch2.13.0, ") as err:
        cli.list_cells(str(tmp_path / "matrix.yaml"), only="nothing*")
    assert err.value.exit_code == 2 and err.value.problems[0].path == "--only"
