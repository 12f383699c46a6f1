"""Facts about the environment, in the spirit of ``torch.utils.collect_env``.

``collect_host_facts`` runs in the parent and never imports torch or loads GPU
libraries; ``collect_torch_facts`` runs in a child process (torch may crash on import).
Tools such as nvidia-smi are used only when present, with a timeout. Formatting lives
in ``probes.report``.
"""

import glob
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
from typing import Any, Dict, List, Mapping, Optional

from .context import EXPECT_ENV, detect_accelerator, expected_vendor, import_torch
from .kernel_driver import gpu_device_nodes

# Environment variables that change how the GPU stack behaves; reported set or not.
ENV_VARS = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "CUDA_MODULE_LOADING",
    "CUDA_LAUNCH_BLOCKING",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HSA_OVERRIDE_GFX_VERSION",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "TORCH_CUDA_ARCH_LIST",
    "LD_LIBRARY_PATH",
    "OMP_NUM_THREADS",
    "NCCL_DEBUG",
    "CUDA_VERSION",
    "NVIDIA_REQUIRE_CUDA",
    "CUDA_HOME",
    "ROCM_PATH",
    "HIPBLASLT_ALLOW_TF32",
    "TORCH_BLAS_PREFER_HIPBLASLT",
    "TORCH_CUDNN_V8_API_ENABLED",
    "GPUMATRIX_HOST_BUSY",
    "GPUMATRIX_CACHE_DIR",
    EXPECT_ENV,
)
# Families of variables that change behaviour: every one that is set is reported.
ENV_PREFIXES = ("PYTORCH_TUNABLEOP_", "MIOPEN_", "NCCL_", "RCCL_", "HSA_", "HIP_", "ROCBLAS_", "HIPBLASLT_",
                "TORCH_ROCM_AOTRITON_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "TORCHINDUCTOR_", "TRITON_",
                "ROCFFT_", "CUDA_CACHE_")
ENV_VALUE_LIMIT = 512

# Distribution names worth reporting: every name collect_env's pip filter keeps (it keeps a line when any
# of its patterns is a substring of it: mypy_extensions for "mypy"), and the GPU stacks' own packages.
_PIP_NAME = re.compile(
    r"torch|triton|numpy|optree|nvidia-|cuda|cudnn|nccl|cublas|cufft|curand|cusolver|cusparse|nvjitlink|nvtx|"
    r"rocm|hip|amd-|mkl|intel-|tbb|impi-|oneccl|umf|tcmlib|dpcpp|magma|soumith|onnx|mypy|flake8",
    re.IGNORECASE,
)

TOOL_TIMEOUT_S = 15.0


