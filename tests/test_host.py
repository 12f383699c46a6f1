"""Host discovery on fake sysfs/proc trees and recorded real tool outputs (no GPU, no engine)."""

from __future__ import annotations

import json
import platform
import socket
from pathlib import Path

import pytest

from gpumatrix.knowledge.archs import gfx_from_override
from gpumatrix.knowledge.versions import parse_version, release, version_key
from gpumatrix.engine.client import engine_info_from_payloads
from gpumatrix.host import (
    HostInfo, amd_gpus_from_kfd, discover_host, engine_facts, gfx_name, host_type_label, nvidia_arch_from_name,
    parse_amd_smi_static, parse_nvidia_driver_version, parse_nvidia_smi_csv, parse_rocm_smi_json,
    pci_display_devices, query_nvidia_smi, summarise_cdi_spec,
)

FIX = Path(__file__).parent / "fixtures" / "host"
ROOTS = FIX / "roots"


def test_nvidia_smi_csv_with_header_in_any_column_order():
    gpus = parse_nvidia_smi_csv((FIX / "nvidia_smi" / "triton-8070.csv").read_text())
    assert [(g.index, g.name, g.arch, g.compute_capability) for g in gpus] == [
        (0, "NVIDIA TITAN V", "sm_70", "7.0"), (1, "NVIDIA RTX 5880 Ada Generation", "sm_89", "8.9")]
    assert all(g.arch_source == "nvidia-smi" for g in gpus)


def test_nvidia_smi_csv_without_header_uses_field_order():
    text = "0, NVIDIA H100 80GB HBM3, GPU-3f7a1c7e-0000-0000-0000-000000000000, 81559, 9.0, 00000000:19:00.0\n"
    (gpu,) = parse_nvidia_smi_csv(text)
    assert gpu.arch == "sm_90" and gpu.memory_bytes == 81559 * 1024 * 1024
    assert gpu.pci_bus == "0000:19:00.0"  # nvidia-smi's 8-digit domain normalised to sysfs form


def test_nvidia_smi_retries_without_compute_cap_on_old_drivers():
    calls = []
    old_driver_msg = (FIX / "nvidia_smi" / "compute_cap-invalid.txt").read_text()

    def run(argv):
        calls.append(argv)
        if "compute_cap" in argv[1]:
            return 2, old_driver_msg
        return 0, "index, name, uuid, memory.total [MiB], pci.bus_id, driver_version\n" \
                  "0, Tesla K80, GPU-be0a1aaf-c92d-ce5e-6d53-1f064e6842f6, 11441, 00000000:00:04.0, 470.182.03\n"

    gpus, driver = query_nvidia_smi(run)
    assert len(calls) == 2
    assert driver == "470.182.03"
    assert gpus[0].name == "Tesla K80" and gpus[0].arch is None and gpus[0].memory_bytes == 11441 * 1024 * 1024


def test_nvidia_smi_absent_means_nothing():
    assert query_nvidia_smi(lambda argv: None) == ([], None)


@pytest.mark.parametrize("line,version", [
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023", "535.104.05"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  (dvs-builder@U16)",
     "575.57.08"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  177.80  Wed Oct  1 14:43:46 PDT 2008", "177.80"),
])
def test_nvidia_driver_version_line(line, version):
    assert parse_nvidia_driver_version(line) == version


def test_nvidia_from_proc_and_pci_without_tools():
    host = discover_host(root=ROOTS / "nvidia-a10g")
    (gpu,) = host.gpus
    assert gpu.vendor == "nvidia" and gpu.name == "NVIDIA A10G" and gpu.index == 0
    assert gpu.uuid == "GPU-82523fd8-3897-f599-d088-ccd04ae45ec1" and gpu.pci_bus == "0000:00:1e.0"
    assert gpu.source == "proc"
    assert host.nvidia_driver == "575.57.08"
    assert host.kernel == "6.8.0-1024-aws" and host.os == "Ubuntu 24.04.2 LTS"
    # The NVMe controller on the same bus is not a GPU.
    assert host.pci_gpus == (("nvidia", "0000:00:1e.0", "0x2237"),)


