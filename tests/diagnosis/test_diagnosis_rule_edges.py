"""Rules that draw a line between close causes: each side of the line, from real messages.

The messages come from the train side of wild batch 3 (and the threads named beside them);
where a test changes one line of a real message to cross to the other side, it says so.
"""

from __future__ import annotations

from gpumatrix.diagnose import diagnose

# https://github.com/containers/crun/issues/665
ROOTLESS_HOOK = (
    "I am unable to run nvidia-container-toolkit with crun in rootless mode, the same configuration works as a "
    "root user.\n"
    "2021-05-11T17:02:32.000655187Z: error executing hook `/usr/bin/nvidia-container-runtime-hook` (exit code: 1)\n"
)

# https://github.com/podman-container-tools/podman/issues/16094
HOOK_WHILE_CLI_HANGS = (
    "When (rootless) podman start, the following message displayed and not started.\n"
    '" Error: OCI runtime error: error executing hook `/usr/bin/nvidia-container-runtime-hook` (exit code: 1) "\n'
    'When the message happend, I tried to "**nvidia-container-cli list**", but terminal hang.\n'
)


def test_rootless_hook_failure_is_permissions_unless_the_driver_hangs():
    rootless = diagnose(ROOTLESS_HOOK)
    assert (rootless.cause, rootless.rule) == ("device_permission", "rootless-nvidia-hook")
    assert "no-cgroups" in rootless.remedy
    hangs = diagnose(HOOK_WHILE_CLI_HANGS)
    assert (hangs.cause, hangs.rule) == ("runtime_init_failure", "nvidia-container-cli-hangs")
    assert "persistence" in hangs.remedy
    # without "rootless" the rule says nothing about permissions (the learned tier may still read
    # "works as a root user" as permissions, as a low-confidence guess)
    plain = diagnose(ROOTLESS_HOOK.replace("in rootless mode", ""))
    assert plain.rule != "rootless-nvidia-hook" and plain.confidence <= 0.3


# https://github.com/ROCm/legacy-rocm-build/issues/1643
KFD_KERNEL_BUILD = (
    "/dev/kfd no such file or directory\n"
    "What is /dev/kfd and how do I enable it in my kernel build?\n"
)
# https://github.com/ROCm/legacy-rocm-build/issues/1798 (inside a container)
KFD_IN_CONTAINER = "ROCk module is loaded\nUnable to open /dev/kfd read-write: No such file or directory\n"


def test_missing_kfd_is_the_host_kernel_only_when_the_kernel_build_is_named():
    assert diagnose(KFD_KERNEL_BUILD).rule == "kfd-missing-kernel-config"
    assert diagnose(KFD_KERNEL_BUILD).cause == "driver_not_loaded"
    assert diagnose(KFD_IN_CONTAINER).cause == "no_device_visible"
    # a kernel *version* in an issue template is not a kernel build
    assert diagnose(KFD_IN_CONTAINER + "Kernel version: 5.15.0-91-generic\n").cause == "no_device_visible"


# https://github.com/canonical/docker-snap/issues/184
SNAP_RUNTIME = (
    '$ docker run --env PATH="${PATH}:/var/lib/snapd/hostfs/usr/bin" --rm --runtime=nvidia ubuntu nvidia-smi\n'
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
    "runtime create failed: runc create failed: unable to start container process: exec: \"nvidia-smi\": "
    "executable file not found in $PATH: unknown.\n"
)


def test_nvidia_smi_missing_under_the_nvidia_runtime_is_the_runtime():
    assert diagnose(SNAP_RUNTIME).cause == "container_toolkit_missing"
    # the same error without --runtime=nvidia: the GPUs were simply not asked for
    plain = diagnose(SNAP_RUNTIME.replace("--runtime=nvidia ", ""))
    assert (plain.cause, plain.rule) == ("no_device_visible", "nvidia-smi-missing")


# https://github.com/JuliaGPU/CUDA.jl/issues/605
AFTER_SUSPEND = (
    "CUDA.jl initialisation fails after suspending Ubuntu 20.04 with CUDA 11.2\n"
    "Julia now gives `ERROR: CUDA.jl did not successfully initialize, and is not usable.` when trying to do "
    "e.g. `cu(rand(2))`.\n"
)


def test_failures_after_suspend_are_a_runtime_state_only_for_the_gpu():
    assert diagnose(AFTER_SUSPEND).cause == "runtime_init_failure"
    assert diagnose("the wifi fails after suspending Ubuntu 20.04\n").cause == "unknown"


