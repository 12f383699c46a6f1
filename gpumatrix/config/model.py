"""The typed, frozen objects a ``matrix.yaml`` becomes: nothing downstream sees a raw dict.

Two kinds of cell come out of a matrix:

* **built** cells: a :class:`Base` (OS + vendor stack) × a :class:`TorchSpec` (a torch release or a
  local wheel); gpumatrix builds an image for each, then probes it.
* **ready-made** cells: one per ``images:`` entry (:class:`ReadyImage`), e.g. ``nvcr.io/nvidia/pytorch:25.12-py3``
  or ``rocm/pytorch:…``; the image is probed as it is, nothing is built or installed.

So that code written for built cells keeps working, a ready-made cell has the same shape
(:attr:`Cell.ready_made` tells them apart):

* ``cell.base`` is a synthetic :class:`Base` with the entry's ``id``, ``vendor``, ``image``, ``env`` and
  ``gpus``, ``variant=""`` (no wheel flavour; falsy, yet a ``str``) and ``python=None``;
* ``cell.torch`` is a :class:`TorchSpec` with ``in_image=True`` and ``version=`` :data:`TORCH_IN_IMAGE`
  (``"in-image"``, safe in tags and file names); the real version is what the probes report;
* ``cell.python`` is ``""`` (unknown until probed);
* ``cell.torch_requirement`` and ``cell.torch_label`` are :data:`TORCH_IN_IMAGE_LABEL`, which is a label
  for listings, not something pip can install: the runner must not build a ready-made cell.

Fields whose metadata says ``yaml=False`` do not come from a ``matrix.yaml`` key; every other field
has a key of the same name in ``gpumatrix/data/matrix.schema.json`` (tests/test_config_schema.py
keeps the two from drifting apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

SCHEMA_VERSION = 1
VENDORS = ("nvidia", "amd", "cpu")
NVIDIA_MODES = ("auto", "gpus", "cdi", "runtime")
IPC_MODES = ("host", "private")

#: ``TorchSpec.version`` of a ready-made cell: the torch inside the image, unknown until probed.
TORCH_IN_IMAGE = "in-image"
#: What listings show as a ready-made cell's torch (and its ``torch_requirement``).
TORCH_IN_IMAGE_LABEL = "torch (in image)"

_NOT_YAML = {"yaml": False}


@dataclass(frozen=True)
class Base:
    """A base image: the OS + vendor stack a torch wheel is installed onto.

    For a ready-made cell this is a synthetic base made by :meth:`ReadyImage.as_base`
    (``variant == ""``, ``python is None``).
    """

    id: str
    vendor: str
    image: str
    variant: str
    python: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    line: int = field(default=0, metadata=_NOT_YAML)
    hsa_override_gfx_version: str | None = None  # AMD consumer cards: e.g. "10.3.0", "11.0.0"
    gpus: str = "1"  # "1": the cell's container gets one GPU; "all": every GPU of its vendor


@dataclass(frozen=True)
class TorchSpec:
    """One ``torch:`` entry: a released version (from an index) or a local wheel file.

    ``in_image=True`` marks the torch of a ready-made cell: whatever the image ships
    (``version`` is then :data:`TORCH_IN_IMAGE`).
    """

    version: str
    variants: tuple[str, ...] | None = None
    wheel: Path | None = None
    vendor: str | None = None
    variant: str | None = None
    line: int = field(default=0, metadata=_NOT_YAML)
    in_image: bool = field(default=False, metadata=_NOT_YAML)

    @property
    def label(self) -> str:
        return TORCH_IN_IMAGE_LABEL if self.in_image else self.version


@dataclass(frozen=True)
class ReadyImage:
    """One ``images:`` entry: a ready-made framework image, probed as it is."""

    id: str
    vendor: str
    image: str
    env: tuple[tuple[str, str], ...] = ()
    gpus: str = "1"
    line: int = field(default=0, metadata=_NOT_YAML)

    def as_base(self) -> Base:
        """The synthetic :class:`Base` a ready-made cell carries (no variant, no Python)."""
        return Base(id=self.id, vendor=self.vendor, image=self.image, variant="", python=None, env=self.env,
                    line=self.line, gpus=self.gpus)

    def torch_spec(self) -> TorchSpec:
        """The "torch (in image)" :class:`TorchSpec` a ready-made cell carries."""
        return TorchSpec(version=TORCH_IN_IMAGE, line=self.line, in_image=True)


@dataclass(frozen=True)
class RunOptions:
    """How probe containers run (``run:`` in matrix.yaml)."""

    shm_size: str = "8g"
    timeout_s: int = 1800
    perf: bool = True
    mem_limit: str | None = None
    pids_limit: int = 4096
    nvidia_mode: str = "auto"  # auto | gpus | cdi | runtime (see gpumatrix/run/passthrough.py)
    ipc: str | None = None  # "host": share the host's IPC namespace and /dev/shm (shm_size then unused)
    seccomp_unconfined: bool = False  # opt-in: security_opt seccomp=unconfined (some ROCm setups)
    disable_require: bool = False  # opt-in: NVIDIA_DISABLE_REQUIRE=1 (skip nvidia/cuda images' driver check)


@dataclass(frozen=True)
class Matrix:
    """A validated ``matrix.yaml``."""

    path: Path = field(metadata=_NOT_YAML)
    schema_version: int
    python: str
    index_url: str | None
    wheelhouse: tuple[Path, ...]
    ca_bundle: Path | None
    bases: tuple[Base, ...]
    torch: tuple[TorchSpec, ...]
    exclude: tuple[Mapping[str, Any], ...]
    include: tuple[Mapping[str, Any], ...]
    run: RunOptions = field(default_factory=RunOptions)
    images: tuple[ReadyImage, ...] = ()

    def base(self, base_id: str) -> Base:
        return next(b for b in self.bases if b.id == base_id)


@dataclass(frozen=True)
class Cell:
    """One cell: the unit that is probed and reported.

    A built cell is one (base × torch) combination, built into an image first. A ready-made cell
    (``ready_made=True``) is one ``images:`` entry, probed as it is: the runner must pull
    ``cell.image`` instead of building, and the doctor's wheel checks do not apply (see the module
    docstring for the values its ``base``, ``torch`` and ``python`` carry).
    """

    id: str
    base: Base
    torch: TorchSpec
    python: str
    env: tuple[tuple[str, str], ...] = ()
    applicable: bool = True
    reason: str | None = None
    notes: tuple[str, ...] = ()
    ready_made: bool = False

    @property
    def vendor(self) -> str:
        return self.base.vendor

    @property
    def image(self) -> str:
        """The image this cell starts from: the base image to build on, or the ready-made image to probe."""
        return self.base.image

    @property
    def torch_label(self) -> str:
        """What a listing shows as this cell's torch: the pip requirement, or "torch (in image)"."""
        return self.torch_requirement

    @property
    def torch_requirement(self) -> str:
        """The pip requirement that installs this cell's torch (exact variant pinned).

        A ready-made cell installs nothing: this is then :data:`TORCH_IN_IMAGE_LABEL`, a label only.
        """
        if self.ready_made or self.torch.in_image:
            return TORCH_IN_IMAGE_LABEL
        if self.torch.wheel is not None:
            return self.torch.wheel.name
        version = self.torch.version
        return f"torch=={version}" if "+" in version else f"torch=={version}+{self.base.variant}"


@dataclass(frozen=True)
class Excluded:
    """A cell removed by an ``exclude`` entry (shown by ``invoke list``)."""

    id: str
    line: int
    rule: Mapping[str, str]


@dataclass(frozen=True)
class Expansion:
    """The cells a matrix expands to, and the ones ``exclude`` removed."""

    cells: tuple[Cell, ...]
    excluded: tuple[Excluded, ...]


def cell_id(base_id: str, version: str) -> str:
    """The id of a built cell: ``{base id}-torch{version}`` (a ready-made cell's id is its entry's id)."""
    return f"{base_id}-torch{version}"
