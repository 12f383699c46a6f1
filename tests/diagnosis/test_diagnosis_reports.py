"""Pasted reports are facts: each parser on a real report (source cited), and fuzzed."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpumatrix.diagnose import diagnose, facts_from_reports
from gpumatrix.diagnose.reports import (PARSERS, parse_amd_tools, parse_apt, parse_collect_env, parse_docker,
                                        parse_nvidia_smi, parse_pip)
from gpumatrix.diagnose.text import clean_lines


def lines(text: str) -> list[str]:
    return clean_lines(text)


# https://github.com/pytorch/pytorch/issues/43058
COLLECT_ENV_CUDA_10_2 = """\
Collecting environment information...
PyTorch version: 1.6.0
Is debug build: No
CUDA used to build PyTorch: 10.2

OS: Red Hat Enterprise Linux Server 7.6 (Maipo)
GCC version: (GCC) 4.8.5 20150623 (Red Hat 4.8.5-36)
CMake version: Could not collect

Python version: 3.7
Is CUDA available: No
CUDA runtime version: Could not collect
GPU models and configuration:
GPU 0: Tesla V100-PCIE-16GB
GPU 1: Tesla V100-PCIE-16GB

Nvidia driver version: 418.67
cuDNN version: Could not collect
"""

# https://github.com/pytorch/pytorch/issues/122924
COLLECT_ENV_CPU_WHEEL_WITH_GPU = """\
Collecting environment information...
PyTorch version: 2.2.2
Is debug build: False
CUDA used to build PyTorch: Could not collect
ROCM used to build PyTorch: N/A

OS: Microsoft Windows 11 Education
GCC version: Could not collect
Clang version: Could not collect
CMake version: Could not collect
Libc version: N/A

Python version: 3.10.13 | packaged by Anaconda, Inc. | (main, Sep 11 2023, 13:24:38) [MSC v.1916 64 bit (AMD64)] (64-bit runtime)
Python platform: Windows-10-10.0.22631-SP0
Is CUDA available: False
CUDA runtime version: 12.4.99
CUDA_MODULE_LOADING set to: N/A
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4080 Laptop GPU
Nvidia driver version: 551.86
cuDNN version: Could not collect
HIP runtime version: N/A
MIOpen runtime version: N/A
"""

# https://github.com/pytorch/pytorch/issues/152941
COLLECT_ENV_ROCM = """\
Collecting environment information...
PyTorch version: 2.7.0+rocm6.3
Is debug build: False
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: 6.3.42131-fa1d09cbd

