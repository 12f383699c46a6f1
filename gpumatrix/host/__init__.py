"""Host discovery: which GPUs, drivers and container plumbing this host has.

Vendor tools are used when present (``nvidia-smi``, ``amd-smi``, ``rocm-smi``), never required: the
kernel's own files are read first and always — ``/proc/driver/nvidia``, the KFD topology and DRM render
nodes in sysfs, and PCI sysfs, which shows a GPU even when its driver is not loaded. Every reader takes a
``root`` so tests can point it at a fake tree; tool outputs are parsed by pure functions that tests feed
with recorded real outputs (``tests/fixtures/host``).

Discovery reads the machine gpumatrix runs on: with a local engine (a unix socket, the normal case) that
is the machine whose devices the containers get. Rooms: :mod:`.model` (``GPU``, ``HostInfo``, the one
host-type label), :mod:`.nvidia`, :mod:`.amd`, :mod:`.plumbing` (devices, groups, CDI, engine facts),
:mod:`.discover`.
"""

from gpumatrix.host.amd import (
                                amd_driver_version,
                                amd_gpus_from_kfd,
                                gfx_name,
                                parse_amd_smi_static,
                                parse_kfd_properties,
                                parse_rocm_smi_json,
)
from gpumatrix.host.discover import discover_host
from gpumatrix.host.model import (
                                CDI_SPEC_DIRS,
                                GPU,
                                NVIDIA_TOOLKIT_BINARIES,
                                PCI_VENDOR_AMD,
                                PCI_VENDOR_NVIDIA,
                                VENDOR_OF_PCI,
                                HostInfo,
                                ToolRunner,
                                host_type_label,
)
from gpumatrix.host.nvidia import (
                                NVIDIA_QUERY_FIELDS,
                                nvidia_arch_from_name,
                                nvidia_driver_version,
                                nvidia_gpus_from_proc,
                                nvidia_smi_driver,
                                parse_nvidia_driver_version,
                                parse_nvidia_information,
                                parse_nvidia_smi_csv,
                                query_nvidia_smi,
)
from gpumatrix.host.plumbing import (
                                cdi_specs,
                                device_gid,
                                device_modes,
                                engine_facts,
                                group_ids_from_file,
                                pci_display_devices,
                                summarise_cdi_spec,
)

__all__ = [
    "CDI_SPEC_DIRS", "GPU", "NVIDIA_QUERY_FIELDS", "NVIDIA_TOOLKIT_BINARIES", "PCI_VENDOR_AMD", "PCI_VENDOR_NVIDIA",
    "VENDOR_OF_PCI", "HostInfo", "ToolRunner", "amd_driver_version", "amd_gpus_from_kfd", "cdi_specs",
    "device_gid", "device_modes", "discover_host", "engine_facts", "gfx_name", "group_ids_from_file",
    "host_type_label", "nvidia_arch_from_name", "nvidia_driver_version", "nvidia_gpus_from_proc",
    "nvidia_smi_driver", "parse_amd_smi_static", "parse_kfd_properties", "parse_nvidia_driver_version",
    "parse_nvidia_information", "parse_nvidia_smi_csv", "parse_rocm_smi_json", "pci_display_devices",
    "query_nvidia_smi", "summarise_cdi_spec",
]
