"""Layer 2, system_runtime: the user-mode driver libraries, called through ctypes
without torch: the CUDA driver API (libcuda), ROCr/HSA (libhsa-runtime64), NVML and
ROCm SMI. A missing library skips ("not available"), unless ``GPUMATRIX_EXPECT`` names
its vendor (ROCm SMI, optional tooling, always skips when missing).
"""

import ctypes
import glob
import importlib.util
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .model import NEEDS_NOTHING, Outcome, Probe, failed, passed, skipped

# CUresult values (cuda.h, "CUresult" enum) that a health check meets in practice.
CU_RESULT_NAMES = {
    0: "CUDA_SUCCESS",
    1: "CUDA_ERROR_INVALID_VALUE",
    2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    4: "CUDA_ERROR_DEINITIALIZED",
    34: "CUDA_ERROR_STUB_LIBRARY",
    46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
    100: "CUDA_ERROR_NO_DEVICE",
    101: "CUDA_ERROR_INVALID_DEVICE",
    102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
    200: "CUDA_ERROR_INVALID_IMAGE",
    201: "CUDA_ERROR_INVALID_CONTEXT",
    209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
    218: "CUDA_ERROR_INVALID_PTX",
    221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
    222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    304: "CUDA_ERROR_OPERATING_SYSTEM",
    400: "CUDA_ERROR_INVALID_HANDLE",
    500: "CUDA_ERROR_NOT_FOUND",
    700: "CUDA_ERROR_ILLEGAL_ADDRESS",
    710: "CUDA_ERROR_ASSERT",
    719: "CUDA_ERROR_LAUNCH_FAILED",
    800: "CUDA_ERROR_NOT_PERMITTED",
    801: "CUDA_ERROR_NOT_SUPPORTED",
    802: "CUDA_ERROR_SYSTEM_NOT_READY",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    999: "CUDA_ERROR_UNKNOWN",
}

CU_RESULT_HINTS = {
    34: "a stub libcuda was loaded instead of the driver's (check LD_LIBRARY_PATH for .../stubs)",
    46: "the GPU is in exclusive-process or prohibited compute mode, or busy",
    100: "the driver sees no CUDA device (check --gpus / NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES)",
    802: "the system is not ready (fabric manager not running on NVSwitch systems?)",
    803: "libcuda (user-mode driver) and the kernel module have different versions",
    804: "the CUDA forward-compatibility package is in use on a GPU that does not support it",
    999: "unknown error: often a missing /dev/nvidia-uvm or a GPU that needs a reset",
}

# hsa_status_t values (hsa.h, "hsa_status_t" enum) used when hsa_status_string is not usable.
HSA_STATUS_NAMES = {
    0x0: "HSA_STATUS_SUCCESS",
    0x1: "HSA_STATUS_INFO_BREAK",
    0x1000: "HSA_STATUS_ERROR",
    0x1001: "HSA_STATUS_ERROR_INVALID_ARGUMENT",
    0x1002: "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION",
    0x1003: "HSA_STATUS_ERROR_INVALID_ALLOCATION",
    0x1004: "HSA_STATUS_ERROR_INVALID_AGENT",
    0x1005: "HSA_STATUS_ERROR_INVALID_REGION",
    0x1006: "HSA_STATUS_ERROR_INVALID_SIGNAL",
    0x1007: "HSA_STATUS_ERROR_INVALID_QUEUE",
    0x1008: "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
    0x100B: "HSA_STATUS_ERROR_NOT_INITIALIZED",
    0x100C: "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
    0x1016: "HSA_STATUS_ERROR_EXCEPTION",
    0x1025: "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE",
    0x1026: "HSA_STATUS_ERROR_FATAL",
}
# Observed with Debian's ROCr 5.2 (tests/probes/test_container_rocm.py): hsa_init returns
# OUT_OF_RESOURCES whenever it cannot open the KFD: /dev/kfd missing, a /dev/kfd that is
# really /dev/null, or one whose major no driver serves.
HSA_INIT_HINTS = {
    0x1008: "ROCr could not open the KFD: /dev/kfd is missing, not openable, or not the amdgpu driver's "
            "node (see kernel_driver.amd_device_nodes)",
}
HSA_AGENT_INFO_NAME = 0
HSA_AGENT_INFO_DEVICE = 17
HSA_DEVICE_TYPES = {0: "cpu", 1: "gpu", 2: "dsp"}

