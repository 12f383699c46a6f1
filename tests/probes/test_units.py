"""Unit tests of the suite's helpers (no child processes)."""

import ast
import os
from pathlib import Path

import pytest

import suite_helpers  # noqa: F401  (imports torch quietly)
import torch

from probes import framework, kernel_driver, numerics, system_runtime
from probes.facts import nvidia_driver_version
from probes.model import (
    FAIL, PASS, SKIP, compute_verdict, jsonable, validate_probe_id,
)
from probes.registry import load_probes, select_probes, split_patterns

PROBES_DIR = Path(__file__).resolve().parents[2] / "probes"


@pytest.mark.parametrize("path", sorted(PROBES_DIR.rglob("*.py")), ids=lambda p: p.name)
def test_python_38_syntax(path):
    ast.parse(path.read_text(), filename=str(path), feature_version=(3, 8))


def test_no_shell_true_and_timeouts_everywhere():
    for path in PROBES_DIR.rglob("*.py"):
        text = path.read_text()
        assert "shell=True" not in text, path
        if "subprocess.run(" in text:
            assert "timeout=" in text, path


def _result(probe_id, layer, status):
    return {"id": probe_id, "layer": layer, "status": status}


def test_verdict_pass_when_nothing_fails():
    verdict = compute_verdict([_result("a.x", 1, SKIP), _result("b.y", 4, PASS)])
    assert verdict["status"] == "pass" and verdict["lowest_failing_layer"] is None and verdict["failed"] == []
    assert verdict["summary"] == "pass: 1 pass, 1 skip"


@pytest.mark.parametrize("status", ["fail", "error", "timeout", "crash"])
def test_verdict_lowest_failing_layer(status):
    results = [_result("framework.a", 5, FAIL), _result("programming_interface.b", 3, status),
               _result("kernel_driver.c", 1, PASS), _result("math_libraries.d", 4, "crash")]
    verdict = compute_verdict(results)
    assert verdict["status"] == "fail"
    assert verdict["lowest_failing_layer"] == 3
    assert verdict["lowest_failing_layer_name"] == "programming_interface"
    assert verdict["failed"] == ["framework.a", "programming_interface.b", "math_libraries.d"]
    assert "programming_interface.b" in verdict["summary"]


def test_verdict_of_nothing():
    assert compute_verdict([])["status"] == "pass"


def test_probe_id_validation():
    assert validate_probe_id("framework.sdpa") is None
    assert "unknown layer" in validate_probe_id("gpu.thing")
    assert validate_probe_id("framework") is not None
    assert validate_probe_id("framework.Bad-Name") is not None


def test_registry_ids_unique_valid_and_layered():
    probes = load_probes()
    ids = [p.id for p in probes]
    assert len(ids) == len(set(ids))
    assert all(validate_probe_id(i) is None for i in ids)
    assert [p.layer for p in probes] == sorted(p.layer for p in probes)
    assert all(p.layer == 6 for p in probes if p.perf)


def test_selection():
    probes = load_probes()
    quick = select_probes(probes, [], quick=True, perf=True)
    assert quick and all(p.quick and not p.perf for p in quick)
    no_perf = select_probes(probes, [], quick=False, perf=False)
    assert not any(p.perf for p in no_perf) and len(no_perf) > len(quick)
    only = select_probes(probes, split_patterns(["kernel_driver.nvidia_*,framework.sdpa"]), quick=False, perf=True)
    assert [p.id for p in only] == ["kernel_driver.nvidia_device_nodes", "kernel_driver.nvidia_driver",
                                    "framework.sdpa"]


