"""Figures measured on a quiet host: a CPU cell's performance probes never overlap a build or another probe;
a GPU probe alongside other work says so (GPUMATRIX_HOST_BUSY); compile caches persist per image."""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import replace

from gpumatrix.config.matrix import Base, Cell, RunOptions, TorchSpec
from gpumatrix.host import GPU, HostInfo
from gpumatrix.run.probe import CACHE_IN_CONTAINER, compile_cache_dir, probe_container_spec
from gpumatrix.run.schedule import Scheduler


def cell(cid: str, vendor: str = "cpu") -> Cell:
    base = Base(id=cid.split("-")[0], vendor=vendor, image=f"img-{cid}", variant="cpu" if vendor == "cpu" else "cu130")
    return Cell(id=cid, base=replace(base, gpus="1"), torch=TorchSpec(version="2.13.0"), python="3.11")


CPU_HOST = HostInfo(hostname="h", kernel="k", os="o", machine="x86_64")
GPU_HOST = HostInfo(hostname="h", kernel="k", os="o", machine="x86_64", gpus=(GPU("nvidia", 0, "H100"),))


def _timeline(scheduler: Scheduler, work: list[tuple[str, str, float, float]]) -> list[tuple[str, float, float]]:
    """Run (name, kind, start delay, duration) items through the gates; return (name, started, ended)."""
    spans: list[tuple[str, float, float]] = []
    lock = threading.Lock()
    t0 = time.monotonic()
    cells = {name: cell(name) for name, *_ in work}

    def one(name: str, kind: str, delay: float, duration: float) -> None:
        time.sleep(delay)
        gate = (scheduler.build_gate(cells[name]) if kind == "build"
                else scheduler.probe_gate(cells[name], quiet=(kind == "quiet")))
        with gate:
            started = time.monotonic() - t0
            time.sleep(duration)
            ended = time.monotonic() - t0
        with lock:
            spans.append((name, started, ended))

    threads = [threading.Thread(target=one, args=item) for item in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return spans


def _overlap(a: tuple[str, float, float], b: tuple[str, float, float]) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def test_a_quiet_cpu_probe_waits_for_builds_and_holds_new_work_back():
    names = ["b1-torch1", "q-torch1", "b2-torch1", "p-torch1"]
    scheduler = Scheduler([cell(n) for n in names], CPU_HOST, jobs=2, cpu_slots=2)
    spans = {s[0]: s for s in _timeline(scheduler, [
        ("b1-torch1", "build", 0.0, 0.4),   # running when the quiet probe arrives
        ("q-torch1", "quiet", 0.1, 0.4),    # must wait for b1, then run alone
        ("b2-torch1", "build", 0.2, 0.2),   # arrives while q waits or runs: must not overlap q
        ("p-torch1", "probe", 0.2, 0.2),    # a plain probe: must not overlap q either
    ])}
    assert len(spans) == 4
    for other in ("b1-torch1", "b2-torch1", "p-torch1"):
        assert not _overlap(spans["q-torch1"], spans[other]), (other, spans)


def test_host_busy_is_said_when_a_gpu_probe_shares_the_host():
    gpu_cell, build_cell = cell("g-torch1", "nvidia"), cell("b-torch1")
    scheduler = Scheduler([gpu_cell, build_cell], GPU_HOST, jobs=1)
    with scheduler.probe_gate(gpu_cell) as slot:
        assert slot is not None and scheduler.host_busy() is False  # alone on the host
    with scheduler.build_gate(build_cell), scheduler.probe_gate(gpu_cell):
        assert scheduler.host_busy() is True  # a build runs beside it: figures are marked


def test_the_probe_container_gets_the_busy_flag_and_a_writable_cache(tmp_path):
    c = cell("cpu-torch2.13.0")
    cache = compile_cache_dir(tmp_path, "sha256:" + "ab" * 32)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o1777  # the probe user (65534) writes there
    assert compile_cache_dir(tmp_path, "sha256:" + "ab" * 32) == cache  # per image: the same folder again
    assert compile_cache_dir(tmp_path, "sha256:" + "cd" * 32) != cache
    spec = probe_container_spec(c, "img", CPU_HOST, RunOptions(), host_busy=True, cache_dir=cache)
    assert spec.environment["GPUMATRIX_HOST_BUSY"] == "1"
    assert spec.environment["GPUMATRIX_CACHE_DIR"] == CACHE_IN_CONTAINER
    (mount,) = [m for m in spec.mounts if m.target == CACHE_IN_CONTAINER]
    assert mount.source == str(cache) and mount.read_only is False
    assert spec.read_only is True  # the rest of the container stays read-only
    quiet = probe_container_spec(c, "img", CPU_HOST, RunOptions())
    assert "GPUMATRIX_HOST_BUSY" not in quiet.environment and "GPUMATRIX_CACHE_DIR" not in quiet.environment
