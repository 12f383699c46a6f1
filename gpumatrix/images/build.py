"""Images: render each cell's build context, name it by its content, build it once.

A cell's image tag is a hash of everything that goes into it (template text,
install scripts, build args that matter, the base image, the wheel's bytes), so
an unchanged cell is found by tag and never rebuilt, and no context is sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from gpumatrix import __version__
from gpumatrix.config.matrix import Cell, Matrix
from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, Engine, EngineOperationError, tar_context
from gpumatrix.errors import BuildError
from gpumatrix.fsutil import write_text_atomic
from gpumatrix.resources import templates_dir
from gpumatrix.images.sources import BuildSources, PackageServer, PipSettings, build_sources, direct_build_args

# Bump when the way images are assembled changes in a way the template text does not show.
RECIPE_VERSION = 1
TEMPLATE_FOR_VENDOR = {"cpu": "cpu.Dockerfile", "nvidia": "cuda.Dockerfile", "amd": "rocm.Dockerfile"}
SCRIPTS = ("install-python.sh", "install-torch.sh")


@dataclass(frozen=True)
class BuildRecipe:
    """What to build for a cell: the context files, the inputs, and the content-addressed tag."""

    cell_id: str
    tag: str
    base_image: str
    files: Mapping[str, bytes]
    sources: BuildSources
    build_args: Mapping[str, str]  # without the package locations, which depend on the server
    torch_requirement: str  # a pip requirement; for a local wheel, replaced by its served URL
    labels: Mapping[str, str]
    inputs_hash: str


@dataclass(frozen=True)
class BuiltImage:
    cell_id: str
    tag: str
    image_id: str
    repo_digests: tuple[str, ...]
    reused: bool
    build_s: float
    log_path: str | None


_sha_cache: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached by (path, size, mtime) for the life of the process."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _sha_cache:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _sha_cache[key] = h.hexdigest()
    return _sha_cache[key]


def _safe_tag_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:60]


def render_build_context(cell: Cell, matrix: Matrix, pip: PipSettings, base_image_id: str | None) -> BuildRecipe:
    """Everything needed to build ``cell``; the tag is the hash of its inputs."""
    folder = templates_dir()
    template = TEMPLATE_FOR_VENDOR[cell.vendor]
    files = {"Dockerfile": (folder / template).read_bytes()}
    for name in SCRIPTS:
        files[name] = (folder / name).read_bytes()
    sources = build_sources(pip, cell.base.variant, matrix.index_url, matrix.wheelhouse, matrix.ca_bundle,
                            cell.torch.wheel)
    args = {"BASE_IMAGE": cell.base.image, "PYTHON_VERSION": cell.python}
    inputs = {
        "recipe": RECIPE_VERSION,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
        "args": args,
        "torch": cell.torch_requirement,
        "base_image_id": base_image_id,
        "sources": sources.describe(),
        "wheel_sha256": file_sha256(cell.torch.wheel) if cell.torch.wheel else None,
    }
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]
    tag = f"gpumatrix/{cell.base.id}:torch{_safe_tag_part(cell.torch.version)}-{digest}"
    labels = {
        "org.opencontainers.image.title": f"gpumatrix {cell.id}",
        "org.opencontainers.image.description": f"torch {cell.torch.version} on {cell.base.image}",
        "org.opencontainers.image.version": cell.torch.version,
        "org.opencontainers.image.base.name": cell.base.image,
        "org.opencontainers.image.vendor": "gpumatrix",
        MANAGED_LABEL: "true",
        f"{LABEL_NS}.cell": cell.id,
        f"{LABEL_NS}.vendor": cell.vendor,
        f"{LABEL_NS}.variant": cell.base.variant,
        f"{LABEL_NS}.torch": cell.torch.version,
        f"{LABEL_NS}.inputs": digest,
        f"{LABEL_NS}.tool-version": __version__,
    }
    return BuildRecipe(cell_id=cell.id, tag=tag, base_image=cell.base.image, files=files, sources=sources,
                       build_args=args, torch_requirement=cell.torch_requirement, labels=labels,
                       inputs_hash=digest)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Lines that say why a step failed, most telling first: our scripts, pip, apt.
_CAUSE_LINES = (re.compile(r"^gpumatrix: .+"), re.compile(r"^ERROR: (?!The command ).+"), re.compile(r"^E: .+"))


def explain_build_failure(lines: list[str], engine_reason: str) -> str:
    """The line of the build log that says why it failed, e.g. pip's "No matching distribution found for …"."""
    clean = [_ANSI.sub("", line).strip() for line in lines]
    for pattern in _CAUSE_LINES:
        hits = [line for line in clean if pattern.match(line)]
        if hits:
            return hits[-1].removeprefix("ERROR: ")
    return engine_reason


def ensure_base(engine: Engine, ref: str) -> str:
    """The local id of base image ``ref``, pulling it if it is not here; :class:`BuildError` if neither works."""
    info = engine.image_info(ref)
    if info is None:
        try:
            info = engine.pull(ref)
        except EngineOperationError as err:
            raise BuildError(f"base image {ref} is not on this host and could not be pulled: {err.reason}") from err
    return info.id


def build_image(engine: Engine, recipe: BuildRecipe, server: PackageServer | None, log_path: Path | None,
                force: bool = False, on_line: Callable[[str], None] | None = None,
                on_start: Callable[[], None] | None = None) -> BuiltImage:
    """Build ``recipe`` unless an image with its tag exists. Writes the full build log to ``log_path``.

    ``force`` rebuilds from scratch: no reuse of the tagged image, and none of the engine's layer cache.
    """
    existing = None if force else engine.image_info(recipe.tag)
    if existing is not None:
        return BuiltImage(recipe.cell_id, recipe.tag, existing.id, existing.repo_digests, True, 0.0, None)
    if on_start is not None:
        on_start()
    if server is not None:  # local locations served, remote indexes proxied through the wheel cache
        pkg_args = server.build_args(recipe.sources, token=recipe.cell_id)
    elif recipe.sources.needs_server():
        raise BuildError("internal: this build needs the local package server, which is not running")
    else:
        pkg_args = direct_build_args(recipe.sources)
    pkg_args["TORCH_REQUIREMENT"] = (server.url_for_file(recipe.sources.wheel) if recipe.sources.wheel and server
                                     else recipe.torch_requirement)
    started = time.monotonic()
    lines: list[str] = []

    def log(line: str) -> None:
        line = _ANSI.sub("", line)
        lines.append(line)
        if on_line:
            on_line(line)

    try:
        image_id = engine.build(tar_context(recipe.files), recipe.tag, {**recipe.build_args, **pkg_args},
                                recipe.labels, log, network_mode="host", nocache=force)
    except BuildError as err:
        err.log_path = str(log_path) if log_path else None
        err.reason = explain_build_failure(lines, err.reason)
        raise
    finally:
        if log_path is not None:
            write_text_atomic(log_path, "\n".join(lines) + "\n")
    info = engine.image_info(recipe.tag)
    return BuiltImage(recipe.cell_id, recipe.tag, image_id, info.repo_digests if info else (), False,
                      time.monotonic() - started, str(log_path) if log_path else None)
