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
