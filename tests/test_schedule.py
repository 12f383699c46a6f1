"""The scheduler's gates, with real threads: build concurrency, shared-layer leaders, GPU slots."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from gpumatrix.config.matrix import Base, Cell, TorchSpec
from gpumatrix.host import GPU, HostInfo
from gpumatrix.run.schedule import Scheduler


def cell(cid, vendor="cpu", image="debian:bookworm-slim", gpus="1"):
    base = Base(id=cid.split("-")[0], vendor=vendor, image=image, variant="cpu" if vendor == "cpu" else "cu130")
    base = replace(base, gpus=gpus)
    return Cell(id=cid, base=base, torch=TorchSpec(version=cid.split("torch")[-1]), python="3.11")


HOST = HostInfo(hostname="h", kernel="k", os="o", machine="x86_64",
                gpus=(GPU("nvidia", 0, "H100"), GPU("nvidia", 1, "H100")))


class Tracker:
    def __init__(self):
        self.lock = threading.Lock()
        self.active: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.order: list[str] = []

    def enter(self, key, name):
        with self.lock:
            self.active[key] = self.active.get(key, 0) + 1
            self.peak[key] = max(self.peak.get(key, 0), self.active[key])
            self.order.append(f"start {name}")

    def leave(self, key, name):
        with self.lock:
            self.active[key] -= 1
            self.order.append(f"end {name}")


def run_all(cells, fn):
    threads = [threading.Thread(target=fn, args=(c,)) for c in cells]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)


def test_builds_bounded_and_group_leader_first():
    cells = [cell(f"a-torch2.{i}") for i in range(4)] + [cell("b-torch2.0", image="other:1")]
    sched, track = Scheduler(cells, HOST, jobs=2), Tracker()

    def build(c):
        with sched.build_gate(c):
            track.enter("build", c.id)
            time.sleep(0.05)
            track.leave("build", c.id)

    run_all(list(reversed(cells)), build)
    assert track.peak["build"] == 2
    # the first cell of group "a" built alone before the rest of its group started
    leader_end = track.order.index("end a-torch2.0")
    for c in cells[1:4]:
        assert track.order.index(f"start {c.id}") > leader_end


def test_one_probe_per_gpu_and_all_gpu_cells_exclusive():
    cells = [cell(f"cu-torch2.{i}", vendor="nvidia") for i in range(4)] + \
            [cell("cu-torch9.0", vendor="nvidia", gpus="all")]
    sched, track = Scheduler(cells, HOST, jobs=4), Tracker()
    seen = []

    def probe(c):
        with sched.probe_gate(c) as slot:
            seen.append((c.id, tuple(g.index for g in slot.gpus)))
            track.enter("gpu", c.id)
            time.sleep(0.05)
            track.leave("gpu", c.id)

    run_all(cells, probe)
    assert track.peak["gpu"] == 2  # two GPUs, never more than two probes
    assert dict(seen)["cu-torch9.0"] == (0, 1)
    i = track.order.index("start cu-torch9.0")
    # nothing else ran while the all-GPU cell held both GPUs
    assert track.order[i + 1] == "end cu-torch9.0"


def test_cpu_probes_bounded():
    cells = [cell(f"cpu-torch2.{i}") for i in range(4)]
    sched, track = Scheduler(cells, HOST, jobs=4, cpu_slots=1), Tracker()

    def probe(c):
        with sched.probe_gate(c) as slot:
            assert slot is None
            track.enter("cpu", c.id)
            time.sleep(0.02)
            track.leave("cpu", c.id)

    run_all(cells, probe)
    assert track.peak["cpu"] == 1


def test_slots_go_in_matrix_order():
    cells = [cell(f"cpu-torch2.{i}") for i in range(5)]
    sched = Scheduler(cells, HOST, jobs=1, cpu_slots=1)
    order, gate = [], threading.Lock()
    first = threading.Event()

    def probe(c):
        if c.id != cells[0].id:
            first.wait()  # everyone else queues up while the first holds the slot
        with sched.probe_gate(c):
            if c.id == cells[0].id:
                first.set()
                time.sleep(0.2)
            with gate:
                order.append(c.id)

    run_all(list(reversed(cells)), probe)
    assert order == [c.id for c in cells]
