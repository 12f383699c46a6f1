"""``invoke doctor`` and ``preflight_cell``: driver floors, arch lists, passthrough, devices, disk, shm."""

from __future__ import annotations

import os
import stat
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from gpumatrix.config.matrix import RunOptions, expand_cells, load_matrix, parse_matrix
from gpumatrix.doctor.checks import check_amd, check_disk, check_shm
from gpumatrix.doctor.report import doctor_report
from gpumatrix.run.preflight import passthrough_blockers, preflight_cell
from gpumatrix.knowledge.archs import code_runs, torch_arch_list
from gpumatrix.knowledge.drivers import cuda_version_of_image, driver_need, max_cuda_for_driver
from gpumatrix.engine.client import engine_info_from_payloads
from gpumatrix.engine.models import EngineInfo
from gpumatrix.host import GPU, HostInfo, discover_host

ROOT = Path(__file__).parent.parent
FIX = Path(__file__).parent / "fixtures" / "host"

MATRIX = textwrap.dedent("""\
    schema_version: 1
    bases:
      - {id: cu126, vendor: nvidia, image: "nvidia/cuda:12.6.3-runtime-ubuntu24.04", variant: cu126, python: "3.12"}
      - {id: cu128, vendor: nvidia, image: "nvidia/cuda:12.8.1-runtime-ubuntu24.04", variant: cu128, python: "3.12"}
      - {id: cu130, vendor: nvidia, image: "nvidia/cuda:13.0.2-runtime-ubuntu24.04", variant: cu130, python: "3.12"}
      - {id: rocm7.2, vendor: amd, image: "rocm/dev-ubuntu-24.04:7.2.4", variant: rocm7.2, python: "3.12"}
      - {id: rdna2, vendor: amd, image: "rocm/dev-ubuntu-24.04:7.2.4", variant: rocm7.2, python: "3.12",
         hsa_override_gfx_version: "10.3.0"}
      - {id: cpu, vendor: cpu, image: "debian:bookworm-slim", variant: cpu}
    torch:
      - {version: "2.15.0", variants: [cpu, cu126, cu130, rocm7.2]}
      - {version: "2.10.0", variants: [cpu, cu126, cu128, cu130, rocm7.2]}
      - {version: "2.14.1"}
    """)


def cells(text: str = MATRIX):
    m = parse_matrix(text, Path("/tmp/matrix.yaml"))
    return m, {c.id: c for c in expand_cells(m).cells}


def nv_host(driver: str = "580.95.05", arch: str = "sm_90", name: str = "NVIDIA H100 80GB HBM3", n: int = 1,
            hook: bool = True, **kw) -> HostInfo:
    gpus = tuple(GPU("nvidia", i, name, arch, uuid=f"GPU-{i}") for i in range(n))
    return HostInfo(hostname="h", kernel="6.8", os="Ubuntu", machine="x86_64", gpus=gpus, nvidia_driver=driver,
                    engine={"version": "27.5.1", "api_version": "1.47", "runtimes": ["runc"]},
                    nvidia_toolkit={"nvidia-container-runtime-hook": "/usr/bin/nvidia-container-runtime-hook"}
                    if hook else {}, **kw)


def amd_host(arch: str = "gfx942", name: str = "AMD Instinct MI300X", **kw) -> HostInfo:
    g = GPU("amd", 0, name, arch, render_node="/dev/dri/renderD128")
    modes = {"/dev/kfd": (stat.S_IFCHR | 0o660, 0, 992), "/dev/dri/renderD128": (stat.S_IFCHR | 0o660, 0, 992)}
    kw.setdefault("engine", {"version": "27.5.1"})
    return HostInfo(hostname="h", kernel="6.8", os="Ubuntu", machine="x86_64", gpus=(g,), amd_driver="6.12.12",
                    dev_kfd=True, render_nodes=("/dev/dri/renderD128",), group_ids={"video": 44, "render": 992},
                    device_modes=modes, **kw)


# ---------------------------------------------------------------------------
# CUDA version and driver floors (from gpumatrix/data/cuda_drivers.yaml)


