"""What keeps a run safe to interrupt and to share a results folder: the folder lock, SIGTERM as Ctrl-C,
and an interruptible wait (whether a container's owning run is alive: :mod:`gpumatrix.run.liveness`)."""

from __future__ import annotations

import fcntl
import os
import queue
import signal
import threading
from contextlib import contextmanager
from typing import Iterator, TypeVar

from gpumatrix.errors import ResultsLocked
from gpumatrix.results.store import ResultsDir

T = TypeVar("T")

@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
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


def get_interruptibly(q: "queue.Queue[T]") -> T:
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

