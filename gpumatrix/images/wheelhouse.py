"""The host's wheelhouse: pip itself downloads each build's wheels, once per host, into one folder.

A build never talks to a package index. Before it starts, the host's own pip resolves the cell's torch
for the image's Python and platform and downloads every wheel into the cache folder
(``pip download --only-binary=:all: --python-version … --platform … -d FOLDER``), so the host's pip
configuration, proxies, CA bundles, credentials and index hashes apply exactly as for any pip command
on the host. pip skips files already in the folder, so each wheel crosses the network once per host.
A cell's resolution is torch together with its companions (NumPy, which torch imports but does not
require), so pip picks the NumPy that fits the image's Python and that torch. The build then installs
``torch==X numpy==Y`` with ``--no-index`` from a page listing exactly the wheels of that resolution (see
:mod:`gpumatrix.images.serve`), and the image's tag hashes those wheels' bytes.

The folder: ``wheelhouse/wheels`` in ``$GPUMATRIX_CACHE_DIR`` if set, else in platformdirs' user cache
folder for "gpumatrix" (``~/.cache/gpumatrix/wheelhouse/wheels`` on Linux); beside it, ``sha256/`` holds
the hash of each wheel as it was saved and ``resolves/`` the recent resolutions.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import re
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Callable, Iterator, Sequence

from gpumatrix.errors import BuildError
from gpumatrix.fsutil import write_text_atomic
from gpumatrix.resources import cache_root

RESOLVE_TTL_ENV = "GPUMATRIX_RESOLVE_TTL_S"
# How long a resolution (which files `torch==X` needs) is reused before pip is asked again. PyPI's
# own index pages are cacheable for 10 minutes, so pip itself sees no newer dependency sooner.
DEFAULT_RESOLVE_TTL_S = 600.0
PIP_TIMEOUT_S = 4 * 3600  # a cold CUDA torch is ~3 GB
# torch's own Linux wheels need glibc >= 2.28, so any base that runs torch accepts manylinux up to 2_28.
MANYLINUX_MAX_GLIBC_MINOR = 28
PACKAGE_SUFFIXES = (".whl",)

_SAVED = re.compile(r"^\s*Saved (.+)$")
_ALREADY = re.compile(r"^\s*File was already downloaded (.+)$")
_PROCESSING = re.compile(r"^\s*Processing (/\S+?\.whl)(?: \(from .*\))?$")
_DOWNLOADED = re.compile(r"^Successfully downloaded (.+)$")
_DOWNLOADING = re.compile(r"^\s*Downloading (\S+)(?: \(([^)]*)\))?\s*$")
_RAW_PROGRESS = re.compile(r"^Progress (\d+) of (\d+)\s*$")
# pip prints "Progress N of M" lines (``--progress-bar raw``) since 24.1.
RAW_PROGRESS_PIP = (24, 1)
Activity = Callable[[str, bool], None]  # (what pip does now, is it frequent detail such as bytes)
_WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")


def redact(text: str) -> str:
    """``https://user:TOKEN@host`` → ``https://user:****@host`` in any text we print or store."""
    return re.sub(r"(?<=://)([^/@\s:]+):([^/@\s]+)@", r"\1:****@", text)


def platform_tags(arch: str | None = None) -> list[str]:
    """The ``--platform`` tags a Linux image of ``arch`` accepts (pip does not expand manylinux ranges)."""
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch or platform.machine(), arch or platform.machine())
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(MANYLINUX_MAX_GLIBC_MINOR, 4, -1)]
    return tags + [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}", f"linux_{arch}"]


