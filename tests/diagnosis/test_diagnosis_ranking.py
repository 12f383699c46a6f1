"""Symptoms with several usual causes: the most likely one, a confidence, and alternatives with their check."""

from __future__ import annotations

import json

from gpumatrix.diagnose import diagnose
from gpumatrix.diagnose.cli import main

# https://github.com/pytorch/pytorch/issues/70036
NO_HIP = "    torch._C._cuda_init()\nRuntimeError: No HIP GPUs are available"
BARE_HIP_NO_DEVICE = "RuntimeError: HIP error: hipErrorNoDevice"
# https://github.com/oobabooga/textgen/issues/791
CUDA_UNAVAILABLE = ("Warning: torch.cuda.is_available() returned False.\nThis means that no GPU has been detected.\n"
                    "Falling back to CPU mode.")
# https://github.com/NVIDIA/nvidia-docker/issues/1352
SPECIFIC = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'


def checks(result):
    return {a.cause: a.check for a in result.alternatives}


def test_cuda_not_available_is_ranked():
    result = diagnose(CUDA_UNAVAILABLE)
    assert result.cause == "no_device_visible" and result.confidence < 0.5
    alternatives = checks(result)
    assert alternatives["cpu_only_build"] == 'python -c "import torch; print(torch.version.cuda, torch.version.hip)"'
    assert "nvidia-smi" in alternatives["driver_not_loaded"] and "/dev/kfd" in alternatives["driver_not_loaded"]
    assert "wrong_vendor_build" in alternatives


def test_no_hip_gpus_is_ranked_with_the_checks_that_tell_the_causes_apart():
    for text in (NO_HIP, BARE_HIP_NO_DEVICE):
        result = diagnose(text)
        assert result.cause == "no_device_visible" and result.confidence == 0.5
        alternatives = checks(result)
        assert "ls -l /dev/kfd" in alternatives["driver_not_loaded"]
        assert "torch.version.hip" in alternatives["wrong_vendor_build"]
        assert "device_permission" in alternatives


def test_the_top_cause_itself_has_a_check_in_the_cause_table():
    # docker run --gpus all ... nvidia-smi tells no_device_visible apart from the rest
    from gpumatrix.diagnose import load_rules

    assert "docker run --rm --gpus all" in load_rules().checks["no_device_visible"]


def test_facts_rerank_the_symptom():
    # the same symptom with a torch that has neither CUDA nor HIP: a CPU build, sure
    result = diagnose(CUDA_UNAVAILABLE, {"torch_cuda": None, "torch_hip": None, "torch_version": "2.0.0+cpu"})
    assert result.cause == "cpu_only_build" and result.confidence >= 0.75


def test_a_specific_message_is_confident_and_unranked():
    result = diagnose(SPECIFIC)
    assert result.cause == "container_toolkit_missing" and result.confidence == 0.8
    assert result.alternatives == ()


def test_unknown_has_no_confidence_and_names_the_most_error_like_line():
    result = diagnose("step 1 ok\nValueError: index 7 is out of bounds\nexiting")
    assert (result.cause, result.confidence, result.alternatives) == ("unknown", 0.0, ())
    assert result.evidence == "ValueError: index 7 is out of bounds"


def test_gpu_stack_input_without_a_specific_rule_is_not_unknown():
    # https://github.com/NVIDIA/nccl/issues/207 (title); then a constructed message only the fallback knows
    result = diagnose("NCCL error in: /torch/lib/c10d/ProcessGroupNCCL.cpp:260, unhandled system error")
    assert result.cause == "collective_failure"
    vague = diagnose("nvidia-container-cli: something new went wrong")
    assert vague.cause == "container_toolkit_missing" and vague.confidence == 0.3


def test_json_carries_confidence_and_alternatives(tmp_path, capsys):
    log = tmp_path / "hip.log"
    log.write_text(NO_HIP)
    assert main(["--json", str(log)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cause"] == "no_device_visible" and out["confidence"] == 0.5
    assert {"cause", "check", "why"} <= set(out["alternatives"][0])
