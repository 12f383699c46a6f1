"""Issue 11: every verdict means what it says (no false pass, the right layer blamed)."""

import json
import shutil
import subprocess
import sys

import pytest

from suite_helpers import REPO, by_id, run_json, suite_env

from probes import kernel_driver

FIXTURE_ROOTS = REPO / "tests" / "fixtures" / "host" / "roots"
GPU_WORK = "math_libraries.matmul_*,math_libraries.conv2d,framework.sdpa,framework.autocast,performance.matmul_tflops"


@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_no_false_pass_on_cpu_in_a_gpu_cell(vendor):
    """Under GPUMATRIX_EXPECT, math, framework and performance work that runs on the CPU fails."""
    document = run_json("--only", GPU_WORK, env=suite_env(GPUMATRIX_EXPECT=vendor))
    probes = by_id(document)
    assert set(probes) >= {"math_libraries.matmul_fp32", "framework.sdpa", "performance.matmul_tflops"}
    for probe_id, probe in probes.items():
        assert probe["status"] == "fail", probe
        assert probe["message"] == "ran on CPU: no GPU reached the process", probe
    assert document["verdict"]["status"] == "fail"


def test_no_false_pass_inside_the_child_too():
    """The child holds the same line when the parent did not decide (e.g. the facts child died)."""
    done = subprocess.run([sys.executable, "-m", "probes._child", "--mode", "quick", "--",
                           "math_libraries.matmul_fp32", "framework.sdpa", "kernel_driver.amd_driver"],
                          cwd=str(REPO), env=suite_env(GPUMATRIX_EXPECT="amd"), stdout=subprocess.PIPE,
                          timeout=120, check=False)
    results = {}
    for line in done.stdout.decode().splitlines():
        if line.startswith("@@GPUMATRIX@@ "):
            message = json.loads(line.split(" ", 1)[1])
            if message["type"] == "result":
                results[message["result"]["id"]] = message["result"]
    assert results["math_libraries.matmul_fp32"]["status"] == "fail"
    assert results["math_libraries.matmul_fp32"]["message"] == "ran on CPU: no GPU reached the process"
    assert results["framework.sdpa"]["status"] == "fail"
    assert results["kernel_driver.amd_driver"]["status"] == "fail"  # no amdgpu at all, and a GPU was expected


def test_without_expect_cpu_work_still_passes():
    probes = by_id(run_json("--only", "math_libraries.matmul_fp32,framework.sdpa"))
    assert probes["math_libraries.matmul_fp32"]["status"] == "pass"
    assert probes["framework.sdpa"]["status"] == "pass"


def _copy_root(tmp_path, name):
    root = tmp_path / name
    shutil.copytree(str(FIXTURE_ROOTS / name), str(root))
    return root


def test_amd_driver_with_a_real_mi325x_topology(tmp_path):
    root = _copy_root(tmp_path, "amd-mi325x")
    outcome = kernel_driver.check_amd_driver(str(root / "sys"), str(root / "dev"), expect="amd")
    assert outcome.status == "pass", outcome
    gpus = outcome.details["kfd_gpus"]
    assert [g["gfx"] for g in gpus] == ["gfx942"] and gpus[0]["integrated"] is False
    assert gpus[0]["simd_count"] > 0


def test_amd_driver_fails_when_the_kfd_topology_has_no_gpu(tmp_path):
    root = _copy_root(tmp_path, "amd-mi325x")
    nodes = root / "sys" / "class" / "kfd" / "kfd" / "topology" / "nodes"
    for node in nodes.iterdir():
        if node.name != "0":  # keep only the CPU node
            shutil.rmtree(str(node))
    outcome = kernel_driver.check_amd_driver(str(root / "sys"), str(root / "dev"), expect="amd")
    assert outcome.status == "fail"
    assert "KFD topology has no GPU node" in outcome.message
    # /dev/kfd present (the fixture's dev/kfd) is enough to make it a failure without EXPECT too
    assert kernel_driver.check_amd_driver(str(root / "sys"), str(root / "dev")).status == "fail"