@dataclass(frozen=True)
class WheelRequest:
    """What to resolve: a requirement (``torch==2.13.0+cpu`` or a local wheel's path) and its companions
    (``numpy<2``: resolved with it, in one pip run) for one Python and platform, with the matrix's package
    locations on top of the host's pip configuration."""

    requirement: str
    python: str
    companions: tuple[str, ...] = ()
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    ca_bundle: str | None = None
    arch: str | None = None

    def pip_args(self, progress_bar: str = "off") -> list[str]:
        """``pip download`` arguments after ``-d FOLDER`` (an argv list: nothing here reaches a shell)."""
        py = self.python.replace(".", "")
        args = ["--only-binary=:all:", "--python-version", self.python, "--implementation", "cp",
                "--abi", f"cp{py}"]  # abi3 and pure-Python wheels are accepted too
        for tag in platform_tags(self.arch):
            args += ["--platform", tag]
        for url in self.extra_index_urls:
            args += ["--extra-index-url", url]
        for loc in self.find_links:
            args += ["--find-links", loc]
        if self.ca_bundle:
            args += ["--cert", self.ca_bundle]
        return args + ["--no-input", "--progress-bar", progress_bar, "--disable-pip-version-check", self.requirement,
                       *self.companions]

    def key(self, sha256: Callable[[Path], str] | None = None) -> str:
        """Identifies a resolution on this host (the local wheel's bytes count, not just its path;
        ``sha256`` hashes it, :func:`file_sha256` unless given)."""
        local = Path(self.requirement)
        fields = {"req": self.requirement, "with": list(self.companions), "py": self.python,
                  "idx": list(self.extra_index_urls),
                  "links": list(self.find_links), "ca": self.ca_bundle, "arch": self.arch,
                  "local": (sha256 or file_sha256)(local) if local.is_absolute() and local.is_file() else None}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Wheel:
    name: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ResolvedWheels:
    """The exact wheels a build installs, and what resolving them cost."""

    key: str
    wheels: tuple[Wheel, ...]  # sorted by name
    fetched_bytes: int = 0  # saved into the wheelhouse by this resolution (downloaded or copied once)
    reused_bytes: int = 0  # already there
    fetched_files: int = 0
    request: WheelRequest | None = field(default=None, compare=False, repr=False)

    @property
    def torch(self) -> Wheel:
        found = [w for w in self.wheels if w.name.startswith("torch-")]
        if len(found) != 1:
            raise BuildError(f"the resolution holds {len(found)} torch wheels: {[w.name for w in found]}")
        return found[0]

    @property
    def torch_requirement(self) -> str:
        """``torch==VERSION`` of the resolved wheel: a release and the same file given as a local wheel
        install the same way, so they build one image."""
        match = _WHEEL_NAME.match(self.torch.name)
        assert match, self.torch.name
        return f"torch=={match.group('version')}"

    def pin(self, project: str) -> str:
        """``project==VERSION`` of the resolution's wheel of ``project`` (e.g. ``numpy==2.4.6``); a
        :class:`BuildError` when the resolution holds none."""
        wanted = project.lower().replace("-", "_")
        for w in self.wheels:
            match = _WHEEL_NAME.match(w.name)
            if match and match.group("name").lower().replace("-", "_") == wanted:
                return f"{project}=={match.group('version')}"
        raise BuildError(f"the resolution holds no {project} wheel: {[w.name for w in self.wheels]}")

    def describe(self) -> list[list[str]]:
        """The content-hash input: names and sha256 of every wheel (no URLs, no paths)."""
        return [[w.name, w.sha256] for w in self.wheels]

    def downloads(self) -> dict[str, int]:
        """``upstream_bytes``: saved into the wheelhouse by this resolution (downloaded, or copied from a
        local folder); ``cache_bytes``: found there already; ``files``: wheels the build installs from;
        ``fetched_files``: how many of them were saved now."""
        return {"upstream_bytes": self.fetched_bytes, "cache_bytes": self.reused_bytes,
                "files": len(self.wheels), "fetched_files": self.fetched_files}


