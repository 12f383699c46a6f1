"""Fake libcuda / libhsa-runtime64 objects for the layer-2 probes (no GPU here).

They answer the ctypes calls the probes make the way the real libraries do: out-parameters
are written through the pointers passed in, and every call returns a status code. The
device data follows what the real libraries report on those machines: an H100 SXM
(``cuDeviceGetName`` "NVIDIA H100 80GB HBM3", capability 9.0, 85031714816 bytes, driver API
12.4), and an MI300X node as rocminfo shows it (a CPU agent, a gfx942 GPU agent with queue
min size 64, and GLOBAL pools: coarse-grained, fine-grained, kernarg; a GROUP pool that
does not allow runtime allocation).
"""

import ctypes


class FakeLibcuda:
    def __init__(self, fail=None, corrupt=False, devices=1):
        self.fail = dict(fail or {})  # call name -> CUresult to return
        self.corrupt = corrupt
        self.devices = devices
        self.calls = []
        self.memory = {}
        self.retained = 0

    def _rc(self, name):
        self.calls.append(name)
        return self.fail.get(name, 0)

    def cuGetErrorName(self, code, out):
        return 1  # fall back to the table in the probe

    def cuDriverGetVersion(self, out):
        out._obj.value = 12040
        return self._rc("cuDriverGetVersion")

    def cuInit(self, flags):
        return self._rc("cuInit")

    def cuDeviceGetCount(self, out):
        out._obj.value = self.devices
        return self._rc("cuDeviceGetCount")

    def cuDeviceGet(self, out, index):
        out._obj.value = index.value
        return self._rc("cuDeviceGet")

    def cuDeviceGetName(self, buf, size, dev):
        buf.value = b"NVIDIA H100 80GB HBM3"
        return self._rc("cuDeviceGetName")

    def cuDeviceGetAttribute(self, out, attribute, dev):
        out._obj.value = {75: 9, 76: 0}[attribute.value]
        return self._rc("cuDeviceGetAttribute")

    def cuDeviceTotalMem_v2(self, out, dev):
        out._obj.value = 85031714816
        return self._rc("cuDeviceTotalMem_v2")

    def cuDevicePrimaryCtxRetain(self, out, dev):
        code = self._rc("cuDevicePrimaryCtxRetain")
        if code == 0:
            out._obj.value = 0x5A5A0000
            self.retained += 1
        return code

    def cuDevicePrimaryCtxRelease_v2(self, dev):
        self.retained -= 1
        return self._rc("cuDevicePrimaryCtxRelease_v2")

    def cuCtxSetCurrent(self, context):
        return self._rc("cuCtxSetCurrent")

    def cuMemAlloc_v2(self, out, size):
        code = self._rc("cuMemAlloc_v2")
        if code == 0:
            out._obj.value = 0x7F0000000000
            self.memory[0x7F0000000000] = b""
        return code

    def cuMemFree_v2(self, pointer):
        self.memory.pop(pointer.value, None)
        return self._rc("cuMemFree_v2")

    def cuMemcpyHtoD_v2(self, pointer, host, size):
        self.memory[pointer.value] = host.raw[:size.value]
        return self._rc("cuMemcpyHtoD_v2")

    def cuMemcpyDtoH_v2(self, host, pointer, size):
        data = self.memory[pointer.value]
        if self.corrupt:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        ctypes.memmove(host, data, size.value)
        return self._rc("cuMemcpyDtoH_v2")

    def cuCtxSynchronize(self):
        return self._rc("cuCtxSynchronize")


class _Function:
    """A callable that, like a ctypes function, accepts ``argtypes`` / ``restype``."""

    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)


# rocminfo on an MI300X node: pools of the GPU agent (segment, flags, runtime alloc allowed)
MI300X_POOLS = [(0, 4, True), (0, 8, True), (0, 2, True), (0, 1, True), (3, 0, False)]


