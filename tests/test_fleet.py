"""Fleet scale without an engine: shards, the GitHub job matrix, merge, the regression gate, recommend, JUnit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpumatrix.config.matrix import expand_cells, load_matrix
from gpumatrix.errors import ConfigError, RegressionFound
from gpumatrix.config.select import gha_matrix, parse_shard, select_shard, shard_cells
from gpumatrix.images.registry import cell_ref, normalize_registry, registry_ref
from gpumatrix.host import HostInfo, host_type_label
from gpumatrix.report.commands import gate, merge_command, recommend_command
from gpumatrix.report.comparison import enforce, render_comparison
from gpumatrix.report.formats import render_merged, render_results
from gpumatrix.report.vocabulary import conflict_text
from gpumatrix.results.gate import compare
from gpumatrix.results.merge import load_sources, merge_results
from gpumatrix.results.recommend import NoRecommendation, recommend
from gpumatrix.results.status import STATUSES
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.pipeline import Runner
from tests.builders import CPU, H100, H100_LABEL, MI300, probes_doc, result
from tests.fake_engine import fake_engine

REPO = Path(__file__).resolve().parent.parent

@dataclass(frozen=True)
class FakeCell:
    id: str
    applicable: bool = True


# -- shards -------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(ids=st.sets(st.from_regex(r"[a-z]{1,4}[0-9]{0,2}-torch2\.[0-9]{1,2}\.[0-9]", fullmatch=True), max_size=60),
       applicable=st.lists(st.booleans(), min_size=60, max_size=60), n=st.integers(1, 12), seed=st.randoms())
def test_shards_cover_every_cell_exactly_once_and_evenly(ids, applicable, n, seed):
    cells = [FakeCell(i, a) for i, a in zip(sorted(ids), applicable)]
    shuffled = list(cells)
    seed.shuffle(shuffled)
    shards = [shard_cells(cells, k, n) for k in range(1, n + 1)]
    seen = [c.id for s in shards for c in s]
    assert sorted(seen) == sorted(c.id for c in cells)  # every cell, exactly once
    # independent of the order of the matrix
    assert shards == [shard_cells(shuffled, k, n) for k in range(1, n + 1)]
    # even: work (applicable cells) and n/a cells each differ by at most one between shards
    for flag in (True, False):
        sizes = [sum(c.applicable is flag for c in s) for s in shards]
        assert max(sizes) - min(sizes) <= 1


def test_shard_flag_validation():
    assert parse_shard("2/4") == (2, 4) and parse_shard(" 1 / 1 ") == (1, 1)
    for bad, words in (("0/3", "numbered 1 to 3"), ("4/3", "numbered 1 to 3"), ("1/0", "at least 1"),
                       ("two", "is not K/N"), ("1/2/3", "is not K/N")):
        with pytest.raises(ConfigError, match=words) as err:
            parse_shard(bad)
        assert err.value.problems[0].path == "--shard" and err.value.exit_code == 2
    cells = [FakeCell(f"c{i}") for i in range(5)]
    assert select_shard(cells, None) == cells
    assert [c.id for c in select_shard(cells, "1/2")] == ["c0", "c1"]


def test_gha_matrix_has_one_job_per_applicable_cell_with_runner_labels():
    cells = expand_cells(load_matrix(REPO / "matrix.yaml")).cells
    data = gha_matrix(cells)
    assert json.loads(json.dumps(data)) == data
    ids = [e["id"] for e in data["include"]]
    assert ids == sorted(c.id for c in cells if c.applicable)
    by_id = {e["id"]: e for e in data["include"]}
    nvidia = next(c for c in cells if c.vendor == "nvidia" and c.applicable)
    amd = next(c for c in cells if c.vendor == "amd" and c.applicable)
    assert by_id[nvidia.id]["runner"] == ["self-hosted", "linux", "gpu", "nvidia"]
    assert by_id[amd.id]["runner"] == ["self-hosted", "linux", "gpu", "amd"]
    assert by_id[nvidia.id]["vendor"] == "nvidia" and by_id[nvidia.id]["torch"] == nvidia.torch.version
    assert not any(e["id"] == c.id for e in data["include"] for c in cells if not c.applicable)


def test_registry_names():
    assert normalize_registry("http://127.0.0.1:5000/") == "127.0.0.1:5000"
    assert normalize_registry("registry.example.com/ml") == "registry.example.com/ml"
    with pytest.raises(ConfigError, match="is not a registry"):
        normalize_registry("bad registry")
    assert registry_ref("r:5000", "gpumatrix/cu130:torch2.15.0-abc", "cu130", "gpumatrix") == \
        "r:5000/gpumatrix/cu130:torch2.15.0-abc"
    # another image namespace (GPUMATRIX_IMAGE_NAMESPACE) names the pushed repository too
    assert registry_ref("r:5000/ml", "team/a/cu130:torch2.15.0-abc", "cu130", "team/a") == \
        "r:5000/ml/team/a/cu130:torch2.15.0-abc"
    assert cell_ref("r:5000", "cu130", "2.15.0", "team") == "r:5000/team/cu130:torch2.15.0"


# -- merge ----------------------------------------------------------------------
def test_host_type_labels():
    assert host_type_label(H100) == H100_LABEL
    assert host_type_label({**H100, "gpus": H100["gpus"] * 8}) == H100_LABEL  # the count does not matter
    assert host_type_label(MI300) == "AMD Instinct MI300X · 6.10.5"
    assert host_type_label(CPU) == "cpu"
    assert host_type_label({}) == "unknown" and host_type_label(None) == "unknown"  # no GPU facts recorded


def test_merge_groups_hosts_by_type_and_shows_conflicts():
    a, b, c = ({**H100, "hostname": h} for h in ("host-a", "host-b", "host-c"))
    merged = merge_results([
        ("a", result("cu130-torch2.15.0", "pass", a, probes=probes_doc())),
        ("b", result("cu130-torch2.15.0", "fail", b, "math_libraries.conv2d failed", probes=probes_doc(4),
                     diagnosis={"cause": "dnn_library_failure", "remedy": "match cuDNN"})),
        ("c", result("cu130-torch2.15.0", "skipped", c, "other shard")),  # a skip never outvotes a run
        ("a", result("cu130-torch2.14.1", "pass", a, probes=probes_doc())),
        ("c", result("cu130-torch2.14.1", "skipped", c, "no NVIDIA GPU")),
        ("m", result("rocm7.2-torch2.14.1", "pass", MI300, vendor="amd", probes=probes_doc())),
        ("m", result("cu130-torch2.14.1", "skipped", MI300, "no NVIDIA GPU on this host")),
        ("p", result("cpu-torch2.14.1", "pass", CPU, vendor="cpu")),
    ])
    assert merged.host_labels() == ["AMD Instinct MI300X · 6.10.5", H100_LABEL, "cpu"]
    e = merged.entry("cu130-torch2.15.0", H100_LABEL)
    assert e.conflict and conflict_text(e) == "conflict: pass on host-a, fail on host-b"
    assert merged.entry("cu130-torch2.14.1", H100_LABEL).status == "pass"
    text = render_merged(merged, "text")
    assert "conflict: pass on host-a, fail on host-b" in text
    assert "on host-b: fail — math_libraries.conv2d failed" in text and "dnn_library_failure" in text
    md = render_merged(merged, "markdown")
    header = next(line for line in md.splitlines() if line.startswith("| cell"))
    assert md.startswith("## ") and f"| {H100_LABEL}" in header
    data = json.loads(render_merged(merged, "json"))
    entry = next(x for x in data["entries"] if x["cell_id"] == "cu130-torch2.15.0" and x["host_type"] == H100_LABEL)
    assert entry["status"] == "conflict" and entry["statuses"] == {"host-a": "pass", "host-b": "fail"}
    assert data["counts"][H100_LABEL]["conflict"] == 1
    assert {h["label"]: h["archs"] for h in data["host_types"]}[H100_LABEL] == ["sm_90"]


STATUS = st.sampled_from(STATUSES)


@settings(max_examples=60, deadline=None)
@given(statuses=st.dictionaries(st.from_regex(r"(cu130|cpu|rocm7\.2)-torch2\.1[0-5]\.[01]", fullmatch=True),
                                STATUS, max_size=25), n=st.integers(1, 6))
def test_merge_of_shards_equals_the_unsharded_run(statuses, n):
    def results_for(ids):
        return [("run", result(i, statuses[i], H100)) for i in ids]
    cells = [FakeCell(i) for i in statuses]
    whole = merge_results(results_for(statuses))
    pieces = []
    for k in range(1, n + 1):
        pieces += [(f"shard{k}", r) for _, r in results_for([c.id for c in shard_cells(cells, k, n)])]
    sharded = merge_results(pieces)
    assert render_merged(sharded, "json") == render_merged(whole, "json")
    assert render_merged(sharded, "text") == render_merged(whole, "text")


def test_real_runner_sharded_results_merge_to_the_unsharded_table(tmp_path):
    """The real pipeline on the shipped matrix (GPU cells on a GPU-less host: recorded, nothing built),
    on the fake engine: the cells never reach it."""
    matrix = load_matrix(REPO / "matrix.yaml")
    cells = [c for c in expand_cells(matrix).cells if c.vendor != "cpu"]
    host = HostInfo(hostname="ci-host", kernel="6.1", os="Debian GNU/Linux 12 (bookworm)", machine="x86_64")
    engine, api = fake_engine()

    def run(folder: Path, selected) -> None:
        Runner(engine, matrix, ResultsDir(folder), host=host).run(selected)

    run(tmp_path / "all", cells)
    for k in (1, 2, 3):
        run(tmp_path / f"shard{k}", select_shard(cells, f"{k}/3"))
    whole = load_sources([tmp_path / "all"])
    sharded = load_sources([tmp_path / f"shard{k}" for k in (1, 2, 3)])
    assert render_merged(sharded, "json") == render_merged(whole, "json")
    assert render_merged(sharded, "markdown") == render_merged(whole, "markdown")
    assert sorted(whole.cells) == sorted(c.id for c in cells)
    out = merge_command([str(tmp_path / f"shard{k}" / "summary.json") for k in (1, 2, 3)], "text")
    assert "no NVIDIA GPU on this host" in out and "cu130-torch2.15.0" in out
    assert not api.called("build") and not api.called("create_container")


def test_merge_errors_name_the_source(tmp_path):
    with pytest.raises(ConfigError, match="no such results folder"):
        load_sources([tmp_path / "missing"])
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(ConfigError, match="not gpumatrix results"):
        load_sources([tmp_path / "x.json"])
    with pytest.raises(ConfigError, match="unknown format"):
        merge_command([str(tmp_path)], "pdf")


# -- the regression gate -----------------------------------------------------------
def _dir(folder: Path, results) -> Path:
    rd = ResultsDir(folder)
    for r in results:
        rd.write_cell(r)
    return folder


def test_gate_fails_on_a_regression_and_names_cell_host_and_why(tmp_path):
    baseline = _dir(tmp_path / "before", [
        result("cu130-torch2.15.0", "pass", H100, probes=probes_doc()),
        result("cu130-torch2.14.1", "fail", H100, "framework.compile failed", probes=probes_doc(5)),
        result("cu126-torch2.13.0", "pass", H100, probes=probes_doc()),
        result("cpu-torch2.13.0", "pass", CPU, vendor="cpu")])
    current = _dir(tmp_path / "now", [
        result("cu130-torch2.15.0", "fail", H100, "math_libraries.conv2d failed", probes=probes_doc(4),
               diagnosis={"cause": "dnn_library_failure", "remedy": "use a matching cuDNN", "evidence": "CUDNN_X"}),
        result("cu130-torch2.14.1", "pass", H100, probes=probes_doc()),
        result("cu126-torch2.13.0", "skipped", H100, "not in this shard"),
        result("cpu-torch2.13.0", "pass", CPU, vendor="cpu")])
    with pytest.raises(RegressionFound) as err:
        gate(baseline, [current])
    message = str(err.value)
    assert err.value.exit_code == 4
    assert f"cu130-torch2.15.0 on {H100_LABEL} (gpu-a): pass → fail — math_libraries.conv2d failed" in message
    assert "cause: dnn_library_failure; fix: use a matching cuDNN" in message and "evidence: CUDNN_X" in message
    assert "Improvements" in message and "cu130-torch2.14.1" in message
    assert "Not checked" in message and "cu126-torch2.13.0" in message
    comp = compare(load_sources([baseline]), load_sources([current]))
    assert [c.cell_id for c in comp.regressions] == ["cu130-torch2.15.0"]
    assert [c.cell_id for c in comp.improvements] == ["cu130-torch2.14.1"] and comp.unchanged == 1
    assert "**Regressions" in render_comparison(comp, "markdown")
    assert json.loads(render_comparison(comp, "json"))["ok"] is False


def test_gate_passes_without_regression_and_reads_every_baseline_format(tmp_path):
    now = [result("cu130-torch2.15.0", "pass", H100, probes=probes_doc()),
           result("cu130-torch2.14.1", "fail", H100, "x", probes=probes_doc(4))]
    current = _dir(tmp_path / "now", now)
    # baseline as merged JSON, as `invoke report --format json`, as a folder, as its summary.json
    merged_json = tmp_path / "merged.json"
    merged_json.write_text(merge_command([str(current)], "json"))
    report_json = tmp_path / "report.json"
    report_json.write_text(render_results(now, fmt="json"))
    ResultsDir(current).write_summary({"schema_version": 1, "host": H100})
    for baseline in (merged_json, report_json, current, current / "summary.json"):
        text = gate(baseline, [current])
        assert "Regression gate: passed" in text and "2 unchanged" in text
    # a fail that was already failing, or a different host type, is not a regression
    other_host = _dir(tmp_path / "amd", [result("cu130-torch2.15.0", "fail", MI300, "no GPU")])
    enforce(compare(load_sources([current]), load_sources([other_host])))
    with pytest.raises(ConfigError, match="no such results folder or file") as err:
        gate(tmp_path / "nothing.json", [current])
    assert err.value.exit_code == 2 and err.value.problems[0].path == str(tmp_path / "nothing.json")


def test_gate_counts_a_conflict_with_a_failing_host_as_regression():
    base = merge_results([("b", result("cu130-torch2.15.0", "pass", H100))])
    now = merge_results([("x", result("cu130-torch2.15.0", "pass", H100)),
                         ("y", result("cu130-torch2.15.0", "error", {**H100, "hostname": "gpu-b"}, "no output"))])
    comp = compare(base, now)
    assert [(c.cell_id, c.hosts) for c in comp.regressions] == [("cu130-torch2.15.0", ("gpu-b",))]


# -- recommend -------------------------------------------------------------------------
def test_recommend_newest_torch_whose_critical_probes_pass():
    pushed = {"id": "sha256:" + "1" * 64, "tag": "gpumatrix/cu130:torch2.14.1-x",
              "pushed": "reg:5000/gpumatrix/cu130@sha256:" + "a" * 64, "repo_digests": []}
    merged = merge_results([
        ("h", result("cu130-torch2.15.0", "fail", H100, "compile", probes=probes_doc(5))),  # critical failure
        ("h", result("cu130-torch2.14.1", "fail", H100, "perf", probes=probes_doc(6), image=pushed)),  # perf only
        ("h", result("cu126-torch2.13.0", "pass", H100, probes=probes_doc(), image={"id": "sha256:" + "2" * 64})),
        ("m", result("rocm7.2-torch2.14.1", "pass", MI300, vendor="amd", probes=probes_doc(),
                     image={"id": "sha256:" + "4" * 64})),
    ])
    rec = recommend(merged, H100_LABEL)
    assert rec.cell_id == "cu130-torch2.14.1" and rec.pinned
    assert rec.reference == pushed["pushed"]
    assert rec.docker_run == f"docker run --rm -it --gpus all --shm-size 8g {pushed['pushed']}"
    # --require: a probe that only skipped does not count
    rec = recommend(merged, H100_LABEL, require=["framework.compile"])
    assert rec.cell_id == "cu130-torch2.14.1"
    with pytest.raises(NoRecommendation, match="required probe"):
        recommend(merged, H100_LABEL, require=["math_libraries.collectives"])
    # --min-torch filters out the older one; a local id comes with a note
    rec = recommend(merged, H100_LABEL, min_torch="2.13", vendor="nvidia", require=["math_libraries.*"])
    assert rec.cell_id == "cu130-torch2.14.1"
    older = recommend(merge_results([("h", result("cu126-torch2.13.0", "pass", H100, probes=probes_doc(),
                                                   image={"id": "sha256:" + "2" * 64}))]), H100_LABEL)
    assert not older.pinned and older.reference == "sha256:" + "2" * 64 and "not pushed" in older.note
    amd = recommend(merged, "AMD Instinct MI300X · 6.10.5")
    assert ("--device /dev/kfd --device /dev/dri --group-add video --group-add render --shm-size 8g"
            in amd.docker_run)
    with pytest.raises(NoRecommendation, match="no results from a host of type"):
        recommend(merged, "cpu")
    with pytest.raises(NoRecommendation, match="torch >= 3.0"):
        recommend(merged, H100_LABEL, min_torch="3.0")


def test_recommend_command(tmp_path):
    folder = _dir(tmp_path / "r", [result("cu130-torch2.15.0", "pass", H100, probes=probes_doc(),
                                          image={"id": "sha256:" + "3" * 64})])
    out = recommend_command([str(folder)], host_type=H100_LABEL)
    assert "Known-good image for NVIDIA H100 80GB HBM3 · 570.86: cu130-torch2.15.0" in out
    assert "docker run --rm -it --gpus all --shm-size 8g sha256:" in out
    data = json.loads(recommend_command([str(folder)], host_type=H100_LABEL, fmt="json"))
    assert data["cell_id"] == "cu130-torch2.15.0"
    with pytest.raises(ConfigError, match="unknown vendor"):
        recommend_command([str(folder)], host_type=H100_LABEL, vendor="intel")


# -- JUnit ---------------------------------------------------------------------------
def test_junit_one_testcase_per_cell_and_host_type():
    merged = merge_results([
        ("h", result("cu130-torch2.15.0", "pass", H100, probes=probes_doc(), timings={"probe_s": 2.5})),
        ("h", result("cu130-torch2.14.1", "fail", H100, "conv2d <failed> & more", probes=probes_doc(4),
                     diagnosis={"cause": "dnn_library_failure", "remedy": "r"})),
        ("h", result("cu130-torch2.13.0", "build_error", H100, "No matching distribution")),
        ("h", result("cu126-torch2.15.0", "not_applicable", H100, "no wheel")),
        ("c", result("cu130-torch2.15.0", "skipped", CPU, "no NVIDIA GPU")),
    ])
    root = ET.fromstring(render_merged(merged, "junit"))
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "2"
    assert root.get("skipped") == "2"
    suite = root.find(f"testsuite[@name='{H100_LABEL}']")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["cu130-torch2.15.0"].find("failure") is None and cases["cu130-torch2.15.0"].get("time") == "2.500"
    failure = cases["cu130-torch2.14.1"].find("failure")
    assert failure.get("message") == "fail: conv2d <failed> & more" and failure.get("type") == "fail"
    assert "cause: dnn_library_failure" in failure.text and "layer4.broken" in failure.text
    assert cases["cu130-torch2.13.0"].find("failure").get("type") == "build_error"
    assert cases["cu126-torch2.15.0"].find("skipped").get("message") == "n/a: no wheel"
    assert root.find("testsuite[@name='cpu']/testcase/skipped") is not None
