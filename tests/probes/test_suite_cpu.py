"""The real suite on this CPU-only box, through the runner's invocation contract."""

import json
import subprocess
import sys

import jsonschema
import pytest

from suite_helpers import REPO, by_id, run_json, run_probes, suite_env

SCHEMA = json.loads((REPO / "probes" / "schema.json").read_text())

# What each probe must report on a CPU-only box with CPU torch and a C++ compiler.
EXPECTED_ON_CPU = {
    "kernel_driver.nvidia_device_nodes": "skip",
    "kernel_driver.amd_device_nodes": "skip",
    "kernel_driver.nvidia_driver": "skip",
    "kernel_driver.amd_driver": "skip",
    "kernel_driver.device_groups": "skip",
    "system_runtime.cuda_driver": "skip",
    "system_runtime.hsa_runtime": "skip",
    "system_runtime.nvml": "skip",
    "system_runtime.rocm_smi": "skip",
    "programming_interface.runtime": "skip",
    "programming_interface.devices": "skip",
    "programming_interface.arch_list": "skip",
    "programming_interface.kernel_launch": "skip",
    "programming_interface.host_device_copies": "skip",
    "programming_interface.streams_events": "skip",
    "programming_interface.async_error": "skip",
    "math_libraries.matmul_fp32": "pass",
    "math_libraries.matmul_tf32": "skip",
    "math_libraries.matmul_fp16": "pass",
    "math_libraries.matmul_bf16": "pass",
    "math_libraries.conv2d": "pass",
    "math_libraries.cholesky": "pass",
    "math_libraries.svd": "pass",
    "math_libraries.solve": "pass",
    "math_libraries.fft": "pass",
    "math_libraries.sparse_matmul": "pass",
    "math_libraries.rng": "pass",
    "math_libraries.collectives": "pass",
    "framework.autocast": "pass",
    "framework.sdpa": "pass",
    "framework.sdpa_backends": "pass",
    "framework.training_step": "pass",
    "framework.dataloader": "pass",
    "framework.compile": "pass",
    "performance.matmul_tflops": "pass",
    "performance.memory_bandwidth": "pass",
    "performance.host_device_bandwidth": "skip",
}


def test_full_run_statuses_on_cpu(full_run):
    document, _ = full_run
    statuses = {p["id"]: p["status"] for p in document["probes"]}
    assert statuses == EXPECTED_ON_CPU, {k: (v, statuses.get(k)) for k, v in EXPECTED_ON_CPU.items()
                                         if statuses.get(k) != v}
    assert document["mode"] == "full"
    assert document["accelerator"] == "cpu"
    assert document["verdict"] == {
        "status": "pass",
        "lowest_failing_layer": None,
        "lowest_failing_layer_name": None,
        "failed": [],
        "summary": document["verdict"]["summary"],
    }


def test_full_run_matches_schema(full_run):
    jsonschema.validate(full_run[0], SCHEMA, cls=jsonschema.Draft202012Validator)


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_schema_rejects_a_broken_document(full_run):
    broken = json.loads(json.dumps(full_run[0]))
    broken["probes"][0]["status"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA, cls=jsonschema.Draft202012Validator)


def test_probe_entries_are_consistent(full_run):
    from probes.model import LAYERS

    document, _ = full_run
    layers = [p["layer"] for p in document["probes"]]
    assert layers == sorted(layers)
    for probe in document["probes"]:
        assert probe["id"].split(".")[0] == probe["layer_name"] == LAYERS[probe["layer"]]
        assert probe["message"]
        assert probe["duration_s"] >= 0


def test_cpu_results_carry_their_evidence(full_run):
    probes = by_id(full_run[0])
    matmul = probes["math_libraries.matmul_fp32"]["details"]["checks"]["matmul"]
    assert 0 <= matmul["rel_error"] <= matmul["tolerance"] == 1e-5
    assert probes["math_libraries.collectives"]["details"]["backend"] == "gloo"
    assert probes["math_libraries.collectives"]["details"]["world_size"] == 2
    assert probes["framework.sdpa_backends"]["details"]["backends"]["math"]["usable"] is True
    assert probes["framework.dataloader"]["details"]["workers"] == 2
    assert probes["framework.training_step"]["details"]["last_loss"] < probes["framework.training_step"]["details"]["first_loss"]
    assert probes["performance.matmul_tflops"]["details"]["results"]["fp32"]["tflops"] > 0
    assert probes["programming_interface.devices"]["message"] == "no accelerator"


def _na(value):
    return "N/A" if value is None else value


