"""A test session keeps out of the user's way: its own image namespace and label, and a sweep at its end.

Each pytest session names every image gpumatrix builds, pushes or pulls in a namespace of its own,
``gpumatrix-test-<session id>`` (``GPUMATRIX_IMAGE_NAMESPACE``, set for the whole session by conftest.py, so
subprocesses get it too), never in the user's ``gpumatrix/…``; and what tests build or tag themselves carries
the label ``io.gpumatrix.test-session=<session id>`` (testcontainers' session label). Images gpumatrix builds
in the session namespace carry ``io.gpumatrix.namespace=<that namespace>`` from their first layer on.

At the end of the session :func:`sweep` removes, in this order of certainty:

* every *name* in the session namespace — ``NAMESPACE/…``, and ``REGISTRY/NAMESPACE/…`` as pushed to and pulled
  from the loopback registries — whatever image it points at; an image with other names (``debian:bookworm-slim``
  that ``tools/devengine.py`` provides, given an extra name by a ready-made test) keeps them and its data;
* every image carrying the session's labels, with all its names, tagged or dangling (an untagged layer of an
  interrupted build, the image a ``--rebuild`` replaced, an image only a removed digest reference named);
* containers carrying the test-session label.

:func:`leftovers` lists what of the session is still there afterwards; conftest.py fails the session on it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from gpumatrix.engine.client import Engine
from gpumatrix.engine.models import ImageInfo
from gpumatrix.images.naming import DEFAULT_NAMESPACE, NAMESPACE_LABEL, is_named_in

TEST_SESSION_LABEL = "io.gpumatrix.test-session"
TEST_NAMESPACE_PREFIX = "gpumatrix-test-"


@dataclass(frozen=True)
class TestSession:
    """One session's namespace and label value."""

    __test__ = False  # not a test class, whatever its name

    id: str

    @property
    def namespace(self) -> str:
        return f"{TEST_NAMESPACE_PREFIX}{self.id}"

    @property
    def labels(self) -> dict[str, str]:
        """The labels for what a test builds itself (product builds carry the namespace label instead)."""
        return {TEST_SESSION_LABEL: self.id}

    def owns(self, image: ImageInfo) -> bool:
        """Whether ``image`` carries this session's labels (its own, or those of a session image it is built FROM)."""
        return (image.labels.get(TEST_SESSION_LABEL) == self.id
                or image.labels.get(NAMESPACE_LABEL) == self.namespace)

    def names(self, image: ImageInfo) -> list[str]:
        """The names of ``image`` (tags and digest references) in this session's namespace."""
        return [r for r in _names(image) if is_named_in(r, self.namespace)]


SESSION = TestSession(uuid.uuid4().hex[:10])


def new_session() -> TestSession:
    """Another session, nested in this one (for the test of the sweep itself)."""
    return TestSession(f"{SESSION.id}-{uuid.uuid4().hex[:6]}")


def _names(image: ImageInfo) -> list[str]:
    return [r for r in (*image.tags, *image.repo_digests) if "<none>" not in r]


def sweep(engine: Engine, session: TestSession = SESSION) -> list[str]:
    """Remove what ``session`` made (see the module docstring); return what was removed, one line each."""
    removed: list[str] = []
    for c in engine.containers_with_label(f"{TEST_SESSION_LABEL}={session.id}"):
        engine.remove_container(c.id)
        removed.append(f"container {c.id[:12]} {c.name}")
    # Several passes: an image built FROM another goes first, then its parent is a leaf and can go.
    for _ in range(6):
        progress = False
        for image in engine.list_images():
            owned = session.owns(image)
            targets = _names(image) if owned else session.names(image)
            for ref in targets:
                if engine.remove_image_reference(ref) is None:
                    removed.append(f"name {ref}")
                    progress = True
            if owned and not targets and engine.remove_image_reference(image.id) is None:
                removed.append(f"untagged image {image.id[7:19]}")
                progress = True
        if not progress:
            break
    return removed


def leftovers(engine: Engine, session: TestSession = SESSION) -> list[str]:
    """What of ``session`` is still on the engine: images with its labels or names, containers with its label."""
    out = [f"container {c.id[:12]} {c.name}" for c in
           engine.containers_with_label(f"{TEST_SESSION_LABEL}={session.id}")]
    for image in engine.list_images():
        if session.owns(image) or session.names(image):
            out.append(f"image {image.id[7:19]} {' '.join(_names(image)) or '(no name)'}")
    return out


def in_user_namespace(engine: Engine, session: TestSession = SESSION,
                      user_namespace: str = DEFAULT_NAMESPACE) -> list[str]:
    """Names in the user's namespace (``gpumatrix/…`` by default, pushed or not) of images ``session`` made."""
    return [ref for image in engine.list_images() if session.owns(image)
            for ref in _names(image) if is_named_in(ref, user_namespace)]
