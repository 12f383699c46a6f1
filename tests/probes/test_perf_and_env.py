"""Performance figures a user can trust, and the environment contract (no GPU here: the GPU
readers are fed fake sysfs trees and fake samples)."""

import json
import os

import suite_helpers  # noqa: F401
from fake_gpu import MI300X, FakeTorch

from probes import performance
from probes.cli import child_environment
from probes.context import ProbeContext


def test_warm_up_by_time_and_several_ops_per_sample():
    ctx = ProbeContext(mode="full")
    calls = []

    def work():
        calls.append(1)

    timing = performance.measure(ctx, work, samples=4, warmup_s=0.05, target_sample_s=0.002)
    assert timing["warmup_s"] >= 0.05 and timing["warmup_calls"] >= 2
    assert timing["reps"] > 1  # a trivial op is repeated between one pair of timestamps
    assert len(calls) == timing["warmup_calls"] + 4 * timing["reps"]
    assert timing["min_s"] <= timing["median_s"] <= timing["max_s"]


def _peaks(tmp_path, table):
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps(table))
    return {"GPUMATRIX_PEAKS": str(path)}


def test_peaks_by_name_then_by_arch(tmp_path):
    # keys as gpumatrix writes them: the name and every alias, among them the arch
    env = _peaks(tmp_path, {"AMD Instinct MI300X": {"fp32_tflops": 163.4, "fp32_matrix_tflops": 163.4},
                            "gfx942": {"fp32_tflops": 163.4, "fp32_matrix_tflops": 163.4, "bf16_tflops": 1307.4},
                            "gfx90a": {"fp32_tflops": 23.95, "fp32_matrix_tflops": 47.85}})
    by_name = performance.load_peaks("AMD Instinct MI300X", env, arch="gfx942:sramecc+:xnack-")
    assert by_name["peaks_key"] == "AMD Instinct MI300X"
    by_arch = performance.load_peaks("AMD Instinct MI300X OAM (renamed)", env, arch="gfx942:sramecc+:xnack-")
    assert by_arch["peaks_key"] == "gfx942" and by_arch["peaks"]["bf16_tflops"] == 1307.4
    mi250 = performance.load_peaks("AMD Instinct MI250X", env, arch="gfx90a")
    assert performance.peak_key("fp32", mi250) == "fp32_matrix_tflops"  # matrix-core fp32 where there is one
    assert performance.fraction_of_peak(23.925, mi250, "fp32_matrix_tflops") == 0.5
    assert performance.peak_key("bf16", mi250) == "bf16_tflops"
    assert "no entry for" in performance.load_peaks("Other", env, arch="gfx1100")["peaks_error"]
    assert performance.load_peaks("x", {}) == {}


def test_peaks_by_name_only_for_nvidia(tmp_path):
    env = _peaks(tmp_path, {"NVIDIA H100 80GB HBM3": {"bf16_tflops": 989.0, "mem_bw_gbs": 3350}})
    peaks = performance.load_peaks("NVIDIA H100 80GB HBM3", env, arch="sm_90")
    assert performance.fraction_of_peak(494.5, peaks, "bf16_tflops") == 0.5
    assert performance.peak_key("fp32", peaks) == "fp32_tflops"


def test_rocm_tf32_says_whether_it_was_in_effect():
    fake = FakeTorch([MI300X], ["gfx942"], hip="6.2")
    off = performance.rocm_tf32_state(fake, "gfx942", {})
    assert off["enabled"] is False and off["arch_has_xf32"] is True
    on = performance.rocm_tf32_state(fake, "gfx942:sramecc+:xnack-", {"HIPBLASLT_ALLOW_TF32": "1"})
    assert on["enabled"] is True
    assert performance.rocm_tf32_state(fake, "gfx90a", {"HIPBLASLT_ALLOW_TF32": "1"})["enabled"] is False


def test_host_busy_from_the_runner_or_measured(tmp_path):
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.10 0.20 0.30 1/100 12345\n")
    quiet = performance.host_load({}, str(loadavg))
    assert quiet["busy"] is False and quiet["loadavg_1m"] == 0.1
    told = performance.host_load({"GPUMATRIX_HOST_BUSY": "1"}, str(loadavg))
    assert told["busy"] is True and told["reasons"] == ["GPUMATRIX_HOST_BUSY=1"]
    assert performance.host_load({"GPUMATRIX_HOST_BUSY": "0"}, str(loadavg))["busy"] is False
    loadavg.write_text("%d.00 1.0 1.0 1/100 1\n" % (10 * (os.cpu_count() or 1)))
    measured = performance.host_load({}, str(loadavg))
    assert measured["busy"] is True and measured["reasons"][0].startswith("load average")


def test_busy_figure_is_marked_in_the_message():
    details = {"taken_under_load": True, "telemetry": {"clock_reasons": ["sw_power_cap"]}}
    assert performance._prefix(details) == "(taken under load; clocks held back: sw_power_cap) "
    assert performance._prefix({"taken_under_load": False, "telemetry": {"clock_reasons": []}}) == ""


