"""Everything a container prints, and every results file from another host, is hostile input (issue 14).

Each test here reproduces an attack that worked on the code before: an ill-formed JUnit file, a
Markdown comment that hid later notes, results files that crashed merge and report, an unquoted
``docker run`` line, and a missing summary taken for a completed run.
"""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpumatrix import cli
from gpumatrix.report.commands import merge_command, recommend_command
from gpumatrix.report.escape import clean
from gpumatrix.report.formats import FORMATS, render_merged, render_results
from gpumatrix.results.merge import load_sources, merge_results
from gpumatrix.results.recommend import NoRecommendation, docker_run_line, recommend
from gpumatrix.results.status import STATUSES
from gpumatrix.results.store import CellResult, InvalidResult, ResultsDir

from tests.builders import H100, H100_LABEL, probes_doc, result

HOSTILE = ["\x1b[2J\x1b]0;pwned\x07", "\x00", "\x0c", "\ufffe", "\uffff", "\ud800", "\r", "\n<!--", "-->",
           "</script><script>alert(1)</script>", "]]>", "<![CDATA[", "|", "\\|", "**", "`", "[x](javascript:1)",
           "\u202e", "&amp;", "'\"", "\x85", "\t", "1e5", "-", "#"]
# Arbitrary text, every code point possible (surrogates included), with the known-bad pieces mixed in.
TEXT = st.lists(st.one_of(st.text(st.characters(), max_size=8), st.sampled_from(HOSTILE)), max_size=5).map("".join)
CELL_ID = TEXT.filter(lambda s: s.strip())


# -- the two attacks of the review, exactly -----------------------------------------------------------
@pytest.mark.parametrize("bad", ["\x1b", "\x00", "\x0c", "\ufffe"])
def test_junit_stays_well_formed_whatever_the_reason(bad):
    merged = merge_results([("h", result("cu130-torch2.15.0", "fail", H100, f"conv2d {bad} failed",
                                         probes=probes_doc(4)))])
    root = ET.fromstring(render_merged(merged, "junit"))  # the old code: "not well-formed (invalid token)"
    failure = root.find(".//failure")
    assert failure.get("message") == f"fail: conv2d {clean(bad)} failed"
    assert "\\x" in failure.get("message") or "\\u" in failure.get("message")  # shown, not dropped


def test_a_markdown_comment_in_a_summary_hides_nothing():
    merged = merge_results([
        ("h", result("cu130-torch2.15.0", "fail", H100, "summary …\n<!--", probes=probes_doc(4))),
        ("h", result("cu130-torch2.14.1", "error", H100, "the real failure: CUDA error 999")),
        ("h", result("cu130-torch2.13.0", "pass", H100, probes=probes_doc())),
    ])
    md = render_merged(merged, "markdown")
    assert "<!--" not in md and "&lt;!--" in md
    assert "the real failure: CUDA error 999" in md  # the other cell's note, still visible
    rows = [line for line in md.splitlines() if line.startswith("| **")]
    assert len(rows) == 3


# -- every format, any text ---------------------------------------------------------------------------
class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.rows: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and dict(attrs).get("data-cell") is not None:
            self.rows.append(dict(attrs)["data-cell"])

    def handle_data(self, data):
        self.text.append(data)


@st.composite
def hostile_results(draw) -> list[CellResult]:
    ids = draw(st.lists(CELL_ID, min_size=1, max_size=5, unique=True))
    hosts = [{**H100, "hostname": draw(TEXT),
              "gpus": [{"vendor": "nvidia", "name": draw(TEXT), "arch": draw(TEXT)}]} for _ in range(2)]
    out = []
    for i, cid in enumerate(ids):
        doc = probes_doc(draw(st.sampled_from([None, 1, 4, 6])), tflops=draw(st.floats(0, 2000)))
        for p in doc["probes"]:
            p["message"] = draw(TEXT)
        doc["probes"][0]["id"] = draw(TEXT)
        out.append(CellResult(
            cell_id=cid, base_id=draw(TEXT), base_image=draw(TEXT), vendor="nvidia", variant="cu130",
            torch=draw(TEXT), python="3.12", status=draw(st.sampled_from(STATUSES)), reason=draw(TEXT),
            host=hosts[i % 2], probes=doc, image={"id": draw(TEXT), "tag": draw(TEXT)},
            diagnosis=draw(st.one_of(st.none(), st.fixed_dictionaries(
                {"cause": TEXT, "remedy": TEXT, "evidence": TEXT})))))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(results=hostile_results())
