"""The wheelhouse: the real pip downloads into it, once per host; corruption is caught; credentials stay
with their host. The upstream is a real PEP 503 index on 127.0.0.1 that records every request."""

from __future__ import annotations

import base64
import os
import socket
import time
from pathlib import Path

import pytest

from tests._wheels import IndexServer, make_numpy, make_wheel, pip_env, sha256
import gpumatrix.images.wheelhouse as wheelhouse
from gpumatrix.errors import BuildError
from gpumatrix.images.wheelhouse import Wheelhouse, platform_tags, redact, request_for
from gpumatrix.resources import cache_root


@pytest.fixture
def index(tmp_path, monkeypatch):
    idx = IndexServer()
    src = tmp_path / "src"
    for wheel in (make_wheel(src, "torch", "9.9.9+cpu", requires=("gmtestdep>=1",)),
                  make_wheel(src, "gmtestdep", "1.0", payload="x = 1\n" * 100_000)):
        idx.add(wheel)
    pip_env(monkeypatch, f"{idx.url}/simple")
    yield idx
    idx.close()


def request(requirement="torch==9.9.9+cpu", **kw):
    return request_for(requirement, "3.11", None, "cpu", [], None, **kw)


def test_cache_folder_from_platformdirs_or_env(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUMATRIX_CACHE_DIR", raising=False)
    import platformdirs
    assert cache_root() == Path(platformdirs.user_cache_dir("gpumatrix"))
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(tmp_path))
    assert Wheelhouse().folder == tmp_path / "wheelhouse" / "wheels"


def test_pip_download_argv_targets_the_image():
    args = request(arch="x86_64").pip_args()
    assert args[:2] == ["--only-binary=:all:", "--python-version"] and "3.11" in args
    assert args[2:7] == ["3.11", "--implementation", "cp", "--abi", "cp311"]
    plats = [args[i + 1] for i, a in enumerate(args) if a == "--platform"]
    assert plats == platform_tags("x86_64") and "manylinux_2_28_x86_64" in plats and "manylinux2014_x86_64" in plats
    assert "manylinux_2_29_x86_64" not in plats  # torch itself needs glibc 2.28; nothing newer is assumed
    assert args[-1] == "torch==9.9.9+cpu"
    r = request_for("torch==1+cu130", "3.12", "https://download.pytorch.org/whl/{variant}", "cu130",
                    [Path("/wh")], Path("/ca.pem"))
    assert r.pip_args()[-11:] == ["--extra-index-url", "https://download.pytorch.org/whl/cu130", "--find-links",
                                  "/wh", "--cert", "/ca.pem", "--no-input", "--progress-bar", "off",
                                  "--disable-pip-version-check", "torch==1+cu130"]


def test_pip_says_what_it_downloads_and_its_bytes_as_it_goes(index, tmp_path):
    heard: list[tuple[str, bool]] = []
    resolved = Wheelhouse(tmp_path / "cache", resolve_ttl_s=0).resolve(
        request(), on_activity=lambda text, frequent: heard.append((text, frequent)))
    assert heard[0] == ("resolving torch's wheels with the host's pip", False)
    dep = next(w for w in resolved.wheels if w.name.startswith("gmtestdep"))
    assert any(text.startswith(f"downloading {dep.name}") and not frequent for text, frequent in heard), heard
    # pip >= 24.1 (./dev installs it) prints "Progress N of M" for a file over 512 KB; it is shown as bytes
    # of the total, never kept
    total = f"of {dep.size / 1e6:.1f} MB"
    assert (f"downloading {dep.name}: {dep.size / 1e6:.1f} {total}", True) in heard, heard
    assert not any("Progress" in text for text, _ in heard)


