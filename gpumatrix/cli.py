"""What each ``invoke`` task does, as plain functions (``tasks.py`` only parses flags and calls these).

Each function returns the text to print, or raises a :class:`~gpumatrix.errors.GpumatrixError`.
Progress goes to ``echo`` (stderr in the tasks); tables and listings are returned for stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Callable, Sequence

from gpumatrix.config.matrix import Expansion, expand_cells, load_matrix, matches, select, split_patterns
from gpumatrix.config.select import gha_matrix, select_shard
from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, Engine
from gpumatrix.errors import ConfigError, EngineUnavailable, Problem, RegressionFound, UsageError
from gpumatrix.fsutil import write_text_atomic
from gpumatrix.images.naming import image_namespace, is_named_in
from gpumatrix.report.commands import gate_results, merge_command, recommend_command, write_output
from gpumatrix.report.formats import check_format, render_results
from gpumatrix.results.merge import load_sources
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.passthrough import with_nvidia_mode
from gpumatrix.run.pipeline import Runner
from gpumatrix.run.preflight import passthrough_blockers
from gpumatrix.run.progress import Progress, progress_for
from gpumatrix.run.request import RunRequest, resumed

CELL_LABEL = f"{LABEL_NS}.cell"


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _selected(matrix_path: str, only: str | None):
    matrix = load_matrix(matrix_path)
    expansion = expand_cells(matrix)
    cells = select(expansion.cells, only)
    if only and not cells:
        ids = ", ".join(c.id for c in expansion.cells)
        raise ConfigError([Problem("--only", None, f"{only!r} matches no cell; cells are: {ids}")])
    return matrix, expansion, cells


def list_cells(matrix_path: str, only: str | None = None, fmt: str = "text") -> str:
    """The expanded cells, and why each excluded or not-applicable one is so."""
    check_format(fmt, allowed=("text", "json", "gha"))
    matrix, expansion, cells = _selected(matrix_path, only)
    if fmt == "gha":  # one line, for $GITHUB_OUTPUT and strategy.matrix: ${{ fromJSON(...) }}
        return json.dumps(gha_matrix(cells), sort_keys=True) + "\n"
    if fmt == "json":
        return json.dumps(_expansion_json(expansion, cells), indent=2, sort_keys=True) + "\n"
    from tabulate import tabulate

    rows = []
    for c in cells:
        status = "ok" if c.applicable else f"n/a: {c.reason}"
        if c.notes:
            status += "; " + "; ".join(c.notes)
        env = " ".join(f"{k}={v}" for k, v in c.env)
        rows.append([c.id, c.vendor, c.base.image, c.torch_requirement, c.python, status + (f" [env {env}]" if env else "")])
    out = [tabulate(rows, headers=["cell", "vendor", "base image", "torch", "python", "status"], tablefmt="simple")]
    if expansion.excluded:
        out += ["", "Excluded:"]
        for e in expansion.excluded:
            rule = ", ".join(f"{k}: {v}" for k, v in e.rule.items())
            out.append(f"  {e.id}: excluded by {{{rule}}} at {matrix.path}:{e.line}")
    n_app = sum(c.applicable for c in cells)
    out += ["", f"{len(cells)} cells ({n_app} applicable, {len(cells) - n_app} not applicable), "
                f"{len(expansion.excluded)} excluded"]
    return "\n".join(out) + "\n"


def _expansion_json(expansion: Expansion, cells) -> dict:
    return {
        "cells": [{"id": c.id, "vendor": c.vendor, "base": c.base.id, "image": c.base.image,
                   "variant": c.base.variant, "torch": c.torch.version, "requirement": c.torch_requirement,
                   "python": c.python, "env": dict(c.env), "applicable": c.applicable, "reason": c.reason,
                   "notes": list(c.notes)} for c in cells],
        "excluded": [{"id": e.id, "line": e.line, "rule": dict(e.rule)} for e in expansion.excluded],
    }


def _load(results: ResultsDir, echo: Callable[[str], None]):
    """The readable cell results (warning about unreadable files) and the host of the last run."""
    cells, warnings = results.load()
    for w in warnings:
        echo(f"warning: {w}")
    return cells, results.load_summary().host


def _render_selected(cells, host, fmt: str, only: str | None) -> str:
    if only:
        patterns = split_patterns(only)
        cells = [c for c in cells if any(matches(c.cell_id, p) for p in patterns)]
    return render_results(cells, host, fmt, title=None if fmt == "text" else "gpumatrix compatibility")


def save_tables(results: ResultsDir, cells, host) -> None:
    """Keep the last table next to the results, for people and for CI job summaries."""
    write_text_atomic(results.path / "table.txt", render_results(cells, host, "text"))
    write_text_atomic(results.path / "table.md", render_results(cells, host, "markdown",
                                                                title="gpumatrix compatibility"))


def run_matrix(request: RunRequest, echo: Callable[[str], None] | None = None) -> str:
    """Build and/or probe the cells ``request`` selects, save results, and return the rendered table.

    Messages and live progress go to ``echo`` as plain lines if given, else to stderr: live lines on a
    terminal, plain lines in CI or a pipe (:func:`gpumatrix.run.progress.progress_for`).

    ``request.shard`` ("K/N") runs one of N even shares of the cells; ``push`` publishes each built image to a
    registry; ``pull_from`` (a registry or a build job's results folder) probes images pulled by digest
    instead of building; ``baseline`` applies the regression gate to the cells of this run.
    """
    request = request.checked()
    check_format(request.fmt)
    if request.resume:
        summary = ResultsDir(request.results_path).load_summary()
        if not summary.readable or summary.state == "unknown":
            raise UsageError("--resume", f"nothing can be resumed: {summary.problem}; start a run without --resume")
        request = resumed(request, summary.data.get("request"))
        saved_namespace, namespace = summary.data.get("image_namespace"), image_namespace()
        if isinstance(saved_namespace, str) and saved_namespace != namespace:
            raise UsageError("--resume", f"the interrupted run named its images {saved_namespace}/… "
                                         f"(GPUMATRIX_IMAGE_NAMESPACE) and this one would name them {namespace}/…; "
                                         "resume with the same namespace, or start a new run without --resume")
    matrix, _, cells = _selected(request.matrix_path, request.only)
    matrix = with_nvidia_mode(matrix, request.nvidia_mode)
    cells = select_shard(cells, request.shard)
    if request.baseline:
        load_sources([request.baseline])  # a bad baseline is a flag error before anything is built
    engine = Engine.connect()
    progress = Progress(echo) if echo is not None else progress_for(sys.stderr)
    echo = progress.echo
    try:
        results = ResultsDir(request.results_path)
        runner = Runner(engine, matrix, results, request, echo=echo, progress=progress)
        echo(f"host: {runner.host.host_type()}; engine {runner.host.engine.get('version')}; "
             f"{len(cells)} cells{f' (shard {request.shard})' if request.shard else ''}; images {runner.namespace}/…; "
             f"results in {results.path}")
        for message in passthrough_blockers(cells, runner.host, matrix.run):
            echo(f"warning: {message}")
        runner.run(cells)
    finally:
        progress.close()
        engine.close()
    loaded, host = _load(results, echo)  # read once: the saved tables and the returned one
    save_tables(results, loaded, host)
    table = write_output(_render_selected(loaded, host, request.fmt, request.only), request.output)
    return _gated(table, request.baseline, request.results_path, [c.id for c in cells], request.fmt)


def _gated(table: str, baseline: str | None, results_path: str, cell_ids: Sequence[str] | None, fmt: str) -> str:
    """``table``, followed by the regression gate's verdict when there is a baseline.

    On a regression the table is still printed (stdout) before :class:`RegressionFound` (exit code 4).
    """
    if not baseline:
        return table
    try:
        verdict = gate_results(baseline, results_path, cell_ids, "markdown" if fmt == "markdown" else "text")
    except RegressionFound:
        sys.stdout.write(table)
        sys.stdout.flush()
        raise
    return table if fmt in ("json", "html", "junit") else f"{table}\n{verdict}"


def report(results_path: str, fmt: str = "text", only: str | None = None, baseline: str | None = None,
           output: str | None = None) -> str:
    """Render saved results (no engine needed), to ``output`` if given; with ``baseline``, apply the gate."""
    check_format(fmt)
    results = ResultsDir(results_path)
    if not results.cells_dir.is_dir():
        raise UsageError("--results", f"no results in {results.path}; run 'gpumatrix matrix' first or pass "
                                      f"--results DIR")
    cells, host = _load(results, _stderr)
    table = write_output(_render_selected(cells, host, fmt, only), output)
    if not baseline:
        return table
    ids = [c.cell_id for c in cells if not only or any(matches(c.cell_id, p) for p in split_patterns(only))]
    return _gated(table, baseline, results_path, ids if only else None, "text" if output else fmt)


def clean(dry_run: bool = False, only: str | None = None) -> str:
    """Remove what gpumatrix made and nobody else uses: containers of dead runs, and its images' names.

    Containers: only ours (``io.gpumatrix.managed``), and never one whose owning run is alive
    (:func:`gpumatrix.run.liveness.owner_alive`: this host's run with that pid exists); a container of
    another host's run is removed only once it has stopped.

    Images: only ours, and only gpumatrix's *names* of them in this host's image namespace
    (:mod:`gpumatrix.images.naming`: ``$GPUMATRIX_IMAGE_NAMESPACE``, default ``gpumatrix``). A name
    (``repo:tag`` or ``repo@sha256:…``) is gpumatrix's when its repository is ``NAMESPACE/NAME`` (a local
    build) or ``REGISTRY/NAMESPACE/NAME`` (a push or pull of one, REGISTRY as ``--push`` accepts it:
    ``host[:port][/namespace…]``), NAME one path component. Each such name is removed without force: an image
    whose every name is gpumatrix's goes away with its last name; one that also has a foreign name (a user's
    ``FROM`` image inherits the label) keeps that name and its data. An image with no name at all is left:
    nothing says whose it is.
    """
    from gpumatrix.run.liveness import owner_alive

    patterns = split_patterns(only) if only else None
    namespace = image_namespace()

    def wanted(labels: dict) -> bool:
        return patterns is None or any(matches(labels.get(CELL_LABEL, ""), p) for p in patterns)

    def is_ours(ref: str) -> bool:
        return is_named_in(ref, namespace)

    engine = Engine.connect()
    lines: list[str] = []
    kept: list[str] = []
    n = 0
    try:
        for c in engine.containers_with_label(MANAGED_LABEL):
            if not wanted(dict(c.labels)):
                continue
            alive = owner_alive(c.labels, created=c.created)
            if alive or (alive is None and c.state not in ("exited", "dead")):
                why = (f"its run (pid {c.labels.get(f'{LABEL_NS}.pid')}) is alive" if alive else
                       f"its run's owner cannot be checked here and it is {c.state or 'in an unknown state'}")
                kept.append(f"container {c.id[:12]} {c.name}: {why}")
                continue
            lines.append(f"container {c.id[:12]} {c.name}")
            n += 1
            if not dry_run:
                engine.remove_container(c.id)
        for img in engine.images_with_label(MANAGED_LABEL):
            if not wanted(dict(img.labels)):
                continue
            names = [r for r in (*img.tags, *img.repo_digests) if "<none>" not in r]
            mine, foreign = [r for r in names if is_ours(r)], [r for r in names if not is_ours(r)]
            if not mine:
                kept.append(f"image {img.id[7:19]} {' '.join(foreign) or '(no name)'}: "
                            f"{f'not named by gpumatrix in {namespace}/' if foreign else 'nothing says whose it is'}")
                continue
            refused = [] if dry_run else [f"{r} ({why})" for r in mine if (why := engine.remove_image_reference(r))]
            if foreign:
                lines.append(f"image {img.id[7:19]} untagged {' '.join(mine)}; kept for {' '.join(foreign)}")
            else:
                lines.append(f"image {img.id[7:19]} {' '.join(mine)}")
            n += 1
            if refused:
                kept.append(f"image {img.id[7:19]}: the engine kept {'; '.join(refused)}")
    finally:
        engine.close()
    verb = "would remove" if dry_run else "removed"
    out = [f"{verb} {n} objects labelled {MANAGED_LABEL}"] + [f"  {x}" for x in lines]
    if kept:
        out += [f"kept {len(kept)}:"] + [f"  {x}" for x in kept]
    return "\n".join(out) + "\n"


def merge(sources: Sequence[str], fmt: str = "text", output: str | None = None,
          baseline: str | None = None) -> str:
    """Merge results folders of many hosts (folders, folders of folders, globs, merged/report JSON)."""
    check_format(fmt)
    return merge_command(list(sources), fmt, output=output, baseline=baseline)


def recommend(sources: Sequence[str], host_type: str | None = None, vendor: str | None = None,
              min_torch: str | None = None, require: Sequence[str] = (), fmt: str = "text") -> str:
    """The known-good image for a host type, pinned by digest, with its `docker run` line."""
    return recommend_command(list(sources), host_type=host_type, vendor=vendor, min_torch=min_torch,
                             require=[g for r in require for g in split_patterns(r)], fmt=fmt)


def doctor(matrix_path: str, only: str | None = None, nvidia_mode: str | None = None) -> tuple[str, bool]:
    """Preflight report for the selected cells, and whether nothing failed (works without an engine)."""
    from gpumatrix.doctor.report import doctor_report  # only this command reports

    matrix, _, cells = _selected(matrix_path, only)
    matrix = with_nvidia_mode(matrix, nvidia_mode)
    try:
        engine = Engine.connect()
    except EngineUnavailable:
        engine = None
    try:
        return doctor_report(engine, matrix, cells)
    finally:
        if engine is not None:
            engine.close()