OS: Ubuntu 24.04.2 LTS (x86_64)
Python platform: Linux-5.19.0-46-generic-x86_64-with-glibc2.39
Is CUDA available: True
CUDA runtime version: Could not collect
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration: AMD Instinct MI100 (gfx908:sramecc+:xnack-)
Nvidia driver version: Could not collect
cuDNN version: Could not collect
HIP runtime version: 6.3.42131
MIOpen runtime version: 3.3.0
"""


def test_collect_env_cuda_build():
    facts = parse_collect_env(lines(COLLECT_ENV_CUDA_10_2))
    assert facts["torch_cuda"] == "10.2" and facts["torch_hip"] is None
    assert facts["torch_cuda_available"] is False
    assert facts["gpu_listed"] is True and facts["host_gpu_vendors"] == ["nvidia"]
    assert facts["host_driver_version"] == "418.67" and facts["host_os"] == "linux"


def test_collect_env_driver_older_than_the_cuda_torch_was_built_with():
    result = diagnose(COLLECT_ENV_CUDA_10_2)
    assert result.cause == "driver_too_old" and result.rule == "facts-driver-too-old"
    assert "418.67 < 440.33" in result.evidence and "CUDA 10.2" in result.evidence


def test_collect_env_cpu_wheel_on_a_gpu_machine():
    facts = parse_collect_env(lines(COLLECT_ENV_CPU_WHEEL_WITH_GPU))
    assert facts["torch_cuda"] is None and facts["torch_hip"] is None and facts["host_os"] == "windows"
    result = diagnose(COLLECT_ENV_CPU_WHEEL_WITH_GPU)
    assert result.cause == "cpu_only_build" and result.rule == "facts-cpu-only-build-reported"


def test_collect_env_rocm_build():
    facts = parse_collect_env(lines(COLLECT_ENV_ROCM))
    assert facts["torch_hip"] == "6.3" and facts["torch_cuda"] is None
    assert facts["device_arch"] == "gfx908" and facts["host_gpu_vendors"] == ["amd"]
    assert facts["torch_cuda_available"] is True
    assert "host_driver_version" not in facts  # "Could not collect" on a ROCm build says nothing


def test_windows_driver_numbers_are_not_judged_against_linux_minimums():
    # https://github.com/pytorch/pytorch/issues/40682: Windows driver 442.92 for CUDA 10.1 works
    text = ("PyTorch version: 1.5.0+cu101\nIs debug build: No\nCUDA used to build PyTorch: 10.1\n\n"
            "OS: Microsoft Windows Server 2019 Standard\nIs CUDA available: Yes\n"
            "GPU models and configuration:\nGPU 0: TITAN RTX\nGPU 1: TITAN RTX\n\nNvidia driver version: 442.92\n")
    assert diagnose(text).cause == "unknown"


# https://github.com/NVIDIA/k8s-device-plugin/issues/382
NVIDIA_SMI = """\
Fri Feb 17 16:56:54 2023
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 510.85.02    Driver Version: 510.85.02    CUDA Version: 11.6     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A40-4Q       On   | 00000000:02:00.0 Off |                    0 |
| N/A   N/A    P0    N/A /  N/A |      0MiB /  4096MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""

# https://github.com/pytorch/pytorch/issues/84550 (WSL2: Linux tool 515.65.01, Windows driver 516.94)
NVIDIA_SMI_WSL = """\
| NVIDIA-SMI 515.65.01    Driver Version: 516.94       CUDA Version: 11.6     |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  On   | 00000000:0A:00.0  On |                  N/A |
| 69%   66C    P2   277W / 370W |   6700MiB / 24576MiB |    100%      Default |
"""

# https://github.com/NVIDIA/nvidia-docker/issues/954
NVIDIA_SMI_Q = """\
==============NVSMI LOG==============

Timestamp                           : Sun Apr 14 18:55:20 2019
Driver Version                      : 396.54

Attached GPUs                       : 1
GPU 00000000:01:00.0
    Product Name                    : GeForce GTX 1080
    Product Brand                   : GeForce
    Display Mode                    : Enabled
"""

# https://github.com/NVIDIA/DIGITS/issues/2005
NVIDIA_SMI_EXCLUSIVE = """\
Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable
| NVIDIA-SMI 375.26                 Driver Version: 375.26                    |
|===============================+======================+======================|
|   0  Tesla K40m          On   | 0000:04:00.0     Off |                    0 |
| N/A   35C    P0    63W / 235W |     74MiB / 11439MiB |      0%   E. Process |
"""


def test_nvidia_smi_table():
    facts = parse_nvidia_smi(lines(NVIDIA_SMI))
    assert facts["host_driver_version"] == "510.85.02" and facts["driver_cuda_version"] == "11.6"
    assert facts["gpu_listed"] is True and facts["host_gpu_vendors"] == ["nvidia"]
    assert facts["compute_mode"] == "default" and facts["report_kinds"] == ["nvidia-smi"]


def test_nvidia_smi_under_wsl_is_recognised():
    assert parse_nvidia_smi(lines(NVIDIA_SMI_WSL))["host_os"] == "wsl"


def test_nvidia_smi_q():
    facts = parse_nvidia_smi(lines(NVIDIA_SMI_Q))
    assert facts["host_driver_version"] == "396.54" and facts["gpu_listed"] is True
    assert facts["report_kinds"] == ["nvidia-smi -q"]