def test_every_format_stays_well_formed_and_shows_every_cell(results):
    merged = merge_results([("src", r) for r in results])
    ids = {r.cell_id for r in results}
    out = {fmt: render_merged(merged, fmt) for fmt in FORMATS}
    for fmt, text in out.items():
        text.encode("utf-8")  # writable as UTF-8: no lone surrogate left
        if fmt != "json":
            assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202e]", text), fmt
    # JSON: parses back to the very same results
    data = json.loads(out["json"])
    assert {e["cell_id"] for e in data["entries"]} == ids
    assert sorted(r["reason"] for e in data["entries"] for r in e["results"]) == sorted(r.reason for r in results)
    # JUnit: well-formed XML, one test case per (cell, host type)
    root = ET.fromstring(out["junit"])
    names = [c.get("name") for c in root.iter("testcase")]
    assert len(names) == len(merged.entries) and set(names) == {clean(i, newlines=True) for i in ids}
    # HTML: every cell id appears as text, one table row per cell
    page = _Page()
    page.feed(out["html"])
    page.close()
    text = "".join(page.text)
    assert all(clean(i, newlines=True) in text for i in ids)
    assert sorted(page.rows) == sorted(clean(i, newlines=True) for i in ids)
    assert "alert(1)</script>" not in out["html"]
    # Markdown: one table row per cell, each with the header's number of columns
    md = out["markdown"].splitlines()
    start = next(i for i, line in enumerate(md) if line.startswith("| cell"))
    rows = md[start + 2:md.index("", start)]
    assert len(rows) == len(merged.cells)
    columns = len(re.findall(r"(?<!\\)\|", md[start]))
    assert all(len(re.findall(r"(?<!\\)\|", row)) == columns for row in rows)
    assert "<!--" not in out["markdown"]
    # text: every cell, one line each
    assert all(clean(i).strip() in out["text"] for i in ids)


# -- malformed results files --------------------------------------------------------------------------
def _valid_doc() -> dict:
    return result("cu130-torch2.15.0", "pass", H100, probes=probes_doc(), image={"id": "sha256:" + "1" * 64},
                  timings={"probe_s": 1.0}).to_dict()


@pytest.mark.parametrize("change", [
    {"host": [1]}, {"cell_id": ["x"]}, {"torch": 5}, {"probes": [1]}, {"status": "exploded"},
    {"probes": {"probes": [{"id": "a.b", "layer": "four", "status": "fail"}]}},
    {"probes": {"probes": [{"id": "a.b", "layer": 4.5, "status": "fail"}]}},
    {"probes": {"probes": [1]}}, {"host": {"gpus": [1]}}, {"host": {"gpus": [{"name": ["x"]}]}},
    {"host": {"gpus": True}},  # found by the fuzz test below: iterating it was a TypeError
    {"image": {"id": 7}}, {"diagnosis": {"cause": {"x": 1}}}, {"timings": {"build_s": "slow"}},
    {"reason": 3}, {"schema_version": True}, {"cell_id": " "}, {"probes": {"probes": [], "verdict": [1]}},
])
def test_a_malformed_result_is_named_and_skipped_and_the_rest_renders(tmp_path, change):
    rd = ResultsDir(tmp_path / "r")
    rd.write_cell(result("cu130-torch2.14.1", "pass", H100, probes=probes_doc()))
    (rd.cells_dir / "bad.json").write_text(json.dumps({**_valid_doc(), **change}))
    loaded, warnings = rd.load()
    assert [r.cell_id for r in loaded] == ["cu130-torch2.14.1"]
    assert len(warnings) == 1 and "bad.json: skipped" in warnings[0]
    key = next(iter(change))
    assert key in warnings[0] or "schema_version" in warnings[0]  # names the field
    for fmt in FORMATS:  # the old code: AttributeError / TypeError here
        assert "cu130-torch2.14.1" in merge_command([str(rd.path)], fmt)
        assert "cu130-torch2.14.1" in cli.report(str(rd.path), fmt)


