"""Layer 2 goes past init: a CUDA context with allocation, copies and synchronize, and an
HSA queue plus a pool allocation; every return code is checked (fake libraries, no GPU)."""

from fake_libs import FakeLibcuda, FakeLibhsa

from probes import system_runtime


def test_cuda_context_round_trip_passes():
    lib = FakeLibcuda(devices=2)
    outcome = system_runtime.check_cuda_driver("nvidia", lib=lib)
    assert outcome.status == "pass", outcome
    assert [d["bytes_copied"] for d in outcome.details["devices"]] == [1 << 20, 1 << 20]
    assert outcome.details["devices"][0]["arch"] == "sm_90"
    for call in ("cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc_v2", "cuMemcpyHtoD_v2",
                 "cuMemcpyDtoH_v2", "cuCtxSynchronize", "cuMemFree_v2"):
        assert call in lib.calls
    assert lib.retained == 0 and not lib.memory


def test_cuda_allocation_failure_is_named_and_cleaned_up():
    lib = FakeLibcuda(fail={"cuMemAlloc_v2": 2})
    outcome = system_runtime.check_cuda_driver("nvidia", lib=lib)
    assert outcome.status == "fail"
    assert "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2)" in outcome.message
    assert lib.retained == 0  # the primary context was released


def test_cuda_context_failure():
    outcome = system_runtime.check_cuda_driver("nvidia", lib=FakeLibcuda(fail={"cuDevicePrimaryCtxRetain": 999}))
    assert outcome.status == "fail" and "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_UNKNOWN (999)" in outcome.message


def test_cuda_synchronize_failure_after_copies():
    outcome = system_runtime.check_cuda_driver("nvidia", lib=FakeLibcuda(fail={"cuCtxSynchronize": 700}))
    assert outcome.status == "fail" and "cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)" in outcome.message


def test_cuda_corrupted_copy():
    outcome = system_runtime.check_cuda_driver("nvidia", lib=FakeLibcuda(corrupt=True))
    assert outcome.status == "fail" and "came back different" in outcome.message


def test_cuda_device_query_codes_are_checked():
    outcome = system_runtime.check_cuda_driver("nvidia", lib=FakeLibcuda(fail={"cuDeviceGetName": 101}))
    assert outcome.status == "fail" and "cuDeviceGetName failed: CUDA_ERROR_INVALID_DEVICE (101)" in outcome.message


def test_hsa_queue_and_pool_pass():
    lib = FakeLibhsa()
    outcome = system_runtime.check_hsa_runtime("amd", lib=lib)
    assert outcome.status == "pass", outcome
    gpu = [a for a in outcome.details["agents"] if a["type"] == "gpu"][0]
    assert gpu["name"] == "gfx942" and gpu["queue_size"] == 64 and gpu["pool_coarse_grained"] is True
    assert lib.queues == [64] and lib.allocated == [(100, 1 << 20)]  # the coarse-grained (device) pool
    assert "hsa_queue_destroy" in lib.calls and "hsa_amd_memory_pool_free" in lib.calls
    assert lib.calls[-1] == "hsa_shut_down"


def test_hsa_queue_creation_failure():
    lib = FakeLibhsa(fail={"hsa_queue_create": 0x1002})
    outcome = system_runtime.check_hsa_runtime("amd", lib=lib)
    assert outcome.status == "fail"
    assert "hsa_queue_create failed: HSA_STATUS_ERROR_INVALID_QUEUE_CREATION (0x1002)" in outcome.message
    assert lib.calls[-1] == "hsa_shut_down"


def test_hsa_pool_allocation_failure_and_no_pool():
    outcome = system_runtime.check_hsa_runtime("amd", lib=FakeLibhsa(fail={"hsa_amd_memory_pool_allocate": 0x1008}))
    assert outcome.status == "fail" and "hsa_amd_memory_pool_allocate failed" in outcome.message
    outcome = system_runtime.check_hsa_runtime("amd", lib=FakeLibhsa(pools=[(3, 0, False)]))
    assert outcome.status == "fail" and "no allocatable global memory pool" in outcome.message


def test_hsa_agent_info_codes_are_checked():
    outcome = system_runtime.check_hsa_runtime("amd", lib=FakeLibhsa(fail={"hsa_agent_get_info": 0x1004}))
    assert outcome.status == "fail" and "HSA_STATUS_ERROR_INVALID_AGENT" in outcome.message


def test_nvml_device_state():
    from fake_libs import FakeLibnvml

    lib = FakeLibnvml()
    outcome = system_runtime.check_nvml("nvidia", lib=lib)
    assert outcome.status == "pass", outcome
    state = outcome.details["device_state"][0]
    assert state["persistence_mode"] is True and state["mig_mode"] == {"current": False, "pending": False}
    assert state["ecc_mode"]["current"] is True and state["compute_mode"] == "default"
    assert state["power_limit_w"] == 700.0 and state["power_draw_w"] == 71.234
    assert state["clocks_mhz"] == {"graphics": 345, "sm": 345, "memory": 2619}
    assert state["max_clocks_mhz"]["sm"] == 1980
    assert state["clock_event_reasons"] == ["gpu_idle"]
    assert state["pcie"] == {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16}
    assert lib.shut_down


def test_nvml_reports_held_back_clocks_mig_and_unsupported_queries():
    from fake_libs import FakeLibnvml

    outcome = system_runtime.check_nvml("nvidia", lib=FakeLibnvml(reasons=0x4 | 0x40, mig=1,
                                                                  unsupported={"nvmlDeviceGetEccMode"}))
    state = outcome.details["device_state"][0]
    assert state["clock_event_reasons"] == ["sw_power_cap", "hw_thermal_slowdown"]
    assert state["ecc_mode"] == "not supported"
    assert "MIG on" in outcome.message and "sw_power_cap/hw_thermal_slowdown" in outcome.message
    assert system_runtime.clock_reasons(0x1000) == ["unknown 0x1000"]


def test_nvml_handle_failure_fails():
    from fake_libs import FakeLibnvml

    outcome = system_runtime.check_nvml("nvidia", lib=FakeLibnvml(fail={"nvmlDeviceGetHandleByIndex_v2": 999}))
    assert outcome.status == "fail" and "Unknown Error" in outcome.message