def test_nvidia_smi_compute_mode_decides_busy_devices():
    result = diagnose(NVIDIA_SMI_EXCLUSIVE)
    assert result.cause == "runtime_init_failure" and result.rule == "facts-compute-mode-exclusive"
    assert "exclusive_process" in result.evidence


def test_nvidia_smi_driver_against_an_image_cuda():
    # the driver of the table above with a CUDA 12.8 image: the facts name both versions
    result = diagnose(NVIDIA_SMI, {"image_cuda": "12.8"})
    assert result.cause == "driver_too_old"
    assert result.evidence.startswith("host driver 510.85.02 < 570.26 required by CUDA 12.8")


# https://github.com/ROCm/rocminfo/issues/20
ROCMINFO_NOT_LOADED = """\
fireburn@axion ~ $ rocminfo
ROCk module is NOT loaded, possibly no GPU devices
fireburn is member of video group
=====================
HSA System Attributes
=====================
"""

# https://github.com/ROCm/hip/issues/3465
ROCMINFO_GPU = """\
$ rocminfo
ROCk module is loaded
GPU:
  Name:                    gfx1100
  Marketing Name:          Radeon RX 7900 XTX
      Name:                    amdgcn-amd-amdhsa--gfx1100
"""

# https://github.com/pytorch/pytorch/issues/131901
ROCM_SMI = """\
======================================= ROCm System Management Interface =======================================
================================================= Concise Info =================================================
Device  [Model : Revision]    Temp    Power   Partitions      SCLK     MCLK     Fan  Perf  PwrCap  VRAM%  GPU%
        Name (20 chars)       (Edge)  (Avg)   (Mem, Compute)
================================================================================================================
0       [0x0c34 : 0x02]       37.0°C  42.0W   N/A, N/A        800Mhz   1600Mhz  0%   auto  300.0W    0%   0%
        Instinct MI210
1       [0x0c34 : 0x02]       39.0°C  43.0W   N/A, N/A        800Mhz   1600Mhz  0%   auto  300.0W    0%   0%
        Instinct MI210
"""


def test_rocminfo_driver_not_loaded():
    facts = parse_amd_tools(lines(ROCMINFO_NOT_LOADED))
    assert facts["amd_driver_loaded"] is False and facts["report_kinds"] == ["rocminfo"]
    assert diagnose(ROCMINFO_NOT_LOADED).cause == "driver_not_loaded"


# ROCm/ROCm-docker#65 (batch 211 train): an old rocminfo in a container without lsmod
ROCMINFO_NO_LSMOD = """\
sh: 1: lsmod: not found
ROCk module is NOT loaded, possibly no GPU devices
Failed to get user name to check for video group membership
"""


def test_rocminfo_without_lsmod_says_nothing_of_the_module():
    # the old rocminfo asked lsmod; without it the NOT-loaded line is no evidence, so no fact and no fact rule
    facts = parse_amd_tools(lines(ROCMINFO_NO_LSMOD))
    assert "amd_driver_loaded" not in facts and facts["report_kinds"] == ["rocminfo"]
    assert diagnose(ROCMINFO_NO_LSMOD).rule != "facts-amd-driver-not-loaded"
    # lsmod present (or its absence not shown): the line is the fact, as before; a user's own shell missing lsmod
    # says nothing of rocminfo 5.5+, which reads /sys/module (review)
    assert parse_amd_tools(lines(ROCMINFO_NO_LSMOD.replace("sh: 1: lsmod: not found\n", "")))["amd_driver_loaded"] is False
    assert parse_amd_tools(lines("$ lsmod | grep amdgpu\nbash: lsmod: command not found\n"
                                 "ROCk module is NOT loaded, possibly no GPU devices\n"))["amd_driver_loaded"] is False
    assert parse_amd_tools(lines("/bin/sh: lsmod: command not found\nROCk module is loaded\n"))["amd_driver_loaded"] is True