def test_a_malformed_result_inside_a_merged_json_is_skipped(tmp_path):
    good = result("cu130-torch2.14.1", "pass", H100, probes=probes_doc())
    doc = json.loads(render_merged(merge_results([("a", good)]), "json"))
    doc["entries"].append({"results": [{**_valid_doc(), "host": [1]}]})
    doc["entries"].append("not an entry")
    (tmp_path / "m.json").write_text(json.dumps(doc))
    merged = load_sources([tmp_path / "m.json"])
    assert list(merged.cells) == ["cu130-torch2.14.1"]
    assert len(merged.warnings) == 1 and "m.json: result 1 skipped" in merged.warnings[0]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=8)


@st.composite
def mutated_docs(draw) -> object:
    """A valid result document with one value somewhere in it replaced by arbitrary JSON."""
    doc = _valid_doc()
    node, path = doc, []
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    target = doc
    for key in path[:-1]:
        target = target[key]
    if path:
        target[path[-1]] = draw(JSON)
    else:
        doc = draw(JSON)
    return doc


@settings(max_examples=300, deadline=None)
@given(doc=mutated_docs())
def test_fuzz_a_result_document_loads_or_is_rejected_and_always_renders(doc):
    try:
        r = CellResult.from_dict(doc)
    except InvalidResult as err:
        assert err.problems and str(err)
        return
    merged = merge_results([("f", r)])
    for fmt in FORMATS:
        render_merged(merged, fmt).encode("utf-8")


# -- recommend: the docker run line -------------------------------------------------------------------
def test_the_docker_run_line_is_quoted():
    line = docker_run_line("nvidia", "img:tag; touch /tmp/pwned")
    assert shlex.split(line)[-1] == "img:tag; touch /tmp/pwned"  # the old code: two commands
    assert line.endswith("'img:tag; touch /tmp/pwned'")


@pytest.mark.parametrize("reference", ["img; touch /tmp/pwned", "--privileged", "$(id)", "a\nb", ""])
def test_recommend_refuses_an_image_reference_that_is_not_one(reference):
    merged = merge_results([("h", result("cu130-torch2.15.0", "pass", H100, probes=probes_doc(),
                                         image={"pushed": reference, "id": reference}))])
    with pytest.raises(NoRecommendation, match="no usable image reference"):
        recommend(merged, H100_LABEL)


def test_recommend_text_shows_no_control_characters(tmp_path):
    rd = ResultsDir(tmp_path)
    rd.write_cell(result("cu130-torch2.15.0", "pass", {**H100, "hostname": "h\x1b[2J"}, probes=probes_doc(),
                         image={"id": "sha256:" + "1" * 64}))
    out = recommend_command([str(tmp_path)], host_type=H100_LABEL)
    assert "\x1b" not in out and "h\\x1b[2J" in out


# -- the summary ---------------------------------------------------------------------------------------
def test_a_missing_or_corrupt_summary_is_not_a_completed_run(tmp_path):
    rd = ResultsDir(tmp_path)
    missing = rd.load_summary()
    assert missing.state == "missing" and not missing.complete and "summary.json" in missing.problem
    (tmp_path / "summary.json").write_text('{"state": "comp')
    corrupt = rd.load_summary()
    assert corrupt.state == "unreadable" and not corrupt.complete and "summary.json" in corrupt.problem
    (tmp_path / "summary.json").write_text('["complete"]')
    assert rd.load_summary().state == "unreadable"
    (tmp_path / "summary.json").write_text('{"state": 1, "cells": {}}')
    assert rd.load_summary().state == "unknown" and not rd.load_summary().complete
    rd.write_summary({"state": "complete", "cells": {"a": "pass", "b": 3}, "host": H100})
    done = rd.load_summary()
    assert done.state == "complete" and done.complete and done.cells == {"a": "pass"} and done.host == H100
    rd.write_summary({"state": "running", "cells": {}, "host": [1]})
    assert rd.load_summary().state == "running" and rd.load_summary().host is None


def test_render_results_fills_the_run_host_only_where_a_result_has_none():
    own = result("cu130-torch2.15.0", "pass", H100, probes=probes_doc())
    bare = result("cu130-torch2.14.1", "pass", {}, probes=probes_doc())
    data = json.loads(render_results([own, bare], {**H100, "hostname": "run-host"}, "json"))
    assert {e["results"][0]["host"]["hostname"] for e in data["entries"]} == {"gpu-a", "run-host"}