@pytest.mark.parametrize("image,variant,expected", [
    ("nvidia/cuda:13.0.2-runtime-ubuntu24.04", "cu130", ("13.0.2", "image tag")),
    ("nvcr.io/nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04", "cu128", ("12.8.1", "image tag")),
    ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "cu124", ("12.4", "image tag")),
    ("ubuntu:24.04", "cu130", ("13.0", "variant")),
    ("registry.local:5000/team/base@sha256:" + "a" * 64, "cu118", ("11.8", "variant")),
])
def test_cuda_version_of_base(image, variant, expected):
    assert cuda_version_of_image(image, variant) == expected


def test_driver_needs_from_the_data_file():
    need = driver_need("13.0.2")
    assert (need.full, need.ga, need.floor) == ("580.95.05", "580.65.06", "580")
    assert driver_need("12.8").full == "570.26" and driver_need("12.8").floor == "525.60.13"
    assert driver_need("13.4").full is None  # not confirmed in the data: no guess
    assert max_cuda_for_driver("535.104.05") == "12.2" and max_cuda_for_driver("580.95.05") == "13.0"


def test_old_driver_blocks_cuda13_cells_with_the_fix():
    _, cs = cells()
    reason = preflight_cell(cs["cu130-torch2.15.0"], nv_host(driver="535.104.05"))
    assert reason.startswith("host driver 535.104.05 < 580 needed by torch's cu130 wheels")
    assert "install NVIDIA driver >= 580.65.06" in reason and "nvidia-driver-580" in reason
    assert "CUDA <= 12.2, which driver 535.104.05 supports" in reason
    # cu126 on the same host: 535 is above CUDA 12's minor-version floor, but the nvidia/cuda:12.6.3
    # image's NVIDIA_REQUIRE_CUDA=cuda>=12.6 stops it unless disable_require is set.
    reason = preflight_cell(cs["cu126-torch2.15.0"], nv_host(driver="535.104.05"))
    assert "NVIDIA_REQUIRE_CUDA=cuda>=12.6" in reason and "disable_require" in reason
    assert preflight_cell(cs["cu126-torch2.15.0"], nv_host(driver="535.104.05"),
                          RunOptions(disable_require=True)) is None


def test_minor_version_compat_is_a_warning_not_a_blocker():
    m, cs = cells()
    host = nv_host(driver="580.65.06")  # 13.0 GA driver; 13.0.2 lists 580.95.05
    assert preflight_cell(cs["cu130-torch2.15.0"], host) is None
    text, ok = doctor_report(None, m, list(cs.values()), host=host)
    (line,) = [ln for ln in text.splitlines() if " driver cu130 " in ln]
    assert line.startswith("WARN") and "580.65.06 < 580.95.05" in line and "minor-version compatibility" in line


def test_cdi_mode_has_no_require_check():
    _, cs = cells()
    host = replace(nv_host(driver="560.35.03", hook=False),
                   engine={"version": "28.3.1", "runtimes": ["runc"]},
                   cdi_specs={"/etc/cdi/nvidia.yaml": {"kind": "nvidia.com/gpu", "devices": ["0", "all"],
                                                       "driver_version": "560.35.03"}})
    # cu128 image 12.8.1 on driver 560 (CUDA 12.6): through CDI nothing enforces NVIDIA_REQUIRE_CUDA.
    assert preflight_cell(cs["cu128-torch2.10.0"], host) is None


# ---------------------------------------------------------------------------
# Arch lists (from gpumatrix/data/torch_archs.yaml)


def test_arch_lists_by_version_range():
    assert torch_arch_list("2.15.0", "cu130") == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert "compute_120" in torch_arch_list("2.10.0", "cu130")
    assert "gfx1100" in torch_arch_list("2.14.1", "rocm7.2")
    assert torch_arch_list("2.15.0", "cu118") is None


@pytest.mark.parametrize("gpu,archs,match", [
    ("sm_90", ["sm_80", "sm_90"], "exact"),
    ("sm_89", ["sm_80", "sm_86", "sm_90"], "binary_compatible"),
    ("sm_121", ["sm_100", "sm_120"], "binary_compatible"),
    ("sm_103", ["sm_100", "sm_120"], "binary_compatible"),
    ("sm_70", ["sm_75", "sm_80"], "none"),
    ("sm_130", ["sm_90", "compute_120"], "ptx_jit"),
    ("sm_120", ["sm_90", "sm_100"], "none"),  # sm_100 SASS does not run on sm_120
    # Where the three old copies of the rule disagreed (doctor, diagnose, probes):
    ("sm_90", ["sm_80", "sm_90a"], "exact"),  # arch-specific sm_90a code runs on exactly 9.0
    ("sm_100", ["sm_90a"], "none"),  # ... and nowhere else
    ("sm_87", ["sm_80"], "none"),  # Orin (integrated) is not binary compatible with discrete sm_80
    ("sm_86", ["sm_80"], "binary_compatible"),
])
def test_doctor_uses_the_one_arch_rule(gpu, archs, match):
    from gpumatrix.probes.archs import arch_compatibility
    assert code_runs(gpu, archs)["match"] == match
    assert arch_compatibility(gpu, archs)["match"] == match