def test_rocminfo_listing_an_agent_outweighs_its_module_line():
    # ROCm/legacy-rocm-build#1227: lsmod's libkmod died, rocminfo said NOT loaded and then listed the gfx906 agent,
    # which only a working KFD gives: no driver fact either way, and not the driver-not-loaded fact rule
    text = ("libkmod: ERROR ../libkmod/libkmod-module.c:1657 kmod_module_new_from_loaded: could not open /proc/modules\n"
            "ROCk module is NOT loaded, possibly no GPU devices\nHSA System Attributes\n  Name:                    "
            "gfx906\n")
    facts = parse_amd_tools(lines(text))
    assert "amd_driver_loaded" not in facts and facts["device_arch"] == "gfx906"
    assert diagnose(text).rule != "facts-amd-driver-not-loaded"


def test_rocminfo_lists_the_gpu_arch():
    facts = parse_amd_tools(lines(ROCMINFO_GPU))
    assert facts["amd_driver_loaded"] is True and facts["device_arch"] == "gfx1100"
    assert facts["host_gpu_vendors"] == ["amd"] and facts["gpu_listed"] is True


def test_rocm_smi_concise_info():
    facts = parse_amd_tools(lines(ROCM_SMI))
    assert facts["gpu_listed"] is True and facts["report_kinds"] == ["rocm-smi"]


def test_amd_smi_target():
    # amd-smi static prints TARGET_GRAPHICS_VERSION per GPU (format as documented by ROCm/amdsmi)
    facts = parse_amd_tools(lines("GPU: 0\n    ASIC:\n        TARGET_GRAPHICS_VERSION: gfx942\n"))
    assert facts["device_arch"] == "gfx942" and facts["report_kinds"] == ["amd-smi"]


# https://github.com/docker/for-linux/issues/1531
DOCKER_INFO = """\
(base) js22bp@js22bp-MS-7D98:~$ docker info | grep -i runtime
WARNING: daemon is not using the default seccomp profile
 Runtimes: io.containerd.runc.v2 runc
 Default Runtime: runc
"""

# https://github.com/l1na-forever/stable-diffusion-rocm-docker/issues/8
DOCKER_RUN_KFD = ('docker: Error response from daemon: error gathering device information while adding custom '
                  'device "/dev/kfd": no such file or directory.')


def test_docker_info_runtimes():
    facts = parse_docker(lines(DOCKER_INFO))
    assert facts["engine_runtimes"] == ["io.containerd.runc.v2", "runc"]
    assert facts["engine_default_runtime"] == "runc"


def test_docker_info_without_nvidia_runtime_and_a_gpu_request():
    # the request: https://github.com/NVIDIA/nvidia-docker/issues/1352
    request = ('I get the following issue when running: docker run --gpus 2 nvidia/cuda:10.2-base nvidia-smi\n'
               '**docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].**')
    result = diagnose(DOCKER_INFO + request)
    assert result.cause == "container_toolkit_missing" and result.rule == "facts-engine-no-nvidia-runtime"


def test_docker_run_missing_host_device():
    facts = parse_docker(lines(DOCKER_RUN_KFD))
    assert facts["host_missing_devices"] == ["/dev/kfd"] and facts["dev_kfd_present"] is False
    assert diagnose(DOCKER_RUN_KFD).cause == "driver_not_loaded"


# https://github.com/pytorch/pytorch/issues/51723
PIP_UNREACHABLE = """\
`WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7ff99f4f7970>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /whl/torch_stable.html`
ERROR: Could not find a version that satisfies the requirement torch==1.7.1+cu110
ERROR: No matching distribution found for torch==1.7.1+cu110
"""

# https://github.com/zeyad-mansour/lunar/issues/176
PIP_LOCAL_VERSION_ON_PYPI = """\
ERROR: Could not find a version that satisfies the requirement torch==1.11.0+cu113 (from versions: none)
ERROR: No matching distribution found for torch==1.11.0+cu113
"""

