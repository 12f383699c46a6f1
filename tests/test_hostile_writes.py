"""Issue 14, findings 2 and 10: a hostile document or a full disk cannot end the run; modes; seccomp.

The full disk is a real one: a 64 KiB tmpfs mounted for the test (root and mount(8) needed; the
test says so and is skipped otherwise, never silently passed).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from gpumatrix.config.model import RunOptions
from gpumatrix.fsutil import write_bytes_atomic, write_json_atomic, write_text_atomic
from gpumatrix.host import GPU, HostInfo
from gpumatrix.results.store import CellResult, ResultsDir, ResultWriteError
from gpumatrix.run.passthrough import passthrough_options_for

HOSTILE_STRINGS = ["\ud800", "a\udfffb", "\udc80\ud83d", "ok \u00e9\u4e2d\U0001f600"]


def _result(cell_id: str = "cpu-torch2.13.0", **kw) -> CellResult:
    return CellResult(cell_id=cell_id, base_id="cpu", base_image="debian:bookworm-slim", vendor="cpu",
                      variant="cpu", torch="2.13.0", python="3.11", status="pass", **kw)


def _probe_doc(text: str) -> dict:
    """A probe document as json.loads gives it from a container that printed ``text`` escaped."""
    raw = json.dumps({"probes": [{"id": text, "layer": 0, "status": "pass", "message": text,
                                  "details": {text: [text]}}], "verdict": {"status": "pass"}})
    return json.loads(raw)  # ensure_ascii escapes: '"\\ud800"' parses back into a lone surrogate


@pytest.mark.parametrize("text", HOSTILE_STRINGS)
def test_a_lone_surrogate_in_a_probe_document_is_written_and_reads_back(tmp_path, text):
    results = ResultsDir(tmp_path)
    path = results.write_cell(_result(probes=_probe_doc(text), reason=text))
    loaded, warnings = results.load()
    assert not warnings and [r.cell_id for r in loaded] == ["cpu-torch2.13.0"]
    message = loaded[0].probes["probes"][0]["message"]
    # every surrogate became U+FFFD, everything else is kept as it was
    assert message == "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    path.read_bytes().decode("utf-8")  # strictly valid UTF-8


def test_surrogates_in_keys_and_the_summary_are_written(tmp_path):
    results = ResultsDir(tmp_path)
    results.write_summary({"state": "running", "cells": {"\ud800": "pass"}, "host": {"hostname": "x\udfff"}})
    assert results.load_summary().state == "running"
    write_text_atomic(tmp_path / "t.txt", "a\ud800b")
    assert (tmp_path / "t.txt").read_text(encoding="utf-8") == "a\ufffdb"


def test_the_atomic_writer_never_raises_on_any_str(tmp_path):
    for i, cp in enumerate(range(0xD7F0, 0xE010)):
        write_json_atomic(tmp_path / "x.json", {chr(cp): chr(cp) * 3, "i": i})
    assert json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))["i"] == 0xE010 - 0xD7F0 - 1


@pytest.fixture
def tiny_disk():
    """A real 64 KiB tmpfs: writes past it fail with ENOSPC, as on a full disk."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8) to mount a tiny tmpfs")
    where = Path("/tmp") / f"gmx-tinydisk-{uuid.uuid4().hex[:8]}"
    where.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(where)],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True, timeout=30)
        where.rmdir()


def test_a_full_disk_is_a_typed_error_of_that_cell_and_leaves_the_old_file(tiny_disk):
    results = ResultsDir(tiny_disk / "results")
    small = results.write_cell(_result())
    before = small.read_bytes()
    big = _result(probes={"probes": [{"id": "p", "status": "pass", "message": "x" * 200_000}]})
    with pytest.raises(ResultWriteError) as info:
        results.write_cell(big)
    err = info.value
    assert err.cell_id == "cpu-torch2.13.0" and err.errno == errno.ENOSPC and err.path == small
    assert "No space left on device" in str(err) and "cpu-torch2.13.0" in str(err)
    assert small.read_bytes() == before  # the old result is intact
    assert sorted(p.name for p in results.cells_dir.iterdir()) == [small.name]  # no temp file left behind


def test_save_cell_turns_a_full_disk_into_that_cells_error(tiny_disk):
    results = ResultsDir(tiny_disk / "results")
    big = _result(probes={"probes": [{"id": "p", "status": "pass", "message": "x" * 200_000}]})
    saved, err = results.save_cell(big)
    assert isinstance(err, ResultWriteError) and err.errno == errno.ENOSPC
    assert saved.status == "error" and "No space left on device" in saved.reason
    assert saved.diagnosis["cause"] == "disk_full" and saved.probes is None
    loaded, warnings = results.load()  # the small error record fitted, and is a valid result
    assert not warnings and loaded[0].status == "error" and loaded[0].cell_id == big.cell_id
    # the summary on a full disk is the same typed error
    with pytest.raises(ResultWriteError) as info:
        results.write_summary({"state": "running", "pad": "y" * 200_000})
    assert info.value.cell_id is None and info.value.errno == errno.ENOSPC


def test_enospc_reported_late_by_fsync_is_the_same_typed_error(tmp_path, monkeypatch):
    """Runs without root too: some filesystems (delayed allocation, NFS) report a full disk at fsync."""
    results = ResultsDir(tmp_path)
    old = results.write_cell(_result(reason="old"))

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    saved, err = results.save_cell(_result(reason="new"))
    monkeypatch.undo()
    assert err is not None and err.errno == errno.ENOSPC and saved.status == "error"
    assert json.loads(old.read_text())["reason"] == "old"  # neither write replaced the old file
    assert [p.name for p in results.cells_dir.iterdir()] == [old.name]