_sha_cache: dict[tuple[object, ...], str] = {}
_sha_locks: dict[str, threading.Lock] = {}
_sha_locks_guard = threading.Lock()
# A file changed less than this long before it is hashed may change again within the same timestamp tick,
# unseen by its stat: its hash is not remembered across runs (git's "racily clean" entries, the same way).
SETTLED_S = 2.0


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What changes whenever a file's bytes do: its device, inode, size, mtime and ctime. ctime cannot be set
    by a program (``touch -r``, ``cp -p`` and ``rsync -a`` set mtime, not ctime); a write, a rename onto
    the path or a chmod moves it. git's index trusts the same fields."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_sha256(path: Path, records: Path | None = None) -> str:
    """sha256 of a file, hashed once per process while it is unchanged (:func:`_identity`); a second
    thread asking for the same file waits for the first's hash.

    With ``records`` (a folder), the hash is also remembered across runs, and trusted while the file
    has the same identity: a warm run does not read a 3 GB local wheel again to know it is the same."""
    path = Path(os.path.abspath(path))
    with _sha_locks_guard:
        lock = _sha_locks.setdefault(str(path), threading.Lock())
    with lock, open(path, "rb") as f:  # stat the open file: on NFS, open() revalidates the attributes
        st = os.fstat(f.fileno())
        ident = _identity(st)
        key = (str(path), *ident)
        if key in _sha_cache:
            return _sha_cache[key]
        record = records / f"{hashlib.sha256(str(path).encode()).hexdigest()[:32]}.json" if records else None
        sha = _remembered(record, path, ident) if record is not None else None
        if sha is None:
            started = time.time()
            sha = _hash_stream(f)
            settled = started - max(st.st_mtime_ns, st.st_ctime_ns) / 1e9 >= SETTLED_S
            if record is not None and settled and _identity(os.fstat(f.fileno())) == ident:
                record.parent.mkdir(parents=True, exist_ok=True)
                write_text_atomic(record, json.dumps({"path": str(path), "identity": list(ident),
                                                      "sha256": sha}) + "\n")
        _sha_cache[key] = sha
        return sha


