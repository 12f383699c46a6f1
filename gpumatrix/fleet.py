"""Fleet scale: shards of a matrix, the GitHub Actions job matrix, and images shared through a registry.

* :func:`shard_cells` splits the cells so ``N`` runners share one matrix, each cell on exactly one.
* :func:`gha_matrix` is the ``{"include": [...]}`` a workflow fans out over (one job per cell).
* :func:`push_cell_image` publishes a built image as ``REGISTRY/gpumatrix/{base}:{tag}`` and records the
  digest; :func:`pull_cell_image` fetches it by digest on a probe-only host, so one build serves the
  fleet and every result names the exact digest it tested.

The engine calls go through :class:`~gpumatrix.engine.Engine`; nothing here imports ``docker``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, TypeVar

from .engine import LABEL_NS, Engine, EngineOperationError
from .errors import BuildError, ConfigError, Problem
from .results import ResultsDir

# Runner labels a cell's job needs, per vendor. GPU cells go to self-hosted runners carrying the
# vendor's label; CPU cells run anywhere Docker runs, GitHub's hosted runners included.
RUNNER_LABELS: Mapping[str, tuple[str, ...]] = {
    "nvidia": ("self-hosted", "linux", "gpu", "nvidia"),
    "amd": ("self-hosted", "linux", "gpu", "amd"),
    "cpu": ("ubuntu-latest",),
}
CELL_LABEL = f"{LABEL_NS}.cell"


class _HasId(Protocol):
    id: str


C = TypeVar("C", bound=_HasId)


# -- shards -----------------------------------------------------------------
def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with ``1 <= K <= N``; :class:`ConfigError` otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m:
        raise ConfigError([Problem("--shard", None, f"{text!r} is not K/N (e.g. 2/4: the second of four shards)")])
    return _check_shard(int(m.group(1)), int(m.group(2)))


def _check_shard(k: int, n: int) -> tuple[int, int]:
    if n < 1:
        raise ConfigError([Problem("--shard", None, f"the number of shards must be at least 1, not {n}")])
    if not 1 <= k <= n:
        raise ConfigError([Problem("--shard", None, f"shard {k} does not exist; shards are numbered 1 to {n}")])
    return k, n


def _balanced_slice(items: Sequence[C], k: int, n: int) -> list[C]:
    """The K-th of N contiguous slices whose sizes differ by at most one."""
    size = len(items)
    return list(items[(k - 1) * size // n: k * size // n])


def shard_cells(cells: Sequence[C], k: int, n: int) -> list[C]:
    """Shard ``k`` of ``n`` (1-based): a deterministic, even split in which every cell lands in exactly one shard.

    Cells are sorted by id, so the split does not depend on the order of ``matrix.yaml``. Applicable
    cells (those that build and run) and not-applicable ones (which only record a reason) are split
    separately into contiguous runs of sizes differing by at most one, so each shard gets an even share
    of the real work, and neighbouring cells of one base (which share image layers) stay together.
    """
    k, n = _check_shard(int(k), int(n))
    ordered = sorted(cells, key=lambda c: c.id)
    runs = [c for c in ordered if getattr(c, "applicable", True)]
    rest = [c for c in ordered if not getattr(c, "applicable", True)]
    return sorted(_balanced_slice(runs, k, n) + _balanced_slice(rest, k, n), key=lambda c: c.id)


def select_shard(cells: Sequence[C], shard: str | None) -> list[C]:
    """``cells`` restricted to the ``--shard K/N`` given (all of them when ``shard`` is None)."""
    if not shard:
        return list(cells)
    return shard_cells(cells, *parse_shard(shard))


# -- GitHub Actions ---------------------------------------------------------
def gha_matrix(cells: Sequence[Any], labels: Mapping[str, Sequence[str]] = RUNNER_LABELS) -> dict[str, Any]:
    """``{"include": [...]}`` with one entry per applicable cell, for ``strategy.matrix: ${{ fromJSON(...) }}``.

    Each entry has the cell ``id``, ``vendor``, ``base``, ``torch`` and ``runner`` (the runner labels
    for ``runs-on``). Not-applicable cells get no job: there is nothing to run.
    """
    include = []
    for cell in sorted(cells, key=lambda c: c.id):
        if not getattr(cell, "applicable", True):
            continue
        include.append({"id": cell.id, "vendor": cell.vendor, "base": cell.base.id, "torch": cell.torch.version,
                        "runner": list(labels[cell.vendor])})
    return {"include": include}


# -- registry ---------------------------------------------------------------
def normalize_registry(text: str, flag: str = "--push") -> str:
    """``host[:port][/path]`` as given to ``--push``/``--from`` (a scheme and trailing ``/`` are dropped)."""
    value = re.sub(r"^[a-z]+://", "", str(text).strip()).rstrip("/")
    if not re.fullmatch(r"[A-Za-z0-9.-]+(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*", value or "-"):
        raise ConfigError([Problem(flag, None, f"{text!r} is not a registry (want host[:port][/namespace], "
                                               f"e.g. registry.example.com:5000/ml)")])
    return value


def _tag_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:120]


def registry_ref(registry: str, local_tag: str, base_id: str) -> str:
    """``REGISTRY/gpumatrix/{base}:{tag}`` for a local ``gpumatrix/{base}:{tag}``."""
    tag = local_tag.rsplit(":", 1)[1] if ":" in local_tag.rsplit("/", 1)[-1] else "latest"
    return f"{registry}/gpumatrix/{base_id}:{tag}"


def cell_ref(registry: str, base_id: str, torch_version: str) -> str:
    """The moving tag of a cell: ``REGISTRY/gpumatrix/{base}:torch{version}`` (the latest push of it)."""
    return f"{registry}/gpumatrix/{base_id}:torch{_tag_part(torch_version)}"


def _repo(ref: str) -> str:
    if "@" in ref:
        return ref.split("@", 1)[0]
    slash, colon = ref.rfind("/"), ref.rfind(":")
    return ref[:colon] if colon > slash else ref


def push_cell_image(engine: Engine, image: Mapping[str, Any], base_id: str, torch_version: str, registry: str,
                    echo: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Push a built cell image; return its ``image`` record with ``pushed`` (``repo@sha256:…``) and the digests.

    Two tags are pushed: the content-addressed ``REGISTRY/gpumatrix/{base}:{tag}`` and the cell's moving tag
    (see :func:`cell_ref`), which point at one manifest. Failure raises :class:`BuildError`: for a fleet, an
    image that cannot be published is not built.
    """
    registry = normalize_registry(registry)
    target = registry_ref(registry, str(image["tag"]), base_id)
    moving = cell_ref(registry, base_id, torch_version)
    try:
        engine.tag(str(image["id"]), target)
        engine.tag(str(image["id"]), moving)
        echo(f"  pushing {target}")
        digest = engine.push(target)
        moving_digest = engine.push(moving)
    except EngineOperationError as err:
        raise BuildError(f"built, but could not push to {registry}: {err.reason}") from err
    if moving_digest != digest:  # one image, one manifest; anything else is a registry we cannot trust
        raise BuildError(f"pushed {target} as {digest} but {moving} as {moving_digest}")
    pushed = f"{_repo(target)}@{digest}"
    info = engine.image_info(str(image["id"]))
    digests = sorted(set(info.repo_digests if info else ()) | set(image.get("repo_digests") or ()) | {pushed})
    echo(f"  pushed {pushed}")
    return {**dict(image), "repo_digests": digests, "pushed": pushed}


