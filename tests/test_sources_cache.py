"""The package server as a caching proxy: real pip against a real (local) upstream index, no engine.

The upstream is an ``http.server`` on 127.0.0.1 that counts every request, so "downloaded once"
is a number the tests can check.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import http.server
import io
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from gpumatrix.images import sources
from gpumatrix.images.sources import PackageServer, PipSettings, build_sources, wheel_cache_dir


def make_wheel(name: str, version: str) -> bytes:
    """A minimal valid wheel: pip download reads its METADATA."""
    dist = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files = {f"{name}/__init__.py": "", f"{dist}/METADATA": metadata,
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{path},,\n" for path in files) + f"{dist}/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, text in {**files, f"{dist}/RECORD": record}.items():
            zf.writestr(path, text)
    return buf.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Upstream:
    """A tiny PEP 503 index on 127.0.0.1 that counts requests per path and can serve slowly."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.hits: collections.Counter[str] = collections.Counter()
        self.auth: list[str | None] = []
        self.delay_per_chunk = 0.0
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                upstream.hits[path] += 1
                upstream.auth.append(self.headers.get("Authorization"))
                body = upstream.files.get(path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if path.endswith("/") else "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(0, len(body), 64 << 10):
                        self.wfile.write(body[i:i + (64 << 10)])
                        time.sleep(upstream.delay_per_chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_project(self, name: str, links: list[str]) -> None:
        self.files[f"/simple/{name}/"] = ("<!DOCTYPE html><html><body>\n" + "\n".join(links)
                                          + "\n</body></html>\n").encode()

    def file_hits(self) -> dict[str, int]:
        return {path: n for path, n in self.hits.items() if path.startswith("/files/")}


@pytest.fixture
def upstream():
    up = Upstream()
    wheel, old = make_wheel("foo", "1.0"), make_wheel("foo", "0.9")
    metadata = b"Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n"
    up.files.update({"/files/foo-1.0-py3-none-any.whl": wheel, "/files/foo-1.0-py3-none-any.whl.metadata": metadata,
                     "/files/foo-0.9-py3-none-any.whl": old})
    up.add_project("foo", [
        # absolute, with PEP 658 metadata and requires-python (escaped, as PyPI writes it)
        f'<a href="{up.url}/files/foo-1.0-py3-none-any.whl#sha256={sha(wheel)}" data-requires-python="&gt;=3.7" '
        f'data-dist-info-metadata="sha256={sha(metadata)}">foo-1.0-py3-none-any.whl</a><br/>',
        # relative to the page
        f'<a href="../../files/foo-0.9-py3-none-any.whl#sha256={sha(old)}">foo-0.9-py3-none-any.whl</a><br/>',
    ])
    bad = make_wheel("bar", "1.0")
    up.files["/files/bar-1.0-py3-none-any.whl"] = bad
    up.add_project("bar", [f'<a href="{up.url}/files/bar-1.0-py3-none-any.whl#sha256={"0" * 64}">bar</a>'])
    yield up
    up.close()


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch, tmp_path):
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(tmp_path / "default-cache"))


def remote_sources(*indexes: str):
    return build_sources(PipSettings(index_url=indexes[0], extra_index_urls=indexes[1:]), "cpu", None, [], None, None)


def pip_download(index_url: str, dest: Path, requirement: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and "proxy" not in k.lower()}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--retries", "0",
                           "--index-url", index_url, "-d", str(dest), requirement],
                          env=env, capture_output=True, text=True, timeout=120)


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read()


