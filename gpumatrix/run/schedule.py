"""Who may run when: build slots, GPU slots, and base groups that share layers.

The runner gives each cell its own (daemon) thread; the thread passes through two gates:

* :meth:`Scheduler.build_gate` — at most ``jobs`` builds at once, and the first cell of each
  group of cells that share their base layers (same base image, Python and vendor template)
  builds alone before the others of its group start, so the shared Python layer is built once
  and reused from the engine's cache instead of being built by several builds side by side.
* :meth:`Scheduler.probe_gate` — one probe container per GPU (each pinned to its GPU), all of a
  vendor's GPUs for a ``gpus: all`` cell, and for CPU cells at most ``cpu_slots`` at once
  (CPU probes use every core through torch's threads, so more would only compete).

Figures need a quiet device. A CPU cell's performance probes measure the very cores builds and other
probes use, so ``probe_gate(cell, quiet=True)`` waits until no build and no other probe runs, and holds
new ones back while it measures. A GPU probe has its GPU to itself already; :meth:`Scheduler.host_busy`
tells the runner whether builds or other probes share the host's CPUs at that moment, and the probes
then mark their figures as taken under load (``GPUMATRIX_HOST_BUSY``).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence

from gpumatrix.config.matrix import Cell
from gpumatrix.host import HostInfo
from gpumatrix.run.passthrough import GpuSlot, all_gpus_slot, gpu_slots, wants_all_gpus


def layer_group(cell: Cell) -> tuple[str, str, str]:
    """Cells whose images share everything below the torch layer."""
    return (cell.base.image, cell.python, cell.vendor)


class _FifoSlots:
    """``n`` slots handed out in the cells' order (the matrix order), not in thread-wakeup order,
    so that runs are reproducible and the table fills in the order users expect."""

    def __init__(self, n: int, order: dict[str, int]):
        self.free = n
        self.order = order
        self.waiting: set[str] = set()
        self.cond = threading.Condition()

    @contextmanager
    def take(self, cell_id: str) -> Iterator[None]:
        rank = self.order.get(cell_id, 1 << 30)
        with self.cond:
            self.waiting.add(cell_id)
            self.cond.wait_for(lambda: self.free > 0 and rank == min(self.order.get(w, 1 << 30)
                                                                     for w in self.waiting))
            self.waiting.discard(cell_id)
            self.free -= 1
            self.cond.notify_all()
        try:
            yield
        finally:
            with self.cond:
                self.free += 1
                self.cond.notify_all()


class _SlotPool:
    """A vendor's GPU slots: take one, or (for a ``gpus: all`` cell) all of them at once."""

    def __init__(self, slots: Sequence[GpuSlot], whole: GpuSlot | None):
        self.free = list(slots)
        self.total = len(slots)
        self.whole = whole
        self.cond = threading.Condition()

    @contextmanager
    def take(self, everything: bool) -> Iterator[GpuSlot | None]:
        with self.cond:
            need = self.total if everything else 1
            self.cond.wait_for(lambda: len(self.free) >= need)
            taken = [self.free.pop(0) for _ in range(need)]
        try:
            yield self.whole if everything else taken[0]
        finally:
            with self.cond:
                self.free.extend(taken)
                self.cond.notify_all()


class Scheduler:
    def __init__(self, cells: Sequence[Cell], host: HostInfo, jobs: int = 1, cpu_slots: int | None = None):
        order = {c.id: i for i, c in enumerate(cells)}
        self.builds = _FifoSlots(max(1, jobs), order)
        self.cpu = _FifoSlots(max(1, cpu_slots if cpu_slots is not None
                                  else min(jobs, max(1, (os.cpu_count() or 1) // 2))), order)
        self.pools = {v: _SlotPool(gpu_slots(host, v), all_gpus_slot(host, v)) for v in ("nvidia", "amd")
                      if gpu_slots(host, v)}
        # What runs right now, for quiet measurements: builds, probes, and quiet probes holding the host.
        self._activity = threading.Condition()
        self._builds_running = 0
        self._probes_running = 0
        self._quiet_running = 0
        self._leaders: dict[tuple[str, str, str], str] = {}
        self._leader_done: dict[tuple[str, str, str], threading.Event] = {}
        for cell in cells:
            group = layer_group(cell)
            if group not in self._leaders:
                self._leaders[group] = cell.id
                self._leader_done[group] = threading.Event()

    @contextmanager
    def build_gate(self, cell: Cell) -> Iterator[None]:
        group = layer_group(cell)
        leader = self._leaders.get(group) == cell.id
        if not leader and group in self._leader_done:
            self._leader_done[group].wait()
        try:
            with self.builds.take(cell.id), self._running("build"):
                yield
        finally:
            if leader:
                self._leader_done[group].set()

    @contextmanager
    def _running(self, kind: str, quiet: bool = False) -> Iterator[None]:
        """Count a build or probe as running; a quiet probe first waits for the host to be idle, and
        nothing new starts while it runs."""
        with self._activity:
            if quiet:
                self._activity.wait_for(lambda: self._builds_running == 0 and self._probes_running == 0
                                        and self._quiet_running == 0)
                self._quiet_running += 1
            else:
                self._activity.wait_for(lambda: self._quiet_running == 0)
            if kind == "build":
                self._builds_running += 1
            else:
                self._probes_running += 1
        try:
            yield
        finally:
            with self._activity:
                if kind == "build":
                    self._builds_running -= 1
                else:
                    self._probes_running -= 1
                if quiet:
                    self._quiet_running -= 1
                self._activity.notify_all()

    def host_busy(self) -> bool:
        """Whether, besides the probe asking, a build or another probe runs on this host now."""
        with self._activity:
            return self._builds_running > 0 or self._probes_running > 1

    @contextmanager
    def probe_gate(self, cell: Cell, quiet: bool = False) -> Iterator[GpuSlot | None]:
        """A probe slot for ``cell``; with ``quiet`` (performance probes on the CPU), also an idle host."""
        pool = self.pools.get(cell.vendor)
        if pool is None:  # CPU cells, or --force on a host without this vendor's GPU
            with self.cpu.take(cell.id), self._running("probe", quiet=quiet):
                yield None
            return
        with pool.take(wants_all_gpus(cell)) as slot, self._running("probe"):
            yield slot
