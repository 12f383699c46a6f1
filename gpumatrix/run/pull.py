"""Probe-only hosts: the cell's image is pulled by digest from a registry or a build job's results.

:func:`pull_cell_image` fetches exactly what the build job pushed, so a result names the digest it tested.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpumatrix.engine.client import LABEL_NS, Engine, EngineOperationError
from gpumatrix.errors import BuildError
from gpumatrix.images.registry import _repo, cell_ref, normalize_registry
from gpumatrix.results.store import ResultsDir

CELL_LABEL = f"{LABEL_NS}.cell"


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
