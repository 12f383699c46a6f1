"""Tests keep out of the user's way, and the image namespace that lets them (issue 16).

A test session names its images in a namespace of its own and sweeps what it made at its end
(tests/isolation.py, conftest.py). Checked here: the product's namespace setting (``GPUMATRIX_IMAGE_NAMESPACE``),
that the session really uses its own, that the sweep removes everything a session leaves on a real engine —
a build, its untagged layers, a failed build's last layer, names pushed to and pulled from a loopback registry,
a base image's extra name — and nothing else, and that no engine test names an image in the user's namespace.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import pytest

from gpumatrix import cli
from gpumatrix.engine.client import tar_context
from gpumatrix.errors import ExitCode, UsageError
from gpumatrix.images.naming import DEFAULT_NAMESPACE, NAMESPACE_ENV, NAMESPACE_LABEL, image_namespace, is_named_in
from gpumatrix.resources import templates_dir
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.request import RunRequest
from tests._wheels import make_numpy, make_wheel, pip_env
from tests.engine_helpers import start_registry, stop_registry
from tests.isolation import SESSION, TEST_SESSION_LABEL, in_user_namespace, leftovers, new_session, sweep

TESTS = Path(__file__).parent


# -- the product's setting ---------------------------------------------------------------------------------
def test_the_namespace_comes_from_the_environment_and_defaults_to_gpumatrix():
    assert image_namespace({}) == DEFAULT_NAMESPACE == "gpumatrix"
    assert image_namespace({NAMESPACE_ENV: "  "}) == "gpumatrix"
    assert image_namespace({NAMESPACE_ENV: "myteam"}) == "myteam"
    assert image_namespace({NAMESPACE_ENV: "ci/gpu-matrix_2.x"}) == "ci/gpu-matrix_2.x"


@pytest.mark.parametrize("value", ["MyTeam", "a//b", "/a", "a/", "a b", "-a", "a:b", "reg.io:5000/a", "x" * 129])
def test_a_namespace_docker_would_refuse_is_a_usage_error(value):
    with pytest.raises(UsageError, match=rf"^{NAMESPACE_ENV}: .* is not a repository namespace") as err:
        image_namespace({NAMESPACE_ENV: value})
    assert err.value.exit_code == ExitCode.USAGE


def test_the_tasks_that_name_images_say_how_in_their_help():
    from gpumatrix.tasks import ns

    for name in ("matrix", "build", "probe", "clean"):
        assert f"${NAMESPACE_ENV} (default gpumatrix)" in ns.tasks[name].__doc__, name
    assert NAMESPACE_ENV not in ns.tasks["report"].__doc__


def test_names_in_a_namespace():
    assert is_named_in("gpumatrix/cpu:torch2.13.0-abc", "gpumatrix")
    assert is_named_in("reg.example:5000/ml/gpumatrix/cpu@sha256:" + "a" * 64, "gpumatrix")
    assert not is_named_in("gpumatrix-test-1/cpu:torch2.13.0-abc", "gpumatrix")
    assert not is_named_in("gpumatrix/cpu:x", "gpumatrix-test-1")
    assert is_named_in("127.0.0.1:5000/team/a/cpu:x", "team/a") and not is_named_in("team/a/b/cpu:x", "team/a")


def test_the_session_names_images_in_its_own_namespace():
    """conftest.py set it for the whole session (subprocesses inherit it), whatever the user had set."""
    assert os.environ[NAMESPACE_ENV] == SESSION.namespace == image_namespace()
    assert SESSION.namespace != DEFAULT_NAMESPACE and not is_named_in(f"{SESSION.namespace}/cpu:x", DEFAULT_NAMESPACE)


def _literals(tree: ast.AST) -> list[str]:
    """Every string a module spells out; an f-string's replacement fields, and ``%s``, as ``x``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
                               for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value.replace("%s", "x"))
    return out


def test_no_engine_test_spells_an_image_name_in_the_users_namespace():
    """The engine tests name what they build, tag, push and pull in the session's namespace (a literal
    ``gpumatrix/NAME:tag`` there would be a name in the user's)."""
    def names_a_user_image(text: str) -> bool:  # a whole literal that is an image reference there, tag or digest
        return bool(re.fullmatch(r"[A-Za-z0-9._:/@-]+", text)) and (":" in text.rsplit("/", 1)[-1] or "@" in text) \
            and is_named_in(text, DEFAULT_NAMESPACE)

    assert names_a_user_image("x/gpumatrix/fleettest:tx") and names_a_user_image("gpumatrix/cpu@sha256:x")
    assert not names_a_user_image(":/opt/gpumatrix/probes:ro") and not names_a_user_image(f"{SESSION.namespace}/a:b")
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if path == Path(__file__):  # this file names such strings as data
            continue
        if "mark.engine" not in source and path.name != "engine_helpers.py":  # unit tests: no engine, no image
            continue
        found += [f"{path.relative_to(TESTS)}: {s!r}" for s in _literals(ast.parse(source)) if names_a_user_image(s)]
    assert found == []