NVML_ERROR_DRIVER_NOT_LOADED = 9


def cu_result_name(code: int) -> str:
    """The CUresult's name ("CUDA_ERROR_NO_DEVICE"), or "CUresult <n>" when unknown."""
    return CU_RESULT_NAMES.get(code, "CUresult %d" % code)


def hsa_status_name(code: int) -> str:
    return HSA_STATUS_NAMES.get(code, "hsa_status_t 0x%x" % code)


def format_cuda_version(value: int) -> str:
    """cuDriverGetVersion's integer (12040) as "12.4"."""
    return "%d.%d" % (value // 1000, (value % 1000) // 10)


def torch_lib_dir() -> Optional[str]:
    """torch's bundled library folder, found without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "lib")


def load_library(names: Sequence[str], search_dirs: Sequence[str] = ()) -> Tuple[Any, Optional[str], List[str]]:
    """``(library, how it was found, errors)``: by soname through the loader first, then
    as files in ``search_dirs``."""
    errors = []
    for name in names:
        try:
            return ctypes.CDLL(name), name, errors
        except OSError as err:
            errors.append(str(err))
    for folder in search_dirs:
        for name in names:
            for path in sorted(glob.glob(os.path.join(folder, name + "*"))):
                try:
                    return ctypes.CDLL(path), path, errors
                except OSError as err:
                    errors.append(str(err))
    return None, None, errors


def rocm_dirs() -> List[str]:
    roots = [os.environ.get("ROCM_PATH", ""), "/opt/rocm"]
    dirs = [os.path.join(r, "lib") for r in roots if r]
    torch_dir = torch_lib_dir()
    if torch_dir:
        dirs.append(torch_dir)  # ROCm wheels of torch bundle their own runtime
    return dirs


def _absent(vendor: str, expect: Optional[str], library: str, errors: List[str], always_skip: bool = False) -> Outcome:
    if expect == vendor and not always_skip:
        return failed("GPUMATRIX_EXPECT=%s but %s is not available" % (vendor, library), load_errors=errors[:3])
    return skipped("%s not available" % library, load_errors=errors[:3])


def _c_string(value: Any) -> Optional[str]:
    return value.decode("utf-8", "replace") if value else None


# --------------------------------------------------------------------------- CUDA driver


def _cu_error_name(lib: Any, code: int) -> str:
    if code in CU_RESULT_NAMES:
        return CU_RESULT_NAMES[code]
    name = ctypes.c_char_p()
    try:
        if lib.cuGetErrorName(ctypes.c_int(code), ctypes.byref(name)) == 0 and name.value:
            return name.value.decode()
    except AttributeError:
        pass
    return cu_result_name(code)


CONTEXT_TEST_BYTES = 1 << 20


class _Failed(Exception):
    """A driver call returned an error code: ``step`` and the message for the outcome."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(message)
        self.step = step


def _cu_call(lib: Any, name: str, *args: Any) -> None:
    """Call ``name`` and raise _Failed naming the call and its CUresult unless it succeeds."""
    code = getattr(lib, name)(*args)
    if code != 0:
        raise _Failed(name, "%s failed: %s (%d)" % (name, _cu_error_name(lib, code), code))


def cuda_context_round_trip(lib: Any, handle: Any, size: int = CONTEXT_TEST_BYTES) -> Dict[str, Any]:
    """Past cuInit: retain the device's primary context, make it current, allocate, copy a
    pattern host->device->host, synchronize, compare, and release. Raises _Failed."""
    context = ctypes.c_void_p()
    _cu_call(lib, "cuDevicePrimaryCtxRetain", ctypes.byref(context), handle)
    release = getattr(lib, "cuDevicePrimaryCtxRelease_v2", None) or lib.cuDevicePrimaryCtxRelease
    pointer = ctypes.c_uint64(0)
    allocated = False
    try:
        _cu_call(lib, "cuCtxSetCurrent", context)
        _cu_call(lib, "cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(size))
        allocated = True
        pattern = bytes(bytearray((i * 7 + 3) & 0xFF for i in range(256))) * (size // 256)
        source = ctypes.create_string_buffer(pattern, size)
        back = ctypes.create_string_buffer(size)
        _cu_call(lib, "cuMemcpyHtoD_v2", pointer, source, ctypes.c_size_t(size))
        _cu_call(lib, "cuMemcpyDtoH_v2", back, pointer, ctypes.c_size_t(size))
        _cu_call(lib, "cuCtxSynchronize")
        if back.raw != source.raw:
            raise _Failed("compare", "a %d-byte host->device->host copy came back different" % size)
    finally:
        if allocated:
            lib.cuMemFree_v2(pointer)
        release(handle)
    return {"context": True, "bytes_copied": size}


def check_cuda_driver(expect: Optional[str], lib: Any = None) -> Outcome:
    """cuInit, the devices, and on each a primary context with an allocation, copies and a
    synchronize; every CUresult is checked. ``lib``: a loaded libcuda (tests pass a fake)."""
    found = "injected"
    if lib is None:
        lib, found, errors = load_library(["libcuda.so.1", "libcuda.so"])
        if lib is None:
            return _absent("nvidia", expect, "libcuda.so.1", errors)
    details = {"library": found}  # type: Dict[str, Any]
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) == 0:  # works before cuInit
        details["driver_api_version"] = format_cuda_version(version.value)
    code = lib.cuInit(ctypes.c_uint(0))
    details["cuInit"] = {"code": code, "name": _cu_error_name(lib, code)}
    if code != 0:
        message = "cuInit failed: %s (%d)" % (_cu_error_name(lib, code), code)
        if code in CU_RESULT_HINTS:
            message += ": " + CU_RESULT_HINTS[code]
        if code in (100, 34) and expect != "nvidia":
            return skipped(message, **details)
        return failed(message, **details)
    count = ctypes.c_int(0)
    code = lib.cuDeviceGetCount(ctypes.byref(count))
    if code != 0:
        return failed("cuDeviceGetCount failed: %s (%d)" % (_cu_error_name(lib, code), code), **details)
    devices = []  # type: List[Dict[str, Any]]
    problems = []  # type: List[str]
    for index in range(count.value):
        entry = {"index": index}  # type: Dict[str, Any]
        devices.append(entry)
        try:
            handle = ctypes.c_int(0)
            _cu_call(lib, "cuDeviceGet", ctypes.byref(handle), ctypes.c_int(index))
            name = ctypes.create_string_buffer(256)
            _cu_call(lib, "cuDeviceGetName", name, ctypes.c_int(len(name)), handle)
            major, minor = ctypes.c_int(0), ctypes.c_int(0)
            _cu_call(lib, "cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(75), handle)  # CC major
            _cu_call(lib, "cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(76), handle)  # CC minor
            memory = ctypes.c_size_t(0)
            _cu_call(lib, "cuDeviceTotalMem_v2", ctypes.byref(memory), handle)
            entry.update(name=_c_string(name.value), arch="sm_%d%d" % (major.value, minor.value),
                         total_memory_bytes=memory.value)
            entry.update(cuda_context_round_trip(lib, handle))
        except _Failed as err:
            entry["error"] = str(err)
            problems.append("device %d: %s" % (index, err))
    details["devices"] = devices
    if not devices:
        return (failed if expect == "nvidia" else skipped)("cuInit succeeded but no device is visible", **details)
    if problems:
        return failed("; ".join(problems), **details)
    return passed("CUDA driver API %s, %d device(s): primary context, 1 MiB allocation, copies and synchronize "
                  "work" % (details.get("driver_api_version"), len(devices)), **details)


# --------------------------------------------------------------------------- ROCr / HSA


def _hsa_status_name(lib: Any, code: int) -> str:
    """``NAME (0x1008): the library's own text``; ROCr's text already starts with the name."""
    name = hsa_status_name(code)
    text = ctypes.c_char_p()
    try:
        lib.hsa_status_string.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        if lib.hsa_status_string(code, ctypes.byref(text)) == 0 and text.value:
            said = text.value.decode("utf-8", "replace").strip()
            if said.startswith(name):
                said = said[len(name):].lstrip(" :")
            return "%s (0x%x)%s" % (name, code, ": " + said if said else "")
    except AttributeError:
        pass
    return "%s (0x%x)" % (name, code) if name in HSA_STATUS_NAMES.values() else name


HSA_AGENT_INFO_QUEUE_MIN_SIZE = 13
HSA_QUEUE_TYPE_MULTI = 0
HSA_AMD_MEMORY_POOL_INFO_SEGMENT = 0
HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS = 1
HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED = 5
HSA_AMD_SEGMENT_GLOBAL = 0
HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED = 4
UINT32_MAX = 0xFFFFFFFF
POOL_TEST_BYTES = 1 << 20


def _hsa_call(lib: Any, name: str, *args: Any) -> None:
    code = getattr(lib, name)(*args)
    if code != 0:
        raise _Failed(name, "%s failed: %s" % (name, _hsa_status_name(lib, code)))


def hsa_queue_and_pool(lib: Any, agent: int) -> Dict[str, Any]:
    """Past hsa_init, on one GPU agent: create (and destroy) an AQL queue, and allocate (and
    free) 1 MiB from its device-local global pool. Raises _Failed naming the call."""
    minimum = ctypes.c_uint32(0)
    _hsa_call(lib, "hsa_agent_get_info", agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE,
              ctypes.cast(ctypes.byref(minimum), ctypes.c_void_p))
    size = max(int(minimum.value), 64)
    queue = ctypes.c_void_p()
    _hsa_call(lib, "hsa_queue_create", ctypes.c_uint64(agent), ctypes.c_uint32(size),
              ctypes.c_uint32(HSA_QUEUE_TYPE_MULTI), None, None, ctypes.c_uint32(UINT32_MAX),
              ctypes.c_uint32(UINT32_MAX), ctypes.byref(queue))
    _hsa_call(lib, "hsa_queue_destroy", queue)
    pools = []  # type: List[Tuple[int, int]]

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p)
    def visit(pool: int, _data: Any) -> int:
        segment, flags, allowed = ctypes.c_uint32(99), ctypes.c_uint32(0), ctypes.c_bool(False)
        for attribute, value in ((HSA_AMD_MEMORY_POOL_INFO_SEGMENT, segment),
                                 (HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, flags),
                                 (HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, allowed)):
            if lib.hsa_amd_memory_pool_get_info(ctypes.c_uint64(pool), attribute,
                                                ctypes.cast(ctypes.byref(value), ctypes.c_void_p)) != 0:
                return 0
        if segment.value == HSA_AMD_SEGMENT_GLOBAL and allowed.value:
            pools.append((pool, flags.value))
        return 0

    _hsa_call(lib, "hsa_amd_agent_iterate_memory_pools", ctypes.c_uint64(agent), visit, None)
    if not pools:
        raise _Failed("hsa_amd_agent_iterate_memory_pools", "the GPU agent has no allocatable global memory pool")
    pools.sort(key=lambda p: not p[1] & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)  # device memory first
    pointer = ctypes.c_void_p()
    _hsa_call(lib, "hsa_amd_memory_pool_allocate", ctypes.c_uint64(pools[0][0]), ctypes.c_size_t(POOL_TEST_BYTES),
              ctypes.c_uint32(0), ctypes.byref(pointer))
    _hsa_call(lib, "hsa_amd_memory_pool_free", pointer)
    return {"queue_size": size, "pool_allocation_bytes": POOL_TEST_BYTES,
            "pool_coarse_grained": bool(pools[0][1] & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)}


def check_hsa_runtime(expect: Optional[str], lib: Any = None) -> Outcome:
    """hsa_init, the agents, and on each GPU agent a queue and a pool allocation; every
    hsa_status_t is checked. ``lib``: a loaded libhsa-runtime64 (tests pass a fake)."""
    found = "injected"
    if lib is None:
        lib, found, errors = load_library(["libhsa-runtime64.so.1", "libhsa-runtime64.so"], rocm_dirs())
        if lib is None:
            return _absent("amd", expect, "libhsa-runtime64.so", errors)
    details = {"library": found}  # type: Dict[str, Any]
    code = lib.hsa_init()
    if code != 0:
        message = "hsa_init failed: %s" % _hsa_status_name(lib, code)
        details["hsa_init"] = code
        details["hsa_init_name"] = hsa_status_name(code)
        if code in HSA_INIT_HINTS:
            message += " -- " + HSA_INIT_HINTS[code]
        if expect != "amd" and not os.path.exists("/dev/kfd"):
            return skipped(message + " (no /dev/kfd)", **details)
        return failed(message, **details)
    agents = []  # type: List[Dict[str, Any]]
    handles = []  # type: List[int]
    info_errors = []  # type: List[str]
    lib.hsa_agent_get_info.argtypes = [ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p]

    # hsa_agent_t is a struct holding one uint64 handle: passed like a uint64.
    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p)
    def visit(agent: int, _data: Any) -> int:
        name = ctypes.create_string_buffer(64)
        kind = ctypes.c_int(-1)
        for attribute, out in ((HSA_AGENT_INFO_NAME, ctypes.cast(name, ctypes.c_void_p)),
                               (HSA_AGENT_INFO_DEVICE, ctypes.cast(ctypes.byref(kind), ctypes.c_void_p))):
            code = lib.hsa_agent_get_info(agent, attribute, out)
            if code != 0:
                info_errors.append("hsa_agent_get_info(%d) failed: %s" % (attribute, _hsa_status_name(lib, code)))
        agents.append({"name": _c_string(name.value), "type": HSA_DEVICE_TYPES.get(kind.value, str(kind.value))})
        handles.append(agent)
        return 0

    lib.hsa_iterate_agents.argtypes = [type(visit), ctypes.c_void_p]
    problems = []  # type: List[str]
    try:
        code = lib.hsa_iterate_agents(visit, None)
        details["agents"] = agents
        if code != 0:
            return failed("hsa_iterate_agents failed: %s" % _hsa_status_name(lib, code), **details)
        if info_errors:
            return failed("; ".join(info_errors[:3]), **details)
        for agent, entry in zip(handles, agents):
            if entry["type"] != "gpu":
                continue
            try:
                entry.update(hsa_queue_and_pool(lib, agent))
            except _Failed as err:
                entry["error"] = str(err)
                problems.append("%s: %s" % (entry["name"], err))
    finally:
        lib.hsa_shut_down()
    gpus = [a["name"] for a in agents if a["type"] == "gpu"]
    if not gpus:
        return (failed if expect == "amd" else skipped)("HSA runtime initialised but has no GPU agent", **details)
    if problems:
        return failed("; ".join(problems), **details)
    return passed("HSA runtime: %d GPU agent(s): %s; an AQL queue and a 1 MiB pool allocation on each" % (
        len(gpus), ", ".join(str(g) for g in gpus)), **details)


# --------------------------------------------------------------------------- NVML


NVML_ERROR_NOT_SUPPORTED = 3
NVML_COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
# nvmlClocksEventReasons (formerly ClocksThrottleReasons) bits, nvml.h
NVML_CLOCK_REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2


def clock_reasons(mask: int) -> List[str]:
    """The names of the set bits of an NVML clocks-event (throttle) reasons mask."""
    return [name for bit, name in sorted(NVML_CLOCK_REASONS.items()) if mask & bit] + (
        ["unknown 0x%x" % (mask & ~sum(NVML_CLOCK_REASONS))] if mask & ~sum(NVML_CLOCK_REASONS) else [])


def nvml_device_state(lib: Any, handle: Any) -> Dict[str, Any]:
    """What NVML says about one device: persistence, MIG, ECC, compute mode, power limit and
    draw, clocks, clocks-event reasons and the PCIe link. A query the device does not support
    is reported as "not supported"; another error by its NVML text."""
    state = {}  # type: Dict[str, Any]

    def query(key: str, function: str, *extra: Any, kind: Any = ctypes.c_uint, count: int = 1) -> Optional[List[int]]:
        outs = [kind(0) for _ in range(count)]
        call = getattr(lib, function, None)
        if call is None:
            state[key] = "not available in this NVML"
            return None
        code = call(handle, *(list(extra) + [ctypes.byref(o) for o in outs]))
        if code == NVML_ERROR_NOT_SUPPORTED:
            state[key] = "not supported"
            return None
        if code != 0:
            state[key] = "error: %s" % _c_string(lib.nvmlErrorString(code))
            return None
        return [o.value for o in outs]

    value = query("persistence_mode", "nvmlDeviceGetPersistenceMode")
    if value:
        state["persistence_mode"] = bool(value[0])
    value = query("mig_mode", "nvmlDeviceGetMigMode", count=2)
    if value:
        state["mig_mode"] = {"current": bool(value[0]), "pending": bool(value[1])}
    value = query("ecc_mode", "nvmlDeviceGetEccMode", count=2)
    if value:
        state["ecc_mode"] = {"current": bool(value[0]), "pending": bool(value[1])}
    value = query("compute_mode", "nvmlDeviceGetComputeMode")
    if value:
        state["compute_mode"] = NVML_COMPUTE_MODES.get(value[0], str(value[0]))
    value = query("power_limit_w", "nvmlDeviceGetPowerManagementLimit")
    if value:
        state["power_limit_w"] = value[0] / 1000.0
    value = query("power_draw_w", "nvmlDeviceGetPowerUsage")
    if value:
        state["power_draw_w"] = value[0] / 1000.0
    for key, function in (("clocks_mhz", "nvmlDeviceGetClockInfo"), ("max_clocks_mhz", "nvmlDeviceGetMaxClockInfo")):
        clocks = {}
        for name, clock in (("graphics", NVML_CLOCK_GRAPHICS), ("sm", NVML_CLOCK_SM), ("memory", NVML_CLOCK_MEM)):
            value = query(key, function, ctypes.c_int(clock))
            if value:
                clocks[name] = value[0]
        if clocks:
            state[key] = clocks
    function = ("nvmlDeviceGetCurrentClocksEventReasons" if hasattr(lib, "nvmlDeviceGetCurrentClocksEventReasons")
                else "nvmlDeviceGetCurrentClocksThrottleReasons")
    value = query("clock_event_reasons", function, kind=ctypes.c_ulonglong)
    if value:
        state["clock_event_reasons"] = clock_reasons(value[0])
    pcie = {}
    for name, function in (("gen", "nvmlDeviceGetCurrPcieLinkGeneration"), ("width", "nvmlDeviceGetCurrPcieLinkWidth"),
                           ("max_gen", "nvmlDeviceGetMaxPcieLinkGeneration"),
                           ("max_width", "nvmlDeviceGetMaxPcieLinkWidth")):
        value = query("pcie", function)
        if value:
            pcie[name] = value[0]
    if pcie:
        state["pcie"] = pcie
    return state


def check_nvml(expect: Optional[str], lib: Any = None) -> Outcome:
    """nvmlInit, the driver and CUDA versions, and each device's state (``nvml_device_state``).
    ``lib``: a loaded libnvidia-ml (tests pass a fake)."""
    found = "injected"
    if lib is None:
        lib, found, errors = load_library(["libnvidia-ml.so.1", "libnvidia-ml.so"])
        if lib is None:
            return _absent("nvidia", expect, "libnvidia-ml.so.1", errors)
    lib.nvmlErrorString.restype = ctypes.c_char_p
    details = {"library": found}  # type: Dict[str, Any]
    code = lib.nvmlInit_v2()
    if code != 0:
        message = "nvmlInit_v2 failed: %s (%d)" % (_c_string(lib.nvmlErrorString(code)), code)
        if code == NVML_ERROR_DRIVER_NOT_LOADED and expect != "nvidia":
            return skipped(message, **details)
        return failed(message, **details)
    problems = []  # type: List[str]
    try:
        version = ctypes.create_string_buffer(96)
        code = lib.nvmlSystemGetDriverVersion(version, ctypes.c_uint(len(version)))
        if code != 0:
            return failed("nvmlSystemGetDriverVersion failed: %s" % _c_string(lib.nvmlErrorString(code)), **details)
        details["driver_version"] = _c_string(version.value)
        cuda = ctypes.c_int(0)
        if lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(cuda)) == 0:
            details["cuda_driver_version"] = format_cuda_version(cuda.value)
        count = ctypes.c_uint(0)
        code = lib.nvmlDeviceGetCount_v2(ctypes.byref(count))
        if code != 0:
            return failed("nvmlDeviceGetCount_v2 failed: %s" % _c_string(lib.nvmlErrorString(code)), **details)
        names, states = [], []
        for index in range(count.value):
            handle = ctypes.c_void_p()
            name = ctypes.create_string_buffer(96)
            code = lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle))
            if code != 0:
                problems.append("device %d: nvmlDeviceGetHandleByIndex_v2 failed: %s" % (
                    index, _c_string(lib.nvmlErrorString(code))))
                names.append(None)
                continue
            code = lib.nvmlDeviceGetName(handle, name, ctypes.c_uint(len(name)))
            if code != 0:
                problems.append("device %d: nvmlDeviceGetName failed: %s" % (index, _c_string(lib.nvmlErrorString(code))))
            names.append(_c_string(name.value))
            states.append(dict(nvml_device_state(lib, handle), index=index))
        details["devices"] = names
        details["device_state"] = states
    finally:
        lib.nvmlShutdown()
    if problems:
        return failed("; ".join(problems), **details)
    summary = []
    for state in details["device_state"]:
        reasons = [r for r in state.get("clock_event_reasons", []) if r != "gpu_idle"] if isinstance(
            state.get("clock_event_reasons"), list) else []
        summary.append("%s%s" % ("MIG on, " if isinstance(state.get("mig_mode"), dict) and state["mig_mode"]["current"]
                                 else "", "clocks held back: " + "/".join(reasons) if reasons else "no clock limits"))
    return passed("NVML: driver %s, %d device(s)%s" % (details["driver_version"], len(details["devices"]),
                                                       ": " + "; ".join(summary) if summary else ""), **details)


