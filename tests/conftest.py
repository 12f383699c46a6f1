"""Shared fixtures. Engine-backed tests use the real Docker engine that DOCKER_HOST names.

Outside CI, with no engine reachable, they are skipped; in CI (CI=true) that is a failure,
because a skipped integration test would hide a broken pipeline.
"""

from __future__ import annotations

import os
import uuid

import pytest

from gpumatrix.engine.client import Engine
from gpumatrix.errors import EngineUnavailable


@pytest.fixture(scope="session")
def engine():
    try:
        eng = Engine.connect(timeout=900)
    except EngineUnavailable as err:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a Docker engine and none is reachable: {err}")
        pytest.skip(f"no Docker engine reachable (run the suite with ./dev test): {err}")
    yield eng
    eng.close()


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
