"""Why a cell cannot work on this host, decided before anything is built or run.

:func:`preflight_cell` gives the reason one cell cannot work here (driver too old for its CUDA, GPU arch not
compiled into its torch, no passthrough), so a run marks such cells instead of spending an hour building
them; ``invoke doctor`` shows the same judgements with their fixes. Release facts come from the knowledge
layer (``cuda_drivers.yaml``, ``torch_archs.yaml``), never from code.
"""

from __future__ import annotations

from typing import Iterable

from gpumatrix.config.matrix import Base, Cell, RunOptions
from gpumatrix.host import GPU, HostInfo
from gpumatrix.knowledge.archs import code_runs, torch_arch_list
from gpumatrix.knowledge.drivers import (
    cuda_version_of_image,
    cuda_version_of_variant,
    driver_need,
    is_nvidia_cuda_image,
    max_cuda_for_driver,
)
from gpumatrix.knowledge.versions import release
from gpumatrix.run.passthrough import (
    PassthroughUnavailable,
    amd_missing_kfd_hint,
    hsa_override_for,
    resolve_nvidia_mode,
)


def _upgrade_fix(need: str, host_driver: str) -> str:
    branch = need.split(".")[0]
    supported = max_cuda_for_driver(host_driver)
    return (f"install NVIDIA driver >= {need} (e.g. Ubuntu: sudo apt install nvidia-driver-{branch}-server, "
            f"or NVIDIA's CUDA repository: sudo apt install cuda-drivers), reboot, check with nvidia-smi"
            + (f"; or use a base with CUDA <= {supported}, which driver {host_driver} supports" if supported else ""))


def driver_check(base: Base, host: HostInfo, run: RunOptions | None = None,
                 variant: str | None = None) -> tuple[str, str, str]:
    """``(status, detail, fix)`` for an NVIDIA base's CUDA against the host driver."""
    run = run or RunOptions()
    driver = host.nvidia_driver
    cuda, source = cuda_version_of_image(base.image, base.variant)
    if cuda is None:
        return "skip", f"base {base.id}: no CUDA version in {base.image} or variant {base.variant}", ""
    if not driver:
        return "skip", f"base {base.id} (CUDA {cuda}): no NVIDIA driver on this host to compare with", ""
    have = release(driver)
    # The torch wheels bring their own CUDA runtime: they need the floor of their own major.
    wheel_cuda = cuda_version_of_variant(variant or base.variant)
    if wheel_cuda:
        wneed = driver_need(wheel_cuda)
        if wneed.floor and have < release(wneed.floor):
            return ("fail", f"host driver {driver} < {wneed.floor} needed by torch's {variant or base.variant} wheels "
                            f"(CUDA {wheel_cuda.split('.')[0]}.x, even with minor-version compatibility)",
                    _upgrade_fix(wneed.ga or wneed.floor, driver))
    need = driver_need(cuda)
    if need.full is None:
        return "warn", (f"base {base.id}: no driver data for CUDA {cuda} in cuda_drivers.yaml"
                        + (f" ({need.note})" if need.note else "")), "check NVIDIA's release notes"
    if need.floor and have < release(need.floor):
        return ("fail", f"host driver {driver} < {need.full} needed by CUDA {cuda} ({base.image}); "
                        f"even CUDA {cuda.split('.')[0]}.x minor-version compatibility needs >= {need.floor}",
                _upgrade_fix(need.full, driver) + "; data-center GPUs can instead use forward compatibility "
                                                  "(the image's cuda-compat package)")
    mode = None
    try:
        mode, _ = resolve_nvidia_mode(host, run.nvidia_mode)
    except PassthroughUnavailable:
        pass
    if (is_nvidia_cuda_image(base.image) and need.ga and have < release(need.ga)
            and not run.disable_require and mode != "cdi"):
        return ("fail", f"host driver {driver} < {need.ga}: {base.image} sets NVIDIA_REQUIRE_CUDA=cuda>={'.'.join(cuda.split('.')[:2])}"
                        f" and the container toolkit refuses to start it "
                        f"('requirement error: unsatisfied condition: cuda>=…')",
                _upgrade_fix(need.full, driver) + "; or set run: {disable_require: true} to start it anyway "
                                                  "and rely on minor-version compatibility (torch wheels carry their own CUDA runtime)")
    if have < release(need.full):
        return ("warn", f"host driver {driver} < {need.full} of CUDA {cuda} ({source}): runs through minor-version "
                        f"compatibility (no PTX JIT of newer PTX)", _upgrade_fix(need.full, driver))
    return "pass", f"base {base.id}: CUDA {cuda} ({source}) needs driver >= {need.full}; host has {driver}", ""


