"""Real messages (with their sources) for the rules no corpus case reaches on its own.

Most are fact rules: the message is real, the facts are what the runner would measure in
the setup the thread describes. Fallback rules are checked on their own (a specific rule
would otherwise win), text backstops of fact rules with the report parsers off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RuleCase:
    rule: str
    source: str
    text: str
    facts: dict[str, Any] = field(default_factory=dict)
    alone: bool = False  # check the rule by itself (fallbacks, text backstops of fact rules)


RULE_CASES = (
    RuleCase("cpu-build-version-in-text", "https://github.com/SunOner/sunone_aimbot/issues/47",
             "Model loaded. None\nUltralytics YOLOv8.0.222 \U0001f680 Python-3.11.6 torch-2.1.0+cpu\n"
             "    raise ValueError(f\"Invalid CUDA 'device={device}' requested.\""),
    # torch's "Found no NVIDIA driver" in a container: the train sides' reading
    RuleCase("torch-no-driver-in-container", "https://github.com/kcosta42/VQGAN-CLIP-Docker/issues/1",
             "Creating vqgan-clip-docker_generate_run ... done\n"
             "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx"),
    # the fallback by itself: the model may overrule a fallback, so its case checks it alone
    RuleCase("fallback-amd-tools", "https://github.com/ROCm/legacy-rocm-build/issues/4043",
             "root:~# rocminfo\nROCk module version 6.7.0 is loaded\nUnable to open /dev/kfd read-write: Invalid argument",
             alone=True),
    # train-only set extra7
    RuleCase("tf-xla-out-of-memory", "https://github.com/tensorflow/models/issues/5527",
             "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[64,2016,9,9] "
             "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
    RuleCase("tf-xla-out-of-memory", "https://github.com/google-deepmind/alphafold/issues/1023",
             "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
             "7406166528 bytes."),
    RuleCase("glibc-or-libstdcxx-too-old", "https://github.com/antimatter15/alpaca.cpp/issues/146",
             "/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by ./chat)\n"
             "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by ./chat)"),
    # wild batch 11 (train side)
    RuleCase("cuda-ptx-unsupported-toolchain", "https://github.com/marella/ctransformers/issues/87",
             "CUDA error 222 at /home/runner/work/ctransformers/ctransformers/models/ggml/ggml-cuda.cu:5141: "
             "the provided PTX was compiled with an unsupported toolchain."),
    RuleCase("facts-host-kfd-missing", "https://github.com/robertrosenbusch/gfx803_rocm/issues/15",
             "I tried to check if `/dev/kfd` is available but it only gives me the error `Permission denied`\n"
             "and when I search for `kfd` in `/dev` directory it, it does not exist.",
             {"vendor": "amd", "dev_kfd_present": False}),
    RuleCase("facts-kfd-not-passed", "https://github.com/pytorch/pytorch/issues/70036",
             "    torch._C._cuda_init()\nRuntimeError: No HIP GPUs are available",
             {"vendor": "amd", "dev_kfd_present": True, "container_device_nodes": ["/dev/dri/renderD128"]}),
    # recorded on an H200 (tests/diagnosis/recorded/): nvidia-smi as uid 65534 with /dev/nvidia0 at mode 000; the
    # probe suite's node check reports that open as EACCES (test_diagnosis_permission_fact.py)
    RuleCase("facts-device-nodes-denied", "tests/diagnosis/recorded/h200-2026-11-28.yaml",
             "No devices were found",
             {"vendor": "nvidia", "host_driver_version": "580.159.04",
              "container_device_nodes": ["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0", "/dev/nvidiactl"],
              "container_device_nodes_denied": ["/dev/nvidia0"]}),
    # recorded on an H200: nvidia-smi with /dev/nvidiactl and /dev/nvidia-uvm* but no /dev/nvidia0 in its /dev
    RuleCase("facts-nvidia-control-node-without-gpu-node", "tests/diagnosis/recorded/h200-2026-11-28.yaml",
             "No devices were found",
             {"vendor": "nvidia", "host_driver_version": "580.159.04",
              "container_device_nodes": ["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidiactl"]}),
    RuleCase("facts-amd-driver-not-loaded", "https://github.com/ROCm/ROCT-Thunk-Interface/issues/44",
             "ROCk module is NOT loaded, possibly no GPU devices\nyardbird is member of video group\n"
             "[hsaKmtAllocMemory] failed to allocate 4096 bytes from host"),
    RuleCase("facts-cpu-only-build-reported", "https://github.com/pytorch/pytorch/issues/122924",
             "PyTorch version: 2.2.2\nIs debug build: False\nCUDA used to build PyTorch: Could not collect\n"
             "ROCM used to build PyTorch: N/A\n\nOS: Microsoft Windows 11 Education\nIs CUDA available: False\n"
             "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4080 Laptop GPU\n"
             "Nvidia driver version: 551.86\n"),
    RuleCase("facts-engine-no-nvidia-runtime", "https://github.com/NVIDIA/nvidia-docker/issues/1352",
             "I get the following issue when running: docker run --gpus 2 nvidia/cuda:10.2-base nvidia-smi\n"
             '**docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].**',
             {"engine_runtimes": ["io.containerd.runc.v2", "runc"]}),
    RuleCase("facts-compute-mode-exclusive", "https://github.com/NVIDIA/DIGITS/issues/2005",
             "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable",
             {"compute_mode": "exclusive_process"}),
    RuleCase("facts-pip-python-missing", "https://github.com/milksense/venus/issues/8",
             "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
             "ERROR: No matching distribution found for torch",
             {"pip_failure": "python_missing", "pip_requirement": "torch==2.4.0",
              "pip_detail": "torch 2.4.0 has wheels for Python 3.8-3.12, not 3.13"}),
    RuleCase("facts-hsa-override-arch-not-in-build", "https://github.com/NixOS/nixpkgs/issues/207109",
             '4. Error: `"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
             {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx900", "gfx906", "gfx90a"],
              "hsa_override_gfx_version": "10.3.0"}),
    RuleCase("facts-hsa-override-wrong-for-card", "https://github.com/NixOS/nixpkgs/issues/207109",
             '4. Error: `"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
             {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx1030", "gfx1100"],
              "hsa_override_gfx_version": "11.0.0"}),
    RuleCase("cuda-not-available", "https://github.com/oobabooga/textgen/issues/791",
             "Loading facebook_galactica-6.7b...\nWarning: torch.cuda.is_available() returned False.\n"
             "This means that no GPU has been detected.\nFalling back to CPU mode."),
    RuleCase("apt-repository-unreachable", "https://github.com/mediagis/nominatim-docker/issues/127",
             "W: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/cosmic/InRelease  Temporary failure "
             "resolving 'archive.ubuntu.com'", alone=True),
    RuleCase("pip-no-distribution", "https://github.com/PatrickHua/SimSiam/issues/44",
             "No matching distribution found for torch==1.7.0", alone=True),
    RuleCase("fallback-nvidia-container-stack", "https://github.com/NVIDIA/nvidia-docker/issues/1088",
             "Docker don't see nvidia gpu and in the same time nvidia-container-cli info output is good:",
             alone=True),
    RuleCase("fallback-kernel-driver", "https://github.com/mattshma/bigdata/issues/133",
             "[188497.595099] NVRM: No NVIDIA graphics adapter probed!", alone=True),
    RuleCase("fallback-collectives", "https://github.com/NVIDIA/nccl/issues/207",
             "NCCL error in: /torch/lib/c10d/ProcessGroupNCCL.cpp:260, unhandled system error", alone=True),
    RuleCase("fallback-dnn", "https://github.com/ryujaehun/pytorch-gpu-benchmark/issues/19",
             "MIOpen(HIP): Warning [SQLiteBase] Unable to read system database file:/opt/rocm/miopen/share/miopen/db/"
             "gfx900_64.kdb Performance may degrade", alone=True),
    RuleCase("fallback-gpu-runtime", "https://github.com/pytorch/pytorch/issues/70036",
             "RuntimeError: HIP error: hipErrorNoDevice", alone=True),
    RuleCase("fallback-device-nodes", "https://github.com/l1na-forever/stable-diffusion-rocm-docker/issues/8",
             'docker: Error response from daemon: error gathering device information while adding custom device '
             '"/dev/kfd": no such file or directory.', alone=True),
    # batch 4 (train side): the fallbacks name a runtime called nvidia and a runtime that failed to initialise
    RuleCase("fallback-nvidia-container-stack", "https://github.com/NVIDIA/k8s-device-plugin/issues/479",
             "Warning  FailedCreatePodSandBox  0s (x5 over 49s)  kubelet            Failed to create pod sandbox: "
             'rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
             alone=True),
    RuleCase("fallback-gpu-runtime", "https://github.com/JuliaGPU/CUDAdrv.jl/issues/210",
             " Error: CUDAdrv.jl failed to initialize \n│   exception =\n│    CUDA error: unknown error (code 999, ERROR_UNKNOWN)",
             alone=True),
    RuleCase("fallback-math-libraries", "https://github.com/NVIDIA/Fuser/issues/4529",
             "RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasCreate(handle)`\n"
             "Exception raised from createCublasHandle at /opt/pytorch/pytorch/aten/src/ATen/cuda/CublasHandlePool.cpp:92",
             alone=True),
    # batch 6 (train side): the runtime refusing the code objects' ISA is the arch, the second error of the thread
    RuleCase("hsa-invalid-isa", "https://github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU/issues/37",
             "Then, I set it to 11.0.0, I receive another error:\n"
             ":0:rocdevice.cpp            :3018: 128688649210d us:  Callback: Queue 0x7f7f4d000000 aborting with error : "
             "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f"),
    # vendor status codes whose meaning the vendor documents (cudaError_t, cublasStatus_t, cudnnStatus_t, NVRM)
    RuleCase("blas-dnn-arch-mismatch", "https://github.com/NVIDIA/DeepLearningExamples/issues/147",
             "Device Tesla K40m\nbefore allocate free 8.50 GB total 11.17 GB\n"
             "terminate called after throwing an instance of 'std::runtime_error'\n"
             "  what():  [FT][ERROR] CUDA runtime error: CUBLAS_STATUS_ARCH_MISMATCH "
             "/workspace/tf_case/FasterTransformer/fastertransformer/cuda/open_attention.h:171 \n\nAborted (core dumped)"),
    RuleCase("cuda-api-needs-newer-driver", "https://github.com/lllyasviel/Fooocus/issues/95",
             "    return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)\n"
             "RuntimeError: CUDA error: API call is not supported in the installed CUDA driver\n"
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."),
    RuleCase("cuda-stub-library-loaded", "https://github.com/horovod/horovod/issues/3831",
             "NCCL WARN Cuda failure 'CUDA driver is a stub library', then segfault"),
    RuleCase("torchvision-cuda-differs", "https://github.com/deforum/deforum-stable-diffusion/issues/348",
             "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
             "PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision "
             "that matches your PyTorch install."),
    RuleCase("nvrm-probe-routine-failed", "https://github.com/h8d13/archinstoo/issues/244",
             "         NVRM: BAR0 is 0M @ 0x0 (PCI:0000:01:00.0)\n"
             "[    6.554916] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
             "[    6.554922] NVRM: None of the NVIDIA devices were initialized.\n"
             "[    6.821212] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:"),
    RuleCase("conda-packages-not-found", "https://github.com/pytorch/builder/pull/1385",
             "+ /opt/conda/bin/conda install -yq -c nvidia -c pytorch-nightly pytorch-cuda=12.1\n"
             "Solving environment: ...working... failed with initial frozen solve. Retrying with flexible solve.\n\n"
             "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
             "  - pytorch-cuda=12.1"),
    RuleCase("windows-dll-load-failed", "https://github.com/facebookresearch/pytorch3d/issues/1872",
             "ImportError: DLL load failed while importing _C: The specified procedure could not be found."),
    # the frameworks on top, in their own words (vLLM, flash-attn, xFormers, JAX)
    RuleCase("gpu-too-old-for-feature", "https://github.com/vllm-project/vllm/issues/946",
             "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
             "Your Tesla V100-SXM2-32GB GPU has compute capability 7.0."),
    RuleCase("vllm-kv-cache-no-memory", "https://github.com/QwenLM/Qwen3/issues/12",
             "raise ValueError(\"No available memory for the cache blocks. \" ValueError: No available memory for "
             "the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."),
    RuleCase("xformers-built-for-other-torch", "https://github.com/invoke-ai/InvokeAI/issues/6590",
             "Launching Web UI with arguments: xformers\n"
             "WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
             "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.0.1+cu118)\n"
             "    Python  3.10.11 (you have 3.10.11)"),
    RuleCase("jax-no-visible-gpu", "https://github.com/jax-ml/jax/issues/21998",
             "    return _xla.get_c_api_client(plugin_name, options, distributed_client)\n"
             "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices."),
    # the card told of in prose (weak; checked by itself, since the model may also speak)
    RuleCase("card-power-or-heat-prose", "https://github.com/tensorflow/tensorflow/issues/740",
             "But after the last step my PC does a cold reboot. It just turns off hard without shutdown and reboots "
             "after a few seconds.\n\nIt appears to be caused by an undersized PSU. Gaming on the GPU however works "
             "fine so far...", alone=True),
    RuleCase("bitsandbytes-cuda-setup", "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/26",
             "Hence, I'm getting this error:\n`The installed version of bitsandbytes was compiled without GPU "
             "support. 8-bit optimizers and GPU quantization are unavailable.`"),
    RuleCase("compiler-does-not-know-the-arch", "https://github.com/NVlabs/tiny-cuda-nn/issues/239",
             "whern i install tiny_cuda_nn,there have a erroe:\nnvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
             "My environment：\nGraphics card：rtx4090\nCUDA Version：11.3"),
    # NVML's return codes (nvmlErrorString and the bindings' exception names)
    RuleCase("nvml-driver-not-loaded", "https://github.com/bentoml/BentoML/issues/4357",
             "Try to build a bento on a machine without Nvidia GPU and has cuda toolkit installed.\n"
             "The exception pynvml.NVMLError_DriverNotLoaded may also need to be catched, in case nvml presents "
             "but gpu not"),
    RuleCase("nvml-driver-not-loaded", "https://github.com/damomine/aleominer/issues/14",
             "thread 'main' panicked at 'Failed to initialize nvml: DriverNotLoaded', src/environment/mod.rs:37:31\n"
             "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\nAborted (core dumped)"),
    RuleCase("nvml-version-mismatch", "https://github.com/tensorpack/tensorpack/issues/1244",
             "    raise NvmlException(ret)\n"
             "tensorpack.utils.nvml.NvmlException: NVML_ERROR_LIB_RM_VERSION_MISMATCH\n"
             "[0624 14:45:34 @inference_runner.py:149] [InferenceRunner] Building tower 'InferenceTower' on device /gpu:0 ..."),
    RuleCase("nvml-version-mismatch", "https://github.com/XuehaiPan/nvitop/issues/41",
             "Then `nvitop` stopped working with the error:\n\n"
             "`NVML ERROR: RM has detected an NVML/RM version mismatch.`"),
    RuleCase("nvml-version-mismatch", "https://github.com/abysssol/ollama-flake/issues/4",
             "nvmlInit_v2 err: 18\n"
             "time=2024-02-14T22:41:55.630Z level=INFO source=gpu.go:300 msg=\"Unable to load CUDA management library "
             "/nix/store/z6557r7pgvmxr9x16a4ffazly8dflh65-nvidia-x11-545.29.06-6.1.77/lib/libnvidia-ml.so.545.29.06: "
             "nvml vram init failure: 18\""),
    RuleCase("nvml-function-not-found", "https://github.com/wookayin/gpustat/issues/105",
             "AttributeError: /lib64/libnvidia-ml.so.1: undefined symbol: nvmlDeviceGetGraphicsRunningProcesses_v2\n\n"
             "During handling of the above exception, another exception occurred:\n\n"
             "NVMLError_FunctionNotFound                Traceback (most recent call last)"),
    RuleCase("nvml-function-not-found", "https://github.com/NVIDIA/k8s-device-plugin/issues/331",
             ">>> nvmlSystemGetDriverVersion()\nb'440.59'\n>>> handle = nvmlDeviceGetHandleByIndex(0)\n"
             ">>> nvmlDeviceGetComputeRunningProcesses(handle)\n"
             "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
             "nvmlDeviceGetComputeRunningProcesses_v2"),
    # recorded on an NVIDIA H200 (tests/diagnosis/recorded/h200-2026-11-28.yaml), with the facts of a cell on that host:
    # the forward-compatibility libcuda 580.95.05 under the 580.159.04 module, and libcuda hidden
    RuleCase("facts-driver-mismatch-but-new-enough", "recorded:h200-2026-11-28/cupy-compat-libcuda-older-than-module",
             "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorSystemDriverMismatch: system has unsupported "
             "display driver / cuda driver combination",
             {"vendor": "nvidia", "host_driver_version": "580.159.04", "image_cuda": "13.0"}),
    RuleCase("facts-insufficient-driver-but-new-enough", "recorded:h200-2026-11-28/cupy-no-driver-libraries",
             "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
             "insufficient for CUDA runtime version",
             {"vendor": "nvidia", "host_driver_version": "580.159.04", "image_cuda": "13.0"}),
    # gpumatrix's own layer-1 probes in the conditions recorded on the H200 (a control node without a GPU node; a GPU
    # node of mode 000 for uid 65534): their messages as check_nvidia_nodes / check_device_groups print them there
    RuleCase("probe-nvidia-card-node-missing", "probes/kernel_driver.py: check_nvidia_nodes",
             "No devices were found\n",
             {"vendor": "nvidia", "probe_failures": [{"id": "kernel_driver.nvidia_device_nodes", "layer": 1,
                                                      "status": "fail", "message": "no /dev/nvidia<N> node"}]}),
    RuleCase("probe-device-node-permission", "probes/kernel_driver.py: check_device_groups",
             "RuntimeError: No CUDA GPUs are available\n",
             {"vendor": "nvidia", "probe_failures": [{"id": "kernel_driver.device_groups", "layer": 1, "status": "fail",
                                                      "message": "no read-write permission on /dev/nvidia0; the process "
                                                                 "is not in group(s) root (gid 0) (docker run "
                                                                 "--group-add)"}]}),
    RuleCase("device-node-permission", "https://github.com/ROCm/amdsmi/issues/125",
             "After that, both `rocm-smi` and `rocminfo` work fine, but the amd-smi tool shows...\n"
             "RuntimeError: WARNING: User is missing the following required groups: render, video. "
             "Please add user to these groups."),
)
