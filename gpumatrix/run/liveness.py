"""Whether the gpumatrix run that owns a container is still alive.

Probe containers carry ``io.gpumatrix.hostname`` and ``io.gpumatrix.pid`` (the runner's). A run is
known alive when it runs on this host and that pid exists; known dead when it ran on this host and
the pid does not exist (or now names a process younger than the container); unknown otherwise (another host's run, or no labels). Both the sweep of a
new run and ``clean`` decide with :func:`owner_alive`, so they cannot disagree.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Mapping

from gpumatrix.engine.models import LABEL_NS

PID_LABEL = f"{LABEL_NS}.pid"
HOSTNAME_LABEL = f"{LABEL_NS}.hostname"


def pid_alive(pid: object) -> bool:
    """Whether a process with this pid exists here (a pid we may not signal exists too).

    Not a pid (missing, not a number, <= 0: 0 and negatives would name process groups) is False.
    """
    try:
        n = int(str(pid).strip())
    except (TypeError, ValueError):
        return False
    if n <= 0:
        return False
    try:
        os.kill(n, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False


def process_started_at(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds, from /proc), or None when that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        # fields after the command name (which may hold spaces and parentheses): state is field 3,
        # starttime (clock ticks after boot) field 22
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


# The engine reports creation in whole seconds, /proc's boot time is rounded, and a remote engine's
# clock may be off: a pid counts as reused only when its process started well after the container.
# Erring late keeps a live run's container (the safe side); a pid reused within minutes is rare.
_CLOCK_SLACK_S = 120.0


def owner_alive(labels: Mapping[str, str], hostname: str | None = None,
                created: float | None = None) -> bool | None:
    """True: the owning run is alive on this host; False: it ran here and is gone; None: cannot tell.

    ``hostname`` defaults to this host's. ``created`` (when the container was created, epoch seconds)
    tells a reused pid from the owner: a process that started after the container was created cannot
    have created it. Without it a reused pid reads as alive: the safe side (the container is kept).
    """
    here = hostname if hostname is not None else socket.gethostname()
    owner_host, pid = labels.get(HOSTNAME_LABEL), labels.get(PID_LABEL)
    if not owner_host or pid is None or owner_host != here:
        return None
    if not pid_alive(pid):
        return False
    started = process_started_at(int(str(pid).strip()))
    if created is not None and started is not None and started > created + _CLOCK_SLACK_S:
        return False  # the pid was reused by a later process
    return True
