"""Misbehaving probes (tests/probes/misbehaving_probes.py) cost only themselves."""

import time

from suite_helpers import HERE, by_id, run_json, suite_env


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

    hung = probes["framework.zz_hang"]
    assert hung["status"] == "timeout"
    assert hung["message"].startswith("no result within 3s")  # its own limit, not the group's
    assert 3 <= hung["duration_s"] < 6


def test_a_timeout_blames_the_running_probe_and_the_group_goes_on(misbehaving_run):
    probes = by_id(misbehaving_run)
    before, after = probes["framework.zz_before_hang"], probes["framework.zz_after_hang"]
    assert before["status"] == "pass" and after["status"] == "pass", (before, after)
    assert before["details"]["pid"] != after["details"]["pid"]  # in a fresh child


def test_sticky_device_error_restarts_the_child(misbehaving_run):
    probes = by_id(misbehaving_run)
    first, sticky = probes["framework.zz_pid_before_sticky"], probes["framework.zz_sticky"]
    after = probes["framework.zz_pid_after_sticky"]
    assert sticky["status"] == "fail"
    assert first["details"]["pid"] == sticky["details"]["pid"]  # a group shares one child...
    assert after["status"] == "pass" and after["details"]["pid"] != sticky["details"]["pid"]  # ...until a sticky error


def test_gpu_init_timeout_skips_the_remaining_gpu_groups():
    env = suite_env(PYTHONPATH=str(HERE), GPUMATRIX_PROBES_EXTRA="misbehaving_probes")
    started = time.monotonic()
    document = run_json("--only", "system_runtime.zz_*,framework.zz_ok_first,kernel_driver.amd_driver", env=env)
    assert time.monotonic() - started < 30
    probes = by_id(document)
    assert probes["system_runtime.zz_init_hang"]["status"] == "timeout"
    assert probes["kernel_driver.amd_driver"]["status"] == "skip"  # layer 1 ran before
    for probe_id in ("system_runtime.zz_after_init", "framework.zz_ok_first"):
        assert probes[probe_id]["status"] == "skip", probes[probe_id]
        assert probes[probe_id]["message"] == ("not run: GPU initialisation timed out in system_runtime.zz_init_hang "
                                               "(a hung driver would hang again)")


def test_suite_deadline_ends_a_long_probe_and_skips_the_rest():
    env = suite_env(PYTHONPATH=str(HERE), GPUMATRIX_PROBES_EXTRA="misbehaving_probes")
    started = time.monotonic()
    # long enough for the facts child (a torch import) on a busy 2-core box
    document = run_json("--only", "math_libraries.zz_deadline_*", "--deadline", "15", env=env)
    assert time.monotonic() - started < 40
    probes = by_id(document)
    hung = probes["math_libraries.zz_deadline_hang"]
    assert hung["status"] == "timeout" and "deadline of 15s" in hung["message"], hung
    after = probes["math_libraries.zz_deadline_after"]
    assert after["status"] == "skip" and "deadline" in after["message"]


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
        "framework.zz_malformed", "framework.zz_raises", "framework.zz_hang", "framework.zz_sticky",
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


def test_torch_hanging_in_gpu_initialisation_skips_the_gpu_groups(tmp_path):
    """torch's import / cuda init hangs (a wedged driver): one probe is blamed, the GPU groups after it skip."""
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("import time\ntime.sleep(600)\n")
    env = suite_env(PYTHONPATH=str(tmp_path))
    started = time.monotonic()
    document = run_json("--quick", "--timeout", "3", env=env)
    assert time.monotonic() - started < 40
    probes = by_id(document)
    assert probes["programming_interface.runtime"]["status"] == "timeout"
    assert probes["math_libraries.matmul_fp32"]["status"] == "skip"
    assert "GPU initialisation timed out" in probes["math_libraries.matmul_fp32"]["message"]
    assert probes["kernel_driver.nvidia_device_nodes"]["status"] == "skip"  # layer 1 ran, and ran first
    assert "timeout: no result within 3s" in document["facts"]["torch"]["import_error"]