def arch_check(cell: Cell, host: HostInfo) -> tuple[str, str, str] | None:
    """``(status, detail, fix)`` of the host's GPUs of the cell's vendor against its torch build; None if unknown."""
    if cell.torch.wheel is not None or cell.vendor not in ("nvidia", "amd"):
        return None
    gpus = [(g, g.arch) for g in host.vendor_gpus(cell.vendor) if g.arch]
    arch_list = torch_arch_list(cell.torch.version, cell.base.variant)
    if not gpus or arch_list is None:
        return None
    build = f"torch {cell.torch.version}+{cell.base.variant}"
    override = hsa_override_for(cell.base) if cell.vendor == "amd" else None
    fits: list[tuple[GPU, str]] = []
    misfits: list[tuple[GPU, str]] = []
    for g, arch in gpus:
        verdict = code_runs(arch, arch_list, override=override)
        ok, how = verdict["match"] != "none", verdict["description"]
        (fits if ok else misfits).append((g, how))
    listed = ", ".join(arch_list)
    if not misfits:
        return "pass", f"{cell.id}: " + "; ".join(f"GPU {g.index} {g.arch}: {how}" for g, how in fits), ""
    names = ", ".join(sorted({f"{g.arch} ({g.name})" for g, _ in misfits}))
    fix = ("use a torch build that lists the arch (see gpumatrix/data/torch_archs.yaml)"
           + ("; for a consumer card close to a supported one set hsa_override_gfx_version on the base "
              "(e.g. \"11.0.0\" for gfx1100-like RDNA3)" if cell.vendor == "amd" else ""))
    detail = f"{build} has no kernels for {names}: it ships {listed}"
    return ("warn" if fits else "fail"), detail + (f" (GPUs {', '.join(str(g.index) for g, _ in fits)} fit)" if fits else ""), fix


def passthrough_problem(vendor: str, host: HostInfo, run: RunOptions | None = None) -> str | None:
    """Why containers cannot get ``vendor``'s GPUs here (full message), or None."""
    run = run or RunOptions()
    if vendor == "nvidia":
        if not host.vendor_gpus("nvidia"):
            return None
        try:
            resolve_nvidia_mode(host, run.nvidia_mode)
        except PassthroughUnavailable as err:
            return str(err)
        return None
    if vendor == "amd":
        engine = host.engine or {}
        if host.vendor_gpus("amd") and (engine.get("docker_desktop") or not host.dev_kfd):
            return f"AMD GPU(s) found but containers cannot get them: no /dev/kfd. {amd_missing_kfd_hint(host)}"
        return None
    return None


def preflight_cell(cell: Cell, host: HostInfo, run: RunOptions | None = None) -> str | None:
    """The reason ``cell`` cannot work on ``host`` (one line plus its fix), or None when nothing is known against it.

    Cells whose vendor has no GPU here return None (the run skips them for that reason already),
    except when the GPU is on the PCI bus without its driver loaded.
    """
    run = run or RunOptions()
    if not cell.applicable or cell.vendor not in ("nvidia", "amd"):
        return None
    if not host.vendor_gpus(cell.vendor):
        on_pci = [bus for vendor, bus, _ in host.pci_gpus if vendor == cell.vendor]
        if on_pci:
            driver = "nvidia" if cell.vendor == "nvidia" else "amdgpu"
            return (f"{cell.vendor.upper() if cell.vendor == 'amd' else 'NVIDIA'} GPU at {', '.join(on_pci)} "
                    f"but its driver ({driver}) is not loaded (fix: install/load it, e.g. sudo modprobe {driver}; "
                    f"check: {'nvidia-smi' if driver == 'nvidia' else 'ls -l /dev/kfd'})")
        return None
    problem = passthrough_problem(cell.vendor, host, run)
    if problem:
        first, _, rest = problem.partition("\n")
        return first + (" (run 'invoke doctor' for the fix)" if rest else "")
    if cell.vendor == "nvidia":
        status, detail, fix = driver_check(cell.base, host, run, cell.base.variant)
        if status == "fail":
            return f"{detail} (fix: {fix})"
    found = arch_check(cell, host)
    if found and found[0] == "fail":
        return f"{found[1]} (fix: {found[2]})"
    return None


def passthrough_blockers(cells: Iterable[Cell], host: HostInfo, run: RunOptions | None = None) -> list[str]:
    """The distinct full passthrough messages for the selected cells: print each once before a run."""
    out: list[str] = []
    for vendor in sorted({c.vendor for c in cells if c.applicable}):
        problem = passthrough_problem(vendor, host, run)
        if problem and problem not in out:
            out.append(problem)
    return out