# https://github.com/NVIDIA/nvidia-container-toolkit/issues/434
CDI_NOT_ENABLED = (
    "$ docker run --rm -ti --device=nvidia.com/gpu=all ubuntu nvidia-smi -L\n"
    'docker: Error response from daemon: could not select device driver "cdi" with capabilities: [].\n'
)


def test_cdi_driver_missing_from_the_daemon_says_to_enable_cdi():
    result = diagnose(CDI_NOT_ENABLED)
    assert (result.cause, result.rule) == ("container_toolkit_missing", "docker-cdi-not-enabled")
    assert '"cdi": true' in result.remedy
    # the line alone, without the nvidia.com/gpu request a fallback could lean on
    assert diagnose(CDI_NOT_ENABLED.splitlines()[1]).rule == "docker-cdi-not-enabled"


# https://github.com/iot-salzburg/gpu-jupyter/issues/78
APT_KEY = (
    "W: GPG error: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2004/x86_64  InRelease: The "
    "following signatures couldn't be verified because the public key is not available: NO_PUBKEY "
    "A4B469963BF863CC\n"
    "E: The repository 'https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2004/x86_64  InRelease' "
    "is not signed.\n"
)


def test_an_untrusted_apt_repository_is_the_root_of_the_missing_packages_after_it():
    result = diagnose(APT_KEY)
    assert (result.cause, result.rule) == ("index_unreachable", "facts-apt-untrusted")
    assert "developer.download.nvidia.com" in result.evidence and "cuda-keyring" in result.remedy
    # constructed: a package from that repository then cannot be found (a consequence, layer 1)
    result = diagnose(APT_KEY + "E: Unable to locate package libcudnn8\n")
    assert (result.cause, result.rule) == ("index_unreachable", "facts-apt-untrusted")


# https://github.com/ROCm/legacy-rocm-build/issues/1070
ROCM_ONLY_AS_ROOT = (
    "$ /opt/rocm/bin/rocminfo\nROCk module is loaded\naresminos is member of video group\n"
    "hsa api call failure at: /data/jenkins-workspace/compute-rocm-rel-3.3/rocminfo/rocminfo.cc:1102\n"
    "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\n"
    "$ sudo /opt/rocm/bin/rocminfo\nROCk module is loaded\naresminos is member of video group\n"
    "=====================\nHSA System Attributes\n=====================\n"
)


def test_rocm_that_works_as_root_is_a_permission_problem():
    assert diagnose(ROCM_ONLY_AS_ROOT).cause == "device_permission"
    # without the working root run it is the runtime failing to start
    failing = ROCM_ONLY_AS_ROOT.split("$ sudo")[0]
    assert (diagnose(failing).cause, diagnose(failing).rule) == ("runtime_init_failure", "hsa-init-failed")


# https://github.com/microsoft/WSL/issues/8274
EMPTY_DRIVER_LIBS = (
    "/sbin/ldconfig.real: File /usr/lib/x86_64-linux-gnu/libcuda.so.1 is empty, not checked.\n"
    "/sbin/ldconfig.real: File /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 is empty, not checked.\n"
    "/sbin/ldconfig.real: /usr/lib/x86_64-linux-gnu/libcuda.so.1 is not a symbolic link\n"
)


def test_empty_driver_libraries_baked_into_an_image():
    result = diagnose(EMPTY_DRIVER_LIBS)
    assert (result.cause, result.rule) == ("library_mismatch", "image-holds-empty-driver-libraries")
    # the symlink warning alone is WSL's harmless ldconfig note, not an error
    assert diagnose(EMPTY_DRIVER_LIBS.splitlines()[2]).cause == "unknown"


def test_unknown_device_with_an_index_is_a_gpu_the_host_lacks():
    # https://github.com/NVIDIA/nvidia-container-toolkit/issues/632
    text = ("stderr: Auto-detected mode as 'legacy'\n"
            "nvidia-container-cli: device error: 2: unknown device: unknown\n")
    assert diagnose(text).cause == "no_device_visible"


def test_a_failing_fan_is_the_card():
    # https://github.com/NVIDIA/libnvidia-container/issues/204
    text = ("nvidia-container-cli: initialization error: cuda error: unknown error\n"
            "In situation that a GPU card was failing with fan Error, after tainting the GPU, nvidia-container-cli "
            "command output error as title.\n")
    assert diagnose(text).cause == "hardware_fault"
    assert diagnose(text.splitlines()[0]).cause == "runtime_init_failure"
