"""Push and pull by digest through a real registry (Debian's docker-registry, distribution 2.8) on loopback.

The engine treats 127.0.0.0/8 registries as insecure-allowed, so plain HTTP on a free loopback port
needs no daemon configuration. The registry is started per test module and stopped by its pid.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import urllib.error
import urllib.request
import warnings

import pytest

from gpumatrix.engine.client import EngineOperationError, tar_context
from gpumatrix.errors import BuildError
from gpumatrix.images.registry import cell_ref, push_cell_image, registry_ref
from gpumatrix.run.pull import pull_cell_image, resolve_pull_ref
from tests.engine_helpers import FleetCell, free_port, start_registry, stop_registry
from tests.isolation import SESSION

pytestmark = pytest.mark.engine

@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    proc, address = start_registry(tmp_path_factory.mktemp("registry"))
    yield address
    stop_registry(proc)


@pytest.fixture
def tiny_image(engine, tracked, unique):
    """A tiny labelled image built FROM debian:bookworm-slim (which the engine has locally)."""
    if engine.image_info("debian:bookworm-slim") is None:
        pytest.fail("debian:bookworm-slim is missing; ./dev test provides it")
    tag = f"{SESSION.namespace}/fleettest:t{unique}"
    dockerfile = (f"FROM debian:bookworm-slim\nLABEL io.gpumatrix.managed=true io.gpumatrix.cell=fleettest-torch{unique}"
                  f" io.gpumatrix.inputs={unique}\nRUN echo {unique} > /gpumatrix-fleet-test\n").encode()
    image_id = engine.build(tar_context({"Dockerfile": dockerfile}), tag, {}, SESSION.labels, lambda line: None)
    tracked["images"].append(image_id)
    return {"tag": tag, "id": image_id, "repo_digests": [], "reused": False}


def test_push_remove_pull_by_digest_gives_the_same_image(engine, tracked, tiny_image, registry, unique):
    ref = f"{registry}/{SESSION.namespace}/fleettest:t{unique}"
    engine.tag(tiny_image["id"], ref)
    tracked["images"].append(ref)
    digest = engine.push(ref)
    assert digest.startswith("sha256:") and len(digest) == 71
    # the registry itself says the tag points at that manifest
    req = urllib.request.Request(f"http://{registry}/v2/{SESSION.namespace}/fleettest/manifests/t{unique}", method="HEAD",
                                 headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert resp.headers["Docker-Content-Digest"] == digest
    assert engine.registry_digest(ref) == digest
    engine.remove_image(tiny_image["id"], force=True)
    assert engine.image_info(tiny_image["id"]) is None
    by_digest = f"{registry}/{SESSION.namespace}/fleettest@{digest}"
    info = engine.pull_by_digest(by_digest)
    tracked["images"].append(info.id)
    assert info.id == tiny_image["id"]
    assert by_digest in info.repo_digests
    assert info.labels["io.gpumatrix.cell"] == f"fleettest-torch{unique}"


def test_push_errors_carry_the_reason(engine, tracked, tiny_image):
    port = free_port()  # nothing listens there
    ref = f"127.0.0.1:{port}/{SESSION.namespace}/fleettest:nowhere"
    engine.tag(tiny_image["id"], ref)
    tracked["images"].append(ref)
    with pytest.raises(EngineOperationError, match=rf"pushing {ref}: .*(refused|connect)"):
        engine.push(ref)
    with pytest.raises(EngineOperationError, match="not a digest reference"):
        engine.pull_by_digest(ref)


def test_fleet_push_then_probe_host_pulls_by_digest(engine, tracked, tiny_image, registry, unique, tmp_path):
    cell = FleetCell(unique)
    lines: list[str] = []
    image = push_cell_image(engine, tiny_image, cell.base.id, cell.torch.version, registry, echo=lines.append)
    target = registry_ref(registry, tiny_image["tag"], "fleettest")
    moving = cell_ref(registry, "fleettest", unique)
    tracked["images"] += [target, moving]
    assert target == f"{registry}/{SESSION.namespace}/fleettest:t{unique}"  # the session's namespace, pushed
    pushed = image["pushed"]
    assert pushed.startswith(f"{registry}/{SESSION.namespace}/fleettest@sha256:") and pushed in image["repo_digests"]
    assert any(line.startswith("  pushed ") for line in lines)
    # a probe-only host: the image is not there; --from REGISTRY finds it by the cell's tag, pulls by digest
    engine.remove_image(tiny_image["id"], force=True)
    assert resolve_pull_ref(engine, registry, cell) == pushed
    pulled = pull_cell_image(engine, registry, cell)
    tracked["images"].append(pulled["id"])
    assert pulled["id"] == tiny_image["id"] and pulled["tag"] == pushed and pulled["pulled"] == pushed
    assert pulled["inputs_hash"] == unique
    # --from a build job's results folder pins the digest it recorded
    folder = tmp_path / "build-results" / "cells"
    folder.mkdir(parents=True)
    (folder / f"{cell.id}.json").write_text(json.dumps({
        "schema_version": 1, "cell_id": cell.id, "base_id": "fleettest", "base_image": "debian:bookworm-slim",
        "vendor": "cpu", "variant": "cpu", "torch": unique, "python": "3.11", "status": "pass", "image": image}))
    assert resolve_pull_ref(engine, str(tmp_path / "build-results"), cell) == pushed
    # a cell of the same base that installs the same wheels shares the image (one build, one tag): accepted;
    # an image labelled for another base's cell is refused (tests/test_hostile_pull.py)
    sibling = FleetCell(unique + "x")
    sibling.base = cell.base
    sibling.torch = cell.torch
    assert pull_cell_image(engine, registry, sibling)["pulled"] == pushed


def test_pull_of_an_unknown_cell_says_what_to_do(engine, registry, unique):
    cell = FleetCell(unique)
    with pytest.raises(BuildError, match=r"no image of .* build and push it first"):
        pull_cell_image(engine, registry, cell)


def _bcrypt(password: str) -> str | None:
    exe = shutil.which("htpasswd")
    if exe:
        out = subprocess.run([exe, "-nbB", "u", password], capture_output=True, text=True, timeout=30)
        return out.stdout.strip().split(":", 1)[1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt  # removed in Python 3.13; the htpasswd tool covers that case
        return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH))
    except (ImportError, AttributeError, OSError):
        return None


def test_push_uses_docker_login_credentials(engine, tracked, tiny_image, tmp_path, unique, monkeypatch):
    hashed = _bcrypt("s3cret")
    if not hashed:
        pytest.skip("no bcrypt available (htpasswd tool or Python's crypt module)")
    (tmp_path / "htpasswd").write_text(f"u:{hashed}\n")
    proc, address = start_registry(tmp_path / "auth", extra=(
        f"auth:\n  htpasswd:\n    realm: gpumatrix-test\n    path: {tmp_path / 'htpasswd'}\n"))
    try:
        ref = f"{address}/{SESSION.namespace}/fleettest:auth{unique}"
        engine.tag(tiny_image["id"], ref)
        tracked["images"].append(ref)
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "nologin"))
        with pytest.raises(EngineOperationError, match=r"(?i)(auth|credentials)"):
            engine.push(ref)
        # what 'docker login' writes: ~/.docker/config.json with the registry's base64 user:password
        login = tmp_path / "login"
        login.mkdir()
        (login / "config.json").write_text(json.dumps(
            {"auths": {address: {"auth": base64.b64encode(b"u:s3cret").decode()}}}))
        monkeypatch.setenv("DOCKER_CONFIG", str(login))
        assert engine.push(ref).startswith("sha256:")
    finally:
        stop_registry(proc)


# -- ready-made framework images (images: in matrix.yaml) -----------------------------------------------------
READY_MATRIX = """\
schema_version: 1
python: "3.11"
bases:
  - {{id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}}