def test_a_result_the_file_already_holds_is_not_written_again(tmp_path, monkeypatch):
    """A rerun that changed nothing (cells reused or skipped) leaves their files alone: no temp file, no fsync."""
    results = ResultsDir(tmp_path)
    path = results.write_cell(_result(reason="same"))
    inode = path.stat().st_ino
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    assert results.write_cell(_result(reason="same")) == path and path.stat().st_ino == inode and synced == []
    results.write_cell(_result(reason="new"))  # another document is written, atomically as ever
    assert json.loads(path.read_text())["reason"] == "new" and path.stat().st_ino != inode and len(synced) == 1
    text = path.read_bytes()
    path.write_bytes(text.replace(b'"new"', b'"wen"'))  # same size, other bytes: written again
    results.write_cell(_result(reason="new"))
    assert path.read_bytes() == text and len(synced) == 2


def test_save_cell_returns_the_result_when_it_fits(tmp_path):
    result = _result(probes=_probe_doc("\ud800"))
    saved, err = ResultsDir(tmp_path).save_cell(result)
    assert err is None and saved is result


def test_unwritable_results_folder_is_a_typed_error(tmp_path):
    if os.geteuid() == 0:
        # root ignores directory permissions: a file where the cells folder should be fails the same way
        (tmp_path / "cells").write_text("not a folder")
    else:
        (tmp_path / "cells").mkdir()
        (tmp_path / "cells").chmod(0o500)
    with pytest.raises(ResultWriteError) as info:
        ResultsDir(tmp_path).write_cell(_result())
    assert info.value.cell_id == "cpu-torch2.13.0" and info.value.errno is not None


def test_a_document_nested_too_deep_is_a_typed_error(tmp_path):
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ResultWriteError, match="nested too deeply"):
        ResultsDir(tmp_path).write_cell(_result(probes={"probes": deep}))


# -- finding 10: modes ---------------------------------------------------------------------------
@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_atomic_files_get_the_umask_default_mode_not_0600(tmp_path, umask_022):
    write_json_atomic(tmp_path / "peaks.json", {"a": 1})
    write_bytes_atomic(tmp_path / "b.bin", b"x")
    for name in ("peaks.json", "b.bin"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644


def test_an_explicit_mode_wins_over_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        write_json_atomic(tmp_path / "peaks.json", {"a": 1}, mode=0o644)
        write_text_atomic(tmp_path / "private.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "peaks.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600


def test_the_probe_user_can_read_an_atomically_written_file(umask_022):
    """uid 65534 (the probe containers' user) reads the file, as it does through the read-only mount."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a process as uid 65534")
    folder = Path(tempfile.mkdtemp(prefix="gmx-mode-", dir="/tmp"))  # pytest's tmp_path is 0700
    try:
        folder.chmod(0o755)
        write_json_atomic(folder / "peaks.json", {"H100": 989})
        proc = subprocess.run(["cat", str(folder / "peaks.json")], capture_output=True, text=True, timeout=30,
                              user=65534, group=65534)
    finally:
        shutil.rmtree(folder)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"H100": 989}


# -- finding 10: seccomp=unconfined is for AMD cells only ------------------------------------------
def _nvidia_host() -> HostInfo:
    return HostInfo(hostname="h", kernel="6.8", os="Ubuntu", machine="x86_64",
                    gpus=(GPU("nvidia", 0, "NVIDIA H100 80GB HBM3", "sm_90", uuid="GPU-0"),),
                    nvidia_driver="580.95.05", engine={"version": "27.5.1", "api_version": "1.47", "runtimes": ["runc"]},
                    nvidia_toolkit={"nvidia-container-runtime-hook": "/usr/bin/nvidia-container-runtime-hook"})


def _amd_host() -> HostInfo:
    return HostInfo(hostname="h", kernel="6.8", os="Ubuntu", machine="x86_64",
                    gpus=(GPU("amd", 0, "AMD Instinct MI300X", "gfx942", render_node="/dev/dri/renderD128"),),
                    amd_driver="6.12.12", dev_kfd=True, render_nodes=("/dev/dri/renderD128",),
                    group_ids={"video": 44, "render": 992}, engine={"version": "27.5.1"})


@pytest.mark.parametrize("mode", ["gpus", "runtime"])
def test_seccomp_unconfined_never_reaches_an_nvidia_container(mode):
    host = _nvidia_host()
    if mode == "runtime":
        host = replace(host, engine={**host.engine, "runtimes": ["runc", "nvidia"]})
    run = RunOptions(seccomp_unconfined=True, nvidia_mode=mode)
    p = passthrough_options_for("nvidia", host, run=run)
    assert p.mode == mode
    assert "seccomp=unconfined" not in p.security_opt
    assert passthrough_options_for("cpu", host, run=run).security_opt == ()


def test_seccomp_unconfined_still_applies_to_amd_when_asked():
    run = RunOptions(seccomp_unconfined=True)
    assert passthrough_options_for("amd", _amd_host(), run=run).security_opt == ("seccomp=unconfined",)
    assert passthrough_options_for("amd", _amd_host(), run=RunOptions()).security_opt == ()