# https://github.com/YassineYousfi/comma10k-baseline/issues/13
PIP_VERSION_GONE = """\
ERROR: Could not find a version that satisfies the requirement torch==1.8.1 (from versions: 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1, 2.4.0, 2.4.1, 2.5.0, 2.5.1, 2.6.0, 2.7.0, 2.7.1, 2.8.0)
ERROR: No matching distribution found for torch==1.8.1
"""

# https://github.com/pytorch/TensorRT/issues/1151 (the log ends before "No matching distribution found")
PIP_FROM_REQUIREMENTS_FILE = """\
Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu113
ERROR: Could not find a version that satisfies the requirement torch==1.11.0+cu113 (from -r requirements.txt (line 4)) (from versions: 0.1.7.post2, 1.9.0, 1.9.0+cpu, 1.9.0+cu102, 1.9.0+cu111, 1.9.0+rocm4.0.1)
"""


def test_pip_index_unreachable_names_the_index():
    facts = parse_pip(lines(PIP_UNREACHABLE))
    assert facts["pip_failure"] == "index_unreachable"
    result = diagnose(PIP_UNREACHABLE)
    assert result.cause == "index_unreachable" and result.rule == "facts-pip-index-unreachable"


def test_pip_local_version_is_only_on_the_pytorch_index():
    result = diagnose(PIP_LOCAL_VERSION_ON_PYPI)
    assert result.cause == "package_unavailable" and result.rule == "facts-pip-variant-missing"
    assert "download.pytorch.org/whl/cu113" in result.evidence


def test_pip_version_that_the_index_does_not_offer():
    result = diagnose(PIP_VERSION_GONE)
    assert result.cause == "package_unavailable" and result.rule == "facts-pip-version-missing"
    assert "torch 1.8.1 is not offered" in result.evidence and "2.8.0" in result.evidence


def test_pip_requirement_from_the_first_error_line_alone():
    facts = parse_pip(lines(PIP_FROM_REQUIREMENTS_FILE))
    assert facts["pip_requirement"] == "torch==1.11.0+cu113"
    assert facts["pip_indexes"] == ["https://pypi.org/simple", "https://download.pytorch.org/whl/cu113"]
    assert facts["pip_failure"] in {"no_wheel", "version_missing", "variant_missing", "python_missing"}
    assert diagnose(PIP_FROM_REQUIREMENTS_FILE).cause == "package_unavailable"
    # "(from versions: ...)" is read after pip's note on where the requirement came from
    assert parse_pip(lines(PIP_FROM_REQUIREMENTS_FILE.replace("torch==1.11.0+cu113", "torch==1.10.5")))[
        "pip_detail"].startswith("torch 1.10.5 is not offered here")

def test_pip_variant_a_release_does_not_have_uses_the_release_data():
    # constructed: the message of https://github.com/trungpx/xmdpt/issues/2 for a release the data knows
    text = ("Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu118\n"
            "ERROR: No matching distribution found for torch==2.9.1+cu118\n")
    result = diagnose(text)
    assert result.rule == "facts-pip-variant-missing"
    assert "torch 2.9.1 has no cu118 wheel" in result.evidence


def test_pip_python_the_release_has_no_wheel_for():
    # constructed in pip's format (no real message yet): the data says torch 2.4.0 ships for 3.8-3.12
    text = ("  File \"/usr/lib/python3.13/site-packages/pip/_internal/cli/base_command.py\"\n"
            "ERROR: No matching distribution found for torch==2.4.0\n")
    facts = parse_pip(lines(text))
    assert facts["pip_failure"] == "python_missing", facts
    assert diagnose(text).rule == "facts-pip-python-missing"


# https://github.com/alexbers/mtprotoproxy/issues/212
APT_UNREACHABLE = """\
Err:1 http://deb.debian.org/debian buster InRelease
  Temporary failure resolving 'deb.debian.org'
E: Unable to locate package libcap2-bin
"""

