"""Misbehaving probes (tests/probes/misbehaving_probes.py) cost only themselves."""

from suite_helpers import by_id


def test_each_misbehaviour_gets_its_status(misbehaving_run):
    probes = by_id(misbehaving_run)
    assert probes["framework.zz_segfault"]["status"] == "crash"
    assert probes["framework.zz_segfault"]["details"]["signal"] == "SIGSEGV"
    assert "SIGSEGV" in probes["framework.zz_segfault"]["message"]
    assert "Segmentation fault" in probes["framework.zz_segfault"]["details"]["stderr_tail"]

    assert probes["framework.zz_exit_three"]["status"] == "error"
    assert probes["framework.zz_exit_three"]["details"]["returncode"] == 3

    garbage = probes["framework.zz_garbage"]
    assert garbage["status"] == "error"
    assert "this is not JSON" in garbage["details"]["stdout_tail"]

    assert probes["framework.zz_malformed"]["status"] == "error"
    assert "malformed" in probes["framework.zz_malformed"]["message"]

    raised = probes["framework.zz_raises"]
    assert raised["status"] == "error"
    assert raised["message"] == "ValueError: boom"
    assert "Traceback" in raised["details"]["traceback"]

    assert probes["framework.zz_hang"]["status"] == "timeout"
    assert 4 <= probes["framework.zz_hang"]["duration_s"] < 20
    assert probes["framework.zz_blocked_by_hang"]["status"] == "skip"
    assert probes["framework.zz_blocked_by_hang"]["details"]["blocked_by"] == "framework.zz_hang"


def test_the_rest_still_runs(misbehaving_run):
    probes = by_id(misbehaving_run)
    for probe_id in ("framework.zz_ok_first", "framework.zz_ok_after_segfault", "framework.zz_noisy",
                     "framework.zz_ok_last"):
        assert probes[probe_id]["status"] == "pass", probes[probe_id]
    assert probes["kernel_driver.nvidia_device_nodes"]["status"] == "skip"
    assert misbehaving_run["facts"]["torch"]["version"]


def test_verdict_names_every_failure(misbehaving_run):
    verdict = misbehaving_run["verdict"]
    assert verdict["status"] == "fail"
    assert verdict["lowest_failing_layer"] == 5
    assert set(verdict["failed"]) == {
        "framework.zz_segfault", "framework.zz_exit_three", "framework.zz_garbage",
        "framework.zz_malformed", "framework.zz_raises", "framework.zz_hang",
    }


def test_parse_protocol_line():
    from probes.isolation import parse_protocol_line

    good = '@@GPUMATRIX@@ {"type": "result", "result": {"id": "a.b", "status": "pass", "duration_s": 0.1, ' \
           '"message": "", "details": {}}}'
    assert parse_protocol_line(good)["result"]["id"] == "a.b"
    assert parse_protocol_line("noise before " + good) is not None
    assert parse_protocol_line('@@GPUMATRIX@@ {"type": "result", "result": {"id": "a.b", "status": "great"}}') is None
    assert parse_protocol_line("@@GPUMATRIX@@ {not json") is None
    assert parse_protocol_line('@@GPUMATRIX@@ ["done"]') is None


def test_bounded_tail_keeps_the_end():
    from probes.isolation import _BoundedTail

    keep = _BoundedTail(10)
    for chunk in (b"abc", b"defghij", b"klmnopqrstuvwxyz"):
        keep.add(chunk)
    assert keep.text() == "qrstuvwxyz"
