"""Running probes in child processes, so that a poisoned GPU context, a segfaulting
kernel or a hung driver costs one probe, not the suite.

A group of probes runs in one child (``python -m <package>._child``). The child announces
each probe as it starts and reports its result as soon as it is known (marked JSON lines),
so the parent knows which probe is running and enforces that probe's own time limit.
When the child dies or is killed, the running probe gets "timeout" (over its limit, or
over the suite's deadline), "crash" (died by a signal) or "error" (non-zero exit, or exited
without a well-formed result); the rest of the group runs on in a fresh child. A timeout
of a probe that initialises a GPU runtime (``Probe.gpu_init``) means a hung driver: the
caller then skips the remaining GPU probes (``Budget.blocked``).
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
POLL_S = 0.05
# A child that has not announced its next probe this long after its last message (Python
# start-up, imports) is hung outside any probe; the next probe is blamed.
BETWEEN_PROBES_S = 60.0


class Budget:
    """The suite's global deadline, and why GPU probes are no longer run (if they are not)."""

    def __init__(self, deadline_s: Optional[float] = None) -> None:
        self.deadline_s = deadline_s
        self.ends = None if deadline_s is None else time.monotonic() + deadline_s
        self.blocked = None  # type: Optional[str]
        self.libraries = {}  # type: Dict[str, Dict[str, Any]]  # loaded in any child, by path
        self.facts = None  # type: Optional[Dict[str, Any]]  # torch facts from a group's first child
        self.facts_error = None  # type: Optional[Dict[str, Any]]

    def add_libraries(self, entries: Any) -> None:
        for entry in entries[:200]:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                self.libraries.setdefault(entry["path"], {k: tail(str(v), 300) if v is not None else None
                                                          for k, v in entry.items()})

    def left(self) -> Optional[float]:
        return None if self.ends is None else self.ends - time.monotonic()

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0


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
    running: Optional[str] = None  # the probe announced last without a result
    running_s: float = 0.0  # how long it had been running when the child ended
    deadline_hit: bool = False  # killed because the suite's deadline passed

    @property
    def signal_name(self) -> Optional[str]:
        if self.returncode is None or self.returncode >= 0:
            return None
        return signal_name(-self.returncode)

    def describe_exit(self) -> str:
        if self.spawn_error:
            return "could not start child: %s" % self.spawn_error
        if self.deadline_hit:
            return "killed at the suite's deadline"
        if self.timed_out:
            return "killed after the probe's time limit"
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
    if not isinstance(message, dict) or message.get("type") not in ("start", "result", "facts", "restart", "done", "libraries"):
        return None
    if message["type"] == "start" and not isinstance(message.get("id"), str):
        return None
    if message["type"] == "libraries" and not isinstance(message.get("libraries"), list):
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


