"""Running probes in child processes, so that a poisoned GPU context, a segfaulting
kernel or a hung driver costs one probe, not the suite.

A group of probes runs in one child (``python -m probes._child``) with a time limit.
The child reports each result as a marked JSON line as soon as it is known, so when it
dies the parent knows which probe was running: the first one without a result. That
probe gets "timeout" (killed after the limit), "crash" (died by a signal) or "error"
(non-zero exit, or exited without a well-formed result); the rest of the group runs on
in a fresh child, except after a timeout, when a hung driver would only hang again.
"""

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Deque, Dict, List, Mapping, NamedTuple, Optional, Sequence

from ._child import MARKER
from .model import CRASH, ERROR, SKIP, STATUSES, TIMEOUT, Probe, probe_result, tail

MAX_PROTOCOL_BYTES = 8 * 1024 * 1024  # all marked lines of one child together
MAX_LINE_BYTES = 2 * 1024 * 1024
STDERR_TAIL_BYTES = 16 * 1024
STDOUT_TAIL_BYTES = 4 * 1024
MESSAGE_TAIL_CHARS = 1500
KILL_GRACE_S = 10.0


class ChildRun(NamedTuple):
    """What one child process did."""

    messages: List[Dict[str, Any]]  # well-formed protocol messages, in order
    malformed: List[str]  # marked lines that were not valid JSON messages
    returncode: Optional[int]  # None if it could not be reaped after a kill
    timed_out: bool
    duration_s: float
    stdout_tail: str
    stderr_tail: str
    spawn_error: Optional[str]

    @property
    def signal_name(self) -> Optional[str]:
        if self.returncode is None or self.returncode >= 0:
            return None
        return signal_name(-self.returncode)

    def describe_exit(self) -> str:
        if self.spawn_error:
            return "could not start child: %s" % self.spawn_error
        if self.timed_out:
            return "killed after the time limit"
        if self.signal_name:
            return "killed by %s" % self.signal_name
        return "exited with code %s" % self.returncode


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