def test_proc_gpus_ordered_by_bus_like_nvidia_smi(tmp_path):
    for bus, minor, model in (("0000:81:00.0", 0, "B"), ("0000:01:00.0", 1, "A")):
        d = tmp_path / "proc/driver/nvidia/gpus" / bus
        d.mkdir(parents=True)
        (d / "information").write_text(f"Model: \t\t {model}\nDevice Minor: \t {minor}\nBus Location: \t {bus}\n")
    host = discover_host(root=tmp_path)
    assert [(g.index, g.name) for g in host.gpus] == [(0, "A"), (1, "B")]


@pytest.mark.parametrize("name,arch", [
    ("NVIDIA H100 80GB HBM3", "sm_90"), ("NVIDIA GH200 480GB", "sm_90"), ("NVIDIA A100-SXM4-80GB", "sm_80"),
    ("NVIDIA GeForce RTX 3090", "sm_86"), ("NVIDIA GeForce RTX 4090", "sm_89"), ("NVIDIA L40S", "sm_89"),
    ("NVIDIA L4", "sm_89"), ("Tesla V100-SXM2-16GB", "sm_70"), ("Tesla K80", None), ("NVIDIA A10G", None),
])
def test_arch_from_model_name(name, arch):
    assert nvidia_arch_from_name(name) == arch


def test_arch_looked_up_from_name_is_marked_as_such(tmp_path):
    d = tmp_path / "proc/driver/nvidia/gpus/0000:19:00.0"
    d.mkdir(parents=True)
    (d / "information").write_text("Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t 0000:19:00.0\n")
    (gpu,) = discover_host(root=tmp_path).gpus
    assert gpu.arch == "sm_90" and gpu.arch_source == "name"


@pytest.mark.parametrize("target,name", [(90402, "gfx942"), (90010, "gfx90a"), (110000, "gfx1100"),
                                         (110501, "gfx1151"), (120001, "gfx1201"), (90500, "gfx950"),
                                         (100300, "gfx1030")])
def test_gfx_name(target, name):
    assert gfx_name(target) == name


@pytest.mark.parametrize("value,name", [("11.0.0", "gfx1100"), ("10.3.0", "gfx1030"), ("9.4.2", "gfx942"),
                                        ("9.0.10", "gfx90a"), ("gfx1100", None)])
def test_gfx_from_override(value, name):
    assert gfx_from_override(value) == name


def test_kfd_mi325x():
    (gpu,) = amd_gpus_from_kfd(ROOTS / "amd-mi325x")
    assert gpu.arch == "gfx942" and gpu.render_node == "/dev/dri/renderD128"
    assert gpu.pci_bus == "0000:75:00.0"  # location_id 29952 = 0x7500
    assert gpu.memory_bytes == 206142726144  # local_mem_size (no mem_banks in this tree)
    assert gpu.uuid == f"GPU-{9895604649984:016x}"
    assert gpu.name == "AMD GPU gfx942 (0x74a0)"  # 'ip discovery' is not a name
    assert gpu.device_id == "0x74a0"


def test_kfd_rx7900xtx_memory_from_mem_banks():
    (gpu,) = amd_gpus_from_kfd(ROOTS / "amd-rx7900xtx")
    assert gpu.arch == "gfx1100" and gpu.render_node == "/dev/dri/renderD129"
    assert gpu.memory_bytes == 25753026560
    assert gpu.pci_bus == "0000:86:00.0"


def test_amd_host_discovery_reads_groups_driver_and_devices():
    host = discover_host(root=ROOTS / "amd-mi325x")
    assert host.dev_kfd and host.render_nodes == ("/dev/dri/renderD128",)
    assert host.amd_driver == "6.12.12"
    assert host.group_ids == {"video": 44, "render": 992}
    assert set(host.device_modes) == {"/dev/kfd", "/dev/dri/renderD128"}
    assert host.host_path("/dev/kfd") == str(ROOTS / "amd-mi325x" / "dev/kfd")
    assert host.vendor_gpus("amd")[0].arch == "gfx942" and not host.vendor_gpus("nvidia")


def test_amd_smi_static_text():
    blocks = parse_amd_smi_static((FIX / "amd_smi" / "rocm-systems-2987-mi350x.txt").read_text())
    assert len(blocks) == 1
    b = blocks[0]
    assert b["ASIC.MARKET_NAME"] == "AMD Instinct MI350X" and b["ASIC.TARGET_GRAPHICS_VERSION"] == "gfx950"
    assert b["BUS.BDF"] == "0000:05:00.0" and b["DRIVER.VERSION"] == "6.18.3"


