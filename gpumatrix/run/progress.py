"""Live progress of a run: what each active cell is doing now, and for how long.

Two renderings of the same calls, chosen by :func:`progress_for`:

* :class:`Progress` (plain lines): for CI logs, pipes and files. A line is printed whole, never
  interleaved, when a cell's activity changes (``cpu-torch2.13.0 [0:41] step 5/9: RUN …``); frequent
  detail (pip's bytes, a pull's bytes) at most every :attr:`Progress.every_s` seconds per cell.
* :class:`RichProgress`: on a terminal, one live line per active cell (spinner, cell, activity,
  elapsed) redrawn in place with ``rich``; messages print above it.

Activities come from hostile places (build output, pip's output, a container's stderr): every text is
passed through :func:`gpumatrix.safetext.clean` and cut to one short line before it is shown, and
``rich`` is never given markup from them.
"""

from __future__ import annotations

import os
import threading
import time
from typing import IO, Any, Callable

from gpumatrix.safetext import clean

ACTIVITY_WIDTH = 100
PROGRESS_ENV = "GPUMATRIX_PROGRESS"  # auto (default), rich, plain


def _short(text: str, width: int = ACTIVITY_WIDTH) -> str:
    text = clean(text).strip()
    return text if len(text) <= width else text[:width - 1] + "…"


def elapsed_text(seconds: float) -> str:
    """``0:41``, ``12:05``, ``1:02:03``: the width of a clock, not of a float."""
    s = int(seconds)
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


class Progress:
    """Progress as plain lines through ``emit`` (one call per whole line; thread-safe)."""

    def __init__(self, emit: Callable[[str], None], *, every_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic):
        self._emit = emit
        self.every_s = every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._started: dict[str, float] = {}
        self._activity: dict[str, str] = {}
        self._last_detail: dict[str, float] = {}

    # -- what callers use -------------------------------------------------------
    def echo(self, line: str) -> None:
        """A message that stays (a cell's verdict, a warning)."""
        with self._lock:
            self._emit(line)

    def begin(self, cell_id: str, activity: str) -> None:
        """``cell_id`` became active (its build or probe slot came); its clock starts now."""
        with self._lock:
            self._started.setdefault(cell_id, self._clock())
        self.step(cell_id, activity)

    def step(self, cell_id: str, activity: str) -> None:
        """What ``cell_id`` does now; shown when it differs from the last activity."""
        activity = _short(activity)
        with self._lock:
            self._started.setdefault(cell_id, self._clock())
            if self._activity.get(cell_id) == activity:
                return
            self._activity[cell_id] = activity
            self._last_detail[cell_id] = self._clock()
            self._show(cell_id, activity)

    def detail(self, cell_id: str, activity: str) -> None:
        """Frequent detail (bytes of a download): shown live, or as a line at most every ``every_s``."""
        activity = _short(activity)
        with self._lock:
            self._started.setdefault(cell_id, self._clock())
            self._activity[cell_id] = activity
            now = self._clock()
            if now - self._last_detail.get(cell_id, float("-inf")) < self.every_s and not self.live:
                return
            self._last_detail[cell_id] = now
            self._show(cell_id, activity)

    def end(self, cell_id: str) -> None:
        """``cell_id`` is finished (its verdict was echoed): it leaves the live lines."""
        with self._lock:
            self._started.pop(cell_id, None)
            self._activity.pop(cell_id, None)
            self._last_detail.pop(cell_id, None)
            self._ended(cell_id)

    def elapsed(self, cell_id: str) -> float:
        with self._lock:
            started = self._started.get(cell_id)
        return 0.0 if started is None else self._clock() - started

    def close(self) -> None:
        """Stop drawing (nothing to do for plain lines)."""

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- rendering (called with the lock held) ------------------------------------
    live = False

    def _show(self, cell_id: str, activity: str) -> None:
        self._emit(f"{cell_id} [{elapsed_text(self._clock() - self._started[cell_id])}] {activity}")

    def _ended(self, cell_id: str) -> None:
        pass


class RichProgress(Progress):
    """One live line per active cell on a terminal, redrawn in place; messages print above the lines."""

    live = True

    def __init__(self, stream: IO[str], **kwargs: Any):
        from rich.console import Console
        from rich.progress import Progress as Bars
        from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

        self._console = Console(file=stream, highlight=False, markup=False, emoji=False)
        super().__init__(self._print, **kwargs)
        self._bars = Bars(SpinnerColumn(), TextColumn("{task.fields[cell]}", markup=False, style="bold"),
                          TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                          console=self._console, transient=True, refresh_per_second=4)
        self._tasks: dict[str, Any] = {}
        self._bars.start()

    def _print(self, line: str) -> None:
        from rich.text import Text

        self._console.print(Text(line), soft_wrap=True)  # a long path stays one line

    def _show(self, cell_id: str, activity: str) -> None:
        task = self._tasks.get(cell_id)
        if task is None:
            self._tasks[cell_id] = self._bars.add_task(activity, cell=cell_id, total=None)
        else:
            self._bars.update(task, description=activity)

    def _ended(self, cell_id: str) -> None:
        task = self._tasks.pop(cell_id, None)
        if task is not None:
            self._bars.remove_task(task)

    def close(self) -> None:
        self._bars.stop()


def progress_for(stream: IO[str], environ: dict[str, str] | None = None) -> Progress:
    """Live lines on a terminal; plain lines in CI, in a pipe, a file, or a dumb terminal.

    ``GPUMATRIX_PROGRESS=plain`` or ``rich`` overrides the choice.
    """
    env = os.environ if environ is None else environ
    choice = env.get(PROGRESS_ENV, "auto").strip().lower() or "auto"
    if choice == "auto":
        tty = bool(getattr(stream, "isatty", lambda: False)())
        choice = "rich" if tty and not env.get("CI") and env.get("TERM", "") != "dumb" else "plain"
    if choice == "rich":
        return RichProgress(stream)

    def emit(line: str) -> None:
        print(line, file=stream, flush=True)

    return Progress(emit)
