"""The run: plan every cell, then build, probe and record each one.

A failing cell never aborts the run: its build or probe failure becomes its
result, with the reason. Results are written as each cell finishes, so an
interrupted run keeps everything it finished.
"""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
import time
import traceback
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from gpumatrix import __version__
from gpumatrix.config.matrix import Cell, Matrix, RunOptions
from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, Engine, EngineOperationError
from gpumatrix.errors import BuildError, UsageError
from gpumatrix.host import HostInfo, discover_host
from gpumatrix.images.build import BuildRecipe, build_image, build_step, ensure_base, render_build_context
from gpumatrix.images.naming import image_namespace
from gpumatrix.images.ready import acquire_ready_image
from gpumatrix.images.registry import push_cell_image
from gpumatrix.images.serve import WheelServer
from gpumatrix.images.wheelhouse import Wheelhouse
from gpumatrix.resources import cache_root
from gpumatrix.results.status import VERDICT
from gpumatrix.results.store import CellResult, ResultsDir, ResultWriteError
from gpumatrix.run.liveness import owner_alive
from gpumatrix.run.plan import plan_cells
from gpumatrix.run.probe import SESSION_ID, compile_cache_dir, probe_container_spec, run_probes, write_peaks_file
from gpumatrix.run.progress import Progress
from gpumatrix.run.pull import pull_cell_image
from gpumatrix.run.request import RunRequest, remembered
from gpumatrix.run.reuse import probe_key
from gpumatrix.run.safety import get_interruptibly, results_lock, terminate_as_interrupt
from gpumatrix.run.schedule import Scheduler

ENGINE_RECONNECT_S = 60.0


class ResumeImpossible(UsageError):
    """``--resume`` on a results folder whose last run cannot be known (missing, corrupt or odd summary)."""

    def __init__(self, message: str):
        super().__init__("--resume", message)


class _Twin:
    """The first cell of a run to probe with a given probe key; the later ones wait for its result."""

    def __init__(self, cell_id: str):
        self.cell_id = cell_id
        self.done = threading.Event()
        self.result: CellResult | None = None


class _Stopped(Exception):
    """The run was interrupted: a cell thread stops before starting new work (nothing is recorded)."""


def diagnose_result(result: CellResult, text: str = "") -> dict[str, Any]:
    """The diagnosis of a cell that did not pass, from everything the run knows about it.

    Facts come from the result itself (host fingerprint, the probes' facts inside the container, the
    cell's variant): :func:`gpumatrix.diagnose.facts_from_cell_result` is the one place that reads them.
    """
    from gpumatrix.diagnose import diagnose, facts_from_cell_result, failure_text_of_cell  # its rules: on failure only

    document = result.to_dict()
    failure = "\n".join(p for p in (text, failure_text_of_cell(document)) if p)
    return diagnose(failure, facts_from_cell_result(document)).to_dict()


def _base_result(cell: Cell, status: str, reason: str | None, host: HostInfo) -> CellResult:
    return CellResult(cell_id=cell.id, base_id=cell.base.id, base_image=cell.base.image, vendor=cell.vendor,
                      variant=cell.base.variant, torch=cell.torch.version, python=cell.python, status=status,
                      reason=reason, host=host.fingerprint(), env=dict(cell.env))