def test_telemetry_summary_from_samples():
    samples = iter([{"sm_clock_mhz": 1980, "power_w": 650.0, "clock_reasons": ["gpu_idle"]},
                    {"sm_clock_mhz": 1755, "power_w": 700.0, "clock_reasons": ["sw_power_cap"]}])

    def reader():
        return next(samples)

    telemetry = performance.Telemetry(reader, period_s=0.01)
    with telemetry:
        import time

        time.sleep(0.1)
    summary = telemetry.summary()
    assert summary["samples"] == 2
    assert summary["sm_clock_mhz"] == {"min": 1755, "mean": 1867.5, "max": 1980}
    assert summary["power_w"]["max"] == 700.0 and summary["clock_reasons"] == ["sw_power_cap"]
    assert performance.Telemetry(None).summary() == {"available": False, "samples": 0}


def test_amdgpu_hwmon_reader(tmp_path):
    hwmon = tmp_path / "bus" / "pci" / "devices" / "0000:c1:00.0" / "hwmon" / "hwmon3"
    hwmon.mkdir(parents=True)
    (hwmon / "freq1_input").write_text("2100000000\n")  # Hz, as amdgpu reports sclk
    (hwmon / "power1_average").write_text("550000000\n")  # microwatts
    read = performance.amdgpu_reader("0000:c1:00.0", str(tmp_path))
    assert read() == {"sm_clock_mhz": 2100.0, "power_w": 550.0}
    assert performance.amdgpu_reader("0000:99:00.0", str(tmp_path)) is None


def test_numa_node_of_the_gpu_and_binding(tmp_path):
    device = tmp_path / "bus" / "pci" / "devices" / "0000:c1:00.0"
    device.mkdir(parents=True)
    (device / "numa_node").write_text("1\n")
    node1 = tmp_path / "devices" / "system" / "node" / "node1"
    node1.mkdir(parents=True)
    (node1 / "cpulist").write_text("0-1,4\n")
    assert performance.gpu_numa_node("0000:c1:00.0", str(tmp_path)) == 1
    assert performance.node_cpus(1, str(tmp_path)) == {0, 1, 4}
    (device / "numa_node").write_text("-1\n")
    assert performance.gpu_numa_node("0000:c1:00.0", str(tmp_path)) is None
    before = os.sched_getaffinity(0)
    with performance.bound_to_node(0) as binding:  # this host's node 0
        inside = os.sched_getaffinity(0)
    assert os.sched_getaffinity(0) == before
    assert binding.applied is False or inside <= before


def test_cache_dir_contract(tmp_path):
    cache = tmp_path / "cache"
    env = child_environment({"GPUMATRIX_CACHE_DIR": str(cache), "MIOPEN_USER_DB_PATH": "/keep/mine"})
    assert env["MIOPEN_USER_DB_PATH"] == "/keep/mine"  # never overrides what is set
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(cache / "inductor")
    assert env["TRITON_CACHE_DIR"] == str(cache / "triton")
    assert env["CUDA_CACHE_PATH"] == str(cache / "cuda-compute-cache")
    assert env["MIOPEN_CUSTOM_CACHE_DIR"] == str(cache / "miopen" / "cache")
    assert env["ROCFFT_RTC_CACHE_PATH"] == str(cache / "rocfft" / "rocfft_kernel_cache.db")
    assert (cache / "rocfft").is_dir() and (cache / "inductor").is_dir()
    plain = child_environment({})
    assert "CUDA_CACHE_PATH" not in plain and "gpumatrix-probes-" in plain["TORCHINDUCTOR_CACHE_DIR"]


def test_cache_dir_reaches_the_facts(tmp_path):
    from suite_helpers import run_json, suite_env

    document = run_json("--quick", "--only", "kernel_driver.amd_driver",
                        env=suite_env(GPUMATRIX_CACHE_DIR=str(tmp_path / "c")))
    assert document["facts"]["caches"]["MIOPEN_USER_DB_PATH"] == str(tmp_path / "c" / "miopen" / "db")
    assert document["facts"]["env"]["GPUMATRIX_CACHE_DIR"] == str(tmp_path / "c")


def test_environment_families_are_reported():
    from probes.facts import environment_facts

    env = environment_facts({"PYTORCH_TUNABLEOP_ENABLED": "1", "MIOPEN_FIND_MODE": "FAST", "NCCL_P2P_DISABLE": "1",
                             "HSA_ENABLE_SDMA": "0", "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1",
                             "CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "HOME": "/tmp",
                             "HIPBLASLT_ALLOW_TF32": "1", "SECRET_TOKEN": "x" * 10})
    for name in ("PYTORCH_TUNABLEOP_ENABLED", "MIOPEN_FIND_MODE", "NCCL_P2P_DISABLE", "HSA_ENABLE_SDMA",
                 "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", "CUDA_VERSION", "NVIDIA_REQUIRE_CUDA",
                 "HIPBLASLT_ALLOW_TF32"):
        assert env[name], name
    assert "HOME" not in env and "SECRET_TOKEN" not in env
    assert env["HSA_OVERRIDE_GFX_VERSION"] is None  # the fixed list is always there
    long = environment_facts({"NCCL_X": "y" * 5000})
    assert len(long["NCCL_X"]) == 512


def test_cpu_figures_carry_timing_evidence(full_run):
    from suite_helpers import by_id

    matmul = by_id(full_run[0])["performance.matmul_tflops"]["details"]
    assert matmul["results"]["fp32"]["warmup_s"] >= 0.2
    assert matmul["results"]["fp32"]["samples"] == 10
    assert "taken_under_load" in matmul and "telemetry" in matmul
