"""Ready-made framework images (``images:`` in matrix.yaml): nothing is built, the image is pulled by digest.

A tag (``nvcr.io/nvidia/pytorch:26.09-py3``) is first resolved to the digest its registry holds now, without
pulling; an image with that digest already here is reused, so a later run pulls again only when the tag
moved. A reference pinned by digest is used as is. The record names the exact ``repo@sha256:…`` probed.
"""

from __future__ import annotations

from typing import Any, Callable

from gpumatrix.engine.client import Engine, EngineOperationError
from gpumatrix.errors import BuildError
from gpumatrix.images.naming import repository_of


def acquire_ready_image(engine: Engine, ref: str, echo: Callable[[str], None] = lambda s: None,
                        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The ``image`` record of a ready-made cell: pulled by digest (or reused when that digest is here).

    ``echo`` gets what happened; ``progress`` (default: ``echo``) the pull's bytes every few seconds."""
    note = None
    if "@sha256:" in ref:
        pinned = ref
    else:
        try:
            pinned = f"{repository_of(ref)}@{engine.registry_digest(ref)}"
        except EngineOperationError as err:
            local = engine.image_info(ref)
            if local is None:
                raise BuildError(f"cannot pull {ref}: {err.reason}") from err
            # No registry answer (offline host, rate limit): probe the copy here, and say which one it is.
            digests = [d for d in local.repo_digests if d.startswith(repository_of(ref) + "@")]
            note = f"registry not reachable ({err.reason}); probed the local copy of {ref}"
            echo(note)
            return {"tag": ref, "id": local.id, "repo_digests": sorted(local.repo_digests), "reused": True,
                    "ready_made": ref, "pulled": digests[0] if digests else None, "note": note}
    info = engine.image_info(pinned)
    reused = info is not None and pinned in info.repo_digests
    if not reused:
        echo(f"pulling {pinned}")
        try:
            info = engine.pull_by_digest(pinned, progress=progress or echo)
        except EngineOperationError as err:
            raise BuildError(f"cannot pull {pinned}: {err.reason}") from err
    else:
        echo(f"reusing {pinned} (the tag has not moved)")
    assert info is not None
    return {"tag": pinned, "id": info.id, "repo_digests": sorted(info.repo_digests), "reused": reused,
            "ready_made": ref, "pulled": pinned}