def _tool_version(facts, name):
    entry = facts["compilers"].get(name)
    return entry["version"] if entry else None


def _pip_lines_agree(info, facts):
    for line in (info.pip_packages or "").splitlines():
        name, _, version = line.strip().partition("==")
        assert facts["pip_packages"].get(name) == version, (name, version)
    return True


def _lscpu_agrees(info, facts):
    lscpu = facts["cpu"]["lscpu"]
    for line in (info.cpu_info or "").splitlines()[:40]:
        if ":" in line:
            key, value = line.split(":", 1)
            assert lscpu.get(key.strip()) == value.strip(), key
    return True


# Each field of torch.utils.collect_env's SystemEnv, and where the facts say the same thing.
COLLECT_ENV_CHECKS = {
    "torch_version": lambda i, f: f["torch"]["version"] == i.torch_version,
    "is_debug_build": lambda i, f: str(f["torch"]["debug"]) == i.is_debug_build,
    "cuda_compiled_version": lambda i, f: f["torch"]["cuda"] == i.cuda_compiled_version,
    "gcc_version": lambda i, f: _tool_version(f, "gcc") == i.gcc_version,
    "clang_version": lambda i, f: _tool_version(f, "clang") == i.clang_version,
    "cmake_version": lambda i, f: _tool_version(f, "cmake") == i.cmake_version,
    "os": lambda i, f: f["os_description"] == i.os,
    "libc_version": lambda i, f: f["libc"] == i.libc_version,
    "python_version": lambda i, f: f["python_version_full"] == i.python_version,
    "python_platform": lambda i, f: f["platform"] == i.python_platform,
    "is_cuda_available": lambda i, f: str(f["torch"]["available"]) == i.is_cuda_available,
    "cuda_runtime_version": lambda i, f: _tool_version(f, "nvcc") == i.cuda_runtime_version,  # nvcc's release
    "cuda_module_loading": lambda i, f: _na(f["torch"]["cuda_module_loading"]) == i.cuda_module_loading,
    "nvidia_driver_version": lambda i, f: f["driver"]["nvidia"]["version"] == i.nvidia_driver_version,
    "nvidia_gpu_models": lambda i, f: (f["driver"]["nvidia_smi"] is None) == (i.nvidia_gpu_models is None),
    "cudnn_version": lambda i, f: (not f["cuda_toolkit"]["cudnn_libraries"]) == (i.cudnn_version is None),
    "is_xpu_available": lambda i, f: str(f["torch"]["xpu_available"]) == i.is_xpu_available,
    "pip_version": lambda i, f: i.pip_version in ("pip", "pip3") and f["pip_version"],
    "pip_packages": _pip_lines_agree,
    "conda_packages": lambda i, f: (f["conda_prefix"] is None) == (i.conda_packages is None),
    "hip_compiled_version": lambda i, f: _na(f["torch"]["hip"]) == i.hip_compiled_version,
    "hip_runtime_version": lambda i, f: _na(f["torch"]["hip_runtime"]) == i.hip_runtime_version,
    "miopen_runtime_version": lambda i, f: _na(f["torch"]["miopen_runtime"]) == i.miopen_runtime_version,
    "caching_allocator_config": lambda i, f: (f["env"]["PYTORCH_CUDA_ALLOC_CONF"] or "") == (
        i.caching_allocator_config or ""),
    "is_xnnpack_available": lambda i, f: str(f["torch"]["xnnpack"]) == i.is_xnnpack_available,
    "cpu_info": _lscpu_agrees,
}


def test_facts_are_a_superset_of_collect_env(full_run):
    """Run collect_env on this host too: every one of its fields is in the facts, with the same value."""
    from torch.utils import collect_env

    info = collect_env.get_env_info()
    assert set(info._fields) == set(COLLECT_ENV_CHECKS), "collect_env changed its fields: map the new ones"
    facts = full_run[0]["facts"]
    wrong = [name for name, check in COLLECT_ENV_CHECKS.items() if not check(info, facts)]
    assert not wrong, {name: getattr(info, name) for name in wrong}
    assert facts["torch"]["import_error"] is None
    # beyond collect_env
    assert facts["cpu"]["flags"] and facts["cpu"]["caches"] and facts["numa"]
    assert facts["torch"]["blas_info"] and facts["torch"]["preferred_linalg_library"]
    assert all({"name", "path", "version"} <= set(lib) for lib in facts["loaded_libraries"])


