"""Fact rules, the order in which matching rules win, and odd facts."""

from __future__ import annotations

import pytest

from gpumatrix.diagnose import CAUSES, Diagnosis, arch_supported, diagnose

FOUND_NO_DRIVER = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
    "and installed a driver from http://www.nvidia.com/Download/index.aspx"
)


def test_facts_beat_text():
    text_only = diagnose(FOUND_NO_DRIVER)
    assert text_only.cause == "driver_not_loaded"
    with_facts = diagnose(FOUND_NO_DRIVER, {"vendor": "nvidia", "host_driver_version": "570.86.15"})
    assert with_facts.cause == "no_device_visible"
    assert "570.86.15" in with_facts.evidence


def test_root_cause_wins_over_the_symptom_it_causes():
    log = FOUND_NO_DRIVER + "\nRuntimeError: No CUDA GPUs are available"
    assert diagnose(log).cause == "driver_not_loaded"
    log = ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).\n"
           "RuntimeError: No CUDA GPUs are available")
    assert diagnose(log).cause == "driver_too_old"


def test_lower_layer_wins_regardless_of_order_in_the_log():
    oom = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    cudnn = "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"
    assert diagnose(f"{oom}\n{cudnn}").cause == "out_of_memory"
    assert diagnose(f"{cudnn}\n{oom}").cause == "out_of_memory"


def test_host_hook_library_error_is_a_driver_problem_not_an_image_one():
    log = ("stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: load library "
           "failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.")
    assert diagnose(log).cause == "driver_not_loaded"
    assert diagnose("ImportError: libcudart.so.12: cannot open shared object file").cause == "library_mismatch"


@pytest.mark.parametrize(
    "host, required, too_old",
    [("535.104.05", "570.26", True), ("570.9", "570.26", True), ("570.86.15", "570.26", False),
     ("570.26", "570.26", False), ("1000.1", "570.26", False)],
)
def test_driver_versions_compare_numerically(host, required, too_old):
    facts = {"vendor": "nvidia", "host_driver_version": host, "required_min_driver": required,
             "image_cuda": "12.8"}
    result = diagnose("", facts)
    assert (result.cause == "driver_too_old") is too_old
    if too_old:
        assert result.evidence == f"host driver {host} < {required} required by CUDA 12.8"


@pytest.mark.parametrize(
    "device, arch_list, supported",
    [("sm_120", ["sm_50", "sm_80", "sm_86", "sm_90"], False),
     ("sm_86", ["sm_80"], True),            # same major, newer minor: the sm_80 cubin runs
     ("sm_120", ["sm_90", "compute_90"], True),  # PTX is JIT-compiled for newer GPUs
     ("sm_75", ["sm_80", "sm_90"], False),
     ("gfx90a:sramecc+:xnack-", ["gfx90a", "gfx942"], True),
     ("gfx1031", ["gfx1030", "gfx1100"], False)],
)
def test_arch_support(device, arch_list, supported):
    assert arch_supported(device, arch_list) is supported
    result = diagnose("", {"device_arch": device, "torch_arch_list": arch_list})
    assert (result.cause == "arch_unsupported") is not supported


def test_hsa_override_advice_for_amd_consumer_cards():
    helps = diagnose("", {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx1030", "gfx1100"]})
    assert helps.cause == "arch_unsupported"
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0 can help" in helps.remedy
    useless = diagnose("", {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx90a", "gfx942"]})
    assert "would not help" in useless.remedy
    datacenter = diagnose("", {"vendor": "amd", "device_arch": "gfx942", "torch_arch_list": ["gfx90a"]})
    assert "will not help gfx942" in datacenter.remedy
    from_text = diagnose("CUDA error: invalid device function when compiling and running for amd gfx 1032")
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in from_text.remedy
    already_overridden = {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx1030"],
                          "hsa_override_gfx_version": "10.3.0"}
    assert diagnose("", already_overridden).cause == "unknown"


def test_vendor_and_build_facts():
    assert diagnose("", {"host_gpu_vendors": ["nvidia"], "torch_hip": "6.2", "torch_cuda": None}).cause \
        == "wrong_vendor_build"
    assert diagnose("", {"host_gpu_vendors": ["amd"], "torch_cuda": "12.8", "torch_hip": None}).cause \
        == "wrong_vendor_build"
    assert diagnose("", {"vendor": "nvidia", "torch_cuda": None, "torch_hip": None}).cause == "cpu_only_build"
    # an unknown build (keys absent) decides nothing
    assert diagnose("", {"vendor": "nvidia"}).cause == "unknown"


def test_device_node_and_shm_facts():
    # dev_kfd_present is the host's /dev/kfd (what the runner measures): absent there, the driver is not up
    assert diagnose("", {"vendor": "amd", "dev_kfd_present": False}).cause == "driver_not_loaded"
    in_container = {"vendor": "amd", "dev_kfd_present": True, "container_device_nodes": ["/dev/dri/renderD128"]}
    assert diagnose("", in_container).cause == "no_device_visible"
    assert diagnose("", {"vendor": "nvidia", "device_nodes_present": False}).cause == "no_device_visible"
    assert diagnose("", {"vendor": "nvidia", "device_nodes_present": True}).cause == "unknown"
    shm = diagnose("RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error.", {"shm_bytes": 67108864})
    assert shm.cause == "shm_too_small" and shm.rule == "facts-shm-small" and "67108864" in shm.evidence


def test_probe_failures_are_read():
    facts = {"probe_failures": [
        {"id": "import_torch", "layer": 1, "status": "pass", "message": "ok"},
        {"id": "matmul", "layer": 3, "status": "fail",
         "message": "RuntimeError: CUDA error: no kernel image is available for execution on the device"},
    ]}
    result = diagnose("", facts)
    assert result.cause == "arch_unsupported"
    assert "[probe matmul]" in result.evidence


@pytest.mark.parametrize("facts", [
    {"host_driver_version": "not-a-version", "required_min_driver": "570.26"},
    {"host_gpu_vendors": "nvidia", "torch_hip": "6.2"},
    {"torch_arch_list": "sm_90", "device_arch": 7},
    {"shm_bytes": "lots"},
    {"probe_failures": "boom"},
    {"probe_failures": [None, 3, {"status": None}]},
    None,
])
def test_malformed_facts_never_crash(facts):
    result = diagnose("some log", facts)
    assert isinstance(result, Diagnosis) and result.cause in CAUSES


def test_unknown_says_so_and_shows_evidence():
    log = "step 1 ok\nValueError: index 7 is out of bounds for axis 0 with size 3\nexiting"
    result = diagnose(log)
    assert result.cause == "unknown" and result.rule is None
    assert result.evidence == "ValueError: index 7 is out of bounds for axis 0 with size 3"
    assert diagnose("").evidence == "(no log text and no deciding facts)"


def test_evidence_is_the_matched_line_trimmed():
    long_line = "x" * 1000 + " RuntimeError: CUDA error: no kernel image is available for execution on the device " + "y" * 1000
    result = diagnose("first line\n" + long_line + "\nlast line")
    assert "no kernel image is available" in result.evidence
    assert len(result.evidence) <= 302


def test_to_dict_shape():
    d = diagnose(FOUND_NO_DRIVER).to_dict()
    assert list(d) == ["cause", "remedy", "evidence", "explanation", "rule", "confidence", "alternatives"]
    assert d["rule"] == "torch-found-no-nvidia-driver"