def _pushed_ref_from_results(folder: Path, cell_id: str) -> str | None:
    results, _ = ResultsDir(folder).load()
    for r in results:
        if r.cell_id == cell_id and r.image and r.image.get("pushed"):
            return str(r.image["pushed"])
    return None


def resolve_pull_ref(engine: Engine, source: str, cell: Any) -> str:
    """The ``repo@sha256:…`` to probe for ``cell``, from ``--from SOURCE``.

    SOURCE is a registry (the cell's moving tag is looked up there, without pulling) or a results folder
    of the build job (its recorded ``pushed`` digest, which pins exactly the image that job built).
    """
    if Path(source).is_dir():
        ref = _pushed_ref_from_results(Path(source), cell.id)
        if ref is None:
            raise BuildError(f"{source} records no pushed image for {cell.id}; build it with --push REGISTRY")
        return ref
    registry = normalize_registry(source, flag="--from")
    moving = cell_ref(registry, cell.base.id, cell.torch.version)
    try:
        digest = engine.registry_digest(moving)
    except EngineOperationError as err:
        raise BuildError(f"no image of {cell.id} in {registry} ({moving}): {err.reason}; "
                         f"build and push it first ('invoke build --push {registry}')") from err
    return f"{_repo(moving)}@{digest}"


def pull_cell_image(engine: Engine, source: str, cell: Any) -> dict[str, Any]:
    """Pull the cell's image by digest from ``--from SOURCE``; return the ``image`` record of its result.

    The record's ``tag`` is the digest reference, so the probe container runs exactly what was pulled.
    """
    ref = resolve_pull_ref(engine, source, cell)
    try:
        info = engine.pull_by_digest(ref)
    except EngineOperationError as err:
        raise BuildError(f"could not pull {ref}: {err.reason}") from err
    built_for = info.labels.get(CELL_LABEL)
    if built_for and built_for != cell.id:
        raise BuildError(f"{ref} was built for {built_for}, not {cell.id}")
    return {"tag": ref, "id": info.id, "repo_digests": sorted(info.repo_digests), "reused": False,
            "pulled": ref, "inputs_hash": info.labels.get(f"{LABEL_NS}.inputs")}
