"""The two public vocabularies of the diagnosis: causes and facts. Declared once, here.

A rule in ``diagnosis_rules.yaml`` may only name a cause from :data:`CAUSES` and a fact
from :data:`FACTS`; the loader rejects anything else with a suggestion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: The public cause vocabulary. The first fifteen are the original ones, in the order the
#: first issue defined them; build failures were added later, at the end, so that
#: nothing that indexes the tuple moves.
CAUSES: tuple[str, ...] = (
    "container_toolkit_missing",
    "no_device_visible",
    "driver_not_loaded",
    "device_permission",
    "driver_too_old",
    "arch_unsupported",
    "cpu_only_build",
    "wrong_vendor_build",
    "runtime_init_failure",
    "shm_too_small",
    "out_of_memory",
    "collective_failure",
    "dnn_library_failure",
    "library_mismatch",
    "hardware_fault",
    "unknown",
    "package_unavailable",
    "index_unreachable",
    "image_unavailable",
    "disk_full",
)


@dataclass(frozen=True)
class Fact:
    """One fact the rules may test: its name, its type and what it means."""

    name: str
    type: str  # str | version | bool | int | list[str] | list[dict]; "?" suffix: None is meaningful
    meaning: str
    derived: bool = False  # computed by the diagnosis from other facts or data when absent

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` has this fact's type (None only where the type allows it)."""
        if value is None:
            return self.type.endswith("?")
        base = self.type.rstrip("?")
        if base in ("str", "version"):
            return isinstance(value, (str, int, float)) and not isinstance(value, bool)
        if base == "bool":
            return isinstance(value, bool)
        if base == "int":
            return isinstance(value, int) and not isinstance(value, bool)
        if base == "list[str]":
            return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        if base == "list[dict]":
            return isinstance(value, (list, tuple))
        return False


_FACT_LIST: tuple[Fact, ...] = (
    # --- the cell and the host
    Fact("vendor", "str", "The cell's GPU vendor: nvidia, amd or cpu."),
    Fact("host_gpu_vendors", "list[str]", "Vendors of the GPUs the host (or a pasted report) lists."),
    Fact("gpu_listed", "bool", "A report (nvidia-smi, rocminfo, rocm-smi, amd-smi, collect_env) lists at least "
                               "one GPU; false when it says there is none."),
    Fact("host_os", "str", "linux, wsl or windows (driver numbering differs on windows/wsl)."),
    Fact("host_driver_version", "version?", "The host's NVIDIA driver version (570.86.15); None = known to be "
                                            "absent. Never the amdgpu version."),
    Fact("amd_driver_loaded", "bool", "The amdgpu/ROCk kernel module is loaded on the host."),
    Fact("driver_cuda_version", "version", "The newest CUDA the host driver supports (nvidia-smi 'CUDA Version')."),
    Fact("dev_kfd_present", "bool", "/dev/kfd exists on the host (the AMD compute driver is up)."),
    Fact("host_missing_devices", "list[str]", "Device paths the engine could not find on the host "
                                              "(docker --device errors)."),
    Fact("compute_mode", "str", "NVIDIA compute mode, lower case: default, exclusive_process, prohibited."),
    # --- the image and its build
    Fact("image_cuda", "version", "The CUDA version the image (its base image) provides, e.g. 12.8."),
    Fact("image_rocm", "version", "The ROCm version the image provides, e.g. 6.2."),
    Fact("required_min_driver", "version", "Minimum NVIDIA driver for image_cuda (the GA driver of that CUDA, what "
                                           "NVIDIA_REQUIRE_CUDA enforces); for a pasted torch report the "
                                           "minor-version-compatibility floor of its CUDA major.", derived=True),
    Fact("required_by_cuda", "version", "The CUDA version required_min_driver was computed for.", derived=True),
    Fact("torch_version", "str", "torch.__version__ (2.7.1+cu128)."),
    Fact("torch_cuda", "version?", "torch.version.cuda; None = a build without CUDA."),
    Fact("torch_hip", "version?", "torch.version.hip; None = a build without HIP."),
    Fact("torch_cuda_available", "bool", "torch.cuda.is_available() (also true for HIP)."),
    Fact("torch_arch_list", "list[str]", "torch.cuda.get_arch_list(): the archs compiled into the build."),
    Fact("device_arch", "str", "The GPU's architecture: sm_120, gfx1100."),
    Fact("hsa_override_gfx_version", "str?", "HSA_OVERRIDE_GFX_VERSION in force in the container; None/absent "
                                             "= not set."),
    Fact("hsa_override_arch", "str", "The gfx target HSA_OVERRIDE_GFX_VERSION makes ROCm assume (11.0.0 -> "
                                     "gfx1100).", derived=True),
    Fact("hsa_override_expected", "str", "The override the hsa_override table recommends for device_arch.",
         derived=True),
    # --- inside the container
    Fact("container_device_nodes", "list[str]", "GPU device nodes inside the container (/dev/nvidia0, /dev/kfd, "
                                                "/dev/dri/renderD128)."),
    Fact("device_nodes_present", "bool", "Any GPU device node inside the container (derived from "
                                         "container_device_nodes when absent).", derived=True),
    Fact("nvidia_gpu_nodes_present", "bool", "Any /dev/nvidia<N> (a GPU's own node, not nvidiactl or nvidia-uvm) "
                                             "inside the container (derived from container_device_nodes).",
         derived=True),
    Fact("container_device_nodes_denied", "list[str]", "GPU device nodes inside the container that exist but that "
                                                       "this process may not open (the probe suite's read-write open "
                                                       "failed with EACCES: mode, owner, group or a security module; "
                                                       "an empty list: every node checked opened)."),
    Fact("shm_bytes", "int", "Size of /dev/shm inside the container."),
    # --- the container engine
    Fact("engine_runtimes", "list[str]", "Runtimes registered with the engine (docker info 'Runtimes')."),
    Fact("engine_default_runtime", "str", "The engine's default runtime."),
    # --- build tools
    Fact("pip_failure", "str", "Why pip found no distribution: index_unreachable, version_missing, "
                               "variant_missing, python_missing or no_wheel."),
    Fact("pip_requirement", "str", "The requirement pip could not satisfy (torch==2.1.0+cu113)."),
    Fact("pip_detail", "str", "What the release data says about that requirement."),
    Fact("pip_indexes", "list[str]", "Index URLs pip looked in."),
    Fact("pip_unreachable_host", "str", "The index host pip could not reach."),
    Fact("apt_unreachable_host", "str", "The apt repository host that could not be reached."),
    Fact("apt_missing_packages", "list[str]", "Packages apt could not find or has no candidate for."),
    Fact("apt_untrusted_host", "str", "The apt repository host apt refused because it could not verify its "
                                      "signature (NO_PUBKEY, not signed)."),
    # --- probes and reports
    Fact("probe_failures", "list[dict]", "Failed probes {id, layer, status, message}; their messages are read as "
                                         "log text."),
    Fact("report_kinds", "list[str]", "The reports recognised in the pasted text (collect_env, nvidia-smi, ...)."),
)

#: name -> :class:`Fact`; the one declaration of the fact vocabulary.
FACTS: Mapping[str, Fact] = {fact.name: fact for fact in _FACT_LIST}
