"""Where builds get their wheels: the host's pip settings, the matrix's, and a loopback server.

Sites behind a mirror or a TLS-intercepting proxy configure pip once on the host;
builds follow those settings by default. Local folders (``find-links``,
``wheelhouse``, ``file://`` indexes, a user's own ``torch`` wheel) and the CA
bundle cannot be seen from inside a build, and copying a 200 MB wheelhouse into
every build context wastes seconds per cell, so :class:`PackageServer` serves
them read-only over HTTP on 127.0.0.1 for the duration of the builds, and builds
run with the host's network to reach it.

The same server is a caching proxy for remote indexes (PyPI, download.pytorch.org,
a mirror): a CUDA torch with its nvidia-* wheels is ~3 GB, the same for many cells,
so each wheel is fetched once per host into :func:`wheel_cache_dir` and served
from there to every later build (see docs/performance.md, "Download once").
"""

from __future__ import annotations

import base64
import binascii
import configparser
import hashlib
import html
import http.client
import http.server
import os
import posixpath
import re
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from gpumatrix import __version__

PYPI = "https://pypi.org/simple"


@dataclass(frozen=True)
class PipSettings:
    """The subset of pip configuration that decides where packages come from."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    cert: str | None = None


def _config_files() -> list[Path]:
    """pip's configuration files, lowest priority first (see pip's 'Configuration' docs)."""
    home = Path.home()
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    files = [Path(d) / "pip" / "pip.conf" for d in reversed(xdg_dirs)] + [Path("/etc/pip.conf")]
    files += [home / ".pip" / "pip.conf",
              Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "pip" / "pip.conf"]
    if os.environ.get("VIRTUAL_ENV"):
        files.append(Path(os.environ["VIRTUAL_ENV"]) / "pip.conf")
    if os.environ.get("PIP_CONFIG_FILE"):
        if os.environ["PIP_CONFIG_FILE"] == os.devnull:
            return []
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    return files


def host_pip_settings(env: Mapping[str, str] | None = None) -> PipSettings:
    """Read the host's pip settings: config files (global, then install sections), then PIP_* variables."""
    env = os.environ if env is None else env
    values: dict[str, str] = {}
    for path in _config_files() if env is os.environ else []:
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, configparser.Error):
            continue
        for section in ("global", "install"):
            if parser.has_section(section):
                values.update({k.replace("_", "-"): v for k, v in parser.items(section)})
    for key in ("index-url", "extra-index-url", "find-links", "cert"):
        var = "PIP_" + key.upper().replace("-", "_")
        if env.get(var):
            values[key] = env[var]
    return PipSettings(index_url=values.get("index-url") or None,
                       extra_index_urls=tuple(values.get("extra-index-url", "").split()),
                       find_links=tuple(values.get("find-links", "").split()),
                       cert=values.get("cert") or None)


def local_path(location: str) -> Path | None:
    """The folder/file behind a local location (``/x``, ``file:///x``), or None for a remote URL."""
    if location.startswith("file://"):
        return Path(urllib.parse.unquote(urllib.parse.urlparse(location).path))
    if "://" in location:
        return None
    return Path(location).expanduser()


@dataclass(frozen=True)
class BuildSources:
    """The package sources of one build, before serving (hash inputs) and after (build args)."""

    index_url: str
    extra_index_urls: tuple[str, ...]
    find_links: tuple[str, ...]
    ca_bundle: Path | None
    wheel: Path | None = None

    def needs_server(self) -> bool:
        locations = (self.index_url,) + self.extra_index_urls + self.find_links
        return self.ca_bundle is not None or self.wheel is not None or any(local_path(x) for x in locations)

    def describe(self) -> dict:
        """A JSON-able, host-independent description used in the image's content hash."""
        return {"index_url": self.index_url, "extra_index_urls": list(self.extra_index_urls),
                "find_links": list(self.find_links), "local_torch_wheels": self._local_torch_wheels()}

    def _local_torch_wheels(self) -> list[str]:
        """Names and sizes of torch wheels in local find-links folders: a new wheel there means a new image."""
        out = []
        for loc in self.find_links:
            path = local_path(loc)
            if path is None or not path.is_dir():
                continue
            for whl in sorted(path.glob("torch-*.whl")):
                try:
                    out.append(f"{whl.name}:{whl.stat().st_size}")
                except OSError:
                    continue
        return out


