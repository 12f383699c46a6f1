"""Issue 14, finding 6: ``clean`` removes only what is gpumatrix's own and not in use by a live run.

Real engine: every image and container here is made by the test (from debian:bookworm-slim) and removed
by it; nothing is pruned.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from gpumatrix import cli
from gpumatrix.engine.client import MANAGED_LABEL, ContainerSpec, tar_context
from gpumatrix.images.naming import NAMESPACE_ENV
from gpumatrix.run.liveness import owner_alive, pid_alive, process_started_at
from tests.isolation import SESSION

NS = SESSION.namespace  # what clean treats as gpumatrix's names here (GPUMATRIX_IMAGE_NAMESPACE)


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_pid_alive():
    assert pid_alive(os.getpid()) and pid_alive(str(os.getpid()))
    assert not pid_alive(_dead_pid())
    for junk in (None, "", "x", "0", "-1", -1, "99999999999999999999"):
        assert not pid_alive(junk)


def test_owner_alive_knows_only_this_hosts_runs():
    here = socket.gethostname()
    assert owner_alive({"io.gpumatrix.hostname": here, "io.gpumatrix.pid": str(os.getpid())}) is True
    assert owner_alive({"io.gpumatrix.hostname": here, "io.gpumatrix.pid": str(_dead_pid())}) is False
    assert owner_alive({"io.gpumatrix.hostname": here + "-other", "io.gpumatrix.pid": str(os.getpid())}) is None
    assert owner_alive({}) is None and owner_alive({"io.gpumatrix.hostname": here}) is None


def test_a_reused_pid_is_not_the_owner():
    """A live process that started after the container was created cannot have created it."""
    here = socket.gethostname()
    labels = {"io.gpumatrix.hostname": here, "io.gpumatrix.pid": str(os.getpid())}
    started = process_started_at(os.getpid())
    assert started is not None and abs(started - time.time()) < 7 * 24 * 3600
    assert owner_alive(labels, created=time.time()) is True  # created after this process started
    assert owner_alive(labels, created=started - 600) is False  # created ten minutes before it started
    assert owner_alive(labels, created=started - 30) is True  # within the clock slack: kept
    assert owner_alive(labels, created=None) is True  # unknown creation time: the safe side


def _labels(cell: str, **extra: str) -> dict:
    return {MANAGED_LABEL: "true", "io.gpumatrix.cell": cell, **SESSION.labels, **extra}


def _build_ours(engine, tracked, tag: str, cell: str) -> str:
    """A tiny image named ``tag`` with gpumatrix's labels for ``cell``, removed by the test's tracking."""
    image_id = engine.build(tar_context({"Dockerfile": b"FROM debian:bookworm-slim\nCMD [\"true\"]\n"}), tag, {},
                            _labels(cell), lambda s: None)
    tracked["images"].append(image_id)
    return image_id


@pytest.fixture
def base_image(engine):
    if engine.image_info("debian:bookworm-slim") is None:
        pytest.fail("debian:bookworm-slim is missing; ./dev test provides it")


@pytest.mark.engine
def test_clean_never_removes_a_users_image_built_from_ours(engine, tracked, unique, base_image):
    cell = f"hostile{unique}-torch1"
    ours = f"{NS}/hostile{unique}:torch1-abc"
    ours_id = _build_ours(engine, tracked, ours, cell)
    # the user's own image FROM ours inherits every io.gpumatrix label, and has only the user's tag
    theirs = f"user/app{unique}:1"
    theirs_id = engine.build(tar_context({"Dockerfile": f"FROM {ours}\nRUN echo {unique} > /app\n".encode()}),
                             theirs, {}, SESSION.labels, lambda s: None)
    tracked["images"].insert(0, theirs_id)
    assert engine.image_info(theirs).labels[MANAGED_LABEL] == "true"

    listing = cli.clean(dry_run=True, only=f"hostile{unique}-*")
    assert ours in listing and f"{theirs}: not named by gpumatrix in {NS}/" in listing
    out = cli.clean(only=f"hostile{unique}-*")
    info = engine.image_info(theirs_id)
    assert info is not None and info.tags == (theirs,), out  # untouched, tag and all
    assert engine.image_info(ours) is None  # gpumatrix's name is gone


@pytest.mark.engine
def test_clean_only_untags_an_image_that_also_has_a_foreign_tag(engine, tracked, unique, base_image):
    cell = f"hostile{unique}-torch2"
    ours = f"{NS}/hostile{unique}:torch2-abc"
    pushed = f"127.0.0.1:5999/ml/{NS}/hostile{unique}:torch2"  # a registry name of ours (no push needed)
    image_id = _build_ours(engine, tracked, ours, cell)
    keep = f"user/keep{unique}:v1"
    engine.tag(image_id, pushed)
    engine.tag(image_id, keep)
    out = cli.clean(only=cell)
    assert f"kept for {keep}" in out
    info = engine.image_info(image_id)
    assert info is not None and info.tags == (keep,), out


@pytest.mark.engine
def test_clean_removes_an_image_whose_every_name_is_ours(engine, tracked, unique, base_image):
    cell = f"hostile{unique}-torch3"
    ours = f"{NS}/hostile{unique}:torch3-abc"
    image_id = _build_ours(engine, tracked, ours, cell)
    engine.tag(image_id, f"127.0.0.1:5999/{NS}/hostile{unique}:torch3")
    out = cli.clean(only=cell)
    assert engine.image_info(image_id) is None, out


@pytest.mark.engine
def test_clean_removes_only_the_names_of_this_hosts_namespace(engine, tracked, unique, base_image, monkeypatch):
    """Two namespaces on one engine (a user and a CI job, a user and a test session): clean in one never touches
    the other's names, local or pushed."""
    cell = f"hostile{unique}-torch5"
    other = f"{NS}-other"
    here, there = f"{NS}/hostile{unique}:torch5-abc", f"{other}/hostile{unique}:torch5-abc"
    image_id = _build_ours(engine, tracked, here, cell)
    engine.tag(image_id, there)
    engine.tag(image_id, f"127.0.0.1:5999/{other}/hostile{unique}:torch5")
    out = cli.clean(only=cell)
    info = engine.image_info(image_id)
    assert info is not None and sorted(info.tags) == sorted([there, f"127.0.0.1:5999/{other}/hostile{unique}:torch5"])
    assert f"untagged {here}; kept for" in out, out
    monkeypatch.setenv(NAMESPACE_ENV, other)  # the other namespace's clean takes its names, and the image
    out = cli.clean(only=cell)
    assert engine.image_info(image_id) is None, out