# https://github.com/NVIDIA/nvidia-docker/issues/972
APT_MISSING = "E: Package 'nvidia-docker2' has no installation candidate\n"


def test_apt_network_failure_beats_the_missing_package_it_causes():
    facts = parse_apt(lines(APT_UNREACHABLE))
    assert facts == {"apt_unreachable_host": "deb.debian.org", "apt_missing_packages": ["libcap2-bin"],
                     "report_kinds": ["apt"]}
    result = diagnose(APT_UNREACHABLE)
    assert result.cause == "index_unreachable" and "deb.debian.org" in result.evidence


@pytest.mark.parametrize(("line", "host"), [
    # apt's own words name a host with a dot, or a host and its port (batch 23's apt lines, a proxy by name)
    ("Could not connect to in.archive.ubuntu.com:80 (91.189.88.161), connection timed out", "in.archive.ubuntu.com"),
    ("Unable to connect to in.archive.ubuntu.com:http: [IP: 91.189.88.161 80]", "in.archive.ubuntu.com"),
    ("Could not connect to aptproxy:3142 (10.0.0.2), connection timed out", "aptproxy"),
    # other programs' "connect to" sentences name no apt host (NVIDIA/DCGM#43, batch 50's train side: DCGM's
    # host engine, which is a daemon, not a repository; boto's endpoint)
    ("Error: Unable to connect to host engine. Host engine connection invalid/disconnected.", None),
    ("botocore.exceptions.EndpointConnectionError: Could not connect to the endpoint URL", None),
])
def test_apt_unreachable_host_is_a_host_name_not_a_word(line, host):
    assert parse_apt(lines(line + "\n")).get("apt_unreachable_host") == host


# https://github.com/iot-salzburg/gpu-jupyter/issues/78
APT_KEY = (
    "W: GPG error: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2004/x86_64  InRelease: The "
    "following signatures couldn't be verified because the public key is not available: NO_PUBKEY A4B469963BF863CC\n"
)


def test_apt_repository_without_its_key():
    assert parse_apt(lines(APT_KEY)) == {"apt_untrusted_host": "developer.download.nvidia.com",
                                         "report_kinds": ["apt"]}
    # apt's two-line form (as in APT_UNREACHABLE above): the host is on the Err line
    two_lines = ("Err:1 https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2004/x86_64  InRelease\n"
                 "  The following signatures couldn't be verified because the public key is not available: "
                 "NO_PUBKEY A4B469963BF863CC\n")
    assert parse_apt(lines(two_lines))["apt_untrusted_host"] == "developer.download.nvidia.com"
    assert parse_apt(lines("NO_PUBKEY A4B469963BF863CC\n"))["apt_untrusted_host"] == "an apt repository"
    # a key that expired (ROCm/legacy-rocm-build#487, train side of extra3): the repository is refused the same way
    expired = ("Err:4 http://repo.radeon.com/rocm/apt/debian xenial InRelease\n"
               "  The following signatures were invalid: KEYEXPIRED 1533155360  KEYEXPIRED 1533155360\n")
    assert facts_from_reports(lines(expired))["apt_untrusted_host"] == "repo.radeon.com"


def test_apt_missing_package():
    result = diagnose(APT_MISSING)
    assert result.cause == "package_unavailable" and "nvidia-docker2" in result.evidence


def test_given_facts_win_over_facts_read_from_text():
    assert facts_from_reports(lines(NVIDIA_SMI))["host_driver_version"] == "510.85.02"
    result = diagnose(NVIDIA_SMI, {"image_cuda": "12.8", "host_driver_version": "575.57.08"})
    assert result.cause == "unknown"


# ---------------------------------------------------------------- hostile input

REPORT_FRAGMENTS = [line for text in (COLLECT_ENV_CUDA_10_2, NVIDIA_SMI, NVIDIA_SMI_Q, ROCMINFO_GPU, ROCM_SMI,
                                      DOCKER_INFO, PIP_UNREACHABLE, PIP_VERSION_GONE, APT_UNREACHABLE)
                    for line in text.splitlines()]


