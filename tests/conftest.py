"""Shared fixtures. Engine-backed tests use the real Docker engine that DOCKER_HOST names.

Outside CI, with no engine reachable, they are skipped; in CI (CI=true) that is a failure,
because a skipped integration test would hide a broken pipeline.

The session keeps out of the user's way (tests/isolation.py): every image gpumatrix builds, pushes or pulls
in it is named in the session's own namespace (GPUMATRIX_IMAGE_NAMESPACE, set here for the whole session and
its subprocesses), what tests build themselves carries the session's label, and the engine fixture sweeps
both away at the end — and fails the session if anything of it is left, or if an engine test gave one of the
session's images a name in the user's ``gpumatrix/`` namespace.
"""

from __future__ import annotations

import os
import uuid

import pytest

from gpumatrix.engine.client import Engine
from gpumatrix.errors import EngineUnavailable
from gpumatrix.images.naming import NAMESPACE_ENV
from tests.isolation import SESSION, in_user_namespace, leftovers, sweep

# Before any test module is imported: whatever the user set, a test never names an image in their namespace.
os.environ[NAMESPACE_ENV] = SESSION.namespace


@pytest.fixture(scope="session")
def engine():
    try:
        eng = Engine.connect(timeout=900)
    except EngineUnavailable as err:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a Docker engine and none is reachable: {err}")
        pytest.skip(f"no Docker engine reachable (run the suite with ./dev test): {err}")
    yield eng
    try:
        sweep(eng, SESSION)
        left = leftovers(eng, SESSION)
    finally:
        eng.close()
    if left:
        pytest.fail(f"the test session left {len(left)} of its objects on the engine after its sweep:\n  "
                    + "\n  ".join(left))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """An engine test that gives one of the session's images a name in the user's namespace fails, there."""
    result = yield
    engine = item.funcargs.get("engine")
    if isinstance(engine, Engine):
        named = in_user_namespace(engine, SESSION)
        if named:
            pytest.fail(f"this test named images of the test session in the user's namespace: {', '.join(named)}")
    return result


@pytest.fixture
def tracked(engine):
    """Track containers/images a test creates and remove them afterwards (docker-py's BaseIntegrationTest)."""
    made = {"containers": [], "images": []}
    yield made
    for cid in made["containers"]:
        engine.remove_container(cid)
    for ref in made["images"]:
        engine.remove_image(ref)


@pytest.fixture
def unique():
    return uuid.uuid4().hex[:10]


def pytest_collection_modifyitems(config, items):
    """Keep the ``engine`` marker honest: on exactly the tests that use the ``engine`` fixture.

    ``-m 'not engine'`` must then run every test that can run without a daemon, and nothing that needs one.
    """
    wrong = []
    for item in items:
        marked = item.get_closest_marker("engine") is not None
        uses = "engine" in getattr(item, "fixturenames", ())
        if marked != uses:
            wrong.append(f"{item.nodeid}: {'marked engine but does not use it' if marked else 'uses the engine unmarked'}")
    if wrong:
        raise pytest.UsageError("the engine marker must match the engine fixture:\n  " + "\n  ".join(wrong))