class FakeLibhsa:
    def __init__(self, fail=None, pools=None, init=0):
        self.fail = dict(fail or {})
        self.pools = MI300X_POOLS if pools is None else pools
        self.init = init
        self.calls = []
        self.allocated = []
        self.queues = []
        for name in ("hsa_agent_get_info", "hsa_iterate_agents", "hsa_status_string"):
            setattr(self, name, _Function(getattr(self, name)))

    def _rc(self, name):
        self.calls.append(name)
        return self.fail.get(name, 0)

    def hsa_init(self):
        self.calls.append("hsa_init")
        return self.init

    def hsa_shut_down(self):
        return self._rc("hsa_shut_down")

    def hsa_status_string(self, code, out):
        return 1  # fall back to the probe's names

    def hsa_iterate_agents(self, visit, data):
        for handle in (1, 2):  # CPU agent, GPU agent
            if visit(handle, None) != 0:
                break
        return self._rc("hsa_iterate_agents")

    def hsa_agent_get_info(self, agent, attribute, out):
        address = out.value if isinstance(out, ctypes.c_void_p) else out
        if attribute == 0:  # NAME
            name = b"AMD EPYC 9654 96-Core Processor\0" if agent == 1 else b"gfx942\0"
            ctypes.memmove(address, name, len(name))
        elif attribute == 17:  # DEVICE
            ctypes.cast(address, ctypes.POINTER(ctypes.c_int))[0] = 0 if agent == 1 else 1
        elif attribute == 13:  # QUEUE_MIN_SIZE
            ctypes.cast(address, ctypes.POINTER(ctypes.c_uint32))[0] = 64
        return self._rc("hsa_agent_get_info")

    def hsa_queue_create(self, agent, size, kind, callback, data, private, group, out):
        code = self._rc("hsa_queue_create")
        if code == 0:
            out._obj.value = 0xC0DE0000
            self.queues.append(size.value)
        return code

    def hsa_queue_destroy(self, queue):
        return self._rc("hsa_queue_destroy")

    def hsa_amd_agent_iterate_memory_pools(self, agent, visit, data):
        for index in range(len(self.pools)):
            visit(100 + index, None)
        return self._rc("hsa_amd_agent_iterate_memory_pools")

    def hsa_amd_memory_pool_get_info(self, pool, attribute, out):
        segment, flags, allowed = self.pools[pool.value - 100]
        address = out.value
        if attribute == 0:
            ctypes.cast(address, ctypes.POINTER(ctypes.c_uint32))[0] = segment
        elif attribute == 1:
            ctypes.cast(address, ctypes.POINTER(ctypes.c_uint32))[0] = flags
        elif attribute == 5:
            ctypes.cast(address, ctypes.POINTER(ctypes.c_bool))[0] = allowed
        return self._rc("hsa_amd_memory_pool_get_info")

    def hsa_amd_memory_pool_allocate(self, pool, size, flags, out):
        code = self._rc("hsa_amd_memory_pool_allocate")
        if code == 0:
            out._obj.value = 0x7E0000000000
            self.allocated.append((pool.value, size.value))
        return code

    def hsa_amd_memory_pool_free(self, pointer):
        return self._rc("hsa_amd_memory_pool_free")


class FakeLibnvml:
    """libnvidia-ml as an H100 SXM answers (driver 550.54.15, CUDA 12.4): persistence on,
    MIG off, ECC on, default compute mode, 700 W limit, PCIe Gen5 x16; ``reasons`` is the
    clocks-event mask (0x4 = SW power cap)."""

    def __init__(self, reasons=0x1, mig=0, unsupported=(), fail=None):
        self.reasons, self.mig, self.unsupported, self.fail = reasons, mig, set(unsupported), dict(fail or {})
        self.nvmlErrorString = _Function(lambda code: {3: b"Not Supported", 999: b"Unknown Error"}.get(code, b"?"))
        self.shut_down = False

    def _out(self, name, *values):
        if name in self.unsupported:
            return 3
        return self.fail.get(name, 0)

    def nvmlInit_v2(self):
        return 0

    def nvmlShutdown(self):
        self.shut_down = True
        return 0

    def nvmlSystemGetDriverVersion(self, buf, size):
        buf.value = b"550.54.15"
        return 0

    def nvmlSystemGetCudaDriverVersion_v2(self, out):
        out._obj.value = 12040
        return 0

    def nvmlDeviceGetCount_v2(self, out):
        out._obj.value = 1
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, index, out):
        out._obj.value = 0x1000
        return self.fail.get("nvmlDeviceGetHandleByIndex_v2", 0)

    def nvmlDeviceGetName(self, handle, buf, size):
        buf.value = b"NVIDIA H100 80GB HBM3"
        return 0

    def _set(self, name, pairs):
        code = self._out(name)
        if code == 0:
            for out, value in pairs:
                out._obj.value = value
        return code

    def nvmlDeviceGetPersistenceMode(self, handle, out):
        return self._set("nvmlDeviceGetPersistenceMode", [(out, 1)])

    def nvmlDeviceGetMigMode(self, handle, current, pending):
        return self._set("nvmlDeviceGetMigMode", [(current, self.mig), (pending, self.mig)])

    def nvmlDeviceGetEccMode(self, handle, current, pending):
        return self._set("nvmlDeviceGetEccMode", [(current, 1), (pending, 1)])

    def nvmlDeviceGetComputeMode(self, handle, out):
        return self._set("nvmlDeviceGetComputeMode", [(out, 0)])

    def nvmlDeviceGetPowerManagementLimit(self, handle, out):
        return self._set("nvmlDeviceGetPowerManagementLimit", [(out, 700000)])

    def nvmlDeviceGetPowerUsage(self, handle, out):
        return self._set("nvmlDeviceGetPowerUsage", [(out, 71234)])

    def nvmlDeviceGetClockInfo(self, handle, kind, out):
        return self._set("nvmlDeviceGetClockInfo", [(out, {0: 345, 1: 345, 2: 2619}[kind.value])])

    def nvmlDeviceGetMaxClockInfo(self, handle, kind, out):
        return self._set("nvmlDeviceGetMaxClockInfo", [(out, {0: 1980, 1: 1980, 2: 2619}[kind.value])])

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle, out):
        return self._set("nvmlDeviceGetCurrentClocksEventReasons", [(out, self.reasons)])

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle, out):
        return self._set("nvmlDeviceGetCurrPcieLinkGeneration", [(out, 5)])

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle, out):
        return self._set("nvmlDeviceGetCurrPcieLinkWidth", [(out, 16)])

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle, out):
        return self._set("nvmlDeviceGetMaxPcieLinkGeneration", [(out, 5)])

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle, out):
        return self._set("nvmlDeviceGetMaxPcieLinkWidth", [(out, 16)])