def test_each_wheel_is_downloaded_once_per_host(index, tmp_path):
    root = tmp_path / "cache"
    first = Wheelhouse(root, resolve_ttl_s=0).resolve(request(), tmp_path / "log1")
    assert [w.name for w in first.wheels] == ["gmtestdep-1.0-py3-none-any.whl", "torch-9.9.9+cpu-py3-none-any.whl"]
    assert first.torch_requirement == "torch==9.9.9+cpu"
    assert first.downloads()["fetched_files"] == len(first.wheels) and first.fetched_bytes > 0 and first.reused_bytes == 0
    assert {w.sha256 for w in first.wheels} == {sha256(root / "wheels" / w.name) for w in first.wheels}
    # Another run (another process, the resolution expired): pip asks the index, downloads nothing.
    again = Wheelhouse(root, resolve_ttl_s=0).resolve(request(), tmp_path / "log2")
    assert again.wheels == first.wheels and again.fetched_bytes == 0 and again.reused_bytes == first.fetched_bytes
    assert index.hits("torch-9.9.9+cpu-py3-none-any.whl") == 1 and index.hits("gmtestdep-1.0-py3-none-any.whl") == 1
    assert not (tmp_path / "log2").exists()  # pip's output is kept only when it fails
    # Within the TTL the resolution itself is reused: pip is not even started.
    before = len(index.requests)
    Wheelhouse(root).resolve(request())
    assert len(index.requests) == before
    assert sorted(p.name for p in (root / "wheels").iterdir()) == [w.name for w in first.wheels]  # only wheels


def test_companions_are_resolved_with_the_requirement_in_one_pip_run(index, tmp_path):
    """A cell's NumPy: pip picks it with torch, for the image's Python; it is part of the resolution's key."""
    index.add(make_numpy(tmp_path / "src-np"))
    plain, with_numpy = request(), request(companions=("numpy<3",))
    assert with_numpy.pip_args()[-2:] == ["torch==9.9.9+cpu", "numpy<3"] and plain.key() != with_numpy.key()
    resolved = Wheelhouse(tmp_path / "cache", resolve_ttl_s=0).resolve(with_numpy)
    assert [w.name for w in resolved.wheels] == ["gmtestdep-1.0-py3-none-any.whl", "numpy-2.0.0-py3-none-any.whl",
                                                 "torch-9.9.9+cpu-py3-none-any.whl"]
    assert resolved.pin("numpy") == "numpy==2.0.0" and resolved.pin("gmtestdep") == "gmtestdep==1.0"
    assert resolved.downloads()["files"] == resolved.fetched_files == len(resolved.wheels)
    with pytest.raises(BuildError, match="holds no numpy wheel"):
        Wheelhouse(tmp_path / "cache2", resolve_ttl_s=0).resolve(plain).pin("numpy")


def test_a_new_upstream_dependency_is_a_new_resolution(index, tmp_path):
    root = tmp_path / "cache"
    first = Wheelhouse(root, resolve_ttl_s=0).resolve(request())
    index.add(make_wheel(tmp_path / "src2", "gmtestdep", "1.1"))
    second = Wheelhouse(root, resolve_ttl_s=0).resolve(request())
    assert "gmtestdep-1.1-py3-none-any.whl" in [w.name for w in second.wheels]
    assert second.describe() != first.describe() and second.fetched_files == 1


@pytest.mark.slow  # runs pip download three times (3 s)
def test_truncated_wheel_is_detected_and_fetched_again(index, tmp_path):
    root = tmp_path / "cache"
    good = Wheelhouse(root, resolve_ttl_s=0).resolve(request())
    dep = root / "wheels" / "gmtestdep-1.0-py3-none-any.whl"
    original = sha256(dep)
    with open(dep, "r+b") as f:  # a killed copy / full disk: a short file under the right name
        f.truncate(1000)
    again = Wheelhouse(root, resolve_ttl_s=0).resolve(request())
    assert sha256(dep) == original and again.wheels == good.wheels
    assert index.hits(dep.name) == 2  # fetched again, not served forever


