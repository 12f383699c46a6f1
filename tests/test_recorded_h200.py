"""Host discovery, the probe suite's documents and the peak table against what a real NVIDIA H200 printed.

The files are in ``tests/fixtures/device/h200-2026-11-28`` (its README says how each was made). The machine
ran no container engine, so the "container" conditions there (no device nodes, no nvidia-uvm, the
forward-compatibility libcuda) were made in a private mount namespace on the host.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from gpumatrix.host import discover_host, nvidia_arch_from_name
from gpumatrix.knowledge.peaks import peaks_table
from probes.kernel_driver import gpu_device_nodes

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "fixtures" / "device" / "h200-2026-11-28"
SCHEMA = json.loads((REPO / "probes" / "schema.json").read_text())
PROBE_DOCUMENTS = sorted(RECORDED.glob("probes-*.json"))


def _read(name: str) -> str:
    return (RECORDED / name).read_text(encoding="utf-8")


def _proc_root(tmp_path: Path) -> Path:
    """A fake root holding the driver's /proc files as the H200 host had them."""
    proc = tmp_path / "proc" / "driver" / "nvidia"
    (proc / "gpus" / "0000:00:06.0").mkdir(parents=True)
    (proc / "version").write_text(_read("proc-driver-nvidia-version.txt"))
    (proc / "gpus" / "0000:00:06.0" / "information").write_text(_read("proc-gpu-information.txt"))
    return tmp_path


def test_host_discovery_reads_the_h200_as_its_own_fingerprint_says(tmp_path):
    asked = []

    def nvidia_smi(argv):
        asked.append(argv)
        return 0, _read("nvidia-smi-query.csv")  # the fields discovery asks for (recorded with units; read either way)

    host = discover_host(root=_proc_root(tmp_path), run=nvidia_smi)
    recorded = json.loads(_read("host.json"))  # discover_host().fingerprint() run on that machine
    assert asked and asked[0][0] == "nvidia-smi"
    assert [dict(vars(g)) for g in host.gpus] == recorded["gpus"]
    assert host.nvidia_driver == recorded["nvidia_driver"] == "580.159.04"
    (gpu,) = host.gpus
    assert (gpu.name, gpu.arch, gpu.memory_bytes, gpu.pci_bus) == ("NVIDIA H200", "sm_90", 143771 * 2**20,
                                                                   "0000:00:06.0")


def test_host_discovery_without_nvidia_smi_falls_back_to_proc_and_the_name(tmp_path):
    host = discover_host(root=_proc_root(tmp_path))
    (gpu,) = host.gpus
    assert gpu.name == "NVIDIA H200" and gpu.source == "proc" and gpu.pci_bus == "0000:00:06.0"
    assert gpu.arch == "sm_90" and gpu.arch_source == "name"
    assert host.nvidia_driver == "580.159.04"
    assert nvidia_arch_from_name("NVIDIA H200") == "sm_90"


@pytest.mark.parametrize("path", PROBE_DOCUMENTS, ids=[p.name for p in PROBE_DOCUMENTS])
def test_the_recorded_probe_documents_match_the_schema(path):
    jsonschema.validate(json.loads(path.read_text()), SCHEMA, cls=jsonschema.Draft202012Validator)


def test_the_recorded_documents_cover_a_pass_and_each_failing_layer():
    verdicts = {p.name: json.loads(p.read_text())["verdict"] for p in PROBE_DOCUMENTS}
    assert verdicts["probes-full-perf.json"]["status"] == "pass"
    assert verdicts["probes-expect-nvidia-dev-none.json"]["lowest_failing_layer_name"] == "kernel_driver"
    assert verdicts["probes-expect-nvidia-dev-no-uvm.json"]["lowest_failing_layer_name"] == "kernel_driver"
    assert verdicts["probes-expect-nvidia-compat-mismatch.json"]["lowest_failing_layer_name"] == "system_runtime"
    # 1 MiB of /dev/shm still carries the probe's small batches: a pass with a warning, not a failure
    (loader,) = json.loads(_read("probes-expect-nvidia-shm-1m.json"))["probes"]
    assert loader["status"] == "pass" and loader["details"]["shm_bytes"] == 2**20
    assert "--shm-size" in loader["details"]["warning"]


def test_the_peak_table_fits_what_the_h200_measured():
    """The H200's row in gpu_peaks.yaml under the name torch reports, and the recorded figures a plausible share of
    it (clocks were held back by the power cap, so below 1 but far above the half a wrong row would give)."""
    perf = {p["id"]: p["details"] for p in json.loads(_read("probes-full-perf.json"))["probes"]
            if p["id"].startswith("performance.")}
    peaks = peaks_table()["NVIDIA H200"]
    bf16 = perf["performance.matmul_tflops"]["results"]["bf16"]["tflops"] / peaks["bf16_tflops"]
    memory = perf["performance.memory_bandwidth"]["gb_per_s"] / peaks["mem_bw_gbs"]
    assert 0.55 < bf16 < 1.0 and 0.75 < memory < 1.0
    assert perf["performance.memory_bandwidth"]["telemetry"]["clock_reasons"] == ["sw_power_cap"]


def test_the_container_device_nodes_are_listed(tmp_path):
    dev = tmp_path / "dev"
    (dev / "dri").mkdir(parents=True)
    for name in ("nvidiactl", "nvidia1", "nvidia0", "nvidia-uvm", "nvidia-modeset", "kfd", "null",
                 "dri/renderD128", "dri/card0"):
        (dev / name).touch()
    assert [p[len(str(dev)):] for p in gpu_device_nodes(str(dev))] == [
        "/dri/renderD128", "/kfd", "/nvidia-uvm", "/nvidia0", "/nvidia1", "/nvidiactl"]
    shutil.rmtree(dev)
    assert gpu_device_nodes(str(dev)) == []
