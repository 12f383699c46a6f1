"""Fake torch objects for GPU-only code paths, built from what real devices report.

``FakeTorch`` delegates everything to the real (CPU) torch except ``torch.cuda`` and
``torch.device("cuda", i)``, which map onto the CPU: the probe code runs its real logic
and arithmetic, while the device list, properties and arch list are the recorded ones.
Properties follow torch's ``_CudaDeviceProperties`` field names.
"""

import types

import torch as real_torch


def props(name, major, minor, total_memory, gcn_arch_name=None, is_integrated=False, pci=None):
    fields = dict(name=name, major=major, minor=minor, total_memory=total_memory, multi_processor_count=132,
                  is_integrated=is_integrated)
    if gcn_arch_name is not None:
        fields["gcnArchName"] = gcn_arch_name
    if pci is not None:
        fields.update(pci_domain_id=pci[0], pci_bus_id=pci[1], pci_device_id=pci[2])
    return types.SimpleNamespace(**fields)


# As torch 2.5+ reports them (names from torch.cuda.get_device_name on those machines).
H100 = props("NVIDIA H100 80GB HBM3", 9, 0, 85031714816)
MI300X = props("AMD Instinct MI300X", 9, 4, 205822885888, "gfx942:sramecc+:xnack-")
RX6700XT_AS_1030 = props("AMD Radeon RX 6700 XT", 10, 3, 12868124672, "gfx1030", pci=(0, 3, 0))
RAPHAEL_IGPU = props("AMD Radeon Graphics", 10, 3, 536870912, "gfx1036", is_integrated=True, pci=(0, 0x7c, 0))
RX7900XTX = props("Radeon RX 7900 XTX", 11, 0, 25753026560, "gfx1100", pci=(0, 3, 0))


class FakeCuda:
    def __init__(self, devices, arch_list):
        self.devices = list(devices)
        self.arch_list = list(arch_list)
        self.current = 0
        self.synchronized = []

    def is_available(self):
        return bool(self.devices)

    def device_count(self):
        return len(self.devices)

    def get_device_properties(self, index):
        return self.devices[index]

    def get_device_name(self, index=0):
        return self.devices[index].name

    def get_arch_list(self):
        return list(self.arch_list)

    def set_device(self, index):
        self.current = index

    def synchronize(self, index=None):
        self.synchronized.append(index)

    def is_initialized(self):
        return True


class FakeTorch:
    """torch with a fake GPU runtime; tensors on "cuda:i" live on the CPU."""

    def __init__(self, devices, arch_list, hip=None, cuda="12.4"):
        self.cuda = FakeCuda(devices, arch_list)
        self.version = types.SimpleNamespace(hip=hip, cuda=None if hip else cuda, debug=False, git_version="fake")
        self.devices_used = []

    def device(self, kind, index=None):
        if kind == "cuda":
            self.devices_used.append(index)
            return real_torch.device("cpu")
        return real_torch.device(kind) if index is None else real_torch.device(kind, index)

    def __getattr__(self, name):
        return getattr(real_torch, name)
