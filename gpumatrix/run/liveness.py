"""Whether the gpumatrix run that owns a container is still alive.

Probe containers carry ``io.gpumatrix.hostname`` and ``io.gpumatrix.pid`` (the runner's). A run is
known alive when it runs on this host and that pid exists; known dead when it ran on this host and
the pid does not exist; unknown otherwise (another host's run, or no labels). Both the sweep of a
new run and ``clean`` decide with :func:`owner_alive`, so they cannot disagree.
"""

from __future__ import annotations

import os
import socket
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


def owner_alive(labels: Mapping[str, str], hostname: str | None = None) -> bool | None:
    """True: the owning run is alive on this host; False: it ran here and is gone; None: cannot tell.

    ``hostname`` defaults to this host's. A reused pid reads as alive: the safe side, since the
    container is then kept, never removed under a live run.
    """
    here = hostname if hostname is not None else socket.gethostname()
    owner_host, pid = labels.get(HOSTNAME_LABEL), labels.get(PID_LABEL)
    if not owner_host or pid is None or owner_host != here:
        return None
    return pid_alive(pid)
