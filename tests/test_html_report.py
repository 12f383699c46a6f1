"""The HTML page, rendered by a real headless Chromium: the table is there, the script ran, nothing threw."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpumatrix.report.commands import merge_command
from gpumatrix.report.formats import render_merged
from gpumatrix.results.merge import merge_results
from gpumatrix.results.store import ResultsDir

from tests.builders import CPU, H100, H100_LABEL, MI300, probes_doc, result

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs chromium for the HTML report test (apt-get install chromium)")
        pytest.skip("chromium is not installed (./dev installs it)")
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]


def sample_merged():
    a, b = ({**H100, "hostname": h} for h in ("host-a", "host-b"))
    return merge_results([
        ("a", result("cu130-torch2.15.0", "pass", a, probes=probes_doc(tflops=612.4),
                     image={"id": "sha256:" + "1" * 64, "pushed": "reg:5000/gpumatrix/cu130@sha256:" + "a" * 64})),
        ("b", result("cu130-torch2.15.0", "fail", b, "math_libraries.conv2d failed", probes=probes_doc(4),
                     diagnosis={"cause": "dnn_library_failure", "remedy": "use a matching cuDNN",
                                "evidence": "CUDNN_STATUS_EXECUTION_FAILED"})),
        ("a", result("cu130-torch2.9.1", "pass", a, probes=probes_doc(tflops=480.0))),
        ("a", result("cu126-torch2.10.0", "build_error", a, "No matching distribution <script>alert(1)</script>")),
        ("m", result("rocm7.2-torch2.10.0", "pass", MI300, vendor="amd", probes=probes_doc(tflops=700.0))),
        ("c", result("cpu-torch2.15.0", "not_applicable", CPU, "no wheel", vendor="cpu")),
    ])


def render_html(merged, title="gpumatrix"):
    return render_merged(merged, "html", title)


def test_html_is_self_contained_and_escaped():
    page = render_html(sample_merged(), title="fleet")
    assert page.startswith("<!DOCTYPE html>") and 'id="gm-table"' in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page) and "<link" not in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "conflict: pass on host-a, fail on host-b" in page
    assert "CUDNN_STATUS_EXECUTION_FAILED" in page and "Layer 4: math libraries" in page
    assert "matmul bf16: 612.4 TFLOP/s" in page and "reg:5000/gpumatrix/cu130@sha256:" in page


@pytest.mark.slow  # starts a headless Chromium (3-5 s)
def test_html_renders_in_headless_chromium(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(sample_merged(), title="gpumatrix fleet"), encoding="utf-8")
    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,900", page.as_uri())
    print(f"screenshot: {shot}")
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000, \
        done.stderr[-3000:]
    assert not _console_errors(done.stderr), _console_errors(done.stderr)
    # the DOM after the script ran: the table, every row, the ready mark, and no recorded error
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert 'id="gm-table"' in dom and 'data-gm-ready="ok"' in dom, dom[-2000:]
    assert 'class="gm-error"' not in dom
    assert re.findall(r'<tr data-cell="([^"]+)"', dom) == [
        "cpu-torch2.15.0", "cu126-torch2.10.0", "cu130-torch2.15.0", "cu130-torch2.9.1", "rocm7.2-torch2.10.0"]
    assert 'aria-sort="' not in dom  # nothing sorted until asked


@pytest.mark.slow  # starts a headless Chromium (3-5 s)
def test_html_sorts_in_the_browser(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(sample_merged()), encoding="utf-8")
    # sort by torch, newest first (versions compare as versions: 2.15 > 2.10 > 2.9)
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#sort=2-desc").stdout
    order = re.findall(r'<tr data-cell="([^"]+)"', dom)
    torch = [cid.split("-torch")[1] for cid in order]
    assert torch == ["2.15.0", "2.15.0", "2.10.0", "2.10.0", "2.9.1"], order
    assert 'aria-sort="descending"' in dom
    # sort by the H100 column: passes first (the faster first), then conflicts, then failures, then empty
    col = 4 + sorted([H100_LABEL, "AMD Instinct MI300X · 6.10.5", "cpu"], key=lambda h: (h == "cpu", h)).index(H100_LABEL)
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri() + f"#sort={col}").stdout
    order = re.findall(r'<tr data-cell="([^"]+)"', dom)
    assert order[:3] == ["cu130-torch2.9.1", "cu130-torch2.15.0", "cu126-torch2.10.0"], order


@pytest.mark.slow  # starts a headless Chromium (3-5 s)
def test_a_script_error_is_caught_by_the_check(tmp_path):
    """The checks above would notice a broken script: the ready mark is missing and the error recorded."""
    broken = render_html(sample_merged()).replace('var table = document.getElementById("gm-table");',
                                                  "var table = null.rows;")
    assert "null.rows" in broken
    page = tmp_path / "broken.html"
    page.write_text(broken, encoding="utf-8")
    done = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert 'data-gm-ready="ok"' not in done.stdout
    assert 'class="gm-error"' in done.stdout or _console_errors(done.stderr)


def test_merge_command_writes_html(tmp_path):
    rd = ResultsDir(tmp_path / "r")
    rd.write_cell(result("cu130-torch2.15.0", "pass", H100, probes=probes_doc()))
    out = tmp_path / "site" / "index.html"
    assert merge_command([str(rd.path)], "html", output=str(out)) == f"wrote {out}\n"
    assert 'id="gm-table"' in out.read_text(encoding="utf-8")


def test_html_labels_the_host_type_group_and_shows_reasons_without_a_click():
    page = render_html(sample_merged())
    table = page[page.index('<table id="gm-table">'):page.index("</table>")]
    groups = re.search(r'<tr class="gm-groups">(.*?)</tr>', table, flags=re.S).group(1)
    assert re.search(r'<th colspan="4" scope="colgroup">cell</th><th colspan="3" scope="colgroup">host types ', groups)
    body = table[table.index("<tbody>"):]
    assert "<details" not in body  # the reasons below are in the table itself, not behind a click
    assert "No matching distribution &lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "host-b: fail — math_libraries.conv2d failed" in body and "no wheel" in body
    # the figures keep their significant digits
    tiny = merge_results([("a", result("cu130-torch2.15.0", "pass", H100, probes=probes_doc(tflops=0.012)))])
    assert "0.012 TFLOP/s" in render_html(tiny) and "0.0 TFLOP/s" not in render_html(tiny)


@pytest.mark.slow  # starts a headless Chromium (3-5 s)
def test_html_filters_by_status_in_the_browser(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(sample_merged()), encoding="utf-8")
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#status=conflict").stdout
    shown = re.findall(r'<tr data-cell="([^"]+)" data-statuses="[^"]*">', dom)
    hidden = re.findall(r'<tr data-cell="([^"]+)" data-statuses="[^"]*" hidden="">', dom)
    assert shown == ["cu130-torch2.15.0"], dom[-3000:]
    assert len(hidden) == 4 and "showing 1 of 5 cells" in dom
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert "showing 5 of 5 cells" in dom and ' hidden=""' not in dom


@pytest.mark.slow  # starts a headless Chromium (3-5 s)
def test_a_hostile_page_still_works_in_the_browser(tmp_path):
    """Cell ids, host names and reasons that try to close the script, inject markup or reorder text."""
    evil = {**H100, "hostname": "h</script><script>document.body.remove()</script>",
            "gpus": [{"vendor": "nvidia", "name": "GPU \u202e<b>x</b>", "arch": "sm_90"}]}
    merged = merge_results([
        ("a", result("cu130-torch2.15.0</script>", "fail", evil, "\x1b[2J<!-- '\"` ]]>", probes=probes_doc(4))),
        ("a", result("cu130-torch2.14.1", "pass", evil, probes=probes_doc())),
    ])
    page = tmp_path / "evil.html"
    page.write_text(render_html(merged), encoding="utf-8")
    done = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#status=fail")
    assert 'data-gm-ready="ok"' in done.stdout and 'class="gm-error"' not in done.stdout, done.stdout[-2000:]
    assert not _console_errors(done.stderr)
    assert len(re.findall(r'<tr data-cell="', done.stdout)) == 2 and "showing 1 of 2 cells" in done.stdout
    assert "<b>x</b>" not in done.stdout and "\\u202e" in done.stdout and "\\x1b[2J" in done.stdout


def test_no_results_render_in_every_format():
    for fmt in ("text", "markdown"):
        assert render_merged(merge_results([]), fmt).rstrip().endswith("(no results)")
    assert 'id="gm-table"' in render_html(merge_results([]))
