"""Images: render each cell's build context, name it by its content, build it once.

A cell's image tag is a hash of everything that goes into it: template text, install scripts, build
args, the base image's id, and the sha256 of every wheel the build installs (torch and each of its
dependencies, as the host's pip resolved and downloaded them into the wheelhouse). Package sources and
URLs are not in it: two cells that install the same wheel bytes onto the same base are one image, and a
new upstream dependency is a new image. An unchanged cell is found by tag and never rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Mapping

from gpumatrix import __version__
from gpumatrix.config.matrix import Cell, Matrix
from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, Engine, EngineOperationError, tar_context
from gpumatrix.errors import BuildError
from gpumatrix.images.naming import NAMESPACE_BUILD_ARG, NAMESPACE_LABEL, image_namespace, repository
from gpumatrix.images.serve import WheelServer
from gpumatrix.images.wheelhouse import Activity, ResolvedWheels, Wheelhouse, request_for
from gpumatrix.knowledge.releases import numpy_requirement
from gpumatrix.resources import templates_dir

# Bump when the way images are assembled changes in a way the template text does not show.
RECIPE_VERSION = 2
TEMPLATE_FOR_VENDOR = {"cpu": "cpu.Dockerfile", "nvidia": "cuda.Dockerfile", "amd": "rocm.Dockerfile"}
SCRIPTS = ("install-python.sh", "install-torch.sh")

@dataclass(frozen=True)
class BuildRecipe:
    """What to build for a cell: the context files, the inputs, and the content-addressed tag."""

    cell_id: str
    tag: str
    base_image: str
    files: Mapping[str, bytes]
    wheels: ResolvedWheels  # exactly what the build installs; served to it from the wheelhouse
    build_args: Mapping[str, str]  # everything but WHEELS_URL (this run's loopback server) and the namespace
    torch_requirement: str  # ``torch==VERSION`` of the resolved torch wheel
    labels: Mapping[str, str]
    inputs_hash: str
    namespace: str  # the repository namespace of ``tag`` (see gpumatrix.images.naming)

    @property
    def downloads(self) -> dict[str, int]:
        """Bytes this cell's resolution fetched into the wheelhouse vs found there, and its wheel count."""
        return self.wheels.downloads()


@dataclass(frozen=True)
class BuiltImage:
    cell_id: str
    tag: str
    image_id: str
    repo_digests: tuple[str, ...]
    reused: bool
    build_s: float
    log_path: str | None


def _safe_tag_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:60]


def render_build_context(cell: Cell, matrix: Matrix, wheelhouse: Wheelhouse, base_image_id: str | None,
                         log_path: Path | None = None, on_activity: Activity | None = None,
                         namespace: str | None = None) -> BuildRecipe:
    """Everything needed to build ``cell``; the tag is ``{namespace}/{base id}:torch{version}-{hash of its inputs}``.

    Resolves the cell's torch, with the NumPy it imports, with the host's pip into ``wheelhouse`` (downloading
    what is not there yet, telling ``on_activity`` as it goes; if pip fails, its output goes to ``log_path``),
    because the tag covers the wheels' bytes. ``namespace`` defaults to
    :func:`~gpumatrix.images.naming.image_namespace`; it names the image and labels it, and is not an input of
    the hash (the same inputs are the same hash in every namespace)."""
    namespace = namespace or image_namespace()
    folder = templates_dir()
    template = TEMPLATE_FOR_VENDOR[cell.vendor]
    files = {"Dockerfile": (folder / template).read_bytes()}
    for name in SCRIPTS:
        files[name] = (folder / name).read_bytes()
    requirement = str(cell.torch.wheel) if cell.torch.wheel else cell.torch_requirement
    # NumPy beside torch: torch imports it (from_numpy, .numpy(), DataLoader) and warns at import without it.
    request = request_for(requirement, cell.python, matrix.index_url, cell.base.variant, matrix.wheelhouse,
                          matrix.ca_bundle, arch=platform.machine(),
                          companions=(numpy_requirement(cell.torch.version),))
    wheels = wheelhouse.resolve(request, log_path, on_activity)
    args = {"BASE_IMAGE": cell.base.image, "PYTHON_VERSION": cell.python,
            "TORCH_REQUIREMENT": wheels.torch_requirement, "NUMPY_REQUIREMENT": wheels.pin("numpy")}
    inputs = {
        "recipe": RECIPE_VERSION,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
        "args": args,
        "base_image_id": base_image_id,
        "wheels": wheels.describe(),
    }
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]
    torch_version = wheels.torch_requirement.removeprefix("torch==")
    # The public version names the tag (the local label, e.g. "+cpu", is the base's variant): a release
    # and the same file given as a local wheel are one tag.
    tag = f"{repository(namespace, cell.base.id)}:torch{_safe_tag_part(torch_version.split('+')[0])}-{digest}"
    # Labels describe the image, not the cell: cells that share an image share its labels. The cell
    # label names the first cell that built it (what `invoke clean --only` matches).
    labels = {
        "org.opencontainers.image.title": f"gpumatrix {cell.base.id} torch {torch_version}",
        "org.opencontainers.image.description": f"torch {torch_version} on {cell.base.image}",
        "org.opencontainers.image.version": torch_version,
        "org.opencontainers.image.base.name": cell.base.image,
        "org.opencontainers.image.vendor": "gpumatrix",
        MANAGED_LABEL: "true",
        NAMESPACE_LABEL: namespace,
        f"{LABEL_NS}.cell": cell.id,
        f"{LABEL_NS}.vendor": cell.vendor,
        f"{LABEL_NS}.variant": cell.base.variant,
        f"{LABEL_NS}.torch": torch_version,
        f"{LABEL_NS}.inputs": digest,
        f"{LABEL_NS}.tool-version": __version__,
    }
    return BuildRecipe(cell_id=cell.id, tag=tag, base_image=cell.base.image, files=files, wheels=wheels,
                       build_args=args, torch_requirement=wheels.torch_requirement, labels=labels,
                       inputs_hash=digest, namespace=namespace)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STEP = re.compile(r"^Step (\d+)/(\d+) : (.+)$")
