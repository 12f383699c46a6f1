"""A private Docker engine and local base images, for development and CI only.

On a GPU host gpumatrix uses the host's daemon. On a machine with no engine
running (a fresh CI runner, these development boxes) ``./dev`` starts Debian's
``dockerd`` with its own socket, data root, exec root and pid file under a state
folder: it never touches a daemon the user runs, and its bridge and iptables
are off (builds use the host network, probe containers have none), and it keeps
its containers in containerd namespaces of its own (``gpumatrix-dev``), apart
from a system engine's even when both use the system's containerd. A stale pid
file is never trusted: a pid is signalled only while ``/proc/PID/cmdline`` shows
a dockerd with this state folder's socket, data root and pid file. Where a
base image cannot be pulled (no registry reachable), :func:`provide_base_image`
builds it from Debian with ``debootstrap`` and imports it under the same tag.

Command line (used by ``./dev``)::

    python -m gpumatrix.devengine up      # prints the DOCKER_HOST to use; "started" on stderr if it started one
    python -m gpumatrix.devengine down    # stops the private engine, by the pid it recorded
    python -m gpumatrix.devengine base debian:bookworm-slim
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from gpumatrix.engine.client import Engine, EngineOperationError
from gpumatrix.errors import EngineUnavailable, GpumatrixError

DEBIAN_MIRROR = os.environ.get("GPUMATRIX_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# Local stand-ins: reference -> (suite, provenance). Only Debian suites debootstrap can make here.
LOCAL_BASES = {"debian:bookworm-slim": "bookworm", "debian:bookworm": "bookworm", "debian:12-slim": "bookworm"}
PROVENANCE_LABEL = "io.gpumatrix.local-base"


_daemons: list[subprocess.Popen] = []


def state_dir() -> Path:
    default = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "gpumatrix"
    return Path(os.environ.get("GPUMATRIX_STATE_DIR") or default)


def engine_dir() -> Path:
    return state_dir() / "engine"


def private_host() -> str:
    return f"unix://{engine_dir() / 'docker.sock'}"


def _reachable(url: str) -> bool:
    try:
        Engine.connect(url, timeout=10).close()
        return True
    except EngineUnavailable:
        return False


# The private engine's own containerd namespaces: with a system containerd (/run/containerd), dockerd
# 20.10 uses it, and the default namespace "moby" would mix our containers with the system engine's.
CONTAINERD_NAMESPACE = "gpumatrix-dev"
CONTAINERD_PLUGINS_NAMESPACE = "gpumatrix-dev-plugins"


def _cmdline(pid: int) -> list[str] | None:
    """The argv of process ``pid`` (None when it is gone or unreadable)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a] or None


def _is_our_dockerd(pid: int) -> bool:
    """Whether ``pid`` is a dockerd started for this state folder (its socket, data root and pid file).

    A pid file outlives its process and the pid is reused: anything else is never signalled.
    """
    argv = _cmdline(pid)
    if not argv or os.path.basename(argv[0]) != "dockerd":
        return False
    folder = engine_dir()

    def value(flag: str) -> str | None:
        for i, arg in enumerate(argv):
            if arg == flag and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(flag + "="):
                return arg[len(flag) + 1:]
        return None

    return (value("--host") == private_host() and value("--data-root") == str(folder / "data")
            and value("--pidfile") == str(folder / "dockerd.pid"))