class Runner:
    """Builds and probes cells on one engine, writing results as it goes."""

    def __init__(self, engine: Engine, matrix: Matrix, results: ResultsDir, request: RunRequest | None = None,
                 echo: Callable[[str], None] = lambda s: None, host: HostInfo | None = None,
                 progress: Progress | None = None):
        """``echo`` gets messages (a line each); ``progress`` what each active cell does now (default: plain
        lines through ``echo``, see :mod:`gpumatrix.run.progress`)."""
        self.engine = engine
        self.progress = progress if progress is not None else Progress(echo)
        self.request = request or RunRequest()
        # Registry to publish each built image to (fleet: build once, probe anywhere), and the registry or
        # build-results folder to pull each cell's image from, by digest.
        self.push, self.pull_from = self.request.push, self.request.pull_from
        self.matrix = matrix
        self.results = results
        self.echo = echo
        self.host = host or discover_host(engine.describe())
        self.wheelhouse = Wheelhouse()  # the host's pip downloads every wheel once per host
        # The repository namespace of every image this run builds, pushes or pulls: read once, so one run
        # never names its images in two (an invalid $GPUMATRIX_IMAGE_NAMESPACE stops it here, exit 2).
        self.namespace = image_namespace()
        self._base_ids: dict[str, str | BuildError] = {}
        self._peaks: Path | None = None
        self._gates = Scheduler([], self.host)
        self._stopping = threading.Event()
        self.reuse_probes = self.request.reuse_probes
        self._twins: dict[str, _Twin] = {}
        self._twins_lock = threading.Lock()

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

    def recipe(self, cell: Cell, log_path: Path | None = None, live: bool = False) -> BuildRecipe:
        def activity(text: str, frequent: bool) -> None:
            (self.progress.detail if frequent else self.progress.step)(cell.id, text)

        return render_build_context(cell, self.matrix, self.wheelhouse, self._base_id(cell.base.image), log_path,
                                    on_activity=activity if live else None, namespace=self.namespace)

    def build(self, cell: Cell, server: WheelServer | None, rebuild: bool = False,
              echo: Callable[[str], None] | None = None) -> tuple[dict, float]:
        """Build (or reuse) the cell's image; return its description and the build seconds."""
        echo = echo or self.echo
        log_path = self.results.log_path(cell.id, "build")
        # the host's pip resolves and fetches the wheels (a failure: its log)
        recipe = self.recipe(cell, log_path, live=True)

        def on_line(line: str) -> None:
            step = build_step(line)
            if step is not None:
                self.progress.step(cell.id, step)

        def on_start() -> None:
            echo(f"building {recipe.tag} (log: {log_path})")
            self.progress.step(cell.id, f"building {recipe.tag}")

        built = build_image(self.engine, recipe, server, log_path, force=rebuild, on_line=on_line,
                            on_start=on_start)
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
    def run(self, cells: Sequence[Cell]) -> dict:
        """Run ``cells`` as :attr:`request` says; return the run summary (also kept up to date in ``summary.json``).

        Cells run concurrently as :class:`~gpumatrix.schedule.Scheduler` allows: up to ``jobs`` builds at
        once, one probe container per GPU, and CPU probes bounded by the cores; a build overlaps the
        probes of cells already built.

        The summary is written before the first cell and after every cell (once for cells that
        finished together: each cell's own result file is written first), so a run killed even by
        SIGKILL leaves a record of what it finished; ``resume`` continues such a run.
        """
        r = self.request
        build, probe, force, rebuild, quick, perf, resume, jobs = (
            r.build, r.probe, r.force, r.rebuild, r.quick, r.perf, r.resume, r.jobs)
        with results_lock(self.results), terminate_as_interrupt(), ExitStack() as stack:
            previous = self.results.load_summary() if resume else None
            done: dict[str, str] = {}
            if previous is not None:
                if previous.complete:
                    self.echo(f"nothing to resume in {self.results.path}: its last run completed")
                    return dict(previous.data)
                if previous.state not in ("running", "interrupted"):
                    raise ResumeImpossible(f"cannot resume: {previous.problem}; start a run without --resume")
                done = {k: v for k, v in previous.cells.items() if self.results.cell_path(k).is_file()}
                self.echo(f"resuming: {len(done)} cells already done, "
                          f"{len([c for c in cells if c.id not in done])} to go")
            self.sweep_stale_containers()
            planned = [p for p in plan_cells(cells, self.host, force=force or not probe, run=self.matrix.run)
                       if p.cell.id not in done]
            # The cells map and not-done list ``summary`` holds, typed apart: the loop below updates them in place.
            cells_done: dict[str, str] = dict(done)
            not_done: list[str] = [p.cell.id for p in planned]
            summary: dict[str, Any] = {
                "schema_version": 1, "tool_version": __version__, "matrix": str(self.matrix.path),
                "run_id": previous.data.get("run_id") if previous is not None else SESSION_ID,
                "request": remembered(self.request),
                "image_namespace": image_namespace(),  # a resume must name images as this run did
                "push": self.push,  # a build job's folder records its registry (probe --from checks against it)
                "host": self.host.fingerprint(),
                "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "state": "running", "cells": cells_done, "not_done": not_done,
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
                    result = get_interruptibly(finished)
                    # A cell that cannot be written (full disk, a document too deep) is recorded as that
                    # cell's error; the run goes on.
                    result, write_error = self.results.save_cell(result)
                    if write_error is not None:
                        self.echo(f"{result.cell_id}: error: {write_error}")
                    cells_done[result.cell_id] = result.status
                    not_done.remove(result.cell_id)
                    if finished.empty():  # cells that finished together share one write (each fsyncs)
                        self._write_summary(summary)
                summary["state"] = "complete"
            except BaseException as err:
                # Ctrl-C, SIGTERM, or anything unforeseen: the run ends here, but never leaves its
                # containers behind or a summary that claims it is still running.
                summary["state"] = "interrupted"
                self._stopping.set()  # cell threads start no new build or container from here on
                try:
                    removed = self.remove_session_containers()
                    time.sleep(1.0)  # a thread past its check may still be creating one: sweep again
                    removed += self.remove_session_containers()
                except Exception as cleanup_err:  # noqa: BLE001 - the original error is the one to report
                    removed = 0
                    self.echo(f"could not remove this run's probe containers: {cleanup_err}")
                why = "interrupted" if isinstance(err, KeyboardInterrupt) else f"stopped by an error ({err!r})"
                self.echo(f"{why}: removed {removed} running probe containers; {len(not_done)} "
                          f"cells not done; 'gpumatrix matrix --resume' continues with them")
                raise
            finally:
                summary["duration_s"] = round(time.monotonic() - started, 3)
                # Never let a failed summary write hide the error (or Ctrl-C) already on its way out.
                in_flight = sys.exc_info()[1] is not None
                try:
                    self.results.write_summary(summary)
                except ResultWriteError as err:
                    if not in_flight:
                        raise
                    self.echo(f"warning: {err}")
        return summary

    def _write_summary(self, summary: dict[str, Any]) -> None:
        """Keep ``summary.json`` current; a failed write is reported and tried again at the next cell."""
        try:
            self.results.write_summary(summary)
        except ResultWriteError as err:
            self.echo(f"warning: {err}")

    def probe_key(self, cell: Cell, image: Mapping[str, Any], quick: bool, perf: bool | None) -> str:
        return probe_key(cell, image, self.host, self.run_options, quick, perf)

    def _reusable(self, cell: Cell, key: str) -> CellResult | None:
        """The saved result of ``cell`` if its probes ran with exactly this key (pass or fail only)."""
        try:
            saved = CellResult.from_dict(json.loads(self.results.cell_path(cell.id).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        return saved if saved.probe_key == key and saved.status in VERDICT else None

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
            if c.labels.get(f"{LABEL_NS}.session") == SESSION_ID:
                self.engine.remove_container(c.id)
                n += 1
        return n

    def sweep_stale_containers(self) -> list[str]:
        """Remove probe containers left by gpumatrix runs on this host that are no longer alive."""
        removed = []
        for c in self.engine.containers_with_label(MANAGED_LABEL):
            labels = c.labels
            if labels.get(f"{LABEL_NS}.role") != "probe" or labels.get(f"{LABEL_NS}.session") == SESSION_ID:
                continue
            if owner_alive(labels, created=c.created) is not False:  # alive, or another host's: not ours to judge
                continue
            self.engine.remove_container(c.id)
            removed.append(c.id)
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
        finally:
            self.progress.end(cell.id)

    def _run_cell(self, cell: Cell, server: WheelServer | None, *, build: bool, probe: bool, rebuild: bool,
                  quick: bool, perf: bool | None) -> CellResult:
        timings: dict[str, float] = {}
        result = _base_result(cell, "pass", None, self.host)
        echo = lambda msg: self.echo(f"{cell.id}: {msg}")  # noqa: E731 - cells run side by side
        try:
            if cell.ready_made:  # a framework image as it ships: pulled by digest, never built or pushed
                started = time.monotonic()
                with self._gates.build_gate(cell):
                    self._ready_to_start()
                    self.progress.begin(cell.id, f"pulling {cell.image}")
                    image = acquire_ready_image(self.engine, cell.image, echo,
                                                progress=lambda text: self.progress.detail(cell.id, text))
                timings["pull_s"] = round(time.monotonic() - started, 3)
            elif self.pull_from:
                started = time.monotonic()
                self.progress.begin(cell.id, f"pulling its image from {self.pull_from}")
                image = pull_cell_image(self.engine, self.pull_from, cell, namespace=self.namespace)
                timings["pull_s"] = round(time.monotonic() - started, 3)
                echo(f"pulled {image['pulled']}")
            elif build:
                with self._gates.build_gate(cell):
                    self._ready_to_start()
                    self.progress.begin(cell.id, "preparing its build")
                    image, timings["build_s"] = self.build(cell, server, rebuild=rebuild, echo=echo)
            else:
                recipe = self.recipe(cell)
                info = self.engine.image_info(recipe.tag)
                if info is None:
                    raise BuildError(f"no image {recipe.tag} on this host; run 'invoke build' first")
                image = {"tag": recipe.tag, "id": info.id, "repo_digests": list(info.repo_digests), "reused": True,
                         "inputs_hash": recipe.inputs_hash}
            if self.push and not self.pull_from and not cell.ready_made:
                image = push_cell_image(self.engine, image, cell.base.id, cell.torch.version, self.push,
                                        echo=echo, namespace=self.namespace)
        except BuildError as err:
            result.status, result.reason = "build_error", err.reason
            log_path = self.results.log_path(cell.id, "build")
            result.logs = {"build": str(log_path)} if log_path.is_file() else {}
            log_text = _read_tail(self.results.log_path(cell.id, "build")) or err.log_tail
            result.diagnosis = diagnose_result(result, log_text)
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
        with self._twins_lock:
            twin = self._twins.get(key)
            if twin is None:
                self._twins[key] = first = _Twin(cell.id)
        if twin is not None:
            shared = self._twin_result(cell, twin, result, timings)
            if shared is not None:
                echo(f"{shared.status}: probes shared with {twin.cell_id} (the same image, probe suite, host "
                     "and settings: one probe run stands for both)")
                return shared
        probed: CellResult | None = None
        try:
            probed = self._probe_cell(cell, image, result, timings, quick=quick, perf=perf, echo=echo)
            return probed
        finally:
            if twin is None:  # this cell was the first with this key: its twins take its result (or probe)
                first.result = probed
                first.done.set()

    def _twin_result(self, cell: Cell, twin: _Twin, result: CellResult, timings: dict[str, float]
                     ) -> CellResult | None:
        """``cell``'s result from the probe run of an earlier cell with the same probe key, once that has
        a verdict (pass or fail); None if it ended otherwise (an error is not assumed to repeat)."""
        self.progress.step(cell.id, f"waiting for {twin.cell_id}'s probes (the same image and settings)")
        while not twin.done.wait(0.5):
            if self._stopping.is_set():
                raise _Stopped()
        first = twin.result
        if first is None or first.status not in VERDICT:
            return None
        return replace(result, status=first.status, reason=first.reason, probes=first.probes,
                       diagnosis=first.diagnosis, timings={**timings, "probe_s": 0.0}, probes_reused=True,
                       probes_from=first.cell_id)

    def _probe_cell(self, cell: Cell, image: Mapping[str, Any], result: CellResult, timings: dict[str, float], *,
                    quick: bool, perf: bool | None, echo: Callable[[str], None]) -> CellResult:
        """Run the probe container for ``cell`` and read its verdict into ``result``."""
        measures = not quick and (self.run_options.perf if perf is None else perf)
        self.progress.step(cell.id, "waiting for a quiet host to probe" if measures else "waiting to probe")
        with self._gates.probe_gate(cell, quiet=bool(measures)) as slot:
            self._ready_to_start()
            cache = (compile_cache_dir(cache_root(), str(image.get("id") or image["tag"]))
                     if self.request.compile_cache else None)
            spec = probe_container_spec(cell, image["tag"], self.host, self.run_options, quick=quick, perf=perf,
                                        peaks_file=self._peaks_file(), slot=slot,
                                        host_busy=self._gates.host_busy(), cache_dir=cache)
            echo("probing" + (f" on {', '.join(g.name for g in slot.gpus)}" if slot else ""))
            self.progress.begin(cell.id, "probing")
            outcome = run_probes(self.engine, spec, on_activity=lambda text: self.progress.step(cell.id, text))
        timings["probe_s"] = round(outcome.duration_s, 3)
        result.timings = timings
        if not outcome.ok and cell.ready_made and _NO_PYTHON.search(f"{outcome.error}\n{outcome.stderr_tail}"):
            result.status = "not_applicable"
            result.reason = ("no python3 in this image that the probes can use (they need Python >= 3.8 on PATH): "
                             f"{outcome.error}")
            echo(f"not applicable: {result.reason}")
            return result
        document = outcome.document  # set whenever ``ok`` is
        if not outcome.ok or document is None:
            result.status, result.reason = "error", outcome.error
            result.diagnosis = diagnose_result(result, outcome.stderr_tail or "")
            echo(f"error: {outcome.error}")
            return result
        result.probes = document
        if cell.ready_made:
            unusable = _ready_made_torch(result, document)
            if unusable:
                result.status, result.reason = "not_applicable", unusable
                echo(f"not applicable: {unusable}")
                return result
        verdict = document.get("verdict") or {}
        if verdict.get("status") == "pass":
            result.status = "pass"
            echo("pass")
        else:
            result.status = "fail"
            result.reason = verdict.get("summary") or "a probe failed"
            result.diagnosis = diagnose_result(result)
            echo(f"fail: {result.reason}")
        return result


_NO_PYTHON = re.compile(r'executable file not found|exec: "?python3"?: |python3: (command )?not found|'
                        r'SyntaxError: invalid syntax|exit code 127\b', re.IGNORECASE)


def _ready_made_torch(result: CellResult, document: Mapping[str, Any]) -> str | None:
    """Record the torch a ready-made image ships (read from inside); the reason it cannot be used, if so."""
    raw_facts = document.get("facts")
    facts: Mapping[str, Any] = raw_facts if isinstance(raw_facts, dict) else {}
    raw_torch = facts.get("torch")
    torch_facts: Mapping[str, Any] = raw_torch if isinstance(raw_torch, dict) else {}
    version = torch_facts.get("version")
    if isinstance(version, str) and version:
        result.torch = version[:64]  # CUDA/ROCm, cuDNN/MIOpen, NCCL/RCCL versions stay in the probe facts
        return None
    error = str(torch_facts.get("import_error") or "torch is not importable")[:300]
    return f"no usable torch in this image (import torch: {error})"


def _read_tail(path: Path, limit: int = 64 * 1024) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