# -- the tripwire and the sweep, on the real engine ----------------------------------------------------------
@pytest.mark.engine
def test_the_tripwire_sees_a_session_image_named_in_the_users_namespace(engine, unique):
    """What conftest.py checks after every engine test; a stand-in for the user's namespace keeps it theirs."""
    session = new_session()
    users = f"{session.namespace}-user"
    image_id = engine.build(tar_context({"Dockerfile": f"FROM debian:bookworm-slim\nRUN echo {unique} > /t\n".encode()}),
                            f"{session.namespace}/tripwire:{unique}", {}, session.labels, lambda s: None)
    try:
        assert in_user_namespace(engine, session, users) == []
        engine.tag(image_id, f"{users}/cpu:{unique}")
        assert in_user_namespace(engine, session, users) == [f"{users}/cpu:{unique}"]
    finally:
        sweep(engine, session)
    assert leftovers(engine, session) == [] and engine.image_info(image_id) is None


TINY_MATRIX = """\
schema_version: 1
python: "3.11"
index_url: null
wheelhouse: [wheels]
bases:
  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
torch:
  - {version: "9.9.9", variants: [cpu]}
"""


@pytest.mark.engine
def test_the_sweep_removes_everything_a_session_made_and_nothing_else(engine, tmp_path, monkeypatch, unique):
    """A session (nested in this one) builds in its namespace, fails a build, pushes and pulls through a loopback
    registry, names the shared base image, replaces a tag: the sweep leaves nothing of it, and the base image,
    and an image of the outer session, as they were."""
    if engine.image_info("debian:bookworm-slim") is None:
        pytest.fail("debian:bookworm-slim is missing; ./dev test provides it")
    base_id = engine.image_info("debian:bookworm-slim").id
    session = new_session()
    pip_env(monkeypatch)
    monkeypatch.setenv(NAMESPACE_ENV, session.namespace)
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(tmp_path / "cache"))
    make_wheel(tmp_path / "wheels", "torch", "9.9.9+cpu", payload="__version__ = '9.9.9+cpu'\n")
    make_numpy(tmp_path / "wheels")
    (tmp_path / "matrix.yaml").write_text(TINY_MATRIX)
    control = f"{SESSION.namespace}/sweep-control:{unique}"  # the outer session's: the nested sweep keeps it
    control_id = engine.build(tar_context({"Dockerfile": f"FROM debian:bookworm-slim\nRUN echo {unique} > /c\n"
                                                         .encode()}), control, {}, SESSION.labels, lambda s: None)
    proc, registry = start_registry(tmp_path / "registry")
    try:
        # 1. a build in the session's namespace, pushed (two names in the registry, a digest reference here)
        cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(tmp_path / "r1"),
                                  probe=False, push=registry), echo=lambda s: None)
        (built,) = ResultsDir(tmp_path / "r1").load()[0]
        assert built.status == "skipped", built.reason  # built and pushed, not probed
        tag, pushed = built.image["tag"], built.image["pushed"]
        assert tag.startswith(f"{session.namespace}/cpu:torch9.9.9-")
        assert pushed.startswith(f"{registry}/{session.namespace}/cpu@sha256:")
        assert engine.image_info(tag).labels[NAMESPACE_LABEL] == session.namespace
        # 2. a probe-only host: the local tags go (the build's and the two pushed), it comes back by digest only
        for name in engine.image_info(tag).tags:
            engine.remove_image_reference(name)
        assert engine.pull_by_digest(pushed).tags == ()
        # 3. a build that fails after its first layers: its last layer stays behind, untagged
        templates = tmp_path / "templates"
        shutil.copytree(templates_dir(), templates, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
        (templates / "install-torch.sh").write_text("#!/bin/sh\necho 'gpumatrix: broken on purpose' >&2\nexit 1\n")
        monkeypatch.setenv("GPUMATRIX_IMAGES_DIR", str(templates))
        cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(tmp_path / "r2"),
                                  probe=False), echo=lambda s: None)
        (failed,) = ResultsDir(tmp_path / "r2").load()[0]
        assert failed.status == "build_error" and "broken on purpose" in failed.reason
        monkeypatch.delenv("GPUMATRIX_IMAGES_DIR")
        # 4. the shared base image, given a name in the namespace through the registry (a ready-made test's way)
        slim = f"{registry}/{session.namespace}/vendor-slim:{unique}"
        engine.tag("debian:bookworm-slim", slim)
        slim_digest = engine.push(slim)
        engine.remove_image_reference(slim)
        engine.pull_by_digest(f"{registry}/{session.namespace}/vendor-slim@{slim_digest}")
        # 5. a tag built twice: the first image is left with no name
        child = f"{session.namespace}/child:{unique}"
        for n in (1, 2):
            engine.build(tar_context({"Dockerfile": f"FROM debian:bookworm-slim\nRUN echo {unique}{n} > /n\n".encode()}),
                         child, {}, session.labels, lambda s: None)

        left = leftovers(engine, session)
        assert len([x for x in left if "(no name)" in x]) >= 2, left  # the replaced tag, the failed build's layer
        assert any(f"{registry}/{session.namespace}/cpu@sha256:" in x for x in left), left
        assert any(x.startswith(f"image {base_id[7:19]} ") for x in left), left  # by its name in the namespace

        removed = sweep(engine, session)
    finally:
        stop_registry(proc)
        sweep(engine, session)
    assert leftovers(engine, session) == [], removed
    assert not [r for img in engine.list_images() for r in (*img.tags, *img.repo_digests)
                if is_named_in(r, session.namespace)]
    base = engine.image_info("debian:bookworm-slim")
    assert base is not None and base.id == base_id and not [d for d in base.repo_digests if session.namespace in d]
    assert engine.image_info(control) is not None and engine.image_info(control).id == control_id
    engine.remove_image(control_id)


