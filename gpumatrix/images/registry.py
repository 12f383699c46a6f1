"""Images shared through a registry: a built cell image is pushed as ``REGISTRY/{namespace}/{base}:{tag}``
(the namespace of :mod:`gpumatrix.images.naming`, ``gpumatrix`` by default) and its digest recorded, so one
build serves the fleet and every result names the exact digest it tested.

The engine calls go through :class:`~gpumatrix.engine.client.Engine`; nothing here imports ``docker``.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from gpumatrix.engine.client import Engine, EngineOperationError
from gpumatrix.errors import BuildError, ConfigError, Problem
from gpumatrix.images.naming import image_namespace, repository, repository_of


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


def registry_ref(registry: str, local_tag: str, base_id: str, namespace: str | None = None) -> str:
    """``REGISTRY/{namespace}/{base}:{tag}`` for a local ``{namespace}/{base}:{tag}``."""
    tag = local_tag.rsplit(":", 1)[1] if ":" in local_tag.rsplit("/", 1)[-1] else "latest"
    return f"{registry}/{repository(namespace or image_namespace(), base_id)}:{tag}"


def cell_ref(registry: str, base_id: str, torch_version: str, namespace: str | None = None) -> str:
    """The moving tag of a cell: ``REGISTRY/{namespace}/{base}:torch{version}`` (the latest push of it)."""
    return f"{registry}/{repository(namespace or image_namespace(), base_id)}:torch{_tag_part(torch_version)}"


def push_cell_image(engine: Engine, image: Mapping[str, Any], base_id: str, torch_version: str, registry: str,
                    echo: Callable[[str], None] = lambda s: None, namespace: str | None = None) -> dict[str, Any]:
    """Push a built cell image; return its ``image`` record with ``pushed`` (``repo@sha256:…``) and the digests.

    Two tags are pushed: the content-addressed ``REGISTRY/{namespace}/{base}:{tag}`` and the cell's moving tag
    (see :func:`cell_ref`), which point at one manifest. Failure raises :class:`BuildError`: for a fleet, an
    image that cannot be published is not built.
    """
    registry = normalize_registry(registry)
    namespace = namespace or image_namespace()
    target = registry_ref(registry, str(image["tag"]), base_id, namespace)
    moving = cell_ref(registry, base_id, torch_version, namespace)
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
    pushed = f"{repository_of(target)}@{digest}"
    info = engine.image_info(str(image["id"]))
    digests = sorted(set(info.repo_digests if info else ()) | set(image.get("repo_digests") or ()) | {pushed})
    echo(f"  pushed {pushed}")
    return {**dict(image), "repo_digests": digests, "pushed": pushed}
