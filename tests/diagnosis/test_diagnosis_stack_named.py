"""The guarantee of issue 15: input that names the GPU stack near an error is never `unknown`.

The last-resort fallbacks in the rules file declare a vocabulary of GPU-stack components (the
CUDA driver API, NVML and the NVIDIA user-space driver, the ROCm tools, the HIP/HSA runtime, the
math libraries); an error line naming any of them gets a low-confidence cause with alternatives.
Input that names no component stays `unknown` and shows its most error-like line.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpumatrix.diagnose import diagnose, load_rules

# One family per last-resort rule: component names as they appear in real logs.
FAMILIES = {
    "fallback-cuda-driver-api": ["cuInit", "cuDeviceGet", "cuDeviceGetCount", "cuCtxCreate_v2", "cuMemAlloc_v2",
                                 "cuModuleLoadData", "cuLaunchKernel", "CUDA API", "CUDA driver API"],
    "fallback-nvidia-user-driver": ["nvmlInit", "nvmlInit_v2", "nvmlDeviceGetHandleByIndex_v2", "libnvidia-ml.so.1",
                                    "libnvidia-ptxjitcompiler.so", "libcuda.so.1", "nvcuda.dll", "nvidia-smi"],
    "fallback-amd-tools": ["rocminfo", "rocm-smi", "amd-smi", "rocm_agent_enumerator"],
    "fallback-hip-runtime": ["ROCm error", "hipMalloc", "hipGetDeviceCount", "hipModuleLoad", "HIP_ERROR_NotInitialized",
                             "hipError_t(101)", "hsa runtime", "HSA_STATUS_ERROR_INVALID_AGENT"],
    "fallback-math-libraries": ["cuBLAS", "cuBLASLt", "cublasLtMatmul", "cuSOLVER", "cuFFT", "cuRAND", "cuSPARSE",
                                "rocBLAS", "hipBLAS", "hipBLASLt", "rocSOLVER", "Tensile",
                                "CUBLAS_STATUS_INTERNAL_ERROR", "CUSOLVER_STATUS_EXECUTION_FAILED",
                                "HIPBLAS_STATUS_NOT_SUPPORTED", "ROCBLAS_STATUS_INVALID_HANDLE"],
}
# An error line around a component, in the shapes real logs use.
SHAPES = ["{c} failed", "ERROR: {c} returned 3", "error: {c}: unknown error", "{c} results in an unknown error",
          "segmentation fault in {c}", "Unable to initialise {c}", "RuntimeError: {c} call failed with code -1"]
NO_STACK = [
    "Traceback (most recent call last):\nValueError: could not convert string to float: 'abc'",
    "KeyError: 'model_state_dict'\nprocess exited with status 1",
    "FileNotFoundError: [Errno 2] No such file or directory: 'config.json'",
    "ERROR: failed to parse the configuration: unexpected token at line 3",
]
CODE_BUGS = [
    "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported",
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
    "you must use the 'spawn' start method",
]


def test_every_last_resort_rule_has_a_family_here():
    last_resort = {rule.id for rule in load_rules().rules if rule.tier == "last_resort"}
    assert last_resort == set(FAMILIES)


@pytest.mark.parametrize(("family", "component", "shape"),
                         [(f, c, s) for f, names in FAMILIES.items() for c, s in itertools.product(names, SHAPES)])
def test_an_error_naming_a_stack_component_is_never_unknown(family, component, shape):
    result = diagnose("starting the job\n" + shape.format(c=component))
    assert result.cause != "unknown", (family, component, shape)
    assert result.confidence < 0.5 or result.rule != family
    if result.rule == family:
        assert result.alternatives and all(a.check for a in result.alternatives)


@given(component=st.sampled_from([c for names in FAMILIES.values() for c in names]),
       shape=st.sampled_from(SHAPES),
       before=st.text(alphabet="abcdefghij klmnop=:/._", max_size=80),
       after=st.text(alphabet="qrstuvwxyz 0123456789", max_size=80))
@settings(max_examples=300, deadline=None)
def test_any_surrounding_text_keeps_the_guarantee(component, shape, before, after):
    result = diagnose(f"{before}\n{shape.format(c=component)}\n{after}")
    assert result.cause != "unknown"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_stack_named_fallback_is_low_confidence_with_alternatives(family):
    only = [name for name in FAMILIES[family] if not name.isupper()][0]
    result = diagnose(f"{only} failed")
    assert result.rule == family
    assert result.confidence < 0.5
    assert len(result.alternatives) >= 1


@pytest.mark.parametrize("text", NO_STACK)
def test_input_naming_no_stack_component_stays_unknown_with_its_most_error_like_line(text):
    result = diagnose(text)
    assert result.cause == "unknown" and result.rule is None and result.confidence == 0.0
    error_like = [line for line in text.splitlines()
                  if any(w in line.lower() for w in ("error", "exception", "fail", "not found", "unable"))]
    assert result.evidence == error_like[-1].strip()


@pytest.mark.parametrize("text", CODE_BUGS)
def test_known_code_bugs_that_look_like_cuda_errors_stay_unknown(text):
    assert diagnose(text).cause == "unknown"


def test_a_component_far_from_any_error_word_is_not_enough():
    # The window is bounded: a component mentioned in passing, far from the error, says nothing.
    text = "loaded cuBLAS " + "x" * 200 + " then ValueError: bad shape"
    assert diagnose(text).cause == "unknown"