def _pid() -> int | None:
    """The pid of our running private dockerd, from its pid file; None if the file is missing or stale."""
    try:
        pid = int((engine_dir() / "dockerd.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and _is_our_dockerd(pid) else None


def start_private_engine(timeout_s: float = 90) -> bool:
    """Start the private engine unless it already runs; return True if this call started it."""
    if _pid() and _reachable(private_host()):
        return False
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise EngineUnavailable("no Docker engine is reachable and 'dockerd' is not installed; "
                                "install Debian's docker.io ('apt-get install docker.io') or start your engine")
    folder = engine_dir()
    folder.mkdir(parents=True, exist_ok=True)
    # A pid file whose process is gone (the engine was killed), or names another process now, would make
    # dockerd refuse to start. _pid() said it is not our live dockerd; that process is left alone.
    (folder / "dockerd.pid").unlink(missing_ok=True)
    argv = [dockerd, "--host", private_host(), "--data-root", str(folder / "data"), "--exec-root",
            str(folder / "exec"), "--pidfile", str(folder / "dockerd.pid"), "--bridge=none", "--iptables=false",
            "--ip-masq=false", "--log-level=warn", "--containerd-namespace", CONTAINERD_NAMESPACE,
            "--containerd-plugins-namespace", CONTAINERD_PLUGINS_NAMESPACE]
    with open(folder / "dockerd.log", "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    _daemons.append(proc)  # it outlives this call on purpose; keep the handle so it is not reaped as garbage
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if _reachable(private_host()):
            return True
        time.sleep(0.5)
    tail = (folder / "dockerd.log").read_text(errors="replace").splitlines()[-15:]
    stop_private_engine()
    raise EngineUnavailable("the private Docker engine did not start; last lines of its log "
                            f"({folder / 'dockerd.log'}):\n  " + "\n  ".join(tail))


def stop_private_engine(timeout_s: float = 30) -> bool:
    """Stop the private engine by the pid it recorded; return True if one was running."""
    pid = _pid()  # checked to be our dockerd (argv), not just any process the pid file names
    if pid is None:
        return False
    _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and _pid() == pid:
        _reap()
        time.sleep(0.2)
    if _pid() == pid:
        _signal(pid, signal.SIGKILL)
    _reap()
    return True


def _signal(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid`` if it is still our dockerd (checked again right before, narrowing pid reuse)."""
    if _is_our_dockerd(pid):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _reap() -> None:
    """Collect the exit status of engines this process started and that have ended."""
    for proc in list(_daemons):
        if proc.poll() is not None:
            _daemons.remove(proc)


def _debootstrap_tarball(suite: str) -> Path:
    """A minimal Debian root filesystem as a tarball, made once and cached in the state folder."""
    tarball = state_dir() / "rootfs" / f"{suite}-minbase.tar"
    if tarball.is_file():
        return tarball
    if shutil.which("debootstrap") is None:
        raise GpumatrixError("debootstrap is not installed; 'apt-get install debootstrap' (needed to make a "
                             "local Debian base image because no registry is reachable)")
    root = tarball.parent / f"{suite}-minbase"
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["debootstrap", "--variant=minbase", suite, str(root), DEBIAN_MIRROR],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise GpumatrixError(f"debootstrap {suite} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (root / junk).glob("*.deb" if "archives" in junk else "*_*"):
            p.unlink(missing_ok=True)
    partial = tarball.with_suffix(".partial")
    with tarfile.open(partial, "w") as tar:
        tar.add(root, arcname=".")
    os.replace(partial, tarball)
    shutil.rmtree(root, ignore_errors=True)
    return tarball


def provide_base_image(engine: Engine, ref: str) -> str:
    """Make ``ref`` available: already there, pulled, or (for Debian suites) made with debootstrap."""
    if engine.image_info(ref) is not None:
        return "present"
    try:
        engine.pull(ref)
        return "pulled"
    except EngineOperationError as err:
        suite = LOCAL_BASES.get(ref)
        if suite is None:
            raise GpumatrixError(f"{ref} cannot be pulled ({err.reason}) and cannot be made locally") from err
    repo, tag = ref.rsplit(":", 1)
    engine.import_rootfs(str(_debootstrap_tarball(suite)), repo, tag, changes=[
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        'CMD ["bash"]',
        f"LABEL {PROVENANCE_LABEL}=debootstrap-{suite}-minbase",
    ])
    return "debootstrap"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpumatrix.devengine", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("up", help="use a reachable engine, or start the private one; print DOCKER_HOST")
    sub.add_parser("down", help="stop the private engine (by its recorded pid)")
    base = sub.add_parser("base", help="make base images available (pull, or debootstrap for Debian)")
    base.add_argument("refs", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "up":
            for url in filter(None, (os.environ.get("DOCKER_HOST"), "unix:///var/run/docker.sock")):
                if _reachable(url):
                    print(url)
                    return 0
            started = start_private_engine()
            print(private_host())
            if started:
                print("started", file=sys.stderr)
            return 0
        if args.cmd == "down":
            print("stopped" if stop_private_engine() else "not running", file=sys.stderr)
            return 0
        engine = Engine.connect()
        for ref in args.refs:
            print(f"{ref}: {provide_base_image(engine, ref)}", file=sys.stderr)
        return 0
    except GpumatrixError as err:
        print(f"gpumatrix: {err}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