@pytest.mark.parametrize("parse", PARSERS, ids=lambda p: p.__name__)
@settings(max_examples=150, deadline=None)
@given(data=st.lists(st.one_of(st.sampled_from(REPORT_FRAGMENTS), st.text(max_size=200)), max_size=40))
def test_parsers_never_raise_on_shuffled_fragments(parse, data):
    facts = parse(lines("\n".join(data)))
    assert isinstance(facts, dict)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=4000))
def test_all_parsers_on_random_bytes(data):
    facts = facts_from_reports(lines(data.decode("utf-8", "replace")))
    assert isinstance(facts, dict)


def _parse_time(text: str) -> float:
    best = float("inf")
    for _ in range(3):  # best of three: scheduling noise only ever adds time
        start = time.perf_counter()
        facts_from_reports(lines(text))
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("unit", [
    "PyTorch version: " + "9" * 300 + "\n",
    "| NVIDIA-SMI 1.1 Driver Version: " + "1." * 200 + "\n",
    "ERROR: Could not find a version that satisfies the requirement torch (from versions: " + "1.0, " * 700 + "\n",
    "ERROR: Could not find a version that satisfies the requirement torch (from -r " + "a(" * 150 + "\n",
    "Failed to fetch http://" + "a" * 90 + "/" + "x" * 290 + "   \n",
    "GPU[0] : gfx" + "9" * 4000 + "\n",
])
def test_parsers_are_linear_time(unit):
    small, large = unit * 200, unit * 2000
    t_small, t_large = _parse_time(small), _parse_time(large)
    # 10x the input may cost at most ~25x the time (noise margin), and the large one stays fast
    assert t_large < max(25 * t_small, 0.2) and t_large < 2.0


# pytorch/pytorch#44303 (wild batch 8, train): a torch 1.3.1 report, from before ROCm wheels and
# before collect_env had a ROCM line, whose CUDA field says "Could not collect": a CPU build.
_TORCH_1_3_CPU = """    python -m torch.utils.collect_env
    Collecting environment information...
    PyTorch version: 1.3.1
    Is debug build: No
    CUDA used to build PyTorch: Could not collect

    OS: Ubuntu 18.04.4 LTS
    Python version: 3.7
    Is CUDA available: No
    CUDA runtime version: 10.1.105
    GPU models and configuration: GPU 0: GeForce RTX 2080 Ti
    Nvidia driver version: 430.64
"""


def test_an_old_collect_env_without_a_rocm_line_and_no_cuda_is_a_cpu_build():
    facts = facts_from_reports(_TORCH_1_3_CPU.splitlines())
    assert facts["torch_cuda"] is None and facts["torch_hip"] is None
    assert diagnose(_TORCH_1_3_CPU).cause == "cpu_only_build"


def test_a_newer_collect_env_without_a_rocm_line_leaves_the_hip_build_unknown():
    # From torch 1.8 on a missing ROCM line proves nothing (the report may be trimmed): no guess.
    facts = facts_from_reports(_TORCH_1_3_CPU.replace("PyTorch version: 1.3.1", "PyTorch version: 2.1.0").splitlines())
    assert facts["torch_cuda"] is None and "torch_hip" not in facts


@pytest.mark.parametrize(("old", "new"), [
    ("PyTorch version: 1.3.1", "PyTorch version: 1.7.0a0+rocm3.7"),  # a ROCm build of the rocm/pytorch images
    ("Is CUDA available: No", "Is CUDA available: Yes"),  # a working build is no CPU build
    ("GPU 0: GeForce RTX 2080 Ti", "GPU 0: Radeon RX Vega"),  # an AMD machine: a ROCm source build is likely
])
def test_an_old_report_is_read_as_a_cpu_build_only_when_nothing_says_otherwise(old, new):
    facts = facts_from_reports(_TORCH_1_3_CPU.replace(old, new).splitlines())
    assert "torch_hip" not in facts
