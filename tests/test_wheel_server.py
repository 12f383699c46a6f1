"""The loopback wheel server: it serves the published wheels of one folder, and each attack gets a 404."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys

import pytest

from tests._wheels import make_wheel, pip_env, sha256
from gpumatrix.errors import BuildError
from gpumatrix.images.serve import WheelServer
from gpumatrix.images.wheelhouse import ResolvedWheels, Wheel, Wheelhouse


@pytest.fixture
def house(tmp_path):
    """A wheelhouse with one good wheel and the things an attacker would like to read through it."""
    wh = Wheelhouse(tmp_path / "cache")
    wh.folder.mkdir(parents=True)
    good = make_wheel(wh.folder, "good", "1.0")
    secret = tmp_path / "secret.txt"  # outside the folder, owner-only
    secret.write_text("TOP-SECRET")
    secret.chmod(0o600)
    (wh.folder / "evil-1.0-py3-none-any.whl").symlink_to(secret)
    (wh.folder / ".netrc").write_text("machine pypi login u password TOP-SECRET\n")
    (wh.folder / "config.json").write_text('{"auths": {"x": "TOP-SECRET"}}')
    (tmp_path / "cache" / "outside-1.0-py3-none-any.whl").write_text("TOP-SECRET")  # the parent folder
    return wh, good, secret


def wheel(path, name=None) -> Wheel:
    return Wheel(name or path.name, sha256(path), path.stat().st_size)


def get(server: WheelServer, path: str) -> tuple[int, bytes]:
    """A raw request: the path goes out exactly as written (no client-side normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", int(server.base_url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.putrequest("GET", path, skip_accept_encoding=True)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_serves_exactly_the_published_wheels(house):
    wh, good, _ = house
    with WheelServer(wh) as server:
        url = server.publish(ResolvedWheels("k", (wheel(good),)))
        assert server.base_url.startswith("http://127.0.0.1:") and server._server.server_address[0] == "127.0.0.1"
        path = url.removeprefix(server.base_url)
        status, page = get(server, path)
        assert status == 200 and f"good-1.0-py3-none-any.whl#sha256={sha256(good)}".encode() in page
        assert b"evil" not in page and b"netrc" not in page
        assert get(server, path + good.name) == (200, good.read_bytes())
        port = server.base_url.rsplit(":", 1)[1]
    with pytest.raises(OSError):  # alive only during the builds
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()


def test_real_pip_installs_from_the_page_and_checks_hashes(house, tmp_path, monkeypatch):
    wh, good, _ = house
    pip_env(monkeypatch)
    with WheelServer(wh) as server:
        url = server.publish(ResolvedWheels("k", (wheel(good),)))
        out = subprocess.run([sys.executable, "-m", "pip", "download", "--no-index", "--find-links", url,
                              "-d", str(tmp_path / "got"), "good==1.0"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert sha256(tmp_path / "got" / good.name) == sha256(good)
        # A page whose hash does not match the file: pip in the build refuses it.
        bad = server.expose((Wheel(good.name, "0" * 64, good.stat().st_size),))
        out = subprocess.run([sys.executable, "-m", "pip", "download", "--no-index", "--find-links", bad,
                              "-d", str(tmp_path / "got2"), "good==1.0"], capture_output=True, text=True, timeout=120)
        assert out.returncode != 0 and "THESE PACKAGES DO NOT MATCH THE HASHES" in out.stderr


def test_without_the_secret_nothing(house):
    wh, good, _ = house
    with WheelServer(wh) as server:
        url = server.publish(ResolvedWheels("k", (wheel(good),)))
        set_id = url.rstrip("/").rsplit("/", 1)[1]
        for path in ("/", f"/{set_id}/", f"/{set_id}/{good.name}", f"/x{server.secret}/{set_id}/{good.name}",
                     f"/{server.secret[:-1]}/{set_id}/{good.name}", f"/{server.secret}/", f"/{server.secret}/nope/"):
            assert get(server, path)[0] == 404, path


def test_path_traversal(house):
    wh, good, secret = house
    with WheelServer(wh) as server:
        base = server.publish(ResolvedWheels("k", (wheel(good),))).removeprefix(server.base_url)
        for path in (base + "../" + good.name, base + "../../secret.txt", base + "%2e%2e/%2e%2e/secret.txt",
                     base + "..%2f..%2fsecret.txt", base + good.name + "/../../../secret.txt",
                     f"/{server.secret}/../{base.split('/')[2]}/{good.name}", "/../../../etc/passwd"):
            status, body = get(server, path)
            assert status == 404 and b"TOP-SECRET" not in body, path
        # Even a set that names them (a forged resolution) cannot reach outside the folder.
        forged = (Wheel("../secret.txt", sha256(secret), 10),
                  Wheel("../outside-1.0-py3-none-any.whl", sha256(wh.root / "outside-1.0-py3-none-any.whl"), 10))
        forged_base = server.expose(forged).removeprefix(server.base_url)
        for name in ("../secret.txt", "../outside-1.0-py3-none-any.whl", "..%2Foutside-1.0-py3-none-any.whl"):
            assert get(server, forged_base + name)[0] == 404


def test_symlink_to_a_secret_outside_is_not_followed(house):
    wh, good, secret = house
    evil = wh.folder / "evil-1.0-py3-none-any.whl"
    assert os.access(secret, os.R_OK)  # we (root) could read it: only the server's rule stops it
    with WheelServer(wh) as server:
        # A set naming it, with the hash of what it points at: the server alone must refuse it...
        base = server.expose((wheel(good), Wheel(evil.name, sha256(secret), 10)))
        status, body = get(server, base.removeprefix(server.base_url) + evil.name)
        assert status == 404 and b"TOP-SECRET" not in body
        # ...and a build's set is never published with it: the check on use rejects and removes it.
        with pytest.raises(BuildError, match="corrupted"):
            server.publish(ResolvedWheels("k", (wheel(good), Wheel(evil.name, sha256(secret), 10))))
        assert not evil.is_symlink() and secret.read_text() == "TOP-SECRET"


def test_non_package_files_in_the_folder_are_not_served(house):
    wh, good, _ = house
    with WheelServer(wh) as server:
        names = (".netrc", "config.json")
        base = server.expose(tuple(Wheel(n, "0" * 64, 1) for n in names))
        page = get(server, base.removeprefix(server.base_url))[1]
        for name in names:
            status, body = get(server, base.removeprefix(server.base_url) + name)
            assert status == 404 and b"TOP-SECRET" not in body, name
        assert b"TOP-SECRET" not in page


def test_the_socket_opens_at_the_first_publish_only(house):
    """A run whose images all exist publishes nothing: it opens no port and has no thread to stop."""
    wh, good, _ = house
    with WheelServer(wh) as server:
        assert server._server is None
        server.publish(ResolvedWheels("k", (wheel(good),)))
        assert server._server is not None
    assert server._server is None
    with pytest.raises(AssertionError):
        server.base_url  # noqa: B018 - outside the with, nothing is served