def http_status(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read()


def cached_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


def test_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(tmp_path / "g"))
    assert wheel_cache_dir() == tmp_path / "g" / "gpumatrix" / "wheels"
    monkeypatch.delenv("GPUMATRIX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert wheel_cache_dir() == tmp_path / "x" / "gpumatrix" / "wheels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert wheel_cache_dir() == Path.home() / ".cache" / "gpumatrix" / "wheels"


def test_build_args_proxy_remote_indexes_per_token(tmp_path, upstream):
    local = tmp_path / "pypi" / "simple"
    local.mkdir(parents=True)
    srcs = build_sources(PipSettings(index_url="https://user:s%40cret@mirror.example/simple",
                                     extra_index_urls=(f"file://{local}", f"{upstream.url}/simple"),
                                     find_links=("https://example.org/links/",)), "cpu", None, [], None, None)
    with PackageServer(cache_dir=tmp_path / "cache") as server:
        args = server.build_args(srcs, token="cu128-torch2.9.1+cu128")
        base = server.base_url
        assert args["PIP_INDEX_URL"] == f"{base}/t/cu128-torch2.9.1%2Bcu128/proxy/0/"
        extra = args["PIP_EXTRA_INDEX_URL"].split()
        assert extra[0].startswith(f"{base}/r") and extra[1] == f"{base}/t/cu128-torch2.9.1%2Bcu128/proxy/1/"
        assert args["PIP_FIND_LINKS"] == "https://example.org/links/"  # remote find-links stay direct
        assert "cret" not in " ".join(args.values())  # credentials stay on the host
        assert server.build_args(srcs)["PIP_INDEX_URL"] == f"{base}/proxy/0/"  # no token: same route
    with PackageServer(proxy_remote=False) as direct:
        assert direct.build_args(srcs)["PIP_INDEX_URL"] == srcs.index_url
    # the content hash does not see the proxy
    assert srcs.describe()["index_url"] == "https://user:s%40cret@mirror.example/simple"


def test_credentials_in_index_url_become_a_header(tmp_path, upstream):
    authed = upstream.url.replace("http://", "http://alice:s%40cret@") + "/simple"
    with PackageServer(cache_dir=tmp_path / "cache") as server:
        index = server.build_args(remote_sources(authed), token="a")["PIP_INDEX_URL"]
        page = get(index + "foo/").decode()
        assert "alice" not in page
        link = page.split('href="')[1].split("#")[0]
        get(link)
    assert upstream.auth == ["Basic " + base64.b64encode(b"alice:s@cret").decode()] * 2


def test_pip_downloads_each_file_once(tmp_path, upstream):
    cache = tmp_path / "cache"
    with PackageServer(cache_dir=cache) as server:
        a = server.build_args(remote_sources(f"{upstream.url}/simple/"), token="cell-a")["PIP_INDEX_URL"]
        b = server.build_args(remote_sources(f"{upstream.url}/simple/"), token="cell-b")["PIP_INDEX_URL"]
        first = pip_download(a, tmp_path / "d1", "foo==1.0")
        assert first.returncode == 0, first.stdout + first.stderr
        fetched = upstream.file_hits()
        assert fetched.get("/files/foo-1.0-py3-none-any.whl") == 1 and set(fetched.values()) == {1}
        second = pip_download(b, tmp_path / "d2", "foo==1.0")
        assert second.returncode == 0, second.stdout + second.stderr
        assert upstream.file_hits() == fetched  # nothing fetched upstream the second time
        assert upstream.hits["/simple/foo/"] == 1  # the page too, within the server's lifetime
        wheel = upstream.files["/files/foo-1.0-py3-none-any.whl"]
        assert (tmp_path / "d1" / "foo-1.0-py3-none-any.whl").read_bytes() == wheel
        assert (tmp_path / "d2" / "foo-1.0-py3-none-any.whl").read_bytes() == wheel

        size = sum(len(upstream.files[path]) for path in fetched)
        assert server.traffic("cell-a") == {"upstream_bytes": size, "cache_bytes": 0, "files": len(fetched)}
        assert server.traffic("cell-b") == {"upstream_bytes": 0, "cache_bytes": size, "files": len(fetched)}
        assert server.traffic() == {"upstream_bytes": size, "cache_bytes": size, "files": 2 * len(fetched)}
        assert server.traffic("never-built") == {"upstream_bytes": 0, "cache_bytes": 0, "files": 0}

        # the relative link resolves against the upstream page and is cached the same way
        old = pip_download(b, tmp_path / "d3", "foo==0.9")
        assert old.returncode == 0, old.stdout + old.stderr
        assert upstream.hits["/files/foo-0.9-py3-none-any.whl"] == 1


def test_page_is_rewritten_keeping_hashes_and_attributes(tmp_path, upstream):
    with PackageServer(cache_dir=tmp_path / "cache") as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="t1")["PIP_INDEX_URL"]
        page = get(index + "foo/").decode()
    wheel = upstream.files["/files/foo-1.0-py3-none-any.whl"]
    assert f"{upstream.url}/files" not in page and "../../files" not in page
    assert f'href="{server.base_url}/t/t1/files/' in page
    assert f"/foo-1.0-py3-none-any.whl#sha256={sha(wheel)}\"" in page
    assert "/foo-0.9-py3-none-any.whl#sha256=" in page
    assert 'data-requires-python="&gt;=3.7"' in page and 'data-dist-info-metadata="sha256=' in page