def _remembered(record: Path, path: Path, ident: tuple[int, ...]) -> str | None:
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
        if data["path"] == str(path) and tuple(data["identity"]) == ident and isinstance(data["sha256"], str):
            return data["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _hash_file(path: Path) -> str:
    with open(path, "rb") as f:
        return _hash_stream(f)


def _hash_stream(f: IO[bytes]) -> str:
    h = hashlib.sha256()
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
    return h.hexdigest()


class Wheelhouse:
    """The cache folder and the pip that fills it. Thread-safe; pip runs one at a time per host."""

    def __init__(self, root: Path | None = None, pip: Sequence[str] | None = None,
                 resolve_ttl_s: float | None = None):
        self.root = Path(root) if root is not None else cache_root() / "wheelhouse"
        self.folder = self.root / "wheels"  # only wheels: this is the folder builds are served
        self._hashes = self.root / "sha256"  # one record per wheel: size, mtime, sha256 when it was saved
        self._resolves = self.root / "resolves"
        self._sources = self.root / "sources"  # sha256 of local wheels, by path, while unchanged (file_sha256)
        self.pip = list(pip) if pip is not None else [sys.executable, "-m", "pip"]
        ttl = os.environ.get(RESOLVE_TTL_ENV) if resolve_ttl_s is None else resolve_ttl_s
        self.resolve_ttl_s = float(ttl) if ttl not in (None, "") else DEFAULT_RESOLVE_TTL_S
        self._memo: dict[str, ResolvedWheels | BuildError] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._verified: set[tuple[str, str, int, int]] = set()

    # -- resolving ------------------------------------------------------------
    def resolve(self, request: WheelRequest, log_path: Path | None = None,
                on_activity: Activity | None = None) -> ResolvedWheels:
        """The wheels ``request`` installs, downloaded into :attr:`folder` if they are not there yet.

        Within one process a request is resolved once; across runs a resolution younger than the TTL
        is reused when all its wheels are still there unchanged. A failure raises :class:`BuildError`
        with pip's telling line, and pip's whole output is written to ``log_path``. ``on_activity`` hears
        what pip does as it goes: the file it downloads, and its bytes of the total (pip >= 24.1)."""
        key = request.key(self.source_sha256)
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            first = self._memo.get(key)
            if isinstance(first, BuildError):  # the same request fails the same way within a run
                raise BuildError(first.reason, first.log_tail)
            if first is not None:  # later cells of a run get these bytes from the wheelhouse
                return replace(first, fetched_bytes=0, reused_bytes=sum(w.size for w in first.wheels),
                               fetched_files=0)
            try:
                resolved = self._recent(key) or self._download(request, key, log_path, on_activity)
            except BuildError as err:
                self._memo[key] = err
                raise
            resolved = replace(resolved, request=request)
            self._memo[key] = resolved
            return resolved

    def source_sha256(self, path: Path) -> str:
        """sha256 of a local wheel or package file, remembered across runs while the file is unchanged."""
        return file_sha256(path, self._sources)

    def _recent(self, key: str) -> ResolvedWheels | None:
        try:
            data = json.loads((self._resolves / f"{key}.json").read_text(encoding="utf-8"))
            if time.time() - float(data["at"]) > self.resolve_ttl_s:
                return None
            wheels = tuple(Wheel(str(n), str(s), int(z)) for n, s, z in data["wheels"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not wheels or any(self._recorded(w.name) != w.sha256 for w in wheels):
            return None
        return ResolvedWheels(key, wheels, 0, sum(w.size for w in wheels), 0)

    def _recorded(self, name: str) -> str | None:
        """The sha256 recorded when ``name`` was saved, if the file is still that size and mtime."""
        try:
            rec = json.loads((self._hashes / f"{name}.json").read_text(encoding="utf-8"))
            st = (self.folder / name).stat()
        except (OSError, ValueError):
            return None
        if rec.get("size") != st.st_size or rec.get("mtime_ns") != st.st_mtime_ns:
            return None
        return str(rec.get("sha256"))

    def _record(self, name: str) -> Wheel:
        path = self.folder / name
        st = path.stat()
        sha = _hash_file(path)
        self._hashes.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self._hashes / f"{name}.json",
                          json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha}) + "\n")
        return Wheel(name, sha, st.st_size)

    def forget(self, name: str) -> None:
        """Remove a wheel and its record (it will be fetched again)."""
        (self.folder / name).unlink(missing_ok=True)
        (self._hashes / f"{name}.json").unlink(missing_ok=True)

    @contextmanager
    def _host_lock(self) -> Iterator[None]:
        """One pip at a time per wheelhouse, across processes: pip copies into place non-atomically."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _download(self, request: WheelRequest, key: str, log_path: Path | None,
                  on_activity: Activity | None = None) -> ResolvedWheels:
        if on_activity is not None:
            on_activity("resolving torch's wheels with the host's pip", False)
        with self._host_lock():
            self.folder.mkdir(parents=True, exist_ok=True)
            saved_now: dict[str, Wheel] = {}
            for attempt in (1, 2):
                saved, already, sources, output = self._run_pip(request, log_path, on_activity)
                saved_now.update({n: self._record(n) for n in saved})
                # A file pip found in place is ours only if we recorded it and it is unchanged, and,
                # when it came from a local folder, if it still has that file's bytes. Anything else
                # (a truncated copy, a wheel rebuilt under the same name) is removed and fetched again.
                stale = [n for n in already if n not in saved_now and (
                    self._recorded(n) is None or (n in sources and self.source_sha256(sources[n]) != self._recorded(n)))]
                if not stale:
                    break
                if attempt == 2:
                    raise BuildError(f"the wheelhouse {self.folder} keeps unverifiable copies of "
                                     f"{', '.join(stale)}", log_tail=output[-4000:])
                for name in stale:
                    self.forget(name)
            names = saved + already
            fetched = [saved_now[n] for n in names if n in saved_now]
            reused = [Wheel(n, str(self._recorded(n)), (self.folder / n).stat().st_size)
                      for n in names if n not in saved_now]
        wheels = tuple(sorted(fetched + reused, key=lambda w: w.name))
        resolved = ResolvedWheels(key, wheels, sum(w.size for w in fetched), sum(w.size for w in reused),
                                  len(fetched))
        resolved.torch  # noqa: B018 - exactly one torch wheel, or a clear error now
        self._resolves.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self._resolves / f"{key}.json",
                          json.dumps({"at": time.time(), "wheels": [[w.name, w.sha256, w.size] for w in wheels]})
                          + "\n")
        return resolved

    def _run_pip(self, request: WheelRequest, log_path: Path | None, on_activity: Activity | None = None
                 ) -> tuple[list[str], list[str], dict[str, Path], str]:
        raw = on_activity is not None and self._pip_has_raw_progress()
        argv = self.pip + ["download", "-d", str(self.folder)] + request.pip_args("raw" if raw else "off")
        code, output = _run_streaming(argv, cwd=self.root, env=_pip_environment(), timeout_s=PIP_TIMEOUT_S,
                                      on_activity=on_activity)
        output = redact(output)
        if code != 0:
            if log_path is not None:  # only then: a cell's build log is its image's, not a later resolution's
                log_path.parent.mkdir(parents=True, exist_ok=True)
                write_text_atomic(log_path, f"$ {redact(' '.join(argv))}\n{output}")
            raise BuildError(_telling_line(output) or f"pip download failed for {redact(request.requirement)}",
                             log_tail=output[-4000:], log_path=str(log_path) if log_path else None)
        saved, already, sources = [], [], {}
        source: Path | None = None
        for line in output.splitlines():
            if m := _PROCESSING.match(line):
                source = Path(m.group(1))
            elif m := _SAVED.match(line):
                saved.append(Path(m.group(1)).name)
            elif m := _ALREADY.match(line):
                name = Path(m.group(1)).name
                already.append(name)
                if source is not None and source.name == name:
                    sources[name] = source
        names = next((m.group(1).split() for line in output.splitlines() if (m := _DOWNLOADED.match(line))), [])
        files = list(dict.fromkeys(saved + already))
        if not files or len(files) != len(names) or any(not n.endswith(PACKAGE_SUFFIXES) for n in files):
            raise BuildError(f"could not tell which files pip downloaded for {redact(request.requirement)} "
                             f"(pip said: {names})", log_tail=output[-4000:])
        return saved, [n for n in already if n not in saved], sources, output

    def _pip_has_raw_progress(self) -> bool:
        """Whether this wheelhouse's pip prints its download progress as lines (``--progress-bar raw``)."""
        if self.pip != [sys.executable, "-m", "pip"]:
            return False
        from importlib.metadata import PackageNotFoundError, version

        from packaging.version import InvalidVersion, Version

        try:
            return Version(version("pip")).release[:2] >= RAW_PROGRESS_PIP
        except (PackageNotFoundError, InvalidVersion):
            return False

    # -- using ----------------------------------------------------------------
    def verify(self, resolved: ResolvedWheels) -> list[str]:
        """Re-hash every wheel before a build is given it. A corrupted or truncated one is removed and
        fetched again with pip; :class:`BuildError` if the fresh copy is not the file the tag was
        computed for. Returns the names that were fetched again."""
        with self._lock:
            lock = self._locks.setdefault(resolved.key, threading.Lock())
        with lock:
            return self._verify(resolved)

    def _verify(self, resolved: ResolvedWheels) -> list[str]:
        bad = [w for w in resolved.wheels if not self._intact(w)]
        if not bad:
            return []
        for w in bad:
            self.forget(w.name)
        (self._resolves / f"{resolved.key}.json").unlink(missing_ok=True)
        names = ", ".join(w.name for w in bad)
        if resolved.request is None:
            raise BuildError(f"corrupted in the wheelhouse, removed: {names}")
        fresh = self._download(resolved.request, resolved.key, None)
        if fresh.describe() != resolved.describe():
            raise BuildError(f"{names} in the wheelhouse were corrupted, and fetching them again gave other "
                             f"files than this image's tag was computed for; run again")
        return [w.name for w in bad]

    def _intact(self, wheel: Wheel) -> bool:
        """The file hashes to ``wheel.sha256`` (hashed once per process while its size and mtime stay)."""
        path = self.folder / wheel.name
        try:
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode):  # a symlink in the wheelhouse is never ours
                return False
            seen = (wheel.name, wheel.sha256, st.st_size, st.st_mtime_ns)
            if seen in self._verified:
                return True
            ok = st.st_size == wheel.size and _hash_file(path) == wheel.sha256
        except OSError:
            return False
        if ok:
            self._verified.add(seen)
        return ok