def test_rocm_smi_json():
    cards = parse_rocm_smi_json((FIX / "rocm_smi" / "rocm_smi_lib-159-mi250x.json").read_text())
    assert cards["card0"]["card series"] == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2"
    assert cards["card0"]["gfx version"] == "gfx9010"  # rocm-smi's spelling of gfx90a: KFD stays authoritative


def test_amd_smi_names_merge_by_pci_bus(tmp_path):
    node = tmp_path / "sys/class/kfd/kfd/topology/nodes/1"
    node.mkdir(parents=True)
    (node / "properties").write_text("simd_count 512\ngfx_target_version 90500\nlocation_id 1280\ndomain 0\n"
                                     "drm_render_minor 128\n")
    recorded = (FIX / "amd_smi" / "rocm-systems-2987-mi350x.txt").read_text()
    seen = []

    def run(argv):
        seen.append(argv[0])
        return (0, recorded) if argv[0] == "amd-smi" else None

    host = discover_host(root=tmp_path, run=run)
    (gpu,) = host.gpus
    assert gpu.name == "AMD Instinct MI350X" and gpu.arch == "gfx950" and gpu.pci_bus == "0000:05:00.0"
    assert host.amd_driver == "6.18.3"  # no /sys/module/amdgpu/version in this tree: amd-smi's word
    assert "amd-smi" in seen


def test_pci_display_devices_skip_non_display_functions(tmp_path):
    for bus, vendor, klass in (("0000:01:00.0", "0x10de", "0x030000"), ("0000:01:00.1", "0x10de", "0x040300"),
                               ("0000:03:00.0", "0x1002", "0x038000"), ("0000:00:14.0", "0x8086", "0x0c0330")):
        d = tmp_path / "sys/bus/pci/devices" / bus
        d.mkdir(parents=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "class").write_text(klass + "\n")
        (d / "device").write_text("0x1234\n")
    assert pci_display_devices(tmp_path) == [("nvidia", "0000:01:00.0", "0x1234"), ("amd", "0000:03:00.0", "0x1234")]


@pytest.mark.parametrize("version,info", [(None, None), ([1], "x"), ({"Version": 5}, {"Runtimes": ["runc"]}),
                                          ({"ApiVersion": {"x": 1}}, {"SecurityOptions": "rootless"})])
def test_engine_payloads_of_the_wrong_shape_become_empty_facts(version, info):
    facts = engine_info_from_payloads(version, info)
    assert facts.runtimes == () and facts.security_options == () and not facts.rootless
    assert facts.api_version is None and facts.version in (None, "5")


class _CountingClient:
    """A docker.DockerClient stand-in that records the API version it was made with and the calls it gets."""

    def __init__(self, calls: list, version: str, payload: object):
        outer = self
        self.made_with, self.calls = version, calls

        class Api:
            def version(self, api_version=True):
                calls.append(("version", outer.made_with, api_version))
                return payload

            def info(self):
                calls.append(("info", outer.made_with))
                return {"Runtimes": {"runc": {}}}

        self.api = Api()

    def close(self):
        self.calls.append(("close", self.made_with))


def test_connect_asks_the_engine_its_version_once_and_describe_reuses_the_answer(monkeypatch):
    import docker

    from gpumatrix.engine.client import Engine

    calls: list = []
    payload = {"Version": "20.10.24+dfsg1", "ApiVersion": "1.41"}
    monkeypatch.setattr(docker, "from_env", lambda version, timeout: _CountingClient(calls, version, payload))
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
    engine = Engine.connect()
    assert engine.describe() == engine_info_from_payloads(payload, {"Runtimes": {"runc": {}}})
    # negotiated as docker-py's version="auto" does (the engine's ApiVersion), with one /version in all
    assert calls == [("version", "1.24", False), ("close", "1.24"), ("info", "1.41")]


def test_connect_without_an_api_version_in_the_answer_is_an_unreachable_engine(monkeypatch):
    import docker

    from gpumatrix.engine.client import Engine
    from gpumatrix.errors import EngineUnavailable

    monkeypatch.setattr(docker, "from_env", lambda version, timeout: _CountingClient([], version, {"Version": "x"}))
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
    with pytest.raises(EngineUnavailable, match='key "ApiVersion" is missing'):
        Engine.connect()