def test_same_size_corruption_is_caught_on_use(index, tmp_path):
    root = tmp_path / "cache"
    wh = Wheelhouse(root)
    resolved = wh.resolve(request())
    dep = root / "wheels" / "gmtestdep-1.0-py3-none-any.whl"
    st = dep.stat()
    data = bytearray(dep.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte, size and mtime kept: only a hash can tell
    dep.write_bytes(bytes(data))
    os.utime(dep, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert Wheelhouse(root).resolve(request()).wheels == resolved.wheels  # cheap checks pass...
    assert wh.verify(resolved) == [dep.name]  # ...the hash on use does not: removed and fetched again
    assert sha256(dep) == dict((w.name, w.sha256) for w in resolved.wheels)[dep.name]
    assert index.hits(dep.name) == 2 and wh.verify(resolved) == []


@pytest.mark.slow  # runs pip download three times (3 s)
def test_local_wheel_rebuilt_under_the_same_name_is_picked_up(tmp_path, monkeypatch):
    pip_env(monkeypatch)  # no index at all: everything from the local folder
    src = tmp_path / "mine"
    wheel = make_wheel(src, "torch", "9.9.9a0+rocm6.4", payload="one")
    root = tmp_path / "cache"
    one = Wheelhouse(root, resolve_ttl_s=0).resolve(request(str(wheel)))
    make_wheel(src, "torch", "9.9.9a0+rocm6.4", payload="two, rebuilt")
    two = Wheelhouse(root, resolve_ttl_s=0).resolve(request(str(wheel)))
    assert one.torch.sha256 != two.torch.sha256 == sha256(wheel)
    assert two.torch_requirement == "torch==9.9.9a0+rocm6.4"


def test_pip_failure_is_a_build_error_with_the_telling_line(index, tmp_path):
    log = tmp_path / "cell.build.log"
    with pytest.raises(BuildError) as info:
        Wheelhouse(tmp_path / "cache").resolve(request("torch==9.9.8+cpu"), log)
    assert info.value.reason == "No matching distribution found for torch==9.9.8+cpu"
    assert "No matching distribution found" in log.read_text() and "pip download" in log.read_text()


def test_credentials_go_only_to_their_own_host(tmp_path, monkeypatch):
    """An index with credentials whose pages link to files on another host: pip (on the host) sends the
    credentials to the index only, and nothing gpumatrix writes holds them."""
    files = IndexServer()
    idx = IndexServer(auth="user:TOKEN123")
    idx.file_host = files
    try:
        for wheel in (make_wheel(tmp_path / "src", "torch", "9.9.9+cpu", requires=("gmtestdep",)),
                      make_wheel(tmp_path / "src", "gmtestdep", "1.0")):
            idx.add(wheel)
        pip_env(monkeypatch, f"http://user:TOKEN123@127.0.0.1:{idx.port}/simple")
        root = tmp_path / "cache"
        resolved = Wheelhouse(root).resolve(request())
        assert len(resolved.wheels) == 2
        token = "Basic " + base64.b64encode(b"user:TOKEN123").decode()
        assert idx.requests and all(auth == token for _, auth in idx.requests if _ != "/")
        assert files.hits("torch-9.9.9+cpu-py3-none-any.whl") == 1
        assert all(auth is None for _, auth in files.requests)  # never sent to the file host
        for path in root.rglob("*.json"):
            assert "TOKEN123" not in path.read_text(errors="replace"), path
    finally:
        files.close()
        idx.close()


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") else address


def test_pip_ignores_a_plain_http_index_off_loopback(tmp_path, monkeypatch):
    """What pip does for us: an http index on a non-loopback host is ignored, so its credentials are
    never sent in clear (unless the user lists it in trusted-host)."""
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this host has no non-loopback IPv4 address")
    idx = IndexServer(host=address)
    try:
        idx.add(make_wheel(tmp_path / "src", "torch", "9.9.9+cpu"))
        pip_env(monkeypatch, f"http://user:TOKEN123@{address}:{idx.port}/simple")
        log = tmp_path / "log"
        with pytest.raises(BuildError, match="No matching distribution"):
            Wheelhouse(tmp_path / "cache").resolve(request(), log)
        assert idx.requests == [] and "not a trusted or secure host" in log.read_text()
        assert "TOKEN123" not in log.read_text()
    finally:
        idx.close()


def test_plain_http_index_in_the_matrix_is_refused():
    with pytest.raises(BuildError, match="plain http"):
        request_for("torch==1", "3.11", "http://user:TOKEN@mirror.example/{variant}", "cpu", [], None)
    try:
        request_for("torch==1", "3.11", "http://user:TOKEN@mirror.example/{variant}", "cpu", [], None)
    except BuildError as err:
        assert "TOKEN" not in str(err)
    request_for("torch==1", "3.11", "http://127.0.0.1:8080/{variant}", "cpu", [], None)  # loopback is fine
    assert redact("see https://u:s3cr3t@h/simple and http://x@y/") == "see https://u:****@h/simple and http://x@y/"


def test_host_constraints_do_not_pin_images(index, tmp_path, monkeypatch):
    """The host's pip.conf applies (its index here), but not its constraints: they pin the host's own
    environment. A constraint that excludes the cell's torch changes nothing."""
    conf = tmp_path / "pip.conf"
    (tmp_path / "constraints.txt").write_text("torch<9\n")
    conf.write_text(f"[global]\nindex-url = {index.url}/simple\nconstraint = {tmp_path / 'constraints.txt'}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.delenv("PIP_INDEX_URL")
    resolved = Wheelhouse(tmp_path / "cache").resolve(request())
    assert resolved.torch_requirement == "torch==9.9.9+cpu"


def test_new_and_corrupted_wheels_in_one_resolution(index, tmp_path):
    """pip saves a new wheel and finds a corrupted one in the same run: both end up right."""
    root = tmp_path / "cache"
    Wheelhouse(root, resolve_ttl_s=0).resolve(request())
    dep = root / "wheels" / "gmtestdep-1.0-py3-none-any.whl"
    original = sha256(dep)
    (root / "wheels" / "torch-9.9.9+cpu-py3-none-any.whl").unlink()  # gone: pip saves it anew
    dep.write_bytes(dep.read_bytes()[:500])  # truncated: must be fetched again
    again = Wheelhouse(root, resolve_ttl_s=0).resolve(request())
    assert sha256(dep) == original and len(again.wheels) == 2
    assert again.fetched_files == 2 and index.hits(dep.name) == 2


def _new_process(monkeypatch):
    """What a new run sees: no hash remembered in memory."""
    monkeypatch.setattr(wheelhouse, "_sha_cache", {})


def test_a_local_wheels_hash_is_remembered_across_runs_while_the_file_is_unchanged(tmp_path, monkeypatch):
    wheel = make_wheel(tmp_path / "mine", "torch", "9.9.9+cpu", payload="one")
    house = Wheelhouse(tmp_path / "cache")
    monkeypatch.setattr(wheelhouse, "SETTLED_S", 0.02)
    time.sleep(0.05)  # the file is older than SETTLED_S: its hash may be remembered
    first = house.source_sha256(wheel)
    assert first == sha256(wheel) and len(list((tmp_path / "cache" / "sources").iterdir())) == 1
    _new_process(monkeypatch)
    hashed = []
    real_hash = wheelhouse._hash_stream
    monkeypatch.setattr(wheelhouse, "_hash_stream", lambda f: hashed.append(f) or "not read")
    assert Wheelhouse(tmp_path / "cache").source_sha256(wheel) == first and hashed == []  # the record stands

    # Rebuilt under the same name, same size, its mtime set back: its ctime moved, so it is read again.
    st = wheel.stat()
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 0xFF
    wheel.write_bytes(bytes(data))
    os.utime(wheel, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert wheel.stat().st_size == st.st_size and wheel.stat().st_mtime_ns == st.st_mtime_ns
    _new_process(monkeypatch)
    monkeypatch.setattr(wheelhouse, "_hash_stream", real_hash)
    again = Wheelhouse(tmp_path / "cache").source_sha256(wheel)
    assert again == sha256(wheel) != first


def test_a_file_changed_just_now_is_hashed_but_not_remembered(tmp_path, monkeypatch):
    """Within SETTLED_S of its last change a file may change again in the same timestamp tick, unseen."""
    wheel = make_wheel(tmp_path / "mine", "torch", "9.9.9+cpu", payload="one")
    monkeypatch.setattr(wheelhouse, "SETTLED_S", 3600.0)  # made a moment ago, whatever the machine's load
    assert Wheelhouse(tmp_path / "cache").source_sha256(wheel) == sha256(wheel)
    assert not (tmp_path / "cache" / "sources").exists()