def run_child(args: Sequence[str], timeout_s: float, env: Mapping[str, str],
              limits: Optional[Mapping[str, float]] = None, budget: Optional[Budget] = None) -> ChildRun:
    """Run ``python -m <package>._child ARGS`` in its own session and collect what it said.

    With ``limits`` (probe id -> seconds), each announced probe is held to its own limit,
    counted from its announcement; ``timeout_s`` bounds the time before the first
    announcement and between probes (and the whole child when ``limits`` is None). The
    ``budget``'s deadline ends the child wherever it is.
    """
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
    timed_out = deadline_hit = False
    running = None  # type: Optional[str]
    running_since = last_activity = started
    seen = 0
    returncode = None  # type: Optional[int]
    while True:
        try:
            returncode = proc.wait(timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        while seen < len(messages):  # the reader thread appends; only this loop reads
            message = messages[seen]
            seen += 1
            last_activity = now
            if message["type"] == "start":
                running, running_since = message["id"], now
            elif message["type"] == "result" and message["result"]["id"] == running:
                running = None
        if budget is not None and budget.expired():
            deadline_hit = timed_out = True
        elif limits is None:
            timed_out = now - started > timeout_s
        elif running is not None:
            timed_out = now - running_since > limits.get(running, timeout_s)
        else:
            timed_out = now - last_activity > timeout_s
        if timed_out:
            _kill_group(proc.pid)
            try:
                returncode = proc.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:  # stuck in the kernel (D state); leave it
                returncode = None
                _ABANDONED.append(proc)
            break
    _kill_group(proc.pid)  # stray grandchildren (dataloader workers, ranks)
    for reader in readers:
        reader.join(timeout=KILL_GRACE_S)
    for message in messages[seen:]:
        if message["type"] == "start":
            running, running_since = message["id"], time.monotonic()
        elif message["type"] == "result" and message["result"]["id"] == running:
            running = None
    ended = time.monotonic()
    return ChildRun(
        list(messages),
        list(malformed),
        returncode,
        timed_out,
        ended - started,
        stdout_rest.text(),
        stderr_rest.text(),
        None,
        running,
        ended - running_since if running else 0.0,
        deadline_hit,
    )


# Children that could not be reaped after SIGKILL (uninterruptible sleep in a driver):
# kept referenced so that they are abandoned quietly instead of waited for.
_ABANDONED = []  # type: List[Any]


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


def classify_unreported(run: ChildRun, timeout_s: float, budget: Optional[Budget] = None) -> Dict[str, Any]:
    """Status, message and details for the probe that was running when a child ended
    without reporting it."""
    details = _failure_details(run)
    fatal = [line.strip() for line in run.stderr_tail.splitlines() if line.startswith("Fatal Python error")]
    hint = fatal[-1] if fatal else _last_line(run.stderr_tail)
    if run.deadline_hit:
        deadline = budget.deadline_s if budget is not None else None
        status, message = TIMEOUT, "the suite's deadline%s passed while it ran; child killed" % (
            " of %gs" % deadline if deadline is not None else "")
    elif run.timed_out:
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


def _skip(probe: Probe, reason: str, blocked_by: Optional[str] = None) -> Dict[str, Any]:
    return probe_result(probe, SKIP, 0.0, reason, {"blocked_by": blocked_by} if blocked_by else {})


def run_group(
    probes: Sequence[Probe], mode: str, timeout_s: Optional[float], env: Mapping[str, str],
    budget: Optional[Budget] = None, facts_timeout_s: Optional[float] = None,
) -> List[Dict[str, Any]]:
    """Run one group of probes in child processes; one result per probe, in order.

    Each probe is held to its own limit (``timeout_s`` overrides them all). The probe that
    was running when a child ended is blamed, and the rest run on in a fresh child; after
    a timeout of a ``gpu_init`` probe, ``budget.blocked`` is set and the rest are skipped.
    With ``facts_timeout_s``, the first child collects the torch facts first (saving a torch
    import): they land in ``budget.facts``, or why not in ``budget.facts_error``.
    """
    budget = budget if budget is not None else Budget()
    results = {}  # type: Dict[str, Dict[str, Any]]
    pending = list(probes)
    while pending:
        if budget.expired():
            for probe in pending:
                results[probe.id] = _skip(probe, "not run: the suite's deadline of %gs passed" % budget.deadline_s)
            break
        if budget.blocked and any(p.layer >= 2 for p in pending):
            for probe in [p for p in pending if p.layer >= 2]:
                results[probe.id] = _skip(probe, budget.blocked)
            pending = [p for p in pending if p.layer < 2]
            continue
        limits = {p.id: timeout_s or p.timeout_s for p in pending}
        want_facts = facts_timeout_s is not None and budget.facts is None and budget.facts_error is None
        run = run_child((["--facts"] if want_facts else []) + ["--mode", mode, "--"] + [p.id for p in pending],
                        facts_timeout_s if want_facts else min(min(limits.values()), BETWEEN_PROBES_S), env,
                        limits=limits, budget=budget)
        if want_facts:
            for message in run.messages:
                if message["type"] == "facts" and isinstance(message.get("facts"), dict):
                    budget.facts = message["facts"]
                    break
            else:
                verdict = classify_unreported(run, facts_timeout_s, budget)
                budget.facts_error = {"error": "%s: %s" % (verdict["status"], verdict["message"]),
                                      "timed_out": run.timed_out and not any(
                                          m["type"] == "start" for m in run.messages)}
                if budget.facts_error["timed_out"] and not run.deadline_hit:
                    budget.blocked = "not run: torch's GPU initialisation timed out (%s)" % budget.facts_error["error"]
        by_id = {p.id: p for p in pending}
        restart = False
        for message in run.messages:
            if message["type"] == "libraries":
                budget.add_libraries(message["libraries"])
            elif message["type"] == "restart":
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
        if restart and len(remaining) < len(pending) and not run.timed_out:
            pending = remaining
            continue
        culprit = by_id[run.running] if run.running in by_id and run.running not in results else remaining[0]
        verdict = classify_unreported(run, limits[culprit.id], budget)
        spent = run.running_s if run.running == culprit.id else max(
            run.duration_s - sum(results[p.id]["duration_s"] for p in pending if p.id in results), 0.0)
        results[culprit.id] = probe_result(culprit, verdict["status"], spent, verdict["message"], verdict["details"])
        rest = [p for p in remaining if p.id != culprit.id]
        if run.spawn_error:
            for probe in rest:
                results[probe.id] = _skip(probe, "not run: %s could not start a child" % culprit.id, culprit.id)
            break
        if run.timed_out and not run.deadline_hit and culprit.gpu_init:
            budget.blocked = "not run: GPU initialisation timed out in %s (a hung driver would hang again)" % (
                culprit.id)
        pending = rest
    return [results[p.id] for p in probes]


def run_facts_child(timeout_s: float, env: Mapping[str, str], budget: Optional[Budget] = None) -> Dict[str, Any]:
    """Torch facts from a child: ``{"torch", "devices", "accelerator", ...}`` or an ``error``
    (and, when it timed out, ``timed_out``: torch's GPU initialisation hung)."""
    run = run_child(["--facts"], timeout_s, env, budget=budget)
    for message in run.messages:
        if message["type"] == "facts" and isinstance(message.get("facts"), dict):
            return message["facts"]
    verdict = classify_unreported(run, timeout_s, budget)
    return {"error": "%s: %s" % (verdict["status"], verdict["message"]), "timed_out": run.timed_out}