def test_quick_run_is_smoke_only(quick_run):
    document, _ = quick_run
    assert document["mode"] == "quick"
    ids = {p["id"] for p in document["probes"]}
    assert "math_libraries.matmul_fp32" in ids and "kernel_driver.nvidia_device_nodes" in ids
    assert not any(i.startswith("performance.") for i in ids)
    assert "framework.compile" not in ids
    assert document["verdict"]["status"] == "pass"
    # How quick it is is a benchmark's question (bench/probe_suite.py, figures in docs/probes.md), not a
    # timed unit test's: this machine is shared and noisy.


def test_no_perf_and_only(tmp_path):
    document = run_json("--no-perf", "--only", "math_libraries.matmul_*", "--only", "performance.*")
    assert [p["id"] for p in document["probes"]] == [
        "math_libraries.matmul_fp32", "math_libraries.matmul_tf32",
        "math_libraries.matmul_fp16", "math_libraries.matmul_bf16",
    ]


def test_json_mode_prints_only_the_document():
    done = run_probes("--json", "--only", "kernel_driver.*")
    assert done.returncode == 0
    text = done.stdout.decode()
    assert text.lstrip().startswith("{") and text.rstrip().endswith("}")
    json.loads(text)


def test_text_report_groups_by_layer():
    done = run_probes("--only", "kernel_driver.*,math_libraries.solve")
    text = done.stdout.decode()
    assert done.returncode == 0
    assert "Layer 1: kernel_driver" in text and "Layer 4: math_libraries" in text
    assert "PASS    math_libraries.solve" in text
    assert text.strip().splitlines()[-1].startswith("Verdict: pass")


@pytest.mark.parametrize("args", [["--bogus"], ["--timeout", "0"], ["--timeout", "soon"], ["--only", "nothing.*"]])
def test_bad_usage_exits_2(args):
    done = run_probes("--json", *args)
    assert done.returncode == 2
    assert done.stdout == b""


def test_expected_gpu_missing_fails_at_layer_1():
    document = run_json("--quick", "--only", "kernel_driver.*,system_runtime.*",
                        env=suite_env(GPUMATRIX_EXPECT="nvidia"))
    probes = by_id(document)
    assert probes["kernel_driver.nvidia_device_nodes"]["status"] == "fail"
    assert probes["system_runtime.cuda_driver"]["status"] == "fail"
    assert probes["kernel_driver.amd_device_nodes"]["status"] == "skip"
    assert probes["system_runtime.rocm_smi"]["status"] == "skip"
    assert document["verdict"]["lowest_failing_layer"] == 1
    assert document["verdict"]["lowest_failing_layer_name"] == "kernel_driver"


def test_broken_torch_is_a_fact_and_a_failure(tmp_path):
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise OSError('libcudart.so.12: cannot open shared object file')\n")
    env = suite_env(PYTHONPATH=str(tmp_path))
    document = run_json("--quick", env=env)
    assert "libcudart.so.12" in document["facts"]["torch"]["import_error"]
    probes = by_id(document)
    assert probes["programming_interface.runtime"]["status"] == "fail"
    assert probes["math_libraries.matmul_fp32"]["status"] == "fail"
    assert probes["kernel_driver.nvidia_device_nodes"]["status"] == "skip"
    assert document["verdict"]["lowest_failing_layer"] == 3


def test_runs_from_a_read_only_copy_like_the_runner(tmp_path):
    """The runner mounts probes/ read-only and runs ``python3 -m probes`` from its parent."""
    import shutil
    import stat

    root = tmp_path / "opt"
    shutil.copytree(str(REPO / "probes"), str(root / "probes"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in [root / "probes"] + list((root / "probes").rglob("*")):
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        done = subprocess.run([sys.executable, "-m", "probes", "--json", "--quick", "--only", "math_libraries.*"],
                              cwd=str(root), env=suite_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=120, check=False)
    finally:
        for path in [root / "probes"] + list((root / "probes").rglob("*")):
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert by_id(json.loads(done.stdout.decode()))["math_libraries.matmul_fp32"]["status"] == "pass"


def test_quick_smoke_probes_share_one_torch_child(quick_run):
    """--quick imports torch once: its torch probes share one child (with the facts)."""
    from probes.cli import QUICK_TORCH_GROUP, smoke_groups
    from probes.registry import groups_in_order, load_probes, select_probes

    quick = select_probes(load_probes(), [], quick=True, perf=False)
    torch_groups = [g for g in groups_in_order(smoke_groups(quick)) if any(p.needs != "nothing" for p in g)]
    assert [g[0].group for g in torch_groups] == [QUICK_TORCH_GROUP]
    document, _ = quick_run
    assert by_id(document)["math_libraries.matmul_fp32"]["status"] == "pass"
