"""Messages and reports recorded on a real GPU, with the cause that was made to happen.

``recorded/h200-2026-11-28.yaml`` holds what torch, CuPy, JAX, nvidia-smi, NCCL and a CUDA C++ program
printed on an NVIDIA H200 when each failure was provoked on purpose (its header says how), so every
label is known, not read. The rules of 8e95d54, which had never seen them, got 23 of the first 36 right and
25 among the first three answers; those of 19903c3 got 4 of the six recorded later with libraries hidden
(all six among the first three); docs/diagnosis.md ("Recorded on a real GPU") keeps those figures.

Each message is read twice: alone, as ``invoke diagnose --log`` reads a pasted log, and with the facts a
cell on that host carries (vendor, host driver, image CUDA, the container's device nodes), as the matrix
run reads it. Text alone cannot tell a host from a container, so there the container's cause must at
least be among the first three answers; with the facts it must be the answer, except where listed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from gpumatrix.diagnose import CAUSES, diagnose, facts_from_cell_result, failure_text_of_cell, load_rules
from gpumatrix.diagnose.reports import facts_from_reports
from gpumatrix.diagnose.text import clean_lines, decode
from probes.kernel_driver import check_device_groups, check_nvidia_nodes

HERE = Path(__file__).parent
CORPUS = HERE / "recorded" / "h200-2026-11-28.yaml"
FIXTURES = HERE.parent / "fixtures" / "device" / "h200-2026-11-28"
CASES = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
BY_ID = {case["id"]: case for case in CASES}

# The same words on a host without a driver and in a container that was not given the driver's files or
# nodes: alone, the text reads as the host's cause (what most pasted logs mean), with the container's cause
# among the alternatives.
HOST_READING = "alone the words read as the host's cause; the container's is an alternative"
TEXT_ONLY_MISSES = {
    "nvidia-smi-no-device-nodes": HOST_READING,
    "nvidia-smi-no-card-node": HOST_READING,
    "nvidia-smi-no-ctl-node": HOST_READING,
    "torch-no-driver-libraries": HOST_READING,
    "cupy-no-driver-libraries": "CUDA's runtime calls a missing libcuda an insufficient driver; alone that reads as an "
                                "old driver",
    "jax-no-driver-libraries": HOST_READING,
    "nvidia-smi-nvml-hidden": HOST_READING,
    "collect-env-no-device-nodes": "collect_env could not read a driver version, which alone reads as no driver",
    "torch-device-node-permission": "an unreadable /dev/nvidia0 gives the same 'No CUDA GPUs are available' as none",
    "nvidia-smi-device-node-permission": "an unreadable /dev/nvidia0 gives nvidia-smi's 'No devices were found'",
    "torch-compat-libcuda-older-than-module": "error 803 without a driver version reads as an old driver",
    "cupy-compat-libcuda-older-than-module": "error 803 without a driver version reads as an old driver",
    "jax-compat-libcuda-older-than-module": "error 803 without a driver version reads as an old driver",
    "collect-env-compat-libcuda-older-than-module": "a pasted collect_env gives torch's minor-version floor, not the "
                                                    "image's CUDA, so the driver's version cannot rule out an old one",
}
WITH_FACTS_MISSES: dict[str, str] = {}  # the last two kinds (a node this user may not open, nvidiactl without
# /dev/nvidia<N>) became facts on 2026-11-28: container_device_nodes_denied and nvidia_gpu_nodes_present
# What a cell on the recording host would carry: vendor, the host's driver, a cu130 image's CUDA.
CELL_FACTS = {"vendor": "nvidia", "host_driver_version": "580.159.04", "image_cuda": "13.0"}


def _ids_with(misses: dict[str, str]) -> list:
    return [pytest.param(case, id=case["id"], marks=pytest.mark.xfail(strict=True, reason=misses[case["id"]]))
            if case["id"] in misses else pytest.param(case, id=case["id"]) for case in CASES]


def test_the_recorded_corpus_is_well_formed():
    assert len(CASES) == len(BY_ID) == 42
    for case in CASES:
        assert set(case) - {"device_nodes_denied"} == {"id", "cause", "provoked", "device_nodes", "text"}, case["id"]
        assert set(case.get("device_nodes_denied", [])) <= set(case["device_nodes"]), case["id"]
        assert case["cause"] in CAUSES and case["provoked"] and case["text"].strip()
        assert all(node.startswith("/dev/nvidia") for node in case["device_nodes"])
    assert set(TEXT_ONLY_MISSES) <= set(BY_ID) and set(WITH_FACTS_MISSES) <= set(BY_ID)
    # the causes the recording covers: every layer a single GPU can show
    assert {case["cause"] for case in CASES} == {
        "out_of_memory", "no_device_visible", "unknown", "collective_failure", "arch_unsupported",
        "runtime_init_failure", "device_permission", "library_mismatch", "shm_too_small", "dnn_library_failure"}


@pytest.mark.parametrize("case", _ids_with(TEXT_ONLY_MISSES))
def test_a_recorded_message_alone(case):
    assert diagnose(case["text"]).cause == case["cause"]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_a_recorded_message_alone_has_its_cause_among_the_first_three(case):
    result = diagnose(case["text"])
    assert case["cause"] in [result.cause, *(a.cause for a in result.alternatives)][:3]


@pytest.mark.parametrize("case", _ids_with(WITH_FACTS_MISSES))
def test_a_recorded_message_with_the_cells_facts(case):
    facts = {**CELL_FACTS, "container_device_nodes": case["device_nodes"]}
    if "device_nodes_denied" in case:  # what the suite's node check reports (test_diagnosis_permission_fact.py)
        facts["container_device_nodes_denied"] = case["device_nodes_denied"]
    assert diagnose(case["text"], facts).cause == case["cause"]


def test_error_803_with_a_driver_new_enough_is_the_images_libcuda():
    text = BY_ID["cupy-compat-libcuda-older-than-module"]["text"]
    result = diagnose(text, CELL_FACTS)
    assert (result.cause, result.rule) == ("library_mismatch", "facts-driver-mismatch-but-new-enough")
    assert "580.159.04" in result.evidence and "13.0" in result.evidence
    # a driver too old for the image's CUDA keeps the old reading (version_ge, not "any driver")
    old = diagnose(text, {**CELL_FACTS, "host_driver_version": "535.104.05"})
    assert old.cause == "driver_too_old"
    # not when NVML says the module and the library differ (a driver upgraded without a reboot: review)
    rebooted = diagnose("Failed to initialize NVML: Driver/library version mismatch\n" + text, CELL_FACTS)
    assert rebooted.rule != "facts-driver-mismatch-but-new-enough"
    # a pasted collect_env has torch's minor-version floor only: the image's libcuda is the first alternative
    pasted = diagnose(BY_ID["collect-env-compat-libcuda-older-than-module"]["text"])
    assert pasted.cause == "driver_too_old" and pasted.alternatives[0].cause == "library_mismatch"


def test_an_insufficient_driver_with_a_driver_new_enough_is_no_libcuda():
    text = BY_ID["cupy-no-driver-libraries"]["text"]
    result = diagnose(text, CELL_FACTS)
    assert (result.cause, result.rule) == ("no_device_visible", "facts-insufficient-driver-but-new-enough")
    assert diagnose(text, {**CELL_FACTS, "host_driver_version": "535.104.05"}).cause == "driver_too_old"
    assert diagnose(text, {**CELL_FACTS, "vendor": "amd"}).cause == "driver_too_old"
    # the toolkit's stub libcuda on the path is not a container without the driver (review)
    stub = "LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64\n" + text
    assert diagnose(stub, CELL_FACTS).rule != "facts-insufficient-driver-but-new-enough"


# ---------------------------------------------------------------- reports pasted from that machine


def _report_facts(name: str) -> dict:
    return facts_from_reports(clean_lines(decode((FIXTURES / name).read_text(encoding="utf-8"))))


@pytest.mark.parametrize("name, kind", [("nvidia-smi.txt", "nvidia-smi"), ("nvidia-smi-q.txt", "nvidia-smi -q")])
def test_real_nvidia_smi_reports_are_read(name, kind):
    facts = _report_facts(name)
    assert facts["report_kinds"] == [kind]
    assert facts["host_driver_version"] == "580.159.04" and facts["driver_cuda_version"] == "13.0"
    assert facts["gpu_listed"] is True and facts["host_gpu_vendors"] == ["nvidia"]
    assert facts["compute_mode"] == "default"


def test_real_collect_env_reports_are_read():
    working = _report_facts("collect_env.txt")
    assert working["torch_version"] == "2.11.0+cu130" and working["torch_cuda"] == "13.0"
    assert working["torch_hip"] is None and working["torch_cuda_available"] is True
    assert working["host_driver_version"] == "580.159.04" and working["gpu_listed"] is True
    no_nodes = _report_facts("collect_env-no-device-nodes.txt")
    assert no_nodes["torch_cuda_available"] is False and no_nodes["host_driver_version"] is None
    assert "gpu_listed" not in no_nodes  # "GPU models and configuration: Could not collect" lists nothing


# ---------------------------------------------------------------- the probe suite's documents, as a cell


def _cell(probes_name: str) -> dict:
    """A cell result as the runner writes it, around a probe document recorded on the H200."""
    probes = json.loads((FIXTURES / probes_name).read_text(encoding="utf-8"))
    host = json.loads((FIXTURES / "host.json").read_text(encoding="utf-8"))
    host["engine"] = {"runtimes": ["io.containerd.runc.v2", "runc"]}  # a CDI-only engine: no nvidia runtime
    verdict = probes["verdict"]
    return {"vendor": "nvidia", "variant": "cu130", "status": verdict["status"], "reason": verdict["summary"],
            "host": host, "probes": probes}


@pytest.mark.parametrize("name, cause, rule", [
    ("probes-expect-nvidia-dev-none.json", "no_device_visible", "facts-device-nodes-missing"),
    ("probes-expect-nvidia-dev-no-uvm.json", "runtime_init_failure", "cuda-unknown-error"),
    ("probes-expect-nvidia-compat-mismatch.json", "library_mismatch", "facts-driver-mismatch-but-new-enough"),
])
def test_a_failed_cell_recorded_on_the_h200_is_diagnosed(name, cause, rule):
    document = _cell(name)
    assert document["status"] == "fail"
    result = diagnose(failure_text_of_cell(document), facts_from_cell_result(document))
    assert (result.cause, result.rule) == (cause, rule)


def test_the_container_device_nodes_arrive_from_a_real_run():
    facts = facts_from_cell_result(_cell("probes-expect-nvidia-dev-no-uvm.json"))
    assert facts["container_device_nodes"] == ["/dev/nvidia0", "/dev/nvidiactl"]
    assert facts_from_cell_result(_cell("probes-expect-nvidia-dev-none.json"))["container_device_nodes"] == []
    full = facts_from_cell_result(_cell("probes-full-no-perf.json"))
    assert full["container_device_nodes"] == ["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0",
                                              "/dev/nvidiactl"]
    assert full["device_arch"] == "sm_90" and "sm_90" in full["torch_arch_list"]
    assert full["torch_cuda_available"] is True and full["host_driver_version"] == "580.159.04"
    assert "probe_failures" not in full


def test_a_probes_hint_naming_gpus_is_not_the_engines_error():
    # the probe says "(check --gpus / NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES)"; on an engine without the
    # nvidia runtime (CDI serves the GPUs) that hint once read as a missing container toolkit
    document = _cell("probes-expect-nvidia-dev-none.json")
    facts = facts_from_cell_result(document)
    assert any("--gpus" in failure["message"] for failure in facts["probe_failures"])  # read as log text too
    facts.pop("container_device_nodes")  # without the node list, the text decides
    result = diagnose(failure_text_of_cell(document), facts)
    assert result.cause == "no_device_visible" and result.rule != "facts-engine-no-nvidia-runtime"
    engine_error = 'docker: unknown flag: --gpus'
    assert diagnose(engine_error, facts).cause == "container_toolkit_missing"


def test_an_engine_that_was_not_read_says_nothing_about_runtimes():
    document = _cell("probes-expect-nvidia-dev-none.json")
    document["host"]["engine"] = {"version": None, "runtimes": []}  # the fingerprint of a host with no engine
    assert "engine_runtimes" not in facts_from_cell_result(document)


# ---------------------------------------------------------------- the probe suite's own words, from its real code


def _probe_cell(failed_probes: list) -> dict:
    """A failed NVIDIA cell whose probe document holds ``failed_probes`` (as the runner writes it)."""
    return {"vendor": "nvidia", "variant": "cu130", "status": "fail", "reason": "fail at layer 1 (kernel_driver)",
            "host": {"nvidia_driver": "580.159.04", "gpus": [{"vendor": "nvidia", "arch": "sm_90"}]},
            "probes": {"facts": {}, "probes": failed_probes}}


def _as_probe(probe_id: str, outcome) -> dict:
    return {"id": probe_id, "layer": 1, "status": outcome.status, "message": outcome.message}


def test_a_control_node_without_a_gpu_node_is_no_device(tmp_path):
    # the probe's real message for /dev/nvidiactl and nvidia-uvm passed in without /dev/nvidia0 (recorded on the
    # H200 as nvidia-smi's 'No devices were found')
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidiactl", "nvidia-uvm"):
        (dev / name).touch()
    outcome = check_nvidia_nodes(dev_root=str(dev), expect="nvidia", proc_root=str(tmp_path / "proc"))
    assert outcome.status == "fail" and "no /dev/nvidia<N> node" in outcome.message
    document = _probe_cell([_as_probe("kernel_driver.nvidia_device_nodes", outcome)])
    result = diagnose("No devices were found\n", facts_from_cell_result(document))
    assert (result.cause, result.rule) == ("no_device_visible", "probe-nvidia-card-node-missing")


def test_nodes_the_process_may_not_open_are_a_permission():
    # the probe's real message for a node of mode 000, checked by an unprivileged user (root would pass the check):
    # a forked child drops to uid 65534 when the tests run as root
    root = Path(tempfile.mkdtemp(prefix="gpumatrix-perm-"))
    try:
        root.chmod(0o755)
        dev = root / "dev"
        dev.mkdir(mode=0o755)
        for name in ("nvidiactl", "nvidia-uvm", "nvidia0"):
            (dev / name).touch()
            (dev / name).chmod(0o666)
        (dev / "nvidia0").chmod(0)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: check as an unprivileged user, report, and leave without pytest's cleanup
            try:
                os.close(read)
                if os.geteuid() == 0:
                    os.setgroups([])
                    os.setgid(65534)
                    os.setuid(65534)
                outcome = check_device_groups(dev_root=str(dev), sys_root="/nonexistent", expect="nvidia")
                os.write(write, json.dumps([outcome.status, outcome.message]).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            reported = pipe.read()
        os.waitpid(pid, 0)
    finally:
        shutil.rmtree(root)
    status, message = json.loads(reported)
    assert status == "fail" and "no read-write permission on" in message and "nvidia0" in message
    document = _probe_cell([{"id": "kernel_driver.device_groups", "layer": 1, "status": status, "message": message}])
    result = diagnose("RuntimeError: No CUDA GPUs are available\n", facts_from_cell_result(document))
    assert (result.cause, result.rule) == ("device_permission", "probe-device-node-permission")
    # a node that opens is no permission problem, and the words of another path are not the probe's
    alone = dataclasses.replace(load_rules(), rules=tuple(r for r in load_rules().rules
                                                          if r.id == "probe-device-node-permission"), learned=None)
    assert diagnose("no read-write permission on /home/me/data.bin\n", rules=alone).cause == "unknown"