def read_text(path: str, limit: int = 65536) -> Optional[str]:
    """The start of a text file, or None when it cannot be read."""
    try:
        with open(path, "r", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return None


TOOL_OUTPUT_LIMIT = 256 * 1024
TOOL_KILL_GRACE_S = 2.0
# Tools that could not be reaped after SIGKILL (a driver call in uninterruptible sleep),
# kept referenced so they are abandoned quietly rather than waited for.
_ABANDONED_TOOLS = []  # type: List[Any]


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def run_tool(argv: List[str], timeout: float = TOOL_TIMEOUT_S) -> Optional[str]:
    """stdout of a tool when it exists and succeeds in time, else None.

    The tool runs in its own session; after ``timeout`` the whole session is killed, and
    if it still has not gone (D state in a driver, or a grandchild holding the pipe) it is
    abandoned after a short grace instead of waited for. Output is capped.
    """
    path = shutil.which(argv[0])
    if path is None:
        return None
    try:
        proc = subprocess.Popen([path] + list(argv[1:]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_session(proc.pid)
        try:
            proc.communicate(timeout=TOOL_KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            _ABANDONED_TOOLS.append(proc)
        return None
    if proc.returncode != 0:
        return None
    return out[:TOOL_OUTPUT_LIMIT].decode("utf-8", "replace").strip()


def os_release() -> Optional[str]:
    text = read_text("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return None


def libc_version() -> Optional[str]:
    name, version = platform.libc_ver()
    return "%s-%s" % (name, version) if name else None


def cpu_facts() -> Dict[str, Any]:
    model = None
    for line in (read_text("/proc/cpuinfo", 1 << 20) or "").splitlines():
        if line.lower().startswith(("model name", "cpu model")) and ":" in line:
            model = line.split(":", 1)[1].strip()
            if model:
                break
    try:
        affinity = len(os.sched_getaffinity(0))  # type: Optional[int]
    except (AttributeError, OSError):
        affinity = None
    return {"model": model, "count": os.cpu_count(), "usable": affinity}


def memory_bytes() -> Optional[int]:
    for line in (read_text("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def filesystem_size(path: str) -> Optional[int]:
    try:
        stat = os.statvfs(path)
    except OSError:
        return None
    return stat.f_blocks * stat.f_frsize


def nvidia_driver_version(proc_text: Optional[str]) -> Optional[str]:
    """The version in /proc/driver/nvidia/version ("... Kernel Module  550.54.15  ...")."""
    if not proc_text:
        return None
    match = re.search(r"Kernel Module(?: for [^ ]+)?\s+([0-9]+(?:\.[0-9]+)+)", proc_text)
    if match:
        return match.group(1)
    match = re.search(r"\b([0-9]{3,}\.[0-9]+(?:\.[0-9]+)?)\b", proc_text)
    return match.group(1) if match else None


def driver_facts() -> Dict[str, Any]:
    proc = read_text("/proc/driver/nvidia/version")
    amdgpu_version = read_text("/sys/module/amdgpu/version")
    facts = {
        "nvidia": {
            "version": nvidia_driver_version(proc),
            "proc_version": proc.strip().splitlines()[0] if proc and proc.strip() else None,
        },
        "amdgpu": {
            "loaded": os.path.isdir("/sys/module/amdgpu"),
            "version": amdgpu_version.strip() if amdgpu_version else None,
        },
        "nvidia_smi": None,
    }  # type: Dict[str, Any]
    smi = run_tool(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv,noheader"]
    )
    if smi is not None:
        facts["nvidia_smi"] = [line.strip() for line in smi.splitlines() if line.strip()]
    return facts


def environment_facts(environ: Optional[Mapping[str, str]] = None) -> Dict[str, Optional[str]]:
    """The variables that change how the stack behaves: the fixed list (None when unset) and
    every set variable of the ENV_PREFIXES families. Values are capped."""
    environ = os.environ if environ is None else environ
    names = set(ENV_VARS) | set(k for k in environ if k.startswith(ENV_PREFIXES))
    return {name: (environ[name][:ENV_VALUE_LIMIT] if name in environ else None) for name in sorted(names)}


def _first_match(text: Optional[str], pattern: str) -> Optional[str]:
    if not text:
        return None
    match = re.search(pattern, text)
    return match.group(1).strip() if match else None


def compiler_facts() -> Dict[str, Any]:
    """Compilers and build tools with their versions, as collect_env reports them (gcc,
    clang, cmake) plus nvcc (the system CUDA toolkit) and hipcc."""
    def tool(name: str, pattern: str, argv: Optional[List[str]] = None) -> Optional[Dict[str, Any]]:
        path = shutil.which(name)
        if path is None:
            return None
        text = run_tool(argv or [name, "--version"])
        return {"path": path, "version": _first_match(text, pattern),
                "first_line": text.strip().splitlines()[0][:200] if text and text.strip() else None}

    return {
        "cxx": next((shutil.which(c) for c in ("c++", "g++", "clang++") if shutil.which(c)), None),
        "cc": next((shutil.which(c) for c in (os.environ.get("CC", ""), "cc", "gcc", "clang") if c and shutil.which(c)),
                   None),
        "gcc": tool("gcc", r"gcc (.*)"),
        "clang": tool("clang", r"clang version (.*)"),
        "cmake": tool("cmake", r"cmake (.*)"),
        "nvcc": tool("nvcc", r"release .+ V(.*)"),
        "hipcc": tool("hipcc", r"HIP version: (\S+)"),
    }


def system_cudnn() -> List[str]:
    """cuDNN libraries installed on the system (not torch's wheel), as collect_env looks for them."""
    found = set()
    text = run_tool(["ldconfig", "-p"]) or ""
    for line in text.splitlines():
        if "libcudnn" in line and "=>" in line:
            found.add(os.path.realpath(line.split("=>", 1)[1].strip()))
    for folder in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"):
        for path in glob.glob(os.path.join(folder, "libcudnn*.so*")):
            found.add(os.path.realpath(path))
    return sorted(found)[:20]


def cpu_facts() -> Dict[str, Any]:
    """Model, counts, flags, caches (from sysfs) and, from lscpu, what collect_env shows."""
    model, flags = None, []  # type: Optional[str], List[str]
    for line in (read_text("/proc/cpuinfo", 1 << 20) or "").splitlines():
        key = line.split(":", 1)[0].strip().lower()
        if key in ("model name", "cpu model") and model is None and ":" in line:
            model = line.split(":", 1)[1].strip() or None
        elif key in ("flags", "features") and not flags and ":" in line:
            flags = line.split(":", 1)[1].split()
    try:
        affinity = len(os.sched_getaffinity(0))  # type: Optional[int]
    except (AttributeError, OSError):
        affinity = None
    caches = []
    for index in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        entry = {name: (read_text(os.path.join(index, name)) or "").strip() or None
                 for name in ("level", "type", "size", "shared_cpu_list")}
        caches.append(entry)
    lscpu = {}
    for line in (run_tool(["lscpu"]) or "").splitlines()[:80]:
        if ":" in line:
            key, value = line.split(":", 1)
            lscpu[key.strip()[:60]] = value.strip()[:4096]
    return {"model": model, "count": os.cpu_count(), "usable": affinity, "flags": sorted(set(flags))[:400],
            "caches": caches, "lscpu": lscpu}


def numa_facts() -> List[Dict[str, Any]]:
    """NUMA nodes: their CPUs and memory."""
    nodes = []
    for path in sorted(glob.glob("/sys/devices/system/node/node[0-9]*"), key=lambda p: int(re.sub(r"\D", "", p) or 0)):
        memory = None
        for line in (read_text(os.path.join(path, "meminfo")) or "").splitlines():
            if "MemTotal:" in line:
                parts = line.split()
                memory = int(parts[-2]) * 1024 if parts[-2].isdigit() else None
        nodes.append({"node": int(re.sub(r"\D", "", os.path.basename(path))),
                      "cpus": (read_text(os.path.join(path, "cpulist")) or "").strip() or None,
                      "memory_bytes": memory})
    return nodes


def rocm_facts(environ: Optional[Mapping[str, str]] = None, sys_root: str = "/sys") -> Dict[str, Any]:
    """The ROCm userspace version (from its .info/version file) and, on MI300-class GPUs,
    each card's compute and memory partition modes."""
    environ = os.environ if environ is None else environ
    version = version_file = None
    for root in (environ.get("ROCM_PATH", ""), "/opt/rocm"):
        if not root:
            continue
        for name in (".info/version", ".info/version-dev"):
            text = read_text(os.path.join(root, name), 200)
            if text and text.strip():
                version, version_file = text.strip().splitlines()[0][:80], os.path.join(root, name)
                break
        if version:
            break
    partitions = []
    for card in sorted(glob.glob(os.path.join(sys_root, "class", "drm", "card[0-9]*"))):
        if "-" in os.path.basename(card):
            continue
        compute = read_text(os.path.join(card, "device", "current_compute_partition"), 64)
        memory = read_text(os.path.join(card, "device", "current_memory_partition"), 64)
        if compute or memory:
            partitions.append({"card": os.path.basename(card), "compute_partition": (compute or "").strip() or None,
                               "memory_partition": (memory or "").strip() or None})
    return {"version": version, "version_file": version_file, "partitions": partitions}


def pip_packages() -> Dict[str, str]:
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8 is unsupported, but say so instead of crashing
        return {}
    found = {}
    try:
        distributions = list(metadata.distributions())
    except Exception:
        return {}
    for dist in distributions:
        try:
            name = dist.metadata["Name"]
        except Exception:
            continue
        if name and _PIP_NAME.search(name):
            found[name] = dist.version
    return dict(sorted(found.items()))


def os_description() -> Optional[str]:
    """The OS as collect_env words it: the release's PRETTY_NAME and the machine."""
    name = os_release()
    return "%s (%s)" % (name, platform.machine()) if name else None


def collect_host_facts() -> Dict[str, Any]:
    """Facts the parent can gather without torch or GPU libraries."""
    return {
        "python": platform.python_version(),
        "python_version_full": "%s (%d-bit runtime)" % (sys.version.replace("\n", " "), sys.maxsize.bit_length() + 1),
        "python_executable": sys.executable,
        "os_description": os_description(),
        "numa": numa_facts(),
        "cuda_toolkit": {"nvcc": shutil.which("nvcc"), "cudnn_libraries": system_cudnn()},
        "rocm": rocm_facts(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "kernel": platform.release(),
        "libc": libc_version(),
        "os": os_release(),
        "cpu": cpu_facts(),
        "memory_bytes": memory_bytes(),
        "shm_bytes": filesystem_size("/dev/shm"),
        "device_nodes": gpu_device_nodes(),
        "driver": driver_facts(),
        "pip_packages": pip_packages(),
        "compilers": compiler_facts(),
        "pip_version": _safe(lambda: __import__("importlib.metadata").metadata.version("pip")),
        "conda_prefix": os.environ.get("CONDA_PREFIX"),
        "expect": expected_vendor(),
        "env": environment_facts(),
    }


def torch_unavailable_facts(import_error: str) -> Dict[str, Any]:
    """``torch`` facts when torch could not be imported (or the facts child died)."""
    return {
        "version": None,
        "cuda": None,
        "hip": None,
        "cudnn": None,
        "available": False,
        "device_count": 0,
        "arch_list": [],
        "import_error": import_error,
    }


def _safe(call: Any, default: Any = None) -> Any:
    try:
        return call()
    except Exception:
        return default


def device_arch(torch: Any, index: int, props: Any) -> Optional[str]:
    """"sm_90" on CUDA, "gfx942" on ROCm (target features such as ":xnack-" dropped)."""
    gcn = getattr(props, "gcnArchName", None)
    if getattr(torch.version, "hip", None) and gcn:
        return str(gcn).split(":", 1)[0]
    major = getattr(props, "major", None)
    minor = getattr(props, "minor", None)
    if major is None or minor is None:
        return None
    return "sm_%d%d" % (major, minor)


def describe_devices(torch: Any) -> List[Dict[str, Any]]:
    devices = []
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        entry = {
            "index": index,
            "name": props.name,
            "arch": device_arch(torch, index, props),
            "total_memory_bytes": int(props.total_memory),
            "capability": [props.major, props.minor],
            "multi_processor_count": getattr(props, "multi_processor_count", None),
        }
        if getattr(props, "gcnArchName", None):
            entry["gcn_arch_name"] = str(props.gcnArchName)
        if hasattr(props, "is_integrated"):
            entry["integrated"] = bool(props.is_integrated)
        bus = [getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
        if all(isinstance(part, int) for part in bus):
            entry["pci"] = "%04x:%02x:%02x" % tuple(bus)
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            entry["uuid"] = str(uuid)
        devices.append(entry)
    return devices


# GPU and math libraries whose loaded copy (path, version) is worth knowing.
_LIBRARY = re.compile(
    r"/(lib(?:cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|nvrtc|cufft|cusparse|cusolver|nvJitLink|"
    r"amdhip64|hsa-runtime64|rocblas|hipblas|hipblaslt|MIOpen|rccl|rocfft|hipfft|rocsolver|hipsparse|"
    r"rocm_smi64|nvidia-ml|mkl_[a-z_]+|openblas[a-z_0-9]*|gomp|iomp5|torch_cuda|torch_hip)\.so[.0-9]*)$")


def loaded_libraries(maps_path: str = "/proc/self/maps") -> List[Dict[str, Any]]:
    """The GPU/math libraries this process has actually loaded (``/proc/self/maps``), each with
    its path, the file it resolves to, and the version in that file name (``libcublas.so.12.4.5.8``)."""
    seen = {}  # type: Dict[str, Dict[str, Any]]
    for line in (read_text(maps_path, 4 << 20) or "").splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        match = _LIBRARY.search(path)
        if not match or path in seen:
            continue
        real = os.path.realpath(path)
        version = _first_match(os.path.basename(real), r"\.so\.([0-9][0-9.]*)$")
        seen[path] = {"name": match.group(1).split(".so")[0], "path": path, "real_path": real, "version": version}
    return sorted(seen.values(), key=lambda e: (e["name"], e["path"]))


def _config_value(config: str, key: str) -> Optional[str]:
    return _first_match(config, r"%s=([^,\n]+)" % re.escape(key))


def collect_torch_facts() -> Dict[str, Any]:
    """``{"torch": ..., "devices": [...], "accelerator": ...}``; runs in a child."""
    torch, error = import_torch()
    if torch is None:
        return {"torch": torch_unavailable_facts(error or "unknown"), "devices": [], "accelerator": "cpu"}
    accelerator, init_warnings = detect_accelerator(torch)
    cuda_built = bool(getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None))
    facts = {
        "version": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "cudnn": _safe(lambda: torch.backends.cudnn.version()) if cuda_built else None,
        "available": accelerator != "cpu",
        "device_count": _safe(lambda: torch.cuda.device_count(), 0) if accelerator != "cpu" else 0,
        "arch_list": _safe(lambda: list(torch.cuda.get_arch_list()), []),
        "import_error": None,
        "debug": _safe(lambda: bool(torch.version.debug)),
        "git_version": getattr(torch.version, "git_version", None),
        "nccl": _safe(lambda: ".".join(str(x) for x in torch.cuda.nccl.version())) if accelerator != "cpu" else None,
        "mkldnn": _safe(lambda: bool(torch.backends.mkldnn.is_available())),
        "openmp": _safe(lambda: bool(torch.backends.openmp.is_available())),
        "distributed": _safe(lambda: bool(torch.distributed.is_available())),
        "init_warnings": init_warnings,
        "xpu_available": _safe(lambda: bool(torch.xpu.is_available()), False),
        "xnnpack": _safe(lambda: bool(__import__("importlib").import_module("torch.backends.xnnpack").enabled)),
        "mkl": _safe(lambda: bool(torch.backends.mkl.is_available())),
        "preferred_blas_library": _safe(lambda: str(torch.backends.cuda.preferred_blas_library()).split(".")[-1]),
        "preferred_linalg_library": _safe(lambda: str(torch.backends.cuda.preferred_linalg_library()).split(".")[-1]),
    }
    config = _safe(lambda: str(torch.__config__.show()), "") or ""
    facts["blas_info"] = _config_value(config, "BLAS_INFO")
    facts["lapack_info"] = _config_value(config, "LAPACK_INFO") or ("enabled" if "LAPACK is enabled" in config else None)
    facts["cpu_capability"] = _first_match(config, r"CPU capability usage: (\S+)")
    facts["hip_runtime"] = _first_match(config, r"HIP Runtime ([0-9.]+)")
    facts["miopen_runtime"] = _first_match(config, r"MIOpen ([0-9.]+)")
    facts["cuda_module_loading"] = os.environ.get("CUDA_MODULE_LOADING") if accelerator == "cuda" else None
    devices = _safe(lambda: describe_devices(torch), []) if accelerator != "cpu" else []
    return {"torch": facts, "devices": devices, "accelerator": accelerator, "loaded_libraries": loaded_libraries()}