LOG_LINES_KEPT = 5000  # in memory, to find the telling line of a failure; the file has every line


def build_step(line: str) -> str | None:
    """``step 5/9: RUN /tmp/install-torch.sh`` for the classic builder's ``Step 5/9 : RUN …`` line, else None."""
    m = _STEP.match(line.strip())
    return f"step {m.group(1)}/{m.group(2)}: {m.group(3)}" if m else None
# Lines that say why a step failed, most telling first: our scripts, pip, apt.
_CAUSE_LINES = (re.compile(r"^gpumatrix: .+"), re.compile(r"^ERROR: (?!The command ).+"), re.compile(r"^E: .+"))


def _open_log(path: Path | None) -> IO[str] | None:
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "w", encoding="utf-8", errors="replace", buffering=1)  # line-buffered: readable live
    except OSError:
        return None


def _close_log(f: IO[str] | None) -> None:
    if f is not None:
        try:
            f.close()
        except OSError:
            pass


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


_tag_locks: dict[str, threading.Lock] = {}
_tag_locks_guard = threading.Lock()
_built_here: dict[str, str] = {}  # tag -> image id built by this process (``force`` rebuilds a tag once)


def build_image(engine: Engine, recipe: BuildRecipe, server: WheelServer | None, log_path: Path | None,
                force: bool = False, on_line: Callable[[str], None] | None = None,
                on_start: Callable[[], None] | None = None) -> BuiltImage:
    """Build ``recipe`` unless an image with its tag exists. Writes the full build log to ``log_path``.

    Cells with the same tag (same wheels, same base) build once: a second one waits for the first and
    reuses its image. ``force`` rebuilds from scratch: no reuse of an image from before this process,
    and none of the engine's layer cache. The wheels are re-hashed before the build is given them.
    """
    with _tag_locks_guard:
        lock = _tag_locks.setdefault(recipe.tag, threading.Lock())
    with lock:
        existing = engine.image_info(recipe.tag)
        if existing is not None and (not force or _built_here.get(recipe.tag) == existing.id):
            return BuiltImage(recipe.cell_id, recipe.tag, existing.id, existing.repo_digests, True, 0.0, None)
        built = _build(engine, recipe, server, log_path, force, on_line, on_start)
        _built_here[recipe.tag] = built.image_id
        return built


def _build(engine: Engine, recipe: BuildRecipe, server: WheelServer | None, log_path: Path | None,
           force: bool, on_line: Callable[[str], None] | None, on_start: Callable[[], None] | None) -> BuiltImage:
    if server is None:
        raise BuildError("internal: a build needs the wheel server, which is not running")
    if on_start is not None:
        on_start()
    wheels_url = server.publish(recipe.wheels)  # re-hashes every wheel first
    started = time.monotonic()
    total = sum(w.size for w in recipe.wheels.wheels)
    lines: deque[str] = deque(maxlen=LOG_LINES_KEPT)
    # The log is written as the build goes (``tail -f`` it), from its first line: a rerun's log
    # replaces the previous build's at once. If it cannot be written (a full disk), the build goes on.
    log_file = _open_log(log_path)

    def write(line: str) -> None:
        nonlocal log_file
        if log_file is not None:
            try:
                log_file.write(line + "\n")
            except OSError:
                _close_log(log_file)
                log_file = None

    def log(line: str) -> None:
        line = _ANSI.sub("", line)
        lines.append(line)
        write(line)
        if on_line:
            on_line(line)

    write(f"gpumatrix: installing {recipe.torch_requirement} and {recipe.build_args.get('NUMPY_REQUIREMENT')} "
          f"from {len(recipe.wheels.wheels)} wheels ({total / 1e6:.1f} MB) in the host's wheelhouse, sha256-checked")
    try:
        args = {**recipe.build_args, "WHEELS_URL": wheels_url, NAMESPACE_BUILD_ARG: recipe.namespace}
        image_id = engine.build(tar_context(recipe.files), recipe.tag, args, recipe.labels, log, network_mode="host",
                                nocache=force)
    except BuildError as err:
        err.log_path = str(log_path) if log_path else None
        err.reason = explain_build_failure(list(lines), err.reason)
        raise
    finally:
        _close_log(log_file)
    info = engine.image_info(recipe.tag)
    return BuiltImage(recipe.cell_id, recipe.tag, image_id, info.repo_digests if info else (), False,
                      time.monotonic() - started, str(log_path) if log_path else None)