class _BoundedTail:
    """Keeps the last ``limit`` bytes written to it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks = collections.deque()  # type: Deque[bytes]
        self.size = 0

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        while self.size > self.limit and len(self.chunks) > 1:
            self.size -= len(self.chunks.popleft())
        if self.size > self.limit:
            only = self.chunks.popleft()[-self.limit :]
            self.chunks.append(only)
            self.size = len(only)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def parse_protocol_line(line: str) -> Optional[Dict[str, Any]]:
    """The message in a marked line, or None when it is not a well-formed message."""
    payload = line[line.index(MARKER) + len(MARKER) :].strip()
    try:
        message = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("type") not in ("result", "facts", "restart", "done"):
        return None
    if message["type"] == "result":
        result = message.get("result")
        if (
            not isinstance(result, dict)
            or not isinstance(result.get("id"), str)
            or result.get("status") not in STATUSES
            or not isinstance(result.get("message"), str)
            or not isinstance(result.get("details"), dict)
            or not isinstance(result.get("duration_s"), (int, float))
        ):
            return None
    return message


def _read_stdout(stream: Any, messages: List[Dict[str, Any]], malformed: List[str], rest: _BoundedTail) -> None:
    budget = MAX_PROTOCOL_BYTES
    marker = MARKER.encode("ascii")
    while True:
        raw = stream.readline(MAX_LINE_BYTES)
        if not raw:
            return
        if marker in raw and budget > 0:
            budget -= len(raw)
            line = raw.decode("utf-8", "replace")
            message = parse_protocol_line(line) if raw.endswith(b"\n") else None
            if message is None:
                malformed.append(tail(line.strip(), 300))
            else:
                messages.append(message)
        else:
            rest.add(raw)


def _read_stderr(stream: Any, rest: _BoundedTail) -> None:
    while True:
        data = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not data:
            return
        rest.add(data)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def package_name() -> str:
    """This package's import name: ``probes`` when mounted into a container, ``gpumatrix.probes``
    inside the wheel. Children are started as ``python -m <package_name()>._child``."""
    return __package__ or __name__.rpartition(".")[0]


def package_root() -> str:
    """The directory from which ``package_name()`` is importable (children run from there)."""
    root = os.path.dirname(os.path.abspath(__file__))
    for _ in package_name().split("."):
        root = os.path.dirname(root)
    return root


def run_child(args: Sequence[str], timeout_s: float, env: Mapping[str, str]) -> ChildRun:
    """Run ``python -m probes._child ARGS`` in its own session and collect what it said."""
    argv = [sys.executable, "-B", "-m", package_name() + "._child"] + list(args)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=package_root(),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a kill reaches its workers and ranks too
        )
    except OSError as err:
        return ChildRun([], [], None, False, 0.0, "", "", "%s: %s" % (type(err).__name__, err))
    messages = []  # type: List[Dict[str, Any]]
    malformed = []  # type: List[str]
    stdout_rest = _BoundedTail(STDOUT_TAIL_BYTES)
    stderr_rest = _BoundedTail(STDERR_TAIL_BYTES)
    readers = [
        threading.Thread(target=_read_stdout, args=(proc.stdout, messages, malformed, stdout_rest), daemon=True),
        threading.Thread(target=_read_stderr, args=(proc.stderr, stderr_rest), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        returncode = proc.wait(timeout=timeout_s)  # type: Optional[int]
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        try:
            returncode = proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:  # stuck in the kernel (D state); leave it
            returncode = None
    _kill_group(proc.pid)  # stray grandchildren (dataloader workers, ranks)
    for reader in readers:
        reader.join(timeout=KILL_GRACE_S)
    duration = time.monotonic() - started
    return ChildRun(
        list(messages),
        list(malformed),
        returncode,
        timed_out,
        duration,
        stdout_rest.text(),
        stderr_rest.text(),
        None,
    )


def _failure_details(run: ChildRun) -> Dict[str, Any]:
    details = {"exit": run.describe_exit(), "returncode": run.returncode, "stderr_tail": tail(run.stderr_tail, 4000)}
    if run.signal_name:
        details["signal"] = run.signal_name
    if run.malformed:
        details["malformed_lines"] = run.malformed[:3]
    if run.stdout_tail.strip():
        details["stdout_tail"] = tail(run.stdout_tail, 1000)
    return details


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return tail(lines[-1].strip(), 300) if lines else ""


def classify_unreported(run: ChildRun, timeout_s: float) -> Dict[str, Any]:
    """Status, message and details for the probe that was running when a child ended
    without reporting it."""
    details = _failure_details(run)
    fatal = [line.strip() for line in run.stderr_tail.splitlines() if line.startswith("Fatal Python error")]
    hint = fatal[-1] if fatal else _last_line(run.stderr_tail)
    if run.timed_out:
        status, message = TIMEOUT, "no result within %gs; child killed" % timeout_s
    elif run.signal_name:
        status, message = CRASH, "child died by %s" % run.signal_name
    elif run.spawn_error:
        status, message = ERROR, run.describe_exit()
    elif run.malformed:
        status, message = ERROR, "child printed a malformed result line (%s)" % run.describe_exit()
    elif run.returncode == 0:
        status, message = ERROR, "child exited (code 0) without reporting a result"
    else:
        status, message = ERROR, "child %s without reporting a result" % run.describe_exit()
    if hint:
        message = "%s: %s" % (message, hint)
    return {"status": status, "message": tail(message, MESSAGE_TAIL_CHARS), "details": details}


def run_group(
    probes: Sequence[Probe], mode: str, timeout_s: float, env: Mapping[str, str]
) -> List[Dict[str, Any]]:
    """Run one group of probes in child processes; one result per probe, in order."""
    results = {}  # type: Dict[str, Dict[str, Any]]
    pending = list(probes)
    while pending:
        run = run_child(["--mode", mode, "--"] + [p.id for p in pending], timeout_s, env)
        by_id = {p.id: p for p in pending}
        restart = False
        for message in run.messages:
            if message["type"] == "restart":
                restart = True
            elif message["type"] == "result" and message["result"]["id"] in by_id:
                reported = message["result"]
                probe = by_id[reported["id"]]
                results[probe.id] = probe_result(
                    probe, reported["status"], reported["duration_s"], reported["message"], reported["details"]
                )
        remaining = [p for p in pending if p.id not in results]
        if not remaining:
            break
        if restart and len(remaining) < len(pending):
            pending = remaining
            continue
        culprit = remaining[0]
        verdict = classify_unreported(run, timeout_s)
        spent = max(run.duration_s - sum(results[p.id]["duration_s"] for p in pending if p.id in results), 0.0)
        results[culprit.id] = probe_result(culprit, verdict["status"], spent, verdict["message"], verdict["details"])
        if run.timed_out or run.spawn_error:
            reason = "not run: %s in the same child group %s" % (
                culprit.id,
                "timed out" if run.timed_out else "could not start",
            )
            for probe in remaining[1:]:
                results[probe.id] = probe_result(probe, SKIP, 0.0, reason, {"blocked_by": culprit.id})
            break
        pending = remaining[1:]
    return [results[p.id] for p in probes]


def run_facts_child(timeout_s: float, env: Mapping[str, str]) -> Dict[str, Any]:
    """Torch facts from a child: ``{"torch", "devices", "accelerator"}`` or an ``error``."""
    run = run_child(["--facts"], timeout_s, env)
    for message in run.messages:
        if message["type"] == "facts" and isinstance(message.get("facts"), dict):
            return message["facts"]
    verdict = classify_unreported(run, timeout_s)
    return {"error": "%s: %s" % (verdict["status"], verdict["message"])}
