"""What gpumatrix's images are called: one repository namespace for every name it builds, pushes, pulls and cleans.

A built image is ``{namespace}/{base id}:torch{version}-{hash}``; pushed, it is
``{registry}/{namespace}/{base id}:…``. The namespace is ``gpumatrix`` unless ``GPUMATRIX_IMAGE_NAMESPACE`` names
another: one or more lowercase path components, as Docker's reference grammar allows them
(``myteam``, ``ci/gpumatrix``). Like ``COMPOSE_PROJECT_NAME`` for Docker Compose, it keeps apart what shares one
engine — two checkouts, a CI job beside a person, a test session beside the user's own images — and, in a fleet,
the build job and the probe hosts must use the same one. Each built image also carries the namespace as the label
``io.gpumatrix.namespace``, from its first layer on, so even an untagged image (an interrupted build's last
layer, the old image a ``--rebuild`` replaced) says which namespace made it.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from gpumatrix.engine.client import LABEL_NS
from gpumatrix.errors import UsageError

NAMESPACE_ENV = "GPUMATRIX_IMAGE_NAMESPACE"
DEFAULT_NAMESPACE = "gpumatrix"
NAMESPACE_LABEL = f"{LABEL_NS}.namespace"
NAMESPACE_BUILD_ARG = "GPUMATRIX_NAMESPACE"  # the templates' early LABEL reads it

# One path component of a repository name (Docker's reference grammar), and a namespace: one or more of them.
COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAMESPACE = re.compile(rf"{COMPONENT}(?:/{COMPONENT})*")
_MAX_NAMESPACE = 128  # leaves room for the base id and a registry within Docker's 255-character name


def image_namespace(environ: Mapping[str, str] | None = None) -> str:
    """``$GPUMATRIX_IMAGE_NAMESPACE``, else ``gpumatrix``; a value Docker would refuse is a :class:`UsageError`."""
    env = os.environ if environ is None else environ
    value = env.get(NAMESPACE_ENV, "").strip()
    if not value:
        return DEFAULT_NAMESPACE
    if len(value) > _MAX_NAMESPACE or not _NAMESPACE.fullmatch(value):
        raise UsageError(NAMESPACE_ENV, f"{value!r} is not a repository namespace: lowercase letters, digits and "
                                        f"'.', '_', '-' between them, components joined by '/' (e.g. myteam or "
                                        f"ci/gpumatrix), at most {_MAX_NAMESPACE} characters")
    return value


def repository(namespace: str, name: str) -> str:
    """``{namespace}/{name}``: the local repository of base ``name``'s images."""
    return f"{namespace}/{name}"


def repository_of(ref: str) -> str:
    """The repository of an image reference: ``repo`` of ``repo:tag`` or ``repo@sha256:…``."""
    if "@" in ref:
        return ref.split("@", 1)[0]
    slash, colon = ref.rfind("/"), ref.rfind(":")
    return ref[:colon] if colon > slash else ref


def names_pattern(namespace: str) -> re.Pattern[str]:
    """Repositories that are ``namespace``'s: ``{namespace}/NAME`` (a local build) or ``REGISTRY/{namespace}/NAME``
    (a push or pull of one, REGISTRY as ``--push`` accepts it: ``host[:port][/path…]``), NAME one component."""
    return re.compile(rf"(?:[A-Za-z0-9.-]+(?::\d+)?(?:/{COMPONENT})*/)?{re.escape(namespace)}/{COMPONENT}")


def is_named_in(ref: str, namespace: str) -> bool:
    """Whether image reference ``ref`` (tag or digest) is a name in ``namespace`` (see :func:`names_pattern`)."""
    return bool(names_pattern(namespace).fullmatch(repository_of(ref)))
