"""Probe-only hosts: the cell's image is pulled by digest from a registry or a build job's results.

:func:`pull_cell_image` fetches exactly what the build job pushed, so a result names the digest it tested.

A results folder may come from anywhere (an artifact, another host), so what it names is checked before
anything is pulled: the reference must be ``{REGISTRY}/{namespace}/{cell's base}@sha256:<64 hex>`` with
REGISTRY the configured one — given explicitly, else the one the build job recorded — and the namespace this
host's (:mod:`gpumatrix.images.naming`; build and probe hosts of a fleet use the same one). After the pull the
image must carry gpumatrix's labels, ``io.gpumatrix.cell`` naming this very cell; an image that does not
is refused (and removed again if this pull brought it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, Engine, EngineOperationError
from gpumatrix.errors import BuildError, ConfigError
from gpumatrix.images.naming import image_namespace, repository, repository_of
from gpumatrix.images.registry import cell_ref, normalize_registry
from gpumatrix.results.store import ResultsDir

CELL_LABEL = f"{LABEL_NS}.cell"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _pushed_pattern(namespace: str) -> re.Pattern[str]:
    return re.compile(rf"(?P<registry>.+)/{re.escape(namespace)}/(?P<name>[^/@]+)@(?P<digest>[^@]+)")


def cell_repository(registry: str, cell: Any, namespace: str | None = None) -> str:
    """The repository gpumatrix pushes ``cell``'s image to: ``REGISTRY/{namespace}/{base id}``."""
    return f"{registry}/{repository(namespace or image_namespace(), cell.base.id)}"


def check_pull_ref(ref: str, registry: str, cell: Any, origin: str, namespace: str | None = None) -> str:
    """``ref`` if it is ``{registry}/{namespace}/{base}@sha256:<64 hex>`` for ``cell``; else :class:`BuildError`.

    ``origin`` names where the reference came from, for the message.
    """
    repo, _, digest = ref.partition("@")
    expected = cell_repository(registry, cell, namespace)
    if repo != expected:
        raise BuildError(f"refused to pull {ref!r} for {cell.id} ({origin}): not the cell's repository {expected} "
                         f"in the configured registry {registry}")
    if not _DIGEST.fullmatch(digest):
        raise BuildError(f"refused to pull {ref!r} for {cell.id} ({origin}): not pinned by a sha256 digest")
    return ref


def _pushed_refs(folder: Path) -> dict[str, str]:
    results, _ = ResultsDir(folder).load()
    return {r.cell_id: r.image["pushed"] for r in results
            if r.image and isinstance(r.image.get("pushed"), str) and r.image["pushed"]}


def recorded_registry(folder: Path, namespace: str | None = None) -> str | None:
    """The registry a build job's results folder says it pushed to, or None when it cannot tell.

    ``summary.json``'s ``push`` (the build run's ``--push``) when present; otherwise the one registry
    every recorded push names (several different ones: None, the caller must be told which to trust).
    """
    push = ResultsDir(folder).load_summary().data.get("push")
    if isinstance(push, str) and push:
        try:
            return normalize_registry(push, flag="summary.json push")
        except ConfigError:
            return None
    pushed = _pushed_pattern(namespace or image_namespace())
    registries = {m.group("registry") for ref in _pushed_refs(folder).values() if (m := pushed.fullmatch(ref))}
    return registries.pop() if len(registries) == 1 else None


def resolve_pull_ref(engine: Engine, source: str, cell: Any, registry: str | None = None,
                     namespace: str | None = None) -> str:
    """The ``repo@sha256:…`` to probe for ``cell``, from ``--from SOURCE``, checked against the registry.

    SOURCE is a registry (the cell's moving tag is looked up there, without pulling) or a results folder
    of the build job (its recorded ``pushed`` digest, which pins exactly the image that job built).
    ``registry`` is the one to trust; by default SOURCE itself, or for a folder the registry it recorded
    (:func:`recorded_registry`). A reference outside it, or outside the cell's repository, is refused.
    """
    trusted = normalize_registry(registry, flag="--registry") if registry else None
    namespace = namespace or image_namespace()
    if Path(source).is_dir():
        folder = Path(source)
        ref = _pushed_refs(folder).get(cell.id)
        if ref is None:
            raise BuildError(f"{source} records no pushed image for {cell.id}; build it with --push REGISTRY")
        trusted = trusted or recorded_registry(folder, namespace)
        if trusted is None:
            raise BuildError(f"{source} names images in several registries; cannot tell which to trust for "
                             f"{cell.id} (its build job's --push registry must be given)")
        return check_pull_ref(ref, trusted, cell, f"recorded in {source}", namespace)
    source_registry = normalize_registry(source, flag="--from")
    if trusted is not None and trusted != source_registry:
        raise BuildError(f"refused to pull {cell.id} from {source_registry}: the configured registry is {trusted}")
    moving = cell_ref(source_registry, cell.base.id, cell.torch.version, namespace)
    try:
        digest = engine.registry_digest(moving)
    except EngineOperationError as err:
        raise BuildError(f"no image of {cell.id} in {source_registry} ({moving}): {err.reason}; "
                         f"build and push it first ('invoke build --push {source_registry}')") from err
    return check_pull_ref(f"{repository_of(moving)}@{digest}", source_registry, cell, f"the digest of {moving}",
                          namespace)


def _label_problem(labels: dict[str, str], cell: Any) -> str | None:
    if labels.get(MANAGED_LABEL) != "true":
        return f"it does not carry gpumatrix's label {MANAGED_LABEL}=true (not an image gpumatrix built)"
    built_for = labels.get(CELL_LABEL)
    if not built_for:
        return f"it has no {CELL_LABEL} label"
    if built_for != cell.id and not built_for.startswith(f"{cell.base.id}-torch"):
        # Cells of one base that install the same wheel bytes share one image, labelled with the cell that
        # built it first; an image of another base is never this cell's.
        return f"it was built for {built_for}, not {cell.id} (nor another cell of base {cell.base.id})"
    return None


def pull_cell_image(engine: Engine, source: str, cell: Any, registry: str | None = None,
                    namespace: str | None = None) -> dict[str, Any]:
    """Pull the cell's image by digest from ``--from SOURCE``; return the ``image`` record of its result.

    The record's ``tag`` is the digest reference, so the probe container runs exactly what was pulled.
    Raises :class:`BuildError` (the cell's ``build_error``) for a reference outside the configured
    registry and cell repository, a failed pull, or an image whose labels do not name this cell.
    """
    ref = resolve_pull_ref(engine, source, cell, registry, namespace)
    present_before = engine.image_info(ref) is not None
    try:
        info = engine.pull_by_digest(ref)
    except EngineOperationError as err:
        raise BuildError(f"could not pull {ref}: {err.reason}") from err
    problem = _label_problem(dict(info.labels), cell)
    if problem:
        if not present_before:
            engine.remove_image_reference(ref)  # do not leave a refused image behind
        raise BuildError(f"refused {ref} for {cell.id}: {problem}")
    return {"tag": ref, "id": info.id, "repo_digests": sorted(info.repo_digests), "reused": False,
            "pulled": ref, "inputs_hash": info.labels.get(f"{LABEL_NS}.inputs")}