def test_volta_cannot_run_new_cu130_wheels():
    _, cs = cells()
    host = nv_host(arch="sm_70", name="Tesla V100-SXM2-16GB")
    reason = preflight_cell(cs["cu130-torch2.15.0"], host)
    assert "torch 2.15.0+cu130 has no kernels for sm_70 (Tesla V100-SXM2-16GB)" in reason
    assert "sm_75, sm_80" in reason
    assert preflight_cell(cs["cu126-torch2.15.0"], host) is None  # cu126 still ships sm_70


def test_consumer_amd_card_needs_the_override():
    _, cs = cells()
    host = amd_host(arch="gfx1031", name="AMD Radeon RX 6700 XT")
    reason = preflight_cell(cs["rocm7.2-torch2.14.1"], host)
    assert "no kernels for gfx1031" in reason and "hsa_override_gfx_version" in reason
    assert preflight_cell(cs["rdna2-torch2.14.1"], host) is None  # 10.3.0 → gfx1030, which is compiled in


def test_mixed_multi_gpu_host_warns_when_only_some_fit():
    m, cs = cells()
    gpus = (GPU("nvidia", 0, "NVIDIA H100 80GB HBM3", "sm_90"), GPU("nvidia", 1, "Tesla V100-SXM2-16GB", "sm_70"))
    host = replace(nv_host(), gpus=gpus)
    assert preflight_cell(cs["cu130-torch2.15.0"], host) is None
    text, _ = doctor_report(None, m, [cs["cu130-torch2.15.0"]], host=host)
    assert "WARN  arch cu130-torch2.15.0" in text and "(GPUs 0 fit)" in text


# ---------------------------------------------------------------------------
# Passthrough and device problems


def test_no_toolkit_is_one_message_for_all_nvidia_cells():
    _, cs = cells()
    host = nv_host(hook=False)
    reasons = {preflight_cell(c, host) for c in cs.values() if c.vendor == "nvidia" and c.applicable}
    assert len(reasons) == 1
    (reason,) = reasons
    assert "no NVIDIA passthrough mode works" in reason and "invoke doctor" in reason
    blockers = passthrough_blockers(cs.values(), host)
    assert len(blockers) == 1 and "nvidia-ctk runtime configure" in blockers[0]


def test_gpu_on_pci_without_driver():
    _, cs = cells()
    host = discover_host(root=FIX / "roots" / "nvidia-a10g")
    host = replace(host, gpus=(), nvidia_driver=None)  # as if the module were not loaded
    reason = preflight_cell(cs["cu130-torch2.15.0"], host)
    assert reason.startswith("NVIDIA GPU at 0000:00:1e.0 but its driver (nvidia) is not loaded")


def test_no_gpu_of_the_vendor_is_left_to_the_skip():
    _, cs = cells()
    empty = HostInfo(hostname="h", kernel="k", os="o", machine="x86_64")
    assert all(preflight_cell(c, empty) is None for c in cs.values())


def test_docker_desktop_and_missing_kfd():
    _, cs = cells()
    desktop = amd_host(engine={"docker_desktop": True})
    assert "Docker Desktop" in preflight_cell(cs["rocm7.2-torch2.14.1"], desktop)
    nokfd = replace(amd_host(), dev_kfd=False)
    assert "no /dev/kfd" in preflight_cell(cs["rocm7.2-torch2.14.1"], nokfd)


@pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod of character devices needs root")
def test_device_permissions_from_real_nodes(tmp_path):
    root = tmp_path
    (root / "dev/dri").mkdir(parents=True)
    os.mknod(root / "dev/kfd", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    os.mknod(root / "dev/dri/renderD128", stat.S_IFCHR | 0o660, os.makedev(1, 5))
    os.chown(root / "dev/dri/renderD128", 0, 4343)
    os.chmod(root / "dev/dri/renderD128", 0o660)  # mknod's mode is masked by the umask
    (root / "etc").mkdir()
    (root / "etc/group").write_text("video:x:44:\nrender:x:4343:\n")
    host = discover_host(root=root)
    by_name = {c.name: c for c in check_amd(host, [], RunOptions())}
    assert by_name["amd /dev/kfd"].status == "fail" and "crw-------" in by_name["amd /dev/kfd"].detail
    assert 'KERNEL=="kfd", GROUP="render", MODE="0660"' in by_name["amd /dev/kfd"].fix
    assert by_name["amd /dev/dri/renderD128"].status == "pass"
    assert "gid 4343 (render)" in by_name["amd /dev/dri/renderD128"].detail


# ---------------------------------------------------------------------------
# Disk and shm


def test_disk_counts_only_cells_built_here(tmp_path):
    _, cs = cells()
    cpu_only = HostInfo(hostname="h", kernel="k", os="o", machine="x86_64")
    check = check_disk(EngineInfo(docker_root_dir=str(tmp_path)), list(cs.values()), cpu_only)
    assert check.status in ("pass", "warn") and "roughly 4 GiB" in check.detail  # 3 CPU cells + one base
    assert check_disk(EngineInfo(docker_root_dir="/nonexistent/docker"), list(cs.values())).status == "skip"


def test_shm_checks():
    host = HostInfo(hostname="h", kernel="k", os="o", machine="x86_64", mem_total_bytes=8 * 1024 ** 3,
                    dev_shm_bytes=512 * 1024 ** 2)
    assert check_shm(host, RunOptions(shm_size="64m")).status == "warn"
    assert check_shm(host, RunOptions(shm_size="6g")).status == "warn"  # more than half the memory
    assert check_shm(host, RunOptions(shm_size="2g")).status == "pass"
    assert check_shm(host, RunOptions(ipc="host")).status == "warn"  # the host's /dev/shm is 512 MiB


# ---------------------------------------------------------------------------
# The report


class FakeEngine:
    """The call doctor makes, answering with this project's real engine's recorded payloads."""

    def describe(self):
        return engine_info_from_payloads(
            {"Version": "20.10.24+dfsg1", "ApiVersion": "1.41", "Os": "linux", "Arch": "amd64"},
            {"Runtimes": {"runc": {}}, "DockerRootDir": "/nonexistent", "SecurityOptions": [],
             "OperatingSystem": "Debian GNU/Linux 12 (bookworm)"})


def test_report_marks_failures_with_fixes():
    m, cs = cells()
    host = nv_host(driver="535.104.05", hook=False)
    text, ok = doctor_report(FakeEngine(), m, list(cs.values()), host=host)
    assert not ok
    assert "PASS  engine" in text and "Docker 20.10.24+dfsg1 (API 1.41)" in text
    assert "FAIL  nvidia passthrough" in text and "fix: install the NVIDIA Container Toolkit" in text
    assert "FAIL  driver cu130" in text and "SKIP  amd passthrough" in text
    assert text.rstrip().splitlines()[-1].endswith("skip")


def test_report_on_a_good_nvidia_host_is_ok():
    m, cs = cells()
    only_cu130 = [c for c in cs.values() if c.base.id in ("cu130", "cpu")]
    text, ok = doctor_report(FakeEngine(), m, only_cu130, host=nv_host())
    assert ok, text
    assert "PASS  nvidia passthrough" in text and "mode gpus" in text
    assert "PASS  driver cu130" in text and "PASS  arch cu130-torch2.15.0" in text


def test_report_without_engine_fails_on_it():
    m, cs = cells()
    text, ok = doctor_report(None, m, list(cs.values()), host=HostInfo("h", "k", "o", "x86_64"))
    assert not ok and "FAIL  engine" in text and "systemctl start docker" in text


@pytest.mark.engine
def test_doctor_on_the_real_engine_and_shipped_matrix(engine):
    m = load_matrix(ROOT / "matrix.yaml")
    all_cells = list(expand_cells(m).cells)
    text, ok = doctor_report(engine, m, all_cells)
    assert "PASS  engine" in text and engine.describe().version in text
    if not discover_host().gpus:
        assert "no NVIDIA or AMD GPU on this host" in text and ok == ("FAIL" not in text)