@pytest.mark.engine
def test_containers_of_the_session_are_swept_too(engine, unique):
    from gpumatrix.engine.client import ContainerSpec

    session = new_session()
    cid = engine.create_container(ContainerSpec(image="debian:bookworm-slim", command=["true"],
                                                name=f"sweep-{unique}", labels=session.labels))
    assert any(c.id == cid for c in engine.containers_with_label(f"{TEST_SESSION_LABEL}={session.id}"))
    assert sweep(engine, session) == [f"container {cid[:12]} sweep-{unique}"]
    assert leftovers(engine, session) == []


LEAKING_TEST = """\
import json, os

import pytest

import tests.conftest
from gpumatrix.engine.client import tar_context
from tests.isolation import SESSION


@pytest.mark.engine
def test_leaves_an_image(engine):
    tests.conftest.sweep = lambda *args: []  # a sweep that misses what this session made
    image_id = engine.build(tar_context({"Dockerfile": b"FROM debian:bookworm-slim\\nRUN echo leak > /leak\\n"}),
                            f"{SESSION.namespace}/leak:1", {}, SESSION.labels, lambda s: None)
    with open(os.environ["LEAK_RECORD"], "w") as f:
        json.dump({"session": SESSION.id, "image": image_id}, f)
"""


@pytest.mark.engine
def test_a_session_that_leaves_its_images_behind_fails(engine, tmp_path):
    """A whole pytest session with this suite's conftest.py, whose sweep misses an image: the session fails,
    naming it (the check after the sweep is what makes a leaking session visible)."""
    import json
    import subprocess
    import sys

    from tests.isolation import TestSession

    (tmp_path / "test_leak.py").write_text(LEAKING_TEST)
    record = tmp_path / "leak.json"
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                          "-c", str(TESTS.parent / "pyproject.toml"), "--rootdir", str(TESTS.parent),
                          str(tmp_path / "test_leak.py")], cwd=TESTS.parent, env={**os.environ, "LEAK_RECORD": str(record)},
                         capture_output=True, text=True, timeout=600)
    leaked = json.loads(record.read_text())
    inner = TestSession(leaked["session"])
    try:
        assert inner.namespace != SESSION.namespace  # a session of its own
        assert out.returncode == 1, out.stdout[-3000:]
        assert "the test session left 1 of its objects on the engine after its sweep" in out.stdout, out.stdout[-3000:]
        assert f"image {leaked['image'][7:19]} {inner.namespace}/leak:1" in out.stdout, out.stdout[-3000:]
        assert "1 passed, 1 error" in out.stdout, out.stdout[-3000:]
    finally:
        sweep(engine, inner)
    assert leftovers(engine, inner) == [] and engine.image_info(leaked["image"]) is None
