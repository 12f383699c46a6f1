"""What a CUDA version needs from the host's NVIDIA driver (``gpumatrix/data/cuda_drivers.yaml``), and
what CUDA a base image carries.

Three driver figures matter for a CUDA x.y.z image: the driver of that exact release (all features,
PTX JIT included), the x.y GA driver (what ``NVIDIA_REQUIRE_CUDA=cuda>=x.y`` enforces in official
images), and the major's minor-version-compatibility floor (below it nothing of that major runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpumatrix.knowledge.releases import load_data
from gpumatrix.knowledge.versions import release


def cuda_version_of_image(image: str, variant: str) -> tuple[str | None, str]:
    """The CUDA version an image carries and where it was read: the image tag
    (``nvidia/cuda:13.0.2-runtime-ubuntu24.04`` → ``13.0.2``), else the torch variant (``cu130`` → ``13.0``)."""
    ref = image.split("@", 1)[0]
    repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    if repo.endswith("/cuda") or repo == "cuda":
        m = re.match(r"(\d+\.\d+(?:\.\d+)?)", tag)
        if m:
            return m.group(1), "image tag"
    m = re.search(r"cuda[-_]?(\d+\.\d+(?:\.\d+)?)", tag, flags=re.I)
    if m:
        return m.group(1), "image tag"
    return cuda_version_of_variant(variant), "variant"


def cuda_version_of_variant(variant: str) -> str | None:
    """``cu130`` → ``13.0``, ``cu126`` → ``12.6``, ``cu118`` → ``11.8``."""
    m = re.fullmatch(r"cu(\d+)(\d)", variant)
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def is_nvidia_cuda_image(image: str) -> bool:
    """An official CUDA image (sets NVIDIA_REQUIRE_CUDA, which the toolkit enforces)."""
    repo = image.split("@", 1)[0].rsplit(":", 1)[0] if ":" in image.split("@", 1)[0].rsplit("/", 1)[-1] \
        else image.split("@", 1)[0]
    return repo in ("nvidia/cuda", "docker.io/nvidia/cuda", "nvcr.io/nvidia/cuda")


@dataclass(frozen=True)
class DriverNeed:
    cuda: str  # the CUDA version asked about
    full: str | None  # driver of that exact release (Update N), all features incl. PTX JIT
    ga: str | None  # driver of the x.y GA release (what NVIDIA_REQUIRE_CUDA=cuda>=x.y amounts to)
    floor: str | None  # minor-version compatibility floor of the major
    note: str | None = None


def driver_need(cuda: str) -> DriverNeed:
    """What a CUDA version needs from the host driver, from ``cuda_drivers.yaml``."""
    data = load_data("cuda_drivers")
    parts = cuda.split(".")
    xy = ".".join(parts[:2])
    entry = (data.get("toolkits") or {}).get(xy) or {}
    ga = entry.get("min_driver")
    full = (entry.get("update_drivers") or {}).get(cuda) if len(parts) > 2 else None
    floor = ((data.get("minor_version_compat") or {}).get(parts[0]) or {}).get("min_driver")
    return DriverNeed(cuda=cuda, full=str(full or ga) if (full or ga) else None, ga=str(ga) if ga else None,
                      floor=str(floor) if floor else None, note=entry.get("note"))


def max_cuda_for_driver(driver: str) -> str | None:
    """The newest CUDA x.y whose GA driver is <= ``driver`` (what the driver fully supports)."""
    best = None
    for xy, entry in (load_data("cuda_drivers").get("toolkits") or {}).items():
        ga = (entry or {}).get("min_driver")
        if ga and release(str(ga)) <= release(driver):
            if best is None or release(xy) > release(best):
                best = xy
    return best