# --------------------------------------------------------------------------- ROCm SMI


class _RsmiVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("patch", ctypes.c_uint32),
                ("build", ctypes.c_char_p)]


def check_rocm_smi(expect: Optional[str]) -> Outcome:
    lib, found, errors = load_library(["librocm_smi64.so.1", "librocm_smi64.so"], rocm_dirs())
    if lib is None:
        return _absent("amd", expect, "librocm_smi64.so (optional tooling)", errors, always_skip=True)
    details = {"library": found}  # type: Dict[str, Any]

    def status_text(code: int) -> str:
        text = ctypes.c_char_p()
        try:
            if lib.rsmi_status_string(ctypes.c_int(code), ctypes.byref(text)) == 0 and text.value:
                return "%s (%d)" % (text.value.decode("utf-8", "replace").strip(), code)
        except AttributeError:
            pass
        return "rsmi_status_t %d" % code

    code = lib.rsmi_init(ctypes.c_uint64(0))
    if code != 0:
        if expect != "amd" and not os.path.exists("/dev/kfd"):
            return skipped("rsmi_init failed: %s (no /dev/kfd)" % status_text(code), **details)
        return failed("rsmi_init failed: %s" % status_text(code), **details)
    try:
        version = _RsmiVersion()
        if lib.rsmi_version_get(ctypes.byref(version)) == 0:
            details["library_version"] = "%d.%d.%d" % (version.major, version.minor, version.patch)
        count = ctypes.c_uint32(0)
        code = lib.rsmi_num_monitor_devices(ctypes.byref(count))
        if code != 0:
            return failed("rsmi_num_monitor_devices failed: %s" % status_text(code), **details)
        names = []
        for index in range(count.value):
            name = ctypes.create_string_buffer(256)
            code = lib.rsmi_dev_name_get(ctypes.c_uint32(index), name, ctypes.c_size_t(len(name)))
            if code != 0:
                details["devices"] = names
                return failed("rsmi_dev_name_get(%d) failed: %s" % (index, status_text(code)), **details)
            names.append(_c_string(name.value))
        details["devices"] = names
    finally:
        lib.rsmi_shut_down()
    if not names:
        return (failed if expect == "amd" else skipped)("ROCm SMI sees no device", **details)
    return passed("ROCm SMI %s: %d device(s)" % (details.get("library_version"), len(names)), **details)


PROBES = [
    Probe("system_runtime.cuda_driver", lambda ctx: check_cuda_driver(ctx.expect),
          group="system_runtime.cuda_driver", needs=NEEDS_NOTHING, quick=True, timeout_s=60.0, gpu_init=True),
    Probe("system_runtime.hsa_runtime", lambda ctx: check_hsa_runtime(ctx.expect),
          group="system_runtime.hsa_runtime", needs=NEEDS_NOTHING, quick=True, timeout_s=60.0, gpu_init=True),
    Probe("system_runtime.nvml", lambda ctx: check_nvml(ctx.expect),
          group="system_runtime.nvml", needs=NEEDS_NOTHING, quick=True, timeout_s=60.0, gpu_init=True),
    Probe("system_runtime.rocm_smi", lambda ctx: check_rocm_smi(ctx.expect),
          group="system_runtime.rocm_smi", needs=NEEDS_NOTHING, quick=True, timeout_s=60.0),
]
