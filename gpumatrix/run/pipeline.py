"""The run: plan every cell, then build, probe and record each one.

A failing cell never aborts the run: its build or probe failure becomes its
result, with the reason. Results are written as each cell finishes, so an
interrupted run keeps everything it finished.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import queue
import signal
import socket
import threading
import time
import traceback
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from gpumatrix import __version__
from gpumatrix.config.matrix import Cell, Matrix, RunOptions
from gpumatrix.diagnose import diagnose
from gpumatrix.doctor.checks import preflight_cell
from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, Engine, EngineOperationError
from gpumatrix.errors import BuildError, ResultsLocked
from gpumatrix.host import HostInfo, discover_host
from gpumatrix.images.registry import push_cell_image
from gpumatrix.run.pull import pull_cell_image
from gpumatrix.images.build import BuildRecipe, build_image, ensure_base, render_build_context
from gpumatrix.results.store import CellResult, ResultsDir
from gpumatrix.run.schedule import Scheduler
from gpumatrix.resources import probes_dir
from gpumatrix.run.probe import SESSION_ID, probe_container_spec, run_probes, write_peaks_file
from gpumatrix.images.serve import WheelServer
from gpumatrix.images.wheelhouse import Wheelhouse

VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "cpu": "CPU"}


@dataclass(frozen=True)
class PlannedCell:
    cell: Cell
    action: str  # "run" | "skip" | "not_applicable"
    reason: str | None = None


def plan_cells(cells: Sequence[Cell], host: HostInfo, force: bool = False,
               run: RunOptions | None = None) -> list[PlannedCell]:
    """Decide per cell: run it, skip it (no GPU of its vendor here, or the cheap preflight says it cannot
    work: driver too old, arch not compiled in), or record it as not applicable."""
    planned = []
    for cell in cells:
        reason = None if force or not cell.applicable else preflight_cell(cell, host, run)
        if not cell.applicable:
            planned.append(PlannedCell(cell, "not_applicable", cell.reason))
        elif reason is not None:
            planned.append(PlannedCell(cell, "skip", f"cannot work on this host: {reason}"))
        elif not force and not host.has_vendor(cell.vendor):
            vendor = VENDOR_NAMES[cell.vendor]
            has = "no GPU" if not host.gpus else host.host_type()
            planned.append(PlannedCell(cell, "skip", f"no {vendor} GPU on this host (it has {has}); "
                                                     f"run it on a host with one, or pass --force to try anyway"))
        else:
            planned.append(PlannedCell(cell, "run"))
    return planned


ENGINE_RECONNECT_S = 60.0


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (a CI cancel) like Ctrl-C, so containers are removed and the summary says what was cut."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):  # noqa: ARG001 - signal API
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _pid_alive(pid: str | None) -> bool:
    try:
        os.kill(int(pid or ""), 0)
        return True
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True


class _Stopped(Exception):
    """The run was interrupted: a cell thread stops before starting new work (nothing is recorded)."""


def _get_interruptibly(q: "queue.Queue[CellResult]") -> CellResult:
    """``q.get()`` that still lets Ctrl-C and SIGTERM through (a plain blocking get would not)."""
    while True:
        try:
            return q.get(timeout=0.5)
        except queue.Empty:
            continue


@contextmanager
def results_lock(results: ResultsDir) -> Iterator[None]:
    """Hold an exclusive lock on the results folder so two runs never interleave their files."""
    results.path.mkdir(parents=True, exist_ok=True)
    fd = os.open(results.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsLocked(f"another gpumatrix run is using {results.path}; wait for it to finish "
                                f"or pass a different --results folder") from None
        yield
    finally:
        os.close(fd)


def diagnosis_facts(cell: Cell, host: HostInfo, doc: Mapping[str, Any] | None) -> dict[str, Any]:
    """The facts the diagnosis rules read, from the host and the probe document (facts beat text)."""
    facts: dict[str, Any] = {"vendor": cell.vendor,
                             "host_gpu_vendors": sorted({g.vendor for g in host.gpus}),
                             "host_driver_version": host.nvidia_driver or host.amd_driver,
                             "dev_kfd_present": host.dev_kfd}
    if doc:
        torch_facts = (doc.get("facts") or {}).get("torch") or {}
        devices = (doc.get("facts") or {}).get("devices") or []
        facts.update({"torch_cuda": torch_facts.get("cuda"), "torch_hip": torch_facts.get("hip"),
                      "torch_arch_list": torch_facts.get("arch_list") or []})
        if devices and isinstance(devices[0], dict) and devices[0].get("arch"):
            facts["device_arch"] = devices[0]["arch"]
        facts["probe_failures"] = [
            {k: p.get(k) for k in ("id", "layer", "status", "message")}
            for p in doc.get("probes") or [] if p.get("status") in ("fail", "error", "timeout", "crash")]
    elif host.gpus:
        facts["device_arch"] = next((g.arch for g in host.gpus if g.vendor == cell.vendor and g.arch), None)
    return {k: v for k, v in facts.items() if v is not None}


def _failure_text(doc: Mapping[str, Any] | None) -> str:
    lines = []
    for p in (doc or {}).get("probes") or []:
        if p.get("status") in ("fail", "error", "timeout", "crash"):
            lines.append(f"{p.get('id')}: {p.get('message')}")
            details = p.get("details") or {}
            for key in ("error", "stderr_tail", "traceback"):
                if isinstance(details.get(key), str):
                    lines.append(details[key][-4000:])
    return "\n".join(lines)


def _base_result(cell: Cell, status: str, reason: str | None, host: HostInfo) -> CellResult:
    return CellResult(cell_id=cell.id, base_id=cell.base.id, base_image=cell.base.image, vendor=cell.vendor,
                      variant=cell.base.variant, torch=cell.torch.version, python=cell.python, status=status,
                      reason=reason, host=host.fingerprint(), env=dict(cell.env))


class Runner:
    """Builds and probes cells on one engine, writing results as it goes."""

    def __init__(self, engine: Engine, matrix: Matrix, results: ResultsDir,
                 echo: Callable[[str], None] = lambda s: None, host: HostInfo | None = None,
                 push: str | None = None, pull_from: str | None = None, reuse_probes: bool = False):
        self.engine = engine
        self.push = push  # registry to publish each built image to (fleet: build once, probe anywhere)
        self.pull_from = pull_from  # registry or build-results folder to pull each cell's image from, by digest
        self.matrix = matrix
        self.results = results
        self.echo = echo
        self.host = host or discover_host(engine.version(), engine.info())
        self.wheelhouse = Wheelhouse()  # the host's pip downloads every wheel once per host
        self._base_ids: dict[str, str | BuildError] = {}
        self._peaks: Path | None = None
        self._gates = Scheduler([], self.host)
        self._stopping = threading.Event()
        self.reuse_probes = reuse_probes

    # -- building -----------------------------------------------------------
    def _base_id(self, ref: str) -> str:
        if ref not in self._base_ids:
            try:
                self._base_ids[ref] = ensure_base(self.engine, ref)
            except BuildError as err:
                self._base_ids[ref] = err
        value = self._base_ids[ref]
        if isinstance(value, BuildError):
            raise BuildError(value.reason)
        return value

    def recipe(self, cell: Cell, log_path: Path | None = None) -> BuildRecipe:
        return render_build_context(cell, self.matrix, self.wheelhouse, self._base_id(cell.base.image), log_path)

    def build(self, cell: Cell, server: WheelServer | None, rebuild: bool = False,
              echo: Callable[[str], None] | None = None) -> tuple[dict, float]:
        """Build (or reuse) the cell's image; return its description and the build seconds."""
        echo = echo or self.echo
        log_path = self.results.log_path(cell.id, "build")
        recipe = self.recipe(cell, log_path)  # the host's pip resolves and fetches the wheels (a failure: its log)
        built = build_image(self.engine, recipe, server, log_path, force=rebuild,
                            on_start=lambda: echo(f"building {recipe.tag} (log: {log_path})"))
        if built.reused:
            echo(f"reusing {built.tag} (unchanged inputs)")
        image = {"tag": built.tag, "id": built.image_id, "repo_digests": list(built.repo_digests),
                 "reused": built.reused, "inputs_hash": recipe.inputs_hash}
        if not built.reused:
            # Bytes this cell's wheels cost: fetched into the host's wheelhouse now vs already there.
            image["downloads"] = recipe.downloads
        return image, built.build_s

    @property
    def run_options(self) -> RunOptions:
        """``run:`` from the matrix, with a default memory limit of 3/4 of this host's RAM, so a runaway
        probe is OOM-killed in its container instead of pushing the host into swap."""
        options = self.matrix.run
        if options.mem_limit is None:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            options = replace(options, mem_limit=f"{total * 3 // 4 // 2 ** 20}m")
        return options

    def _peaks_file(self) -> Path:
        if self._peaks is None:
            self._peaks = write_peaks_file(self.results.path / ".gpumatrix")
        return self._peaks

    # -- the whole run ------------------------------------------------------
    def run(self, cells: Sequence[Cell], *, build: bool = True, probe: bool = True, force: bool = False,
            rebuild: bool = False, quick: bool = False, perf: bool | None = None, resume: bool = False,
            jobs: int = 1) -> dict:
        """Run ``cells``; return the run summary (also kept up to date in ``summary.json``).

        Cells run concurrently as :class:`~gpumatrix.schedule.Scheduler` allows: up to ``jobs`` builds at
        once, one probe container per GPU, and CPU probes bounded by the cores; a build overlaps the
        probes of cells already built.

        The summary is written before the first cell and after every cell, so a run killed even
        by SIGKILL leaves a record of what it finished; ``resume`` continues such a run.
        """
        with results_lock(self.results), _terminate_as_interrupt(), ExitStack() as stack:
            previous = self.results.read_summary() if resume else None
            done: dict[str, str] = {}
            if resume:
                if not previous or previous.get("state") == "complete":
                    self.echo(f"nothing to resume in {self.results.path}: its last run completed")
                    return previous or {}
                done = {k: v for k, v in (previous.get("cells") or {}).items()
                        if self.results.cell_path(k).is_file()}
                self.echo(f"resuming: {len(done)} cells already done, "
                          f"{len([c for c in cells if c.id not in done])} to go")
            self.sweep_stale_containers()
            planned = [p for p in plan_cells(cells, self.host, force=force or not probe, run=self.matrix.run)
                       if p.cell.id not in done]
            summary = {
                "schema_version": 1, "tool_version": __version__, "matrix": str(self.matrix.path),
                "run_id": (previous or {}).get("run_id") if resume else SESSION_ID,
                "host": self.host.fingerprint(),
                "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "state": "running", "cells": dict(done), "not_done": [p.cell.id for p in planned],
            }
            started = time.monotonic()
            self.results.write_summary(summary)
            runnable = [p.cell for p in planned if p.action == "run"]
            self._gates = Scheduler(runnable, self.host, jobs=jobs)
            server = None
            if runnable and build and not self.pull_from:
                server = stack.enter_context(WheelServer(self.wheelhouse))
            finished: queue.Queue[CellResult] = queue.Queue()
            try:
                for item in planned:
                    if item.action != "run":
                        status = "not_applicable" if item.action == "not_applicable" else "skipped"
                        self.echo(f"{item.cell.id}: {status.replace('_', ' ')}: {item.reason}")
                        finished.put(_base_result(item.cell, status, item.reason, self.host))
                for cell in runnable:
                    # Daemon threads: an interrupt must not wait for a build stream to end.
                    threading.Thread(target=lambda c=cell: finished.put(self._run_cell_guarded(
                        c, server, build=build, probe=probe, rebuild=rebuild, quick=quick, perf=perf)),
                        name=f"gpumatrix-{cell.id}", daemon=True).start()
                for _ in planned:
                    result = _get_interruptibly(finished)
                    self.results.write_cell(result)
                    summary["cells"][result.cell_id] = result.status
                    summary["not_done"].remove(result.cell_id)
                    self.results.write_summary(summary)
                summary["state"] = "complete"
            except KeyboardInterrupt:
                summary["state"] = "interrupted"
                self._stopping.set()  # cell threads start no new build or container from here on
                removed = self.remove_session_containers()
                time.sleep(1.0)  # a thread past its check may still be creating one: sweep again
                removed += self.remove_session_containers()
                self.echo(f"interrupted: removed {removed} running probe containers; {len(summary['not_done'])} "
                          f"cells not done; 'invoke matrix --resume' continues with them")
                raise
            finally:
                summary["duration_s"] = round(time.monotonic() - started, 3)
                self.results.write_summary(summary)
        return summary

    def probe_key(self, cell: Cell, image: Mapping[str, Any], quick: bool, perf: bool | None) -> str:
        """What a probe result depends on: the image's id, the probe suite's files, this host's GPUs,
        drivers, kernel and engine, the cell's env and run options, and the probe mode."""
        host = {k: v for k, v in self.host.fingerprint().items() if k != "hostname"}
        payload = {"image": image.get("id"), "suite": probe_suite_hash(), "host": host, "env": dict(cell.env),
                   "run": repr(self.run_options), "quick": quick, "perf": perf}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]

    def _reusable(self, cell: Cell, key: str) -> CellResult | None:
        """The saved result of ``cell`` if its probes ran with exactly this key (pass or fail only)."""
        try:
            saved = CellResult.from_dict(json.loads(self.results.cell_path(cell.id).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        return saved if saved.probe_key == key and saved.status in ("pass", "fail") else None

    def _ready_to_start(self) -> None:
        """Called with a build or probe slot in hand, just before the work starts: stop if the run is
        being interrupted, and if the engine went away (restarted under an earlier cell) wait for it,
        so that only the cells it was running at that moment fail."""
        if self._stopping.is_set():
            raise _Stopped()
        if not self.engine.wait_reachable(0) and not self.engine.wait_reachable(ENGINE_RECONNECT_S):
            raise EngineOperationError("the Docker engine stopped answering during this run and did not come back")

    def remove_session_containers(self) -> int:
        """Stop and remove this run's probe containers (on an interrupt)."""
        n = 0
        for c in self.engine.containers_with_label(MANAGED_LABEL):
            if (c.get("Labels") or {}).get(f"{LABEL_NS}.session") == SESSION_ID:
                self.engine.remove_container(c["Id"])
                n += 1
        return n

    def sweep_stale_containers(self) -> list[str]:
        """Remove probe containers left by gpumatrix runs on this host that are no longer alive."""
        removed = []
        for c in self.engine.containers_with_label(MANAGED_LABEL):
            labels = c.get("Labels") or {}
            if labels.get(f"{LABEL_NS}.role") != "probe" or labels.get(f"{LABEL_NS}.hostname") != socket.gethostname():
                continue
            if labels.get(f"{LABEL_NS}.session") == SESSION_ID or _pid_alive(labels.get(f"{LABEL_NS}.pid")):
                continue
            self.engine.remove_container(c["Id"])
            removed.append(c["Id"])
        if removed:
            self.echo(f"removed {len(removed)} stale probe containers left by earlier runs")
        return removed

    def _run_cell_guarded(self, cell: Cell, server: WheelServer | None, **kwargs: Any) -> CellResult:
        """A cell's failure is its result: engine trouble or a bug here must not end the run."""
        try:
            return self._run_cell(cell, server, **kwargs)
        except _Stopped:
            return _base_result(cell, "error", "interrupted", self.host)  # never read: the run is ending
        except EngineOperationError as err:
            self.echo(f"{cell.id}: error: {err.reason}")
            return _base_result(cell, "error", err.reason, self.host)
        except Exception as err:  # noqa: BLE001 - recorded with its traceback, never silently dropped
            detail = "".join(traceback.format_exception(err))[-4000:]
            self.echo(f"{cell.id}: error: internal error: {err!r}")
            result = _base_result(cell, "error", f"internal error in gpumatrix: {err!r}", self.host)
            result.diagnosis = {"cause": "unknown", "remedy": "report this as a gpumatrix bug", "evidence": detail}
            return result

    def _run_cell(self, cell: Cell, server: WheelServer | None, *, build: bool, probe: bool, rebuild: bool,
                  quick: bool, perf: bool | None) -> CellResult:
        timings: dict[str, float] = {}
        result = _base_result(cell, "pass", None, self.host)
        echo = lambda msg: self.echo(f"{cell.id}: {msg}")  # noqa: E731 - cells run side by side
        try:
            if self.pull_from:
                started = time.monotonic()
                image = pull_cell_image(self.engine, self.pull_from, cell)
                timings["pull_s"] = round(time.monotonic() - started, 3)
                echo(f"pulled {image['pulled']}")
            elif build:
                with self._gates.build_gate(cell):
                    self._ready_to_start()
                    image, timings["build_s"] = self.build(cell, server, rebuild=rebuild, echo=echo)
            else:
                recipe = self.recipe(cell)
                info = self.engine.image_info(recipe.tag)
                if info is None:
                    raise BuildError(f"no image {recipe.tag} on this host; run 'invoke build' first")
                image = {"tag": recipe.tag, "id": info.id, "repo_digests": list(info.repo_digests), "reused": True,
                         "inputs_hash": recipe.inputs_hash}
            if self.push and not self.pull_from:
                image = push_cell_image(self.engine, image, cell.base.id, cell.torch.version, self.push,
                                        echo=echo)
        except BuildError as err:
            result.status, result.reason = "build_error", err.reason
            log_path = self.results.log_path(cell.id, "build")
            result.logs = {"build": str(log_path)} if log_path.is_file() else {}
            log_text = _read_tail(self.results.log_path(cell.id, "build")) or err.log_tail
            found = diagnose(f"{err.reason}\n{log_text}", diagnosis_facts(cell, self.host, None))
            # Most build failures are about packages, not the GPU stack: keep only a real match.
            result.diagnosis = found.to_dict() if found.cause != "unknown" else None
            echo(f"build failed: {err.reason}")
            result.timings = timings
            return result
        result.image = image
        log_path = self.results.log_path(cell.id, "build")
        result.logs = {"build": str(log_path)} if log_path.is_file() else {}
        if not probe:
            result.status, result.reason = "skipped", "built only; probes not run"
            result.timings = timings
            return result
        key = self.probe_key(cell, image, quick, perf)
        result.probe_key = key
        reusable = self._reusable(cell, key) if self.reuse_probes else None
        if reusable is not None:
            echo(f"reusing probe results: same image, probe suite, host and settings ({reusable.status})")
            reusable.probes_reused, reusable.timings = True, {**timings, "probe_s": 0.0}
            return reusable
        with self._gates.probe_gate(cell) as slot:
            self._ready_to_start()
            spec = probe_container_spec(cell, image["tag"], self.host, self.run_options, quick=quick, perf=perf,
                                        peaks_file=self._peaks_file(), slot=slot)
            echo("probing" + (f" on {', '.join(g.name for g in slot.gpus)}" if slot else ""))
            outcome = run_probes(self.engine, spec)
        timings["probe_s"] = round(outcome.duration_s, 3)
        result.timings = timings
        if not outcome.ok:
            result.status, result.reason = "error", outcome.error
            result.diagnosis = diagnose(f"{outcome.error}\n{outcome.stderr_tail}",
                                        diagnosis_facts(cell, self.host, None)).to_dict()
            echo(f"error: {outcome.error}")
            return result
        result.probes = outcome.document
        verdict = outcome.document.get("verdict") or {}
        if verdict.get("status") == "pass":
            result.status = "pass"
            echo("pass")
        else:
            result.status = "fail"
            result.reason = verdict.get("summary") or "a probe failed"
            result.diagnosis = diagnose(_failure_text(outcome.document),
                                        diagnosis_facts(cell, self.host, outcome.document)).to_dict()
            echo(f"fail: {result.reason}")
        return result


@functools.lru_cache(maxsize=None)
def probe_suite_hash() -> str:
    """sha256 over the probe suite's files (names and bytes): a changed probe means new results."""
    h = hashlib.sha256()
    root = probes_dir()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _read_tail(path: Path, limit: int = 64 * 1024) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