def _pip_environment() -> dict[str, str]:
    """The host's environment for pip, minus constraints: the host's pip settings say where packages
    come from (indexes, links, proxies, CA bundle, credentials), and apply; its constraints pin the
    host's own environment, not an image's, and do not (PIP_CONSTRAINT overrides pip.conf's ``constraint``;
    pip ignores an empty value, so it names an empty file)."""
    return {**os.environ, "PIP_CONSTRAINT": os.devnull}


def _run_streaming(argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float,
                   on_activity: Activity | None) -> tuple[int | None, str]:
    """Run pip, reading its output line by line as it comes: (exit code or None if killed at the timeout,
    its output without the progress lines). ``on_activity`` hears each file pip downloads and its bytes."""
    timed_out = threading.Event()
    lines: list[str] = []
    current = "a file"
    with subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as proc:

        def kill() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(timeout_s, kill)
        timer.daemon = True
        timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if m := _RAW_PROGRESS.match(line):
                    done, total = int(m.group(1)), int(m.group(2))
                    if on_activity is not None and total:
                        on_activity(f"downloading {current}: {done / 1e6:.1f} of {total / 1e6:.1f} MB", True)
                    continue  # shown, not kept: a 3 GB download prints thousands of them
                lines.append(line)
                if on_activity is not None and (m := _DOWNLOADING.match(line)):
                    # the file's name only: never a URL's credentials, query or fragment
                    current = urllib.parse.unquote(re.split(r"[?#]", m.group(1))[0].rsplit("/", 1)[-1])[:120]
                    on_activity(f"downloading {current}" + (f" ({m.group(2)})" if m.group(2) else ""), False)
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
    output = "".join(lines)
    if timed_out.is_set():
        return None, f"pip download did not finish within {timeout_s:.0f} s\n{output}"
    return code, output