def test_extra_module_with_bad_id_is_rejected(tmp_path, monkeypatch):
    from probes.registry import RegistryError

    (tmp_path / "bad_extra_probes.py").write_text(
        "from probes.model import Probe\nPROBES = [Probe('gpu.nope', lambda ctx: None, group='g')]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError, match="unknown layer"):
        load_probes({"GPUMATRIX_PROBES_EXTRA": "bad_extra_probes"})
    with pytest.raises(RegistryError, match="cannot import"):
        load_probes({"GPUMATRIX_PROBES_EXTRA": "no_such_module_here"})


def test_jsonable():
    value = jsonable({"a": float("nan"), 1: (1, 2.5, float("inf")), "s": {3}, "o": object})
    assert value["a"] == "nan" and value["1"] == [1, 2.5, "inf"] and value["s"] == [3]
    assert isinstance(value["o"], str)


# ---------------------------------------------------------------------------- numerics


def test_tolerances_order_by_precision():
    t = numerics.TOLERANCES
    assert t["float64"] < t["float32"] < t["float16"] <= t["tf32"] < t["bfloat16"]
    with pytest.raises(KeyError):
        numerics.tolerance_for("float8")
    assert numerics.tolerance_for("float32", factor=10) == pytest.approx(1e-4)


def test_relative_error_and_compare():
    expected = torch.ones(100, dtype=torch.float64)
    assert numerics.relative_error(expected.float(), expected) == 0.0
    off = expected.clone()
    off[0] += 1.0  # ||diff|| = 1, ||expected|| = 10
    assert numerics.relative_error(off, expected) == pytest.approx(0.1)
    assert numerics.compare(off, expected, "bfloat16")["ok"] is False
    assert numerics.compare(expected.half(), expected, "float16")["ok"] is True
    nan = expected.clone()
    nan[3] = float("nan")
    assert numerics.compare(nan, expected, "bfloat16")["ok"] is False
    assert numerics.relative_error(torch.zeros(3), torch.zeros(3)) == 0.0
    with pytest.raises(ValueError):
        numerics.relative_error(torch.zeros(3), torch.zeros(4))


def test_bf16_rounding_exceeds_fp32_tolerance():
    x = torch.randn(256, 256, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    rounded = x.to(torch.bfloat16)
    assert not numerics.compare(rounded, x, "float32")["ok"]
    assert numerics.compare(rounded, x, "bfloat16")["ok"]


# ---------------------------------------------------------------------------- layer 2 names


def test_cu_result_names():
    assert system_runtime.cu_result_name(0) == "CUDA_SUCCESS"
    assert system_runtime.cu_result_name(100) == "CUDA_ERROR_NO_DEVICE"
    assert system_runtime.cu_result_name(804) == "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
    assert system_runtime.cu_result_name(999) == "CUDA_ERROR_UNKNOWN"
    assert system_runtime.cu_result_name(34) == "CUDA_ERROR_STUB_LIBRARY"
    assert system_runtime.cu_result_name(12345) == "CUresult 12345"
    assert system_runtime.hsa_status_name(0x1008) == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    assert system_runtime.hsa_status_name(0x1026) == "HSA_STATUS_ERROR_FATAL"
    assert system_runtime.hsa_status_name(0x1234) == "hsa_status_t 0x1234"
    assert system_runtime.format_cuda_version(12040) == "12.4"
    assert system_runtime.format_cuda_version(13000) == "13.0"


def test_missing_library_skips_unless_expected():
    assert system_runtime.check_cuda_driver(expect=None).status == SKIP
    assert system_runtime.check_cuda_driver(expect="nvidia").status == FAIL
    assert system_runtime.check_cuda_driver(expect="amd").status == SKIP
    assert system_runtime.check_rocm_smi(expect="amd").status == SKIP


# ---------------------------------------------------------------------------- layer 1 on fake trees


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    path.chmod(0o666)


def _char_node(path):
    """A character device node without privileges: a symlink to /dev/null (char 1:3, opens read-write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/null")


def _proc(tmp_path, devices=None):
    """A fake /proc; with ``devices``, its /proc/devices lists those character majors."""
    proc = tmp_path / "proc"
    proc.mkdir(exist_ok=True)
    if devices is not None:
        lines = ["Character devices:"] + ["%3d %s" % item for item in sorted(devices.items())]
        (proc / "devices").write_text("\n".join(lines + ["", "Block devices:", "  7 loop", "259 blkext", ""]))
    return str(proc)


def test_nvidia_nodes_on_fake_dev(tmp_path):
    dev, proc = tmp_path / "dev", _proc(tmp_path)
    dev.mkdir()
    assert kernel_driver.check_nvidia_nodes(str(dev), proc_root=proc).status == SKIP
    assert kernel_driver.check_nvidia_nodes(str(dev), expect="nvidia", proc_root=proc).status == FAIL
    for name in ("nvidiactl", "nvidia0", "nvidia1"):
        _char_node(dev / name)
    outcome = kernel_driver.check_nvidia_nodes(str(dev), proc_root=proc)
    assert outcome.status == FAIL and "nvidia-uvm" in outcome.message
    _char_node(dev / "nvidia-uvm")
    outcome = kernel_driver.check_nvidia_nodes(str(dev), proc_root=proc)
    assert outcome.status == PASS, outcome
    assert outcome.details["nodes"]["gpus"] == [str(dev / "nvidia0"), str(dev / "nvidia1")]
    assert {i["major"] for i in outcome.details["identity"]} == {1}


def test_nvidia_nodes_judged_by_registered_major(tmp_path):
    dev = tmp_path / "dev"
    for name in ("nvidiactl", "nvidia0", "nvidia-uvm"):
        _char_node(dev / name)
    outcome = kernel_driver.check_nvidia_nodes(str(dev), proc_root=_proc(tmp_path, {1: "mem", 195: "nvidia"}))
    assert outcome.status == FAIL
    assert "char 1:3, which the kernel registered as 'mem', not 'nvidia'" in outcome.message
    # An NVIDIA major by another name (older drivers register 195 as nvidia-frontend) is fine.
    outcome = kernel_driver.check_nvidia_nodes(str(dev), proc_root=_proc(tmp_path, {1: "nvidia-frontend"}))
    assert outcome.status == PASS, outcome


def test_amd_nodes_ignore_other_vendors_render_nodes(tmp_path):
    dev, sys_root, proc = tmp_path / "dev", tmp_path / "sys", _proc(tmp_path)
    _char_node(dev / "dri" / "renderD128")
    (sys_root / "class" / "drm" / "renderD128" / "device").mkdir(parents=True)
    (sys_root / "class" / "drm" / "renderD128" / "device" / "vendor").write_text("0x8086\n")
    assert kernel_driver.check_amd_nodes(str(dev), str(sys_root), proc_root=proc).status == SKIP
    _char_node(dev / "kfd")
    outcome = kernel_driver.check_amd_nodes(str(dev), str(sys_root), proc_root=proc)
    assert outcome.status == FAIL and "renderD" in outcome.message
    _char_node(dev / "dri" / "renderD129")  # no sysfs entry: assumed AMD
    assert kernel_driver.check_amd_nodes(str(dev), str(sys_root), proc_root=proc).status == PASS


def test_amd_nodes_that_are_not_the_drivers(tmp_path):
    """Placeholders open fine; their type and major give them away (what the container test sees for real)."""
    dev, sys_root = tmp_path / "dev", tmp_path / "sys"
    sys_root.mkdir()
    _touch(dev / "kfd")
    _char_node(dev / "dri" / "renderD128")
    outcome = kernel_driver.check_amd_nodes(str(dev), str(sys_root), proc_root=_proc(tmp_path))
    assert outcome.status == FAIL and outcome.message == "%s is a regular file, not a character device" % (dev / "kfd")
    (dev / "kfd").unlink()
    _char_node(dev / "kfd")
    outcome = kernel_driver.check_amd_nodes(str(dev), str(sys_root), proc_root=_proc(tmp_path, {1: "mem", 226: "drm"}))
    assert outcome.status == FAIL, outcome
    assert "%s is char 1:3, which the kernel registered as 'mem', not 'kfd'" % (dev / "kfd") in outcome.message
    assert "renderD128 is char 1:3, which the kernel registered as 'mem', not 'drm'" in outcome.message
    assert outcome.details["open"][0]["openable"] is True
    outcome = kernel_driver.check_amd_nodes(str(dev), str(sys_root), proc_root=_proc(tmp_path, {1: "kfd"}))
    assert "not 'kfd'" not in outcome.message and "not 'drm'" in outcome.message


def test_unregistered_major_only_counts_when_the_node_does_not_open():
    identity = {"path": "/dev/kfd", "type": "char", "major": 3999, "minor": 0, "driver": None}
    majors = {1: "mem"}
    assert "a major no kernel driver has registered" in kernel_driver.identity_problem(identity, "kfd", majors)
    assert kernel_driver.identity_problem(identity, "kfd", majors, openable=True) is None
    assert kernel_driver.identity_problem(identity, "kfd", None) is None


def test_char_majors_parses_only_character_devices(tmp_path):
    proc = _proc(tmp_path, {1: "mem", 226: "drm", 511: "kfd"})
    assert kernel_driver.char_majors(proc) == {1: "mem", 226: "drm", 511: "kfd"}
    assert kernel_driver.char_majors(str(tmp_path / "nowhere")) is None


def test_nvidia_driver_from_fake_proc(tmp_path):
    proc, dev = tmp_path / "proc", tmp_path / "dev"
    dev.mkdir()
    assert kernel_driver.check_nvidia_driver(str(proc), str(dev)).status == SKIP
    assert kernel_driver.check_nvidia_driver(str(proc), str(dev), expect="nvidia").status == FAIL
    (proc / "driver" / "nvidia").mkdir(parents=True)
    (proc / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    outcome = kernel_driver.check_nvidia_driver(str(proc), str(dev))
    assert outcome.status == PASS and outcome.details["version"] == "550.54.15"


def test_nvidia_driver_version_parsing():
    assert nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build") \
        == "570.86.15"
    assert nvidia_driver_version(None) is None


def test_amd_driver_and_kfd_topology(tmp_path):
    sys_root, dev = tmp_path / "sys", tmp_path / "dev"
    dev.mkdir()
    assert kernel_driver.check_amd_driver(str(sys_root), str(dev)).status == SKIP
    (sys_root / "module" / "amdgpu").mkdir(parents=True)
    nodes = sys_root / "class" / "kfd" / "kfd" / "topology" / "nodes"
    for index, target in ((0, 0), (1, 90402), (2, 90010)):
        (nodes / str(index)).mkdir(parents=True)
        (nodes / str(index) / "properties").write_text("cpu_cores_count 4\ngfx_target_version %d\n" % target)
    outcome = kernel_driver.check_amd_driver(str(sys_root), str(dev))
    assert outcome.status == PASS
    assert [g["gfx"] for g in outcome.details["kfd_gpus"]] == ["gfx942", "gfx90a"]
    assert kernel_driver.gfx_name(110000) == "gfx1100"


def test_device_groups_on_fake_dev(tmp_path):
    assert kernel_driver.check_device_groups(str(tmp_path), str(tmp_path)).status == SKIP
    assert kernel_driver.check_device_groups(str(tmp_path), str(tmp_path), expect="amd").status == FAIL
    _touch(tmp_path / "nvidiactl")
    outcome = kernel_driver.check_device_groups(str(tmp_path), str(tmp_path))
    assert outcome.status == PASS
    node = outcome.details["nodes"][0]
    assert node["gid"] == os.stat(str(tmp_path / "nvidiactl")).st_gid and node["mode"] == "-rw-rw-rw-"


def test_peaks_table(tmp_path):
    from probes.performance import fraction_of_peak, load_peaks

    table = tmp_path / "peaks.json"
    table.write_text('{"NVIDIA H100 80GB HBM3": {"bf16_tflops": 989.0, "mem_bw_gbs": 3350}}')
    peaks = load_peaks("NVIDIA H100 80GB HBM3", {"GPUMATRIX_PEAKS": str(table)})
    assert fraction_of_peak(494.5, peaks, "bf16_tflops") == 0.5
    assert fraction_of_peak(1.0, peaks, "fp8_tflops") is None
    assert "peaks_error" in load_peaks("Other GPU", {"GPUMATRIX_PEAKS": str(table)})
    assert load_peaks("x", {}) == {}


def test_parent_never_imports_torch():
    """The parent must survive a torch that segfaults on import: only children import it."""
    import subprocess
    import sys

    from suite_helpers import REPO

    code = ("import sys, probes.cli, probes.registry, probes.report; probes.registry.load_probes(); "
            "probes.cli.collect_host_facts(); sys.exit(1 if 'torch' in sys.modules else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=str(REPO), timeout=60, check=False)
    assert done.returncode == 0


# ---------------------------------------------------------------------------- review fixes


class _FakeHsa:
    """Stands in for libhsa-runtime64: hsa_status_string fills its out-pointer as ROCr 5.2 does."""

    def __init__(self, text):
        self.text = text

        def hsa_status_string(code, out):
            out._obj.value = self.text
            return 0

        self.hsa_status_string = hsa_status_string


def test_hsa_status_text_without_the_repeated_name():
    # ROCr's text starts with the name itself (recorded in tests/fixtures/rocm/).
    lib = _FakeHsa(b"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.")
    assert system_runtime._hsa_status_name(lib, 0x1008) == (
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008): The runtime failed to allocate the necessary resources.")
    assert system_runtime._hsa_status_name(_FakeHsa(b"Something else."), 0x1000) == (
        "HSA_STATUS_ERROR (0x1000): Something else.")
    assert system_runtime._hsa_status_name(object(), 0x1008) == "HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"


class _Boom(Exception):
    pass


@pytest.mark.parametrize("text, on_gpu, cc, status", [
    # triton/runtime/build.py's words when no compiler is found: an image without gcc, not a broken stack
    ("backend='inductor' raised:\nRuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
     True, None, SKIP),
    ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.", True, "/usr/bin/gcc", FAIL),
    ("RuntimeError: Failed to find C compiler.", False, None, FAIL),  # CPU: the C++ check comes first
    ("Dynamo is not supported on Python 3.12+", True, "/usr/bin/gcc", SKIP),
    ("CUDA error: an illegal memory access was encountered", True, None, FAIL),
])
def test_compile_failure_classification(text, on_gpu, cc, status):
    outcome = framework.compile_failure(_Boom(text), on_gpu, {"cc": cc})
    assert outcome.status == status
    assert outcome.details["error"] == text


def test_sdpa_backends_selected_through_the_current_api():
    contexts = framework._sdpa_backend_contexts(torch)
    assert set(contexts) == {"flash", "mem_efficient", "math", "cudnn"}
    from torch.nn.attention import SDPBackend
    from torch.nn.functional import scaled_dot_product_attention

    q = torch.randn(1, 1, 4, 8)
    with contexts["math"]():
        out = scaled_dot_product_attention(q, q, q)
    assert out.shape == q.shape and hasattr(SDPBackend, "MATH")


# ---------------------------------------------------------------------------- tools are bounded


def _tool(tmp_path, name, script):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


def test_tool_output_and_failure(tmp_path):
    from probes.facts import run_tool

    assert run_tool([_tool(tmp_path, "ok", "echo hello; echo world\n")]) == "hello\nworld"
    assert run_tool([_tool(tmp_path, "bad", "echo no; exit 3\n")]) is None
    assert run_tool(["no-such-tool-anywhere"]) is None


def test_tool_that_hangs_is_killed_in_time(tmp_path):
    import time

    from probes.facts import run_tool

    started = time.monotonic()
    assert run_tool([_tool(tmp_path, "hang", "sleep 60\n")], timeout=0.5) is None
    assert time.monotonic() - started < 5


def test_tool_that_cannot_be_killed_is_abandoned(tmp_path, monkeypatch):
    """A tool stuck in D state survives SIGKILL; the wait for it must still end."""
    import signal
    import time

    from probes import facts

    monkeypatch.setattr(facts, "_kill_session", lambda pid: None)  # the kill does not take, as in D state
    monkeypatch.setattr(facts, "TOOL_KILL_GRACE_S", 0.5)
    started = time.monotonic()
    assert facts.run_tool([_tool(tmp_path, "dstate", "exec sleep 30\n")], timeout=0.5) is None
    assert time.monotonic() - started < 5
    stuck = facts._ABANDONED_TOOLS.pop()
    os.killpg(stuck.pid, signal.SIGKILL)
    stuck.communicate(timeout=10)


def test_tool_whose_grandchild_holds_the_pipe(tmp_path):
    """A daemonised grandchild keeps stdout open after the tool exits: no endless wait for EOF."""
    import time

    from probes import facts

    script = "setsid sleep 30 &\necho $! > %s\necho started\nsleep 60\n" % (tmp_path / "grandchild.pid")
    started = time.monotonic()
    assert facts.run_tool([_tool(tmp_path, "forker", script)], timeout=0.5) is None
    assert time.monotonic() - started < 6
    import signal

    while facts._ABANDONED_TOOLS:
        stuck = facts._ABANDONED_TOOLS.pop()
        stuck.kill()
        stuck.wait(timeout=10)
        stuck.stdout.close()
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    os.kill(grandchild, signal.SIGKILL)