torch:
  - {{version: "2.13.0", variants: [cpu]}}
images:
  - {{id: vendor-torch, vendor: cpu, image: "{with_torch}"}}
  - {{id: no-torch, vendor: cpu, image: "{without_torch}"}}
  - {{id: no-python, vendor: cpu, image: "{without_python}"}}
"""


def _push(engine, image: str, ref: str) -> None:
    engine.tag(image, ref)
    engine.push(ref)
    engine.remove_image(ref, force=False)  # only the pull may bring it back


def test_ready_made_images_are_pulled_by_digest_and_probed_as_they_ship(engine, registry, tmp_path, unique):
    """A built CPU cell image, re-tagged and served by the loopback registry, stands in for a vendor image."""
    from gpumatrix import cli
    from gpumatrix.results.store import ResultsDir
    from gpumatrix.run.request import RunRequest

    built = tmp_path / "built"
    built.mkdir()
    (built / "matrix.yaml").write_text(READY_MATRIX.split("images:")[0].replace("{{", "{").replace("}}", "}"))
    cli.run_matrix(RunRequest(matrix_path=str(built / "matrix.yaml"), results_path=str(built / "results"),
                              probe=False), echo=lambda s: None)
    (cell,) = [r for r in ResultsDir(built / "results").load()[0] if r.cell_id == "cpu-torch2.13.0"]
    # "Vendor" images named in the session's namespace, so that the session's sweep finds every name they leave
    # (the pulls below add digest references; debian:bookworm-slim itself must stay).
    vendor = f"{registry}/{SESSION.namespace}"
    with_torch = f"{vendor}/vendor-pytorch:ready-{unique}"
    without_torch = f"{vendor}/vendor-python:ready-{unique}"
    without_python = f"{vendor}/vendor-slim:ready-{unique}"
    _push(engine, cell.image["id"], with_torch)
    # The same image with torch taken out: Python is there, torch is not.
    no_torch_id = engine.build(tar_context({"Dockerfile": f"FROM {cell.image['id']}\nRUN rm -rf "
                                                           f"/opt/venv/lib/python3*/site-packages/torch\n".encode()}),
                               f"{SESSION.namespace}/readytest:{unique}", {}, SESSION.labels, lambda line: None)
    _push(engine, no_torch_id, without_torch)
    engine.remove_image(f"{SESSION.namespace}/readytest:{unique}")
    _push(engine, "debian:bookworm-slim", without_python)

    (tmp_path / "matrix.yaml").write_text(READY_MATRIX.format(with_torch=with_torch, without_torch=without_torch,
                                                              without_python=without_python))
    request = RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(tmp_path / "results"),
                         only="vendor-torch,no-torch,no-python", quick=True)
    lines: list[str] = []
    try:
        cli.run_matrix(request, echo=lines.append)
        results = {r.cell_id: r for r in ResultsDir(tmp_path / "results").load()[0]}
        ready, bare, slim = results["vendor-torch"], results["no-torch"], results["no-python"]
        assert ready.status == "pass", ready.reason
        assert ready.torch == "2.13.0+cpu"  # read from inside the image, not from matrix.yaml
        assert ready.image["pulled"].startswith(f"{vendor}/vendor-pytorch@sha256:")
        assert ready.image["reused"] is False and not ready.logs  # pulled, nothing built: no build log
        assert not ResultsDir(tmp_path / "results").log_path("vendor-torch", "build").exists()
        assert bare.status == "not_applicable" and "no usable torch in this image" in bare.reason
        assert "No module named 'torch'" in bare.reason
        assert slim.status == "not_applicable" and "no python3 in this image" in slim.reason
        assert any("pulling" in line for line in lines)

        again: list[str] = []
        cli.run_matrix(request, echo=again.append)
        ready2 = {r.cell_id: r for r in ResultsDir(tmp_path / "results").load()[0]}["vendor-torch"]
        assert ready2.image["reused"] is True and ready2.image["pulled"] == ready.image["pulled"]
        assert any("the tag has not moved" in line for line in again)
    finally:
        # The pulls left digest references only (the tags were removed before): remove every name of these
        # repositories; debian:bookworm-slim keeps its own name and its data.
        repositories = {r.rsplit(":", 1)[0] for r in (with_torch, without_torch, without_python)}
        for image in engine.list_images():
            for name in image.repo_digests:
                if name.split("@", 1)[0] in repositories:
                    engine.remove_image_reference(name)
    assert not [n for image in engine.list_images() for n in (*image.tags, *image.repo_digests)
                if n.startswith(f"{vendor}/vendor-")]
    assert engine.image_info("debian:bookworm-slim") is not None