def test_hash_mismatch_fails_and_caches_nothing(tmp_path, upstream):
    cache = tmp_path / "cache"
    with PackageServer(cache_dir=cache) as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="c")["PIP_INDEX_URL"]
        result = pip_download(index, tmp_path / "d", "bar==1.0")
        assert result.returncode != 0
        assert "502" in result.stdout + result.stderr
        assert not (tmp_path / "d" / "bar-1.0-py3-none-any.whl").exists()
        assert cached_files(cache) == []  # no entry, no temporary file left
        link = get(index + "bar/").decode().split('href="')[1].split('"')[0]
        status, body = http_status(link)
        assert status == 502 and b"sha256 mismatch" in body


def test_hash_mismatch_while_streaming_truncates_the_response(tmp_path, upstream, monkeypatch):
    monkeypatch.setattr(sources, "_HEADER_GRACE_S", 0.0)  # stream at once, as for a 3 GB wheel
    upstream.files["/files/bar-1.0-py3-none-any.whl"] = os.urandom(1 << 20)
    upstream.delay_per_chunk = 0.01
    cache = tmp_path / "cache"
    with PackageServer(cache_dir=cache) as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="c")["PIP_INDEX_URL"]
        link = get(index + "bar/").decode().split('href="')[1].split('"')[0]
        with urllib.request.urlopen(link, timeout=10) as resp:
            assert resp.status == 200
            with pytest.raises(Exception) as err:  # http.client.IncompleteRead: never the whole file
                resp.read()
        assert "IncompleteRead" in type(err.value).__name__
        deadline = time.monotonic() + 5
        while cached_files(cache) and time.monotonic() < deadline:  # the fetch thread removes its temp file
            time.sleep(0.05)
        assert cached_files(cache) == []


def test_only_files_from_proxied_pages_are_fetched(tmp_path, upstream):
    with PackageServer(cache_dir=tmp_path / "cache") as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="c")["PIP_INDEX_URL"]
        base = server.base_url
        secret = f"{upstream.url}/files/foo-1.0-py3-none-any.whl"
        enc = base64.urlsafe_b64encode(secret.encode()).decode().rstrip("=")
        assert http_status(f"{base}/t/c/files/{enc}/foo-1.0-py3-none-any.whl")[0] == 403  # no page seen yet
        get(index + "foo/")
        assert http_status(f"{base}/t/c/files/{enc}/foo-1.0-py3-none-any.whl")[0] == 200
        other = base64.urlsafe_b64encode(b"http://169.254.169.254/latest/meta-data").decode().rstrip("=")
        assert http_status(f"{base}/files/{other}/meta-data")[0] == 403
        assert http_status(f"{base}/t/c/files/{enc}/other-name.whl")[0] == 403
        assert http_status(f"{base}/files/!!notbase64/x.whl")[0] == 404
        assert http_status(f"{base}/proxy/7/foo/")[0] == 404  # no such upstream
        assert http_status(f"{base}/proxy/0/..%2F..%2Fetc/")[0] == 404  # not a project name
    assert upstream.file_hits() == {"/files/foo-1.0-py3-none-any.whl": 1}


