"""The results model and its one-room rules: one host-type label, one version order, one status vocabulary,
one table for a host or a fleet; and the report's output options."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpumatrix import cli
from gpumatrix.host import discover_host, host_type_label
from gpumatrix.report.formats import FORMATS, render_merged, render_results
from gpumatrix.report.table import build_table
from gpumatrix.report.vocabulary import figure
from gpumatrix.results.merge import load_sources, merge_results
from gpumatrix.results.status import FAILING, RAN, STATUSES
from gpumatrix.results.store import ResultsDir
from gpumatrix.knowledge.versions import at_least, version_key

from tests.builders import H100, MI300, probes_doc, result

ROOTS = Path(__file__).parent / "fixtures" / "host" / "roots"
PACKAGE = Path(cli.__file__).parent


@pytest.mark.parametrize("root", sorted(p.name for p in ROOTS.iterdir()))
def test_the_run_side_and_the_results_side_give_a_recorded_host_one_label(tmp_path, root):
    host = discover_host(root=ROOTS / root)
    rd = ResultsDir(tmp_path)
    rd.write_cell(result("cu130-torch2.15.0", "pass", host.fingerprint()))  # as the runner records it
    merged = load_sources([tmp_path])  # read back as merge and recommend see it
    assert merged.host_labels() == [host.host_type()] == [host_type_label(host.fingerprint())]
    assert host.host_type() not in ("unknown", "cpu") and host.gpus[0].name in host.host_type()


def test_versions_compare_as_versions():
    assert sorted(["2.9.1", "2.10.0", "2.9.0a0+rocm6.4", "2.15.0", "nightly", "2.9.1+cu130"], key=version_key) == \
        ["nightly", "2.9.0a0+rocm6.4", "2.9.1", "2.9.1+cu130", "2.10.0", "2.15.0"]
    assert at_least("2.10.0", "2.9") and at_least("2.9.1+cu130", "2.9.1") and not at_least("2.9.0a0", "2.9")
    assert not at_least("garbage", "2.9") and not at_least("2.9", "garbage")


def test_figures_keep_their_significant_digits():
    assert [figure(x) for x in (612.4, 51.0, 1.0, 0.012, 0.0123, 0.5, 0.0)] == \
        ["612.4", "51.0", "1.0", "0.012", "0.012", "0.50", "0.0"]
    tiny = [result("cpu-torch2.15.0", "pass", {**H100, "gpus": []}, vendor="cpu", probes=probes_doc(tflops=0.012))]
    for fmt in ("text", "markdown"):
        out = render_results(tiny, fmt=fmt)
        assert "0.012 TFLOP/s bf16" in out and "0.0 TFLOP/s" not in out


def _status_literals(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """Literal lists of statuses: one naming a cell-only status with another, or both ``fail`` and ``error``
    (the failing list, of cells or of probes). ``pass``/``fail`` alone is also a verdict, and other
    vocabularies (the doctor's pass/warn/fail/skip) are not this one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            statuses = words & set(STATUSES)
            if ({"fail", "error"} <= words) or (statuses & {"build_error", "not_applicable"} and len(statuses) > 1):
                found.append((node.lineno, sorted(words)))
    return found


# Not yet moved to gpumatrix.results.status (outside this branch's rooms; see the branch's report):
# the run stage's copies of the probe-failing list.
PENDING: set[str] = set()


def test_the_status_vocabulary_lives_in_one_room():
    """No module but results/status.py spells out a list of statuses (the failing list had five copies)."""
    copies = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ("results/status.py", *PENDING):
            continue
        found = _status_literals(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            copies[rel] = found
    assert copies == {}
    assert _status_literals(ast.parse('FAILING = ("fail", "error", "build_error")'))  # the check can fail
    assert set(FAILING) < set(RAN) <= set(STATUSES)


def test_one_table_for_one_host_type_and_for_many():
    one = build_table(merge_results([("a", result("cu130-torch2.15.0", "fail", H100, "boom"))]))
    many = build_table(merge_results([("a", result("cu130-torch2.15.0", "fail", H100, "boom")),
                                      ("m", result("cu130-torch2.15.0", "pass", MI300, vendor="amd"))]))
    assert [c.label for c in one.columns] == ["NVIDIA H100 80GB HBM3 · 570.86"]
    assert len(many.columns) == 2 and [r.cell_id for r in many.rows] == [r.cell_id for r in one.rows]
    assert one.notes[0].where == ("cu130-torch2.15.0",)  # one host type: the note names only the cell
    assert many.notes[0].where == ("cu130-torch2.15.0 on NVIDIA H100 80GB HBM3 · 570.86",)


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_output_writes_every_format_atomically(tmp_path, fmt):
    rd = ResultsDir(tmp_path / "r")
    rd.write_cell(result("cu130-torch2.15.0", "pass", H100, probes=probes_doc()))
    rd.write_summary({"state": "complete", "host": H100})
    out = tmp_path / "site" / f"table.{fmt}"
    assert cli.report(str(rd.path), fmt, output=str(out)) == f"wrote {out}\n"
    assert out.read_text(encoding="utf-8") == cli.report(str(rd.path), fmt)
    assert "cu130-torch2.15.0" in out.read_text(encoding="utf-8")
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temp file left
    merged_out = tmp_path / f"merged.{fmt}"
    assert cli.merge([str(rd.path)], fmt, output=str(merged_out)) == f"wrote {merged_out}\n"
    assert merged_out.read_text(encoding="utf-8") == render_merged(load_sources([rd.path]), fmt)