def build_sources(pip: PipSettings, variant: str, index_url_template: str | None,
                  wheelhouse: Sequence[Path], ca_bundle: Path | None, wheel: Path | None) -> BuildSources:
    """Combine host pip settings with the matrix: wheelhouse first, the torch index as an extra index."""
    extras = list(pip.extra_index_urls)
    if index_url_template:
        extras.insert(0, index_url_template.replace("{variant}", variant))
    find_links = [str(p) for p in wheelhouse] + list(pip.find_links)
    cert = ca_bundle or (Path(pip.cert) if pip.cert else None)
    return BuildSources(index_url=pip.index_url or PYPI, extra_index_urls=tuple(dict.fromkeys(extras)),
                        find_links=tuple(dict.fromkeys(find_links)), ca_bundle=cert, wheel=wheel)


def wheel_cache_dir() -> Path:
    """Where proxied wheels and sdists are kept across runs (the "Download once" cache).

    ``$GPUMATRIX_CACHE_DIR/gpumatrix/wheels``, else ``$XDG_CACHE_HOME/gpumatrix/wheels``,
    else ``~/.cache/gpumatrix/wheels``.
    """
    root = os.environ.get("GPUMATRIX_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "gpumatrix" / "wheels"


_CHUNK = 1 << 20
# A download that finishes within this long is verified before its response starts, so a bad hash is
# a clean 502; a longer one streams as it arrives (pip's --timeout 60 would not wait for 3 GB).
_HEADER_GRACE_S = 5.0
_MAX_PAGE_BYTES = 64 << 20
_STALE_PART_S = 24 * 3600
_HASH_NAMES = frozenset(hashlib.algorithms_guaranteed)
_A_TAG = re.compile(r"<a\b[^>]*>", re.I | re.S)
_ATTR_VALUE = r"""\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))"""
_HREF = re.compile(r"(?<![\w-])href" + _ATTR_VALUE, re.I)
_BASE_TAG = re.compile(r"<base\b[^>]*?\bhref" + _ATTR_VALUE, re.I | re.S)
_PROJECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_METADATA_ATTR = re.compile(r"\bdata-(?:dist-info|core)-metadata\b(?:" + _ATTR_VALUE + ")?", re.I)


class UpstreamFailure(Exception):
    """An upstream index or file host did not deliver: ``status`` is what the build's pip is told."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _value(match: re.Match) -> str | None:
    groups = [g for g in match.groups() if g is not None]
    return html.unescape(groups[0]) if groups else None


def _hash_of(spec: str | None) -> tuple[str, str] | None:
    """``("sha256", "ab12…")`` from a fragment or attribute such as ``sha256=ab12…``; None if absent or unknown."""
    name, sep, value = (spec or "").partition("=")
    name = name.strip().lower()
    return (name, value.strip().lower()) if sep and name in _HASH_NAMES and value.strip() else None


def _encode_url(url: str) -> str:
    return base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def _decode_url(text: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, ValueError):
        return None


@dataclass(frozen=True)
class _Upstream:
    """One remote index, without the credentials its URL may carry (they go into a header instead)."""

    url: str
    ca_bundle: Path | None
    auth: str | None  # "Basic …" for requests to the index's own host

    @classmethod
    def parse(cls, location: str, ca_bundle: Path | None) -> "_Upstream":
        parts = urllib.parse.urlsplit(location)
        auth = None
        if parts.username is not None:
            user_pass = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            auth = "Basic " + base64.b64encode(user_pass.encode()).decode()
            netloc = parts.hostname or ""
            netloc = f"[{netloc}]" if ":" in netloc else netloc
            parts = parts._replace(netloc=netloc + (f":{parts.port}" if parts.port else ""))
        return cls(urllib.parse.urlunsplit(parts), ca_bundle, auth)

    def headers_for(self, url: str) -> dict[str, str]:
        same_host = urllib.parse.urlsplit(url).netloc == urllib.parse.urlsplit(self.url).netloc
        return {"Authorization": self.auth} if self.auth and same_host else {}


@dataclass(frozen=True)
class _Allowed:
    """A file URL seen in a proxied page: where it came from and the hashes the page gave for it."""

    upstream: _Upstream
    file_hash: tuple[str, str] | None
    has_metadata: bool
    metadata_hash: tuple[str, str] | None


@dataclass(frozen=True)
class _FileLink:
    url: str  # without fragment
    fragment: str
    filename: str  # last path segment, as the page spelled it


@dataclass
class _Page:
    """An upstream simple page, parsed once: text pieces and file links, rewritten per client token."""

    status: int
    pieces: list[str | _FileLink]
    expires: float


@dataclass
class _Traffic:
    upstream_bytes: int = 0
    cache_bytes: int = 0
    files: int = 0


class _Download:
    """One upstream fetch into a temporary file in the cache that any number of requests read as it grows."""

    def __init__(self, tmp: Path, final: Path, token: str):
        self.tmp, self.final, self.token = tmp, final, token
        self.cond = threading.Condition()
        self.state = "starting"  # -> "running" (headers in) -> "done" (verified, renamed) | "failed"
        self.size: int | None = None
        self.written = 0
        self.status = 0
        self.reason = ""

    def update(self, **changes) -> None:
        with self.cond:
            for key, value in changes.items():
                setattr(self, key, value)
            self.cond.notify_all()

    def open(self):
        """The bytes so far: the temporary file, or the cache entry if it was just renamed."""
        for path in (self.tmp, self.final):
            try:
                return open(path, "rb")
            except FileNotFoundError:
                continue
        return None


class _Proxy:
    """The caching proxy's state, shared by all request threads of one :class:`PackageServer`."""

    def __init__(self, cache_dir: Path, page_ttl_s: float, timeout_s: float):
        self.cache_dir, self.page_ttl_s, self.timeout_s = cache_dir, page_ttl_s, timeout_s
        self.upstreams: list[_Upstream] = []
        self.allowed: dict[str, _Allowed] = {}
        self._lock = threading.Lock()
        self._pages: dict[str, _Page] = {}
        self._page_locks: dict[str, threading.Lock] = {}
        self._downloads: dict[str, _Download] = {}
        self._traffic: dict[str, _Traffic] = {}
        self._ssl: dict[Path | None, ssl.SSLContext] = {}

    # -- bookkeeping -------------------------------------------------------
    def upstream_route(self, location: str, ca_bundle: Path | None) -> int:
        upstream = _Upstream.parse(location, ca_bundle)
        with self._lock:
            if upstream not in self.upstreams:
                self.upstreams.append(upstream)
            return self.upstreams.index(upstream)

    def count(self, token: str, **add: int) -> None:
        with self._lock:
            traffic = self._traffic.setdefault(token, _Traffic())
            for key, value in add.items():
                setattr(traffic, key, getattr(traffic, key) + value)

    def traffic(self, token: str | None) -> dict[str, int]:
        with self._lock:
            items = list(self._traffic.values()) if token is None else [self._traffic.get(token, _Traffic())]
            return {"upstream_bytes": sum(t.upstream_bytes for t in items),
                    "cache_bytes": sum(t.cache_bytes for t in items), "files": sum(t.files for t in items)}

    def sweep_stale_parts(self) -> None:
        """Temporary files left by a killed run (a half CUDA wheel is hundreds of MB)."""
        cutoff = time.time() - _STALE_PART_S
        for part in self.cache_dir.glob("??/.*.part"):
            try:
                if part.stat().st_mtime < cutoff:
                    part.unlink()
            except OSError:
                continue

    # -- upstream ----------------------------------------------------------
    def open_upstream(self, url: str, upstream: _Upstream, accept: str | None = None):
        """GET ``url`` through the host's network (HTTPS_PROXY/NO_PROXY as urllib reads them), TLS verified
        with the sources' CA bundle or the system's; :class:`UpstreamFailure` (404 or 502) if it fails."""
        if upstream.ca_bundle not in self._ssl:
            cafile = str(upstream.ca_bundle) if upstream.ca_bundle else None
            try:
                self._ssl[upstream.ca_bundle] = ssl.create_default_context(cafile=cafile)
            except (OSError, ssl.SSLError) as err:
                raise UpstreamFailure(502, f"cannot use CA bundle {cafile}: {err}") from err
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=self._ssl[upstream.ca_bundle]))
        headers = {"User-Agent": f"gpumatrix/{__version__}", **upstream.headers_for(url)}
        if accept:
            headers["Accept"] = accept
        try:
            return opener.open(urllib.request.Request(url, headers=headers), timeout=self.timeout_s)
        except urllib.error.HTTPError as err:
            err.close()
            status = 404 if err.code in (404, 410) else 502
            raise UpstreamFailure(status, f"upstream answered {err.code} {err.reason} for {url}") from err
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as err:
            reason = getattr(err, "reason", None) or err
            raise UpstreamFailure(502, f"could not fetch {url}: {reason}") from err

    # -- pages -------------------------------------------------------------
    def page(self, route: int, project: str) -> _Page:
        """The upstream's simple page for ``project``, fetched at most once per ``page_ttl_s``."""
        upstream = self.upstreams[route]
        url = upstream.url.rstrip("/") + "/" + urllib.parse.quote(project) + "/"
        with self._lock:
            lock = self._page_locks.setdefault(url, threading.Lock())
        with lock:
            cached = self._pages.get(url)
            if cached is not None and cached.expires > time.monotonic():
                return cached
            try:
                with self.open_upstream(url, upstream, "text/html") as resp:
                    body = resp.read(_MAX_PAGE_BYTES + 1)
                    charset = resp.headers.get_content_charset() or "utf-8"
                    final_url = resp.geturl()
            except UpstreamFailure as err:
                if err.status != 404:
                    raise
                page = _Page(404, [], time.monotonic() + self.page_ttl_s)
            except (OSError, http.client.HTTPException) as err:
                raise UpstreamFailure(502, f"could not read {url}: {err}") from err
            else:
                if len(body) > _MAX_PAGE_BYTES:
                    raise UpstreamFailure(502, f"{url} is larger than {_MAX_PAGE_BYTES} bytes")
                page = _Page(200, self._parse(body.decode(charset, "replace"), final_url, upstream),
                             time.monotonic() + self.page_ttl_s)
            self._pages[url] = page
            return page

    def _parse(self, text: str, page_url: str, upstream: _Upstream) -> list[str | _FileLink]:
        """Split a PEP 503 page into text and file links, and allow those files to be fetched."""
        base_tag = _BASE_TAG.search(text)
        base = urllib.parse.urljoin(page_url, _value(base_tag) or "") if base_tag else page_url
        pieces: list[str | _FileLink] = []
        allowed: dict[str, _Allowed] = {}
        done = 0
        for tag in _A_TAG.finditer(text):
            href = _HREF.search(tag.group(0))
            if href is None:
                continue
            url, fragment = urllib.parse.urldefrag(urllib.parse.urljoin(base, _value(href) or ""))
            filename = urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1]
            if urllib.parse.urlsplit(url).scheme not in ("http", "https") or not filename:
                continue
            meta = _METADATA_ATTR.search(tag.group(0))
            meta_value = _value(meta) if meta else None
            allowed[url] = _Allowed(upstream, _hash_of(fragment), meta is not None and meta_value != "false",
                                    _hash_of(meta_value))
            start, end = tag.start() + href.start(), tag.start() + href.end()
            pieces += [text[done:start], _FileLink(url, fragment, filename)]
            done = end
        pieces.append(text[done:])
        with self._lock:
            self.allowed.update(allowed)
        return pieces

    # -- files -------------------------------------------------------------
    def entry_path(self, url: str, expected: tuple[str, str] | None) -> Path:
        """The cache entry of ``url``; keyed by the URL and the hash its page gave, so a file replaced
        upstream under the same name is a new entry, never a stale hit."""
        key = hashlib.sha256(f"{url}#{'='.join(expected or ())}".encode()).hexdigest()
        name = re.sub(r"[^A-Za-z0-9._+-]", "_", urllib.parse.unquote(url.rsplit("/", 1)[-1]))[-120:]
        return self.cache_dir / key[:2] / f"{key[2:34]}-{name}"

    def file(self, url: str, expected: tuple[str, str] | None, upstream: _Upstream,
             token: str) -> tuple[Path | None, _Download | None, bool]:
        """``(entry, None, False)`` on a hit; else the download in flight and whether this call started it."""
        final = self.entry_path(url, expected)
        with self._lock:
            download = self._downloads.get(str(final))
            if download is not None:
                return None, download, False
            if final.is_file():
                return final, None, False
            final.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
            os.close(fd)
            download = self._downloads[str(final)] = _Download(Path(tmp), final, token)
        threading.Thread(target=self._download, args=(download, url, expected, upstream),
                         name="gpumatrix-fetch", daemon=True).start()
        return None, download, True

    def _download(self, download: _Download, url: str, expected: tuple[str, str] | None,
                  upstream: _Upstream) -> None:
        """Fetch into the temporary file, verify, then rename into place; never raises."""
        try:
            with self.open_upstream(url, upstream) as resp:
                length = resp.headers.get("Content-Length", "")
                download.update(state="running", size=int(length) if length.isdigit() else None)
                digest = hashlib.new(expected[0] if expected else "sha256")
                with open(download.tmp, "wb", buffering=0) as out:
                    while chunk := resp.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        self.count(download.token, upstream_bytes=len(chunk))
                        download.update(written=download.written + len(chunk))
                    os.fsync(out.fileno())
            if download.size is not None and download.written != download.size:
                raise UpstreamFailure(502, f"{url}: got {download.written} of {download.size} bytes")
            if expected and digest.hexdigest() != expected[1]:
                raise UpstreamFailure(502, f"{expected[0]} mismatch for {url}: the page says {expected[1]}, "
                                           f"the file has {digest.hexdigest()}")
            os.replace(download.tmp, download.final)
            download.update(state="done")
        except UpstreamFailure as err:
            download.update(state="failed", status=err.status, reason=err.reason)
        except Exception as err:  # noqa: BLE001 - a failed download must never take the server down
            download.update(state="failed", status=502, reason=f"fetching {url} failed: {err!r}")
        finally:
            if download.state != "done":
                download.tmp.unlink(missing_ok=True)
            with self._lock:
                self._downloads.pop(str(download.final), None)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves GET/HEAD under fixed prefixes from fixed roots, and the caching proxy; nothing else."""

    routes: dict[str, Path] = {}
    proxy: _Proxy

    def translate_path(self, path: str) -> str:
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".", "..")]
        if not parts or parts[0] not in self.routes:
            return "/nonexistent/gpumatrix"
        root = self.routes[parts[0]]
        target = root.joinpath(*parts[1:]) if root.is_dir() else root
        return str(target)

    def log_message(self, format: str, *args) -> None:  # quiet: build logs already show what pip fetched
        pass

    def _proxy_parts(self) -> tuple[str, list[str]] | None:
        """``(token, ["proxy", n, project] | ["files", encoded, name])`` for a proxy path, else None."""
        parts = urllib.parse.urlsplit(self.path).path.split("/")[1:]
        token = ""
        if len(parts) >= 2 and parts[0] == "t":
            token, parts = urllib.parse.unquote(parts[1]), parts[2:]
        elif not parts or parts[0] not in ("proxy", "files"):
            return None
        return token, [p for p in parts if p]

    def do_GET(self) -> None:
        proxied = self._proxy_parts()
        if proxied is None:
            return super().do_GET()
        try:
            token, parts = proxied
            if len(parts) == 3 and parts[0] == "proxy" and parts[1].isdigit():
                self._serve_page(token, int(parts[1]), urllib.parse.unquote(parts[2]))
            elif len(parts) == 3 and parts[0] == "files":
                self._serve_file(token, parts[1], urllib.parse.unquote(parts[2]))
            else:
                self._send_text(404, "not a proxied page or file")
        except ConnectionError:  # the build went away; downloads carry on
            self.close_connection = True

    def do_HEAD(self) -> None:
        if self._proxy_parts() is not None:
            return self._send_text(405, "the proxy answers GET only")
        return super().do_HEAD()

    def _send_text(self, status: int, reason: str) -> None:
        body = (reason + "\n").encode("utf-8", "replace")
        # The reason also goes into the status line: pip prints it in the build log.
        self.send_response(status, reason.encode("latin-1", "replace").decode("latin-1")[:300].replace("\n", " "))
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve_page(self, token: str, route: int, project: str) -> None:
        if route >= len(self.proxy.upstreams) or not _PROJECT.match(project):
            return self._send_text(404, "no such index")
        try:
            page = self.proxy.page(route, project)
        except UpstreamFailure as err:
            return self._send_text(err.status, err.reason)
        if page.status != 200:
            return self._send_text(page.status, f"{project} is not on {self.proxy.upstreams[route].url}")
        host = f"http://127.0.0.1:{self.server.server_address[1]}"
        prefix = host + (f"/t/{urllib.parse.quote(token, safe='')}" if token else "")
        out = []
        for piece in page.pieces:
            if isinstance(piece, str):
                out.append(piece)
            else:
                href = f"{prefix}/files/{_encode_url(piece.url)}/{piece.filename}"
                out.append('href="' + html.escape(href + (f"#{piece.fragment}" if piece.fragment else "")) + '"')
        body = "".join(out).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve_file(self, token: str, encoded: str, name: str) -> None:
        url = _decode_url(encoded)
        if url is None:
            return self._send_text(404, "not a proxied file")
        allowed = self.proxy.allowed.get(url)
        basename = urllib.parse.unquote(url.rsplit("/", 1)[-1])
        if allowed is None:
            return self._send_text(403, "only files listed in a page this server proxied can be fetched")
        if name == basename:
            target, expected = url, allowed.file_hash
        elif name == basename + ".metadata" and allowed.has_metadata:
            target, expected = url + ".metadata", allowed.metadata_hash
        else:
            return self._send_text(403, "only files listed in a page this server proxied can be fetched")
        try:
            entry, download, started = self.proxy.file(target, expected, allowed.upstream, token)
        except OSError as err:
            return self._send_text(502, f"cannot write the wheel cache {self.proxy.cache_dir} "
                                        f"(set GPUMATRIX_CACHE_DIR): {err}")
        if entry is not None:
            return self._send_entry(token, entry)
        assert download is not None
        self._follow(token, download, started)

    def _send_entry(self, token: str, entry: Path) -> None:
        with open(entry, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            # Counted before sending, so traffic() is exact by the time the build has the file.
            self.proxy.count(token, cache_bytes=size, files=1)
            sent = 0
            try:
                sent = self.connection.sendfile(f)
            finally:
                if sent != size:
                    self.proxy.count(token, cache_bytes=sent - size, files=-1)

    def _follow(self, token: str, download: _Download, started: bool) -> None:
        """Serve a download in flight: verified first if it ends within the grace period (a bad hash is a
        502), else streamed as it arrives, holding back the last byte until the hash is verified."""
        with download.cond:
            download.cond.wait_for(lambda: download.state in ("done", "failed"), timeout=_HEADER_GRACE_S)
            # With no Content-Length a short body would look complete: wait for the verified file.
            while download.state == "starting" or (download.state == "running" and download.size is None):
                download.cond.wait(1.0)
        f = download.open() if download.state != "failed" else None
        if f is None:
            return self._send_text(download.status or 502, download.reason or "download failed")
        sent = 0
        with f:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(download.size if download.size is not None else download.written))
            self.end_headers()
            while True:
                with download.cond:
                    download.cond.wait_for(lambda: download.state != "running" or download.written - 1 > sent,
                                           timeout=1.0)
                    state, written = download.state, download.written
                limit = written if state == "done" else written - 1
                while sent < limit:
                    chunk = f.read(min(_CHUNK, limit - sent))
                    if not chunk:
                        break
                    # Counted before the write, so traffic() is exact by the time the build has the file
                    # (the starter's bytes were counted as upstream bytes while they arrived).
                    last = int(state == "done" and sent + len(chunk) == written)
                    self.proxy.count(token, cache_bytes=0 if started else len(chunk), files=last)
                    try:
                        self.wfile.write(chunk)
                    except OSError:
                        self.proxy.count(token, cache_bytes=0 if started else -len(chunk), files=-last)
                        raise
                    sent += len(chunk)
                if state == "done" and sent >= written:
                    if written == 0:
                        self.proxy.count(token, files=1)
                    break
                if state == "failed":  # the client gets a short body, which pip rejects
                    self.close_connection = True
                    break


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # parallel builds


@dataclass
class PackageServer:
    """A read-only HTTP server on 127.0.0.1 that exposes local package locations to builds and
    proxies remote indexes through a persistent wheel cache.

    ``with PackageServer() as server: args = server.build_args(sources, token=cell_id)``; after the
    build, ``server.traffic(cell_id)`` tells how many bytes came from upstream and from the cache.
    """

    routes: dict[str, Path] = field(default_factory=dict)
    cache_dir: Path | None = None  # None: wheel_cache_dir()
    proxy_remote: bool = True  # False: remote indexes are passed to builds unchanged, as before
    page_ttl_s: float = 300.0
    upstream_timeout_s: float = 30.0  # below pip's --timeout 60, so pip sees our 502, not its own timeout
    port: int = 0  # 0: any free port (the URLs are build args, so they only matter to the engine's layer cache)
    _server: http.server.ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _proxy: _Proxy = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._proxy = _Proxy(Path(self.cache_dir or wheel_cache_dir()), self.page_ttl_s, self.upstream_timeout_s)

    def __enter__(self) -> "PackageServer":
        handler = type("Handler", (_Handler,), {"routes": self.routes, "proxy": self._proxy})
        self._proxy.sweep_stale_parts()
        self._server = _Server(("127.0.0.1", self.port), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="gpumatrix-pkgserve", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _route(self, path: Path) -> str:
        for name, root in self.routes.items():
            if root == path:
                return name
        name = f"r{len(self.routes)}"
        self.routes[name] = path
        return name

    def url_for_folder(self, folder: Path) -> str:
        return f"{self.base_url}/{self._route(folder)}/"

    def url_for_index(self, index_dir: Path) -> str:
        """Serve an index's parent so relative links such as ``../../files/x.whl`` keep working."""
        return f"{self.base_url}/{self._route(index_dir.parent)}/{urllib.parse.quote(index_dir.name)}/"

    def url_for_file(self, file: Path) -> str:
        return f"{self.base_url}/{self._route(file)}/{urllib.parse.quote(file.name)}"

    def url_for_remote_index(self, index_url: str, ca_bundle: Path | None = None, token: str | None = None) -> str:
        """The proxied, cached form of a remote index (``http(s)://…/simple``)."""
        route = self._proxy.upstream_route(index_url, ca_bundle)
        prefix = f"/t/{urllib.parse.quote(token, safe='')}" if token else ""
        return f"{self.base_url}{prefix}/proxy/{route}/"

    def build_args(self, sources: BuildSources, token: str | None = None) -> dict[str, str]:
        """The pip environment a build gets, with local locations replaced by served URLs and remote
        indexes by proxied ones. ``token`` (the cell id) keys this build's :meth:`traffic`."""
        def index(loc: str) -> str:
            path = local_path(loc)
            if path is not None:
                return self.url_for_index(path)
            if self.proxy_remote and loc.lower().startswith(("http://", "https://")):
                return self.url_for_remote_index(loc, sources.ca_bundle, token)
            return loc

        def links(loc: str) -> str:
            path = local_path(loc)
            return self.url_for_folder(path) if path is not None else loc  # remote find-links: rare, direct

        args = {"PIP_INDEX_URL": index(sources.index_url),
                "PIP_EXTRA_INDEX_URL": " ".join(index(x) for x in sources.extra_index_urls),
                "PIP_FIND_LINKS": " ".join(links(x) for x in sources.find_links),
                "GPUMATRIX_CA_URL": self.url_for_file(sources.ca_bundle) if sources.ca_bundle else ""}
        return args

    def traffic(self, token: str | None = None) -> dict[str, int]:
        """Package bytes this token's builds got from upstream and from the cache, and files served
        complete; ``None`` sums every token (builds without a token count under ``""``)."""
        return self._proxy.traffic(token)


def direct_build_args(sources: BuildSources) -> dict[str, str]:
    """Build args when nothing local needs serving."""
    return {"PIP_INDEX_URL": sources.index_url, "PIP_EXTRA_INDEX_URL": " ".join(sources.extra_index_urls),
            "PIP_FIND_LINKS": " ".join(sources.find_links), "GPUMATRIX_CA_URL": ""}
