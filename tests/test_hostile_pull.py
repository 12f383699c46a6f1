"""Issue 14, finding 7: ``probe --from`` pulls only the configured registry's image of that very cell.

A results folder is an artifact anyone in the pipeline could have written. Real loopback registry
(Debian's docker-registry, as in tests/test_registry_engine.py) and real pulls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.engine_helpers import FleetCell, start_registry, stop_registry
from tests.isolation import SESSION

from gpumatrix.engine.client import tar_context
from gpumatrix.errors import BuildError
from gpumatrix.images.naming import DEFAULT_NAMESPACE
from gpumatrix.images.registry import cell_ref
from gpumatrix.run.pull import pull_cell_image, recorded_registry, resolve_pull_ref

pytestmark = pytest.mark.engine
FAKE_DIGEST = "sha256:" + "ab" * 32
NS = SESSION.namespace  # the image namespace this host uses (the test session's own)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    proc, address = start_registry(tmp_path_factory.mktemp("registry"))
    yield address
    stop_registry(proc)


def _results_folder(root: Path, cell: FleetCell, pushed: str, push: str | None = None) -> Path:
    (root / "cells").mkdir(parents=True)
    (root / "cells" / f"{cell.id}.json").write_text(json.dumps({
        "schema_version": 1, "cell_id": cell.id, "base_id": cell.base.id, "base_image": "debian:bookworm-slim",
        "vendor": "cpu", "variant": "cpu", "torch": cell.torch.version, "python": "3.11", "status": "pass",
        "image": {"tag": "x", "id": "sha256:" + "0" * 64, "pushed": pushed}}))
    if push:
        (root / "summary.json").write_text(json.dumps({"state": "complete", "cells": {}, "push": push}))
    return root


def _push_image(engine, tracked, registry: str, cell: FleetCell, labels: dict, unique: str) -> str:
    """Build a tiny image with ``labels``, push it as the cell's moving tag, drop it locally; return the ref."""
    tag = f"{NS}/hostile-pull{unique}:{len(labels)}"
    image_id = engine.build(tar_context({"Dockerfile": f"FROM debian:bookworm-slim\nRUN echo {unique}{len(labels)}"
                                                       f" > /x\n".encode()}), tag, {}, {**labels, **SESSION.labels},
                            lambda s: None)
    tracked["images"].append(image_id)
    moving = cell_ref(registry, cell.base.id, cell.torch.version)
    engine.tag(image_id, moving)
    digest = engine.push(moving)
    engine.remove_image(image_id, force=True)  # a probe-only host does not have it
    return f"{moving.rsplit(':', 1)[0]}@{digest}"


@pytest.mark.parametrize("pushed", [
    f"attacker.example/{NS}/fleettest@{FAKE_DIGEST}",                      # another registry
    "{registry}/evil/fleettest@" + FAKE_DIGEST,                            # another repository
    "{registry}/%s/fleettest@%s" % (DEFAULT_NAMESPACE, FAKE_DIGEST),       # another image namespace
    "{registry}/%s/otherbase@%s" % (NS, FAKE_DIGEST),                      # another cell's repository
    "{registry}/%s/fleettest:latest" % NS,                                 # a moving tag, not a digest
    "{registry}/%s/fleettest@sha256:short" % NS,                           # not a digest
], ids=["other-registry", "other-repository", "other-namespace", "other-cell", "moving-tag", "bad-digest"])
def test_a_results_file_cannot_point_the_pull_elsewhere(engine, registry, unique, tmp_path, pushed):
    cell = FleetCell(unique)
    pushed = pushed.format(registry=registry)
    folder = _results_folder(tmp_path / "given", cell, pushed)
    with pytest.raises(BuildError, match=r"refused to pull .*configured registry|not pinned by a sha256"):
        pull_cell_image(engine, str(folder), cell, registry=registry)
    # the registry the build job recorded (summary.json push) is the configured one when none is given
    folder = _results_folder(tmp_path / "recorded", cell, pushed, push=registry)
    assert recorded_registry(folder) == registry
    with pytest.raises(BuildError, match=r"refused to pull .*configured registry|not pinned by a sha256"):
        pull_cell_image(engine, str(folder), cell)


def test_a_folder_naming_several_registries_must_be_told_which(engine, registry, unique, tmp_path):
    cell, other = FleetCell(unique), FleetCell(unique + "b")
    folder = _results_folder(tmp_path / "r", cell, f"{registry}/{NS}/fleettest@{FAKE_DIGEST}")
    (folder / "cells" / f"{other.id}.json").write_text(
        (folder / "cells" / f"{cell.id}.json").read_text().replace(cell.id, other.id)
        .replace(registry, "attacker.example"))
    with pytest.raises(BuildError, match="several registries"):
        resolve_pull_ref(engine, str(folder), cell)
    assert resolve_pull_ref(engine, str(folder), cell, registry=registry).startswith(f"{registry}/{NS}/")


@pytest.mark.parametrize("labels, why", [
    ({}, "does not carry gpumatrix's label"),
    ({"io.gpumatrix.managed": "true"}, "has no io.gpumatrix.cell label"),
    ({"io.gpumatrix.managed": "true", "io.gpumatrix.cell": "someone-else"}, "was built for someone-else"),
])
def test_an_image_without_this_cells_labels_is_refused_and_not_kept(engine, tracked, registry, unique, labels, why):
    cell = FleetCell(unique)
    ref = _push_image(engine, tracked, registry, cell, labels, unique)
    with pytest.raises(BuildError, match=why):
        pull_cell_image(engine, registry, cell)
    assert engine.image_info(ref) is None  # the refused image is not left on the host


def test_an_image_shared_by_cells_of_one_base_is_accepted(engine, tracked, registry, unique):
    """Two cells of one base with the same wheels share one image, labelled with the first cell's id."""
    cell = FleetCell(unique)
    sibling = f"{cell.base.id}-torch{unique}+cpu"  # e.g. the same torch given as a local wheel
    ref = _push_image(engine, tracked, registry, cell, {"io.gpumatrix.managed": "true",
                                                        "io.gpumatrix.cell": sibling}, unique)
    pulled = pull_cell_image(engine, registry, cell)
    tracked["images"].append(pulled["id"])
    assert pulled["pulled"] == ref


def test_the_right_image_from_the_right_registry_is_pulled(engine, tracked, registry, unique, tmp_path):
    cell = FleetCell(unique)
    ref = _push_image(engine, tracked, registry, cell, {"io.gpumatrix.managed": "true",
                                                        "io.gpumatrix.cell": cell.id}, unique)
    pulled = pull_cell_image(engine, registry, cell)
    tracked["images"].append(pulled["id"])
    assert pulled["pulled"] == ref
    folder = _results_folder(tmp_path / "r", cell, ref)
    assert pull_cell_image(engine, str(folder), cell, registry=registry)["id"] == pulled["id"]
    with pytest.raises(BuildError, match="configured registry is 127.0.0.2:1"):
        pull_cell_image(engine, registry, cell, registry="127.0.0.2:1")