def test_upstream_errors_are_clean(tmp_path, upstream):
    with PackageServer(cache_dir=tmp_path / "cache", upstream_timeout_s=5) as server:
        dead = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
        dead_url = f"http://127.0.0.1:{dead.server_address[1]}/simple"
        dead.server_close()  # nothing listens there now
        args = server.build_args(remote_sources(f"{upstream.url}/simple", dead_url), token="c")
        ok, gone = args["PIP_INDEX_URL"], args["PIP_EXTRA_INDEX_URL"]
        assert http_status(ok + "nope/")[0] == 404  # upstream 404: pip goes on to the other indexes
        status, body = http_status(gone + "foo/")
        assert status == 502 and b"could not fetch" in body
        assert http_status(ok + "foo/")[0] == 200  # the server is still there
        # a file whose upstream vanished after its page was read
        link = get(ok + "foo/").decode().split('href="')[2].split('"')[0]
        del upstream.files["/files/foo-0.9-py3-none-any.whl"]
        assert http_status(link)[0] == 404


def test_concurrent_requests_download_once(tmp_path, upstream, monkeypatch):
    monkeypatch.setattr(sources, "_HEADER_GRACE_S", 0.0)  # followers stream while the download runs
    big = os.urandom(3 << 20)
    upstream.files["/files/big-1.0-py3-none-any.whl"] = big
    upstream.add_project("big", [f'<a href="{upstream.url}/files/big-1.0-py3-none-any.whl#sha256={sha(big)}">b</a>'])
    upstream.delay_per_chunk = 0.01  # ~0.5 s, so the requests overlap
    with PackageServer(cache_dir=tmp_path / "cache") as server:
        links = []
        for i in range(8):
            index = server.build_args(remote_sources(f"{upstream.url}/simple"), token=f"cell{i}")["PIP_INDEX_URL"]
            links.append(get(index + "big/").decode().split('href="')[1].split("#")[0])
        results: dict[int, bytes] = {}

        def fetch(i: int) -> None:
            results[i] = get(links[i])

        threads = [threading.Thread(target=fetch, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(results) == 8 and all(body == big for body in results.values())
        assert upstream.file_hits() == {"/files/big-1.0-py3-none-any.whl": 1}
        total = server.traffic()
        assert total == {"upstream_bytes": len(big), "cache_bytes": 7 * len(big), "files": 8}
        assert sorted(server.traffic(f"cell{i}")["upstream_bytes"] for i in range(8)) == [0] * 7 + [len(big)]


def test_cache_survives_a_new_server(tmp_path, upstream):
    cache = tmp_path / "cache"
    with PackageServer(cache_dir=cache) as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="run1")["PIP_INDEX_URL"]
        assert pip_download(index, tmp_path / "d1", "foo==1.0").returncode == 0
    fetched = upstream.file_hits()
    assert fetched and cached_files(cache)
    with PackageServer(cache_dir=cache) as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="run2")["PIP_INDEX_URL"]
        result = pip_download(index, tmp_path / "d2", "foo==1.0")
        assert result.returncode == 0, result.stdout + result.stderr
        assert server.traffic("run2")["upstream_bytes"] == 0 and server.traffic("run2")["cache_bytes"] > 0
    assert upstream.file_hits() == fetched
    assert upstream.hits["/simple/foo/"] == 2  # pages are never kept across runs


def test_unwritable_cache_is_a_clear_502(tmp_path, upstream):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with PackageServer(cache_dir=blocker / "wheels") as server:
        index = server.build_args(remote_sources(f"{upstream.url}/simple"), token="c")["PIP_INDEX_URL"]
        link = get(index + "foo/").decode().split('href="')[1].split('"')[0]
        status, body = http_status(link)
        assert status == 502 and b"GPUMATRIX_CACHE_DIR" in body
        assert http_status(index + "foo/")[0] == 200  # the server is still there