@pytest.mark.engine
def test_clean_keeps_the_containers_of_a_live_run(engine, tracked, unique, base_image):
    here = socket.gethostname()
    cell = f"hostile{unique}-torch4"

    def container(name: str, **labels: str) -> str:
        cid = engine.create_container(ContainerSpec(image="debian:bookworm-slim", command=["true"],
                                                    name=f"{name}-{unique}", labels=_labels(cell, **labels)))
        tracked["containers"].append(cid)
        return cid

    live = container("live", **{"io.gpumatrix.hostname": here, "io.gpumatrix.pid": str(os.getpid()),
                                "io.gpumatrix.role": "probe"})
    dead = container("dead", **{"io.gpumatrix.hostname": here, "io.gpumatrix.pid": str(_dead_pid()),
                                "io.gpumatrix.role": "probe"})
    remote = container("remote", **{"io.gpumatrix.hostname": f"{here}-elsewhere", "io.gpumatrix.pid": "1"})
    listed = {c.id: c for c in engine.containers_with_label(MANAGED_LABEL)}
    assert abs(listed[live].created - time.time()) < 600  # the engine's creation time reaches owner_alive
    out = cli.clean(only=cell)
    remaining = {c.id for c in engine.containers_with_label(MANAGED_LABEL)}
    assert live in remaining and remote in remaining, out
    assert dead not in remaining, out
    assert f"pid {os.getpid()}) is alive" in out
