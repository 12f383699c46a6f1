"""Test helpers: tiny valid wheels, and a real PEP 503 index on 127.0.0.1 that records every request."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import threading
import urllib.parse
import zipfile
from pathlib import Path


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = (), tag: str = "py3-none-any",
               payload: str = "") -> Path:
    """A minimal valid wheel in ``folder`` (pip reads its METADATA; pip install can install it)."""
    dist = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{name}/__init__.py": payload, f"{dist}/METADATA": metadata,
             f"{dist}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n"}
    record = "".join(f"{path},,\n" for path in files) + f"{dist}/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, text in {**files, f"{dist}/RECORD": record}.items():
            zf.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), text)
    path = Path(folder) / f"{name}-{version}-{tag}.whl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path


def make_numpy(folder: Path, version: str = "2.0.0") -> Path:
    """A tiny stand-in ``numpy`` wheel: every image resolves and installs NumPy beside torch."""
    return make_wheel(folder, "numpy", version, payload=f"__version__ = {version!r}\n")


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class IndexServer:
    """A PEP 503 "simple" index serving ``files`` (name -> bytes), on 127.0.0.1, in a thread.

    ``auth`` ("user:password") makes every request without that Basic credential a 401. ``file_host``
    (another IndexServer) makes the project pages link to files on that server instead of this one.
    ``requests`` records (path, Authorization header) of every request.
    """

    def __init__(self, auth: str | None = None, host: str = "127.0.0.1") -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.auth = auth
        self.file_host: IndexServer | None = None
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                header = self.headers.get("Authorization")
                index.requests.append((self.path, header))
                if index.auth and header != "Basic " + base64.b64encode(index.auth.encode()).decode():
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="test"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = index.page(urllib.parse.unquote(self.path))
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if self.path.endswith("/") else "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.host, self.port = host, self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def add(self, wheel: Path) -> None:
        self.files[wheel.name] = wheel.read_bytes()
        if self.file_host is not None:
            self.file_host.files[wheel.name] = wheel.read_bytes()

    def page(self, path: str) -> bytes | None:
        if path.startswith("/files/"):
            return self.files.get(path.removeprefix("/files/"))
        if path.startswith("/simple/") and path.endswith("/"):
            project = path.strip("/").split("/")[-1]
            host = (self.file_host or self).url
            links = [f'<a href="{host}/files/{n}#sha256={hashlib.sha256(b).hexdigest()}">{n}</a>'
                     for n, b in sorted(self.files.items())
                     if n.split("-")[0].lower().replace("_", "-") == project.lower().replace("_", "-")]
            return ("<html><body>" + "".join(links) + "</body></html>").encode() if links else None
        return None

    def hits(self, name: str) -> int:
        return sum(1 for p, _ in self.requests if urllib.parse.unquote(p) == f"/files/{name}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def pip_env(monkeypatch, index_url: str | None = None) -> None:
    """Only what the test gives pip: no host configuration, no pip HTTP cache, ``index_url`` or no index."""
    for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT", "PIP_NO_INDEX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_RETRIES", "0")
    if index_url:
        monkeypatch.setenv("PIP_INDEX_URL", index_url)
    else:
        monkeypatch.setenv("PIP_NO_INDEX", "1")