def test_engine_facts_rootless_desktop_cdi():
    info = engine_info_from_payloads(
        {"Version": "28.3.1", "ApiVersion": "1.51"},
        {"Runtimes": {"runc": {}, "nvidia": {}}, "SecurityOptions": ["name=seccomp,profile=builtin", "name=rootless"],
         "OperatingSystem": "Docker Desktop", "CDISpecDirs": ["/etc/cdi", "/var/run/cdi"]})
    facts = engine_facts(info, root=Path("/nonexistent"))
    assert facts["rootless"] and facts["docker_desktop"]
    assert facts["runtimes"] == ["nvidia", "runc"] and facts["cdi_spec_dirs"] == ["/etc/cdi", "/var/run/cdi"]


CDI_SPEC = """\
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
containerEdits:
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15
"""


def test_cdi_spec_summary_and_fingerprint(tmp_path):
    (tmp_path / "etc/cdi").mkdir(parents=True)
    (tmp_path / "etc/cdi/nvidia.yaml").write_text(CDI_SPEC)
    summary = summarise_cdi_spec(CDI_SPEC)
    assert summary["kind"] == "nvidia.com/gpu" and summary["devices"] == ["0", "all"]
    assert summary["driver_version"] == "570.86.15"
    host = discover_host(engine_info_from_payloads({"Version": "28.3.1", "ApiVersion": "1.51"},
                                                   {"Runtimes": {"runc": {}}}), root=tmp_path)
    fp = host.fingerprint()
    assert fp["cdi_specs"] == ["/etc/cdi/nvidia.yaml"]
    assert fp["cdi_nvidia_devices"] == ["0", "all"]
    assert fp["engine"]["version"] == "28.3.1" and fp["nvidia_runtime"] is False
    json.dumps(fp)  # goes into every result file


def test_fingerprint_has_what_results_need():
    host = discover_host(engine_info_from_payloads({"Version": "20.10.24"}, {"Runtimes": {"runc": {}, "nvidia": {}}}),
                         root=ROOTS / "amd-mi325x")
    fp = host.fingerprint()
    for key in ("gpus", "gpu_archs", "nvidia_driver", "amd_driver", "kernel", "engine", "nvidia_runtime",
                "nvidia_toolkit", "cdi_specs", "dev_kfd", "render_nodes"):
        assert key in fp
    assert fp["gpu_archs"] == ["gfx942"] and fp["nvidia_runtime"] is True and fp["amd_driver"] == "6.12.12"


def test_host_type_names_both_vendors_and_drivers():
    host = discover_host(root=ROOTS / "amd-mi325x")
    host2 = HostInfo(**{**host.__dict__, "gpus": host.gpus + discover_host(root=ROOTS / "nvidia-a10g").gpus,
                        "nvidia_driver": "575.57.08"})
    assert host2.host_type() == "AMD GPU gfx942 (0x74a0) + NVIDIA A10G · 575.57.08/6.12.12"


def test_one_version_type_reads_what_tools_print():
    assert release("580.95.05") == (580, 95, 5)
    assert release("20.10.24+dfsg1") == (20, 10, 24)
    assert release("28.0.1-ce") == (28, 0, 1)
    assert release("V12.8.93", 2) == (12, 8)
    assert release(None) == () and parse_version("no version") is None
    assert sorted(["2.10.0", "2.9.1", "2.9.0a0+rocm6.4", "junk"], key=version_key) == [
        "junk", "2.9.0a0+rocm6.4", "2.9.1", "2.10.0"]
    # digits of other scripts are no version (the fuzz test found "\U000112f0" crashing the parser)
    assert parse_version("\U000112f0") is None and parse_version("\u0663.\u0664") is None
    assert release("12.\U000112f0") == (12,) and version_key("\U000112f0") == (0, "\U000112f0")


def test_discovery_on_this_machine_does_not_crash():
    host = discover_host()
    fp = host.fingerprint()
    # what every result records about this host: plain JSON, naming this machine, its GPUs and no engine
    assert json.loads(json.dumps(fp)) == fp
    assert fp["hostname"] == socket.gethostname() and fp["kernel"] == platform.release()
    assert fp["machine"] == platform.machine()
    assert [(g["vendor"], g["name"]) for g in fp["gpus"]] == [(g.vendor, g.name) for g in host.gpus]
    assert host_type_label(fp) == host.host_type()
    assert (host.host_type() == "cpu") is (not host.gpus)
    assert fp["engine"]["version"] is None  # discovered without an engine: nothing made up
    assert host.dev_root == "/" and host.host_path("/dev/kfd") == "/dev/kfd"