def _telling_line(output: str) -> str | None:
    """pip's line that says why: "No matching distribution found for …", else "Cannot install …", else its
    last ERROR line."""
    hits = [line.strip().removeprefix("ERROR: ") for line in output.splitlines() if line.startswith("ERROR: ")]
    for prefix in ("No matching distribution", "Cannot install"):
        found = [h for h in hits if h.startswith(prefix)]
        if found:
            return found[-1]
    return hits[-1] if hits else None


def request_for(requirement: str, python: str, index_url_template: str | None, variant: str,
                wheelhouse: Sequence[Path], ca_bundle: Path | None, arch: str | None = None,
                companions: Sequence[str] = ()) -> WheelRequest:
    """A cell's request: the matrix's torch index (``{variant}`` filled in) as an extra index on top of
    the host's pip settings, its ``wheelhouse:`` folders as find-links, its CA bundle for pip; ``companions``
    are resolved with the requirement (a cell's NumPy)."""
    extra = (index_url_template.replace("{variant}", variant),) if index_url_template else ()
    for url in extra:
        _refuse_plain_http(url)
    return WheelRequest(requirement=requirement, python=python, companions=tuple(companions), extra_index_urls=extra,
                        find_links=tuple(str(p) for p in wheelhouse),
                        ca_bundle=str(ca_bundle) if ca_bundle else None, arch=arch)


def _refuse_plain_http(url: str) -> None:
    """An index the matrix names must be https (or file://, or http on loopback): over plain http its
    credentials travel in clear and its pages can be rewritten on the way."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise BuildError(f"refusing index_url {redact(url)}: plain http (use https)")

