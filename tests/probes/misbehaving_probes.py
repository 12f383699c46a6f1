"""Probes that misbehave on purpose, injected with GPUMATRIX_PROBES_EXTRA=misbehaving_probes.

The ``framework.zz_*`` probes share one child group, so the suite has to restart the
child after each one that kills it; ``framework.zz_hang`` has its own group.
"""

import os
import signal
import sys
import time

from probes.model import NEEDS_NOTHING, Probe, passed


def ok(ctx):
    return passed("fine")


def segfault(ctx):
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(5)


def exit_three(ctx):
    os._exit(3)


def garbage_then_exit(ctx):
    sys.stdout.write("this is not JSON {{{\n")
    sys.stdout.flush()
    os._exit(0)


def malformed_marker(ctx):
    sys.stdout.write("\n@@GPUMATRIX@@ {\"type\": \"result\", \"result\": {broken\n")
    sys.stdout.flush()
    os._exit(0)


def noisy_but_fine(ctx):
    print("stray output from a library")
    sys.stdout.write("partial line without newline")
    sys.stdout.flush()
    return passed("survived its own noise")


def raises(ctx):
    raise ValueError("boom")


def hang(ctx):
    time.sleep(600)


GROUP = "zz_misbehaving"
PROBES = [
    Probe("framework.zz_ok_first", ok, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_segfault", segfault, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_ok_after_segfault", ok, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_exit_three", exit_three, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_garbage", garbage_then_exit, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_malformed", malformed_marker, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_noisy", noisy_but_fine, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_raises", raises, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_ok_last", ok, group=GROUP, needs=NEEDS_NOTHING),
    Probe("framework.zz_hang", hang, group="zz_hang", needs=NEEDS_NOTHING),
    Probe("framework.zz_blocked_by_hang", ok, group="zz_hang", needs=NEEDS_NOTHING),
]
