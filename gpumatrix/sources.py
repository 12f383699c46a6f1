"""Where builds get their wheels: the host's pip settings, the matrix's, and a loopback server.

Sites behind a mirror or a TLS-intercepting proxy configure pip once on the host;
builds follow those settings by default. Local folders (``find-links``,
``wheelhouse``, ``file://`` indexes, a user's own ``torch`` wheel) and the CA
bundle cannot be seen from inside a build, and copying a 200 MB wheelhouse into
every build context wastes seconds per cell, so :class:`PackageServer` serves
them read-only over HTTP on 127.0.0.1 for the duration of the builds, and builds
run with the host's network to reach it.
"""

from __future__ import annotations

import configparser
import http.server
import os
import posixpath
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

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


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves GET/HEAD under fixed prefixes from fixed roots; nothing else."""

    routes: dict[str, Path] = {}

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


@dataclass
class PackageServer:
    """A read-only HTTP server on 127.0.0.1 that exposes local package locations to builds."""

    routes: dict[str, Path] = field(default_factory=dict)
    _server: http.server.ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def __enter__(self) -> "PackageServer":
        handler = type("Handler", (_Handler,), {"routes": self.routes})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
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

    def build_args(self, sources: BuildSources) -> dict[str, str]:
        """The pip environment a build gets, with local locations replaced by served URLs."""
        def index(loc: str) -> str:
            path = local_path(loc)
            return self.url_for_index(path) if path is not None else loc

        def links(loc: str) -> str:
            path = local_path(loc)
            return self.url_for_folder(path) if path is not None else loc

        args = {"PIP_INDEX_URL": index(sources.index_url),
                "PIP_EXTRA_INDEX_URL": " ".join(index(x) for x in sources.extra_index_urls),
                "PIP_FIND_LINKS": " ".join(links(x) for x in sources.find_links),
                "GPUMATRIX_CA_URL": self.url_for_file(sources.ca_bundle) if sources.ca_bundle else ""}
        return args


def direct_build_args(sources: BuildSources) -> dict[str, str]:
    """Build args when nothing local needs serving."""
    return {"PIP_INDEX_URL": sources.index_url, "PIP_EXTRA_INDEX_URL": " ".join(sources.extra_index_urls),
            "PIP_FIND_LINKS": " ".join(sources.find_links), "GPUMATRIX_CA_URL": ""}
