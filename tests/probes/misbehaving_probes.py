"""Probes that misbehave on purpose, injected with GPUMATRIX_PROBES_EXTRA=misbehaving_probes.

The ``framework.zz_*`` probes share one child group, so the suite has to restart the
child after each one that kills it; ``framework.zz_hang`` has its own group, with a
probe after it that must still run (in a fresh child). ``system_runtime.zz_*`` hang in
GPU initialisation; ``math_libraries.zz_deadline_*`` outlive the suite's deadline.
"""

import os
import signal
import sys
import time

from probes.model import NEEDS_NOTHING, Probe, failed, passed


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


def with_pid(ctx):
    return passed("fine", pid=os.getpid())


def sticky_cuda_error(ctx):
    # what torch raises after an illegal access; the context is poisoned for the next probe
    return failed("CUDA error: an illegal memory access was encountered", pid=os.getpid(),
                  error="RuntimeError: CUDA error: an illegal memory access was encountered\n"
                        "CUDA kernel errors might be asynchronously reported at some other API call")


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
    Probe("framework.zz_pid_before_sticky", with_pid, group="zz_sticky", needs=NEEDS_NOTHING),
    Probe("framework.zz_sticky", sticky_cuda_error, group="zz_sticky", needs=NEEDS_NOTHING),
    Probe("framework.zz_pid_after_sticky", with_pid, group="zz_sticky", needs=NEEDS_NOTHING),
    Probe("framework.zz_before_hang", with_pid, group="zz_hang", needs=NEEDS_NOTHING),
    Probe("framework.zz_hang", hang, group="zz_hang", needs=NEEDS_NOTHING, timeout_s=3.0),
    Probe("framework.zz_after_hang", with_pid, group="zz_hang", needs=NEEDS_NOTHING),
    # GPU initialisation that hangs: the GPU probes after it are skipped, not hung one by one
    Probe("system_runtime.zz_init_hang", hang, group="zz_init", needs=NEEDS_NOTHING, timeout_s=2.0, gpu_init=True),
    Probe("system_runtime.zz_after_init", ok, group="zz_after_init", needs=NEEDS_NOTHING),
    # the suite's deadline ends a probe whose own limit is far away
    Probe("math_libraries.zz_deadline_hang", hang, group="zz_deadline", needs=NEEDS_NOTHING, timeout_s=600.0),
    Probe("math_libraries.zz_deadline_after", ok, group="zz_deadline", needs=NEEDS_NOTHING),
]
