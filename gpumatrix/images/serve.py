"""Serve the wheelhouse to builds: read-only, loopback only, only the declared folder, only wheels.

A classic build cannot mount a host folder, and a CUDA torch's 3 GB of wheels in every build context
would be sent, stored in a layer and kept in the image. So for the duration of the builds a tiny HTTP
server on ``127.0.0.1:<ephemeral port>`` serves the wheels of each published resolution under a random
per-run secret: ``http://127.0.0.1:PORT/SECRET/SET/`` is a generated find-links page that lists exactly
that resolution's wheels with their ``#sha256=`` (pip in the build checks them), and
``…/SET/NAME.whl`` is one of them. Everything else is a 404: a path without the secret, any name not
in a published set, a name that is not a wheel, a file that is a symlink or resolves outside the
folder. Builds reach it because they run with the host's network (see docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import html
import http.server
import os
import secrets
import stat
import threading
import urllib.parse
from typing import Sequence

from gpumatrix.images.wheelhouse import PACKAGE_SUFFIXES, ResolvedWheels, Wheel, Wheelhouse

_CHUNK = 1 << 20


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # parallel builds


class _Handler(http.server.BaseHTTPRequestHandler):
    owner: "WheelServer"

    def log_message(self, format: str, *args) -> None:  # quiet: the build log shows what pip fetched
        pass

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        # No normalisation: a valid path is exactly /SECRET/SET/ or /SECRET/SET/NAME, and NAME (pip quotes
        # "+" as %2B) is unquoted once and must then equal a name of the set.
        parts = urllib.parse.urlsplit(self.path).path.split("/")
        owner = self.owner
        if len(parts) != 4 or parts[0] != "" or not secrets.compare_digest(
                parts[1].encode("utf-8", "surrogateescape"), owner.secret.encode()):
            return self._not_found()
        wheels = owner.published(parts[2])
        if wheels is None:
            return self._not_found()
        if parts[3] == "":
            return self._send_page(wheels, body)
        name = urllib.parse.unquote(parts[3])
        wheel = next((w for w in wheels if w.name == name), None)
        if wheel is None:
            return self._not_found()
        self._send_file(wheel, body)

    def _not_found(self) -> None:
        self.send_error(404)

    def _send_page(self, wheels: Sequence[Wheel], body: bool) -> None:
        links = "".join(f'<a href="{html.escape(urllib.parse.quote(w.name))}#sha256={w.sha256}">'
                        f"{html.escape(w.name)}</a><br>\n" for w in wheels)
        data = f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _send_file(self, wheel: Wheel, body: bool) -> None:
        fd = self.owner.open_confined(wheel.name)
        if fd is None:
            return self._not_found()
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            if body:
                try:
                    self.wfile.flush()
                    self.connection.sendfile(f)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True


class WheelServer:
    """``with WheelServer(wheelhouse) as server: url = server.publish(resolved)``.

    ``url`` is the find-links page of exactly ``resolved``'s wheels; it works until the ``with`` ends.
    The socket opens at the first :meth:`publish` (or :attr:`base_url`), not on entry: a run whose
    images all exist already never opens it, and never waits for its thread to stop.
    """

    def __init__(self, wheelhouse: Wheelhouse, port: int = 0):
        self.wheelhouse = wheelhouse
        self.port = port  # 0: an ephemeral port
        wheelhouse.folder.mkdir(parents=True, exist_ok=True)
        self.folder = wheelhouse.folder.resolve()
        self.secret = secrets.token_urlsafe(24)
        self._sets: dict[str, tuple[Wheel, ...]] = {}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._entered = False

    def __enter__(self) -> "WheelServer":
        self._entered = True
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._entered = False
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def _started(self) -> _Server:
        with self._lock:
            assert self._entered, "server not started: use it inside 'with WheelServer(...)'"
            if self._server is None:
                handler = type("Handler", (_Handler,), {"owner": self})
                self._server = _Server(("127.0.0.1", self.port), handler)
                # A short poll: shutdown() waits for the loop to notice, up to one interval.
                self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                                name="gpumatrix-wheels", daemon=True)
                self._thread.start()
            return self._server

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._started().server_address[1]}"

    def publish(self, resolved: ResolvedWheels) -> str:
        """Make ``resolved``'s wheels fetchable, after re-hashing them (a corrupted one is fetched again);
        return the find-links URL of their page."""
        self.wheelhouse.verify(resolved)
        return self.expose(resolved.wheels)

    def expose(self, wheels: tuple[Wheel, ...]) -> str:
        """Serve ``wheels`` as one set, as they are (no hash check: :meth:`publish` is what builds use)."""
        set_id = hashlib.sha256(repr([(w.name, w.sha256) for w in wheels]).encode()).hexdigest()[:16]
        with self._lock:
            self._sets[set_id] = tuple(wheels)
        return f"{self.base_url}/{self.secret}/{set_id}/"

    def published(self, set_id: str) -> tuple[Wheel, ...] | None:
        with self._lock:
            return self._sets.get(set_id)

    def open_confined(self, name: str) -> int | None:
        """An fd for ``name`` in the folder, or None unless it is a regular package file right in the
        folder: no separators, no symlink (O_NOFOLLOW, and the folder's own real path), nothing else."""
        if "/" in name or "\0" in name or name in (".", "..") or not name.endswith(PACKAGE_SUFFIXES):
            return None
        path = self.folder / name
        if path.parent.resolve() != self.folder:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return fd
