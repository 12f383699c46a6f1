"""Content-addressed tags, build contexts, pip settings and the loopback package server (no engine)."""

from __future__ import annotations

import tarfile
import io
import textwrap
import urllib.request
from pathlib import Path

import pytest

from gpumatrix.config.matrix import expand_cells, parse_matrix
from gpumatrix.engine.client import tar_context
from gpumatrix.resources import templates_dir
from gpumatrix.images.build import explain_build_failure, render_build_context
from gpumatrix.images.sources import PackageServer, PipSettings, build_sources, host_pip_settings

MATRIX = """\
schema_version: 1
bases:
  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
  - {id: cu130, vendor: nvidia, image: nvidia/cuda:13.0.2-runtime-ubuntu24.04, variant: cu130, python: "3.12"}
torch:
  - {version: "2.13.0", variants: [cpu, cu130]}
  - {version: "2.14.1", variants: [cpu, cu130]}
"""


def cells(text=MATRIX, path=Path("/tmp/matrix.yaml")):
    m = parse_matrix(text, path)
    return m, {c.id: c for c in expand_cells(m).cells}


PIP = PipSettings(index_url=None, extra_index_urls=("file:///opt/pypi/simple",), find_links=("/opt/wheels",),
                  cert="/etc/ssl/certs/ca-certificates.crt")


def test_tag_is_stable_and_depends_on_inputs():
    m, c = cells()
    a1 = render_build_context(c["cpu-torch2.13.0"], m, PIP, "sha256:base1")
    a2 = render_build_context(c["cpu-torch2.13.0"], m, PIP, "sha256:base1")
    assert a1.tag == a2.tag and a1.tag.startswith("gpumatrix/cpu:torch2.13.0-")
    assert render_build_context(c["cpu-torch2.14.1"], m, PIP, "sha256:base1").tag != a1.tag
    assert render_build_context(c["cpu-torch2.13.0"], m, PIP, "sha256:base2").tag != a1.tag  # base moved
    other_pip = PipSettings(index_url="https://mirror.example/simple")
    assert render_build_context(c["cpu-torch2.13.0"], m, other_pip, "sha256:base1").tag != a1.tag
    # the CA bundle changes transport, not content: same tag
    no_cert = PipSettings(extra_index_urls=PIP.extra_index_urls, find_links=PIP.find_links)
    assert render_build_context(c["cpu-torch2.13.0"], m, no_cert, "sha256:base1").tag == a1.tag


def test_template_change_changes_tag(tmp_path, monkeypatch):
    m, c = cells()
    for f in Path(templates_dir()).iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("GPUMATRIX_IMAGES_DIR", str(tmp_path))
    before = render_build_context(c["cpu-torch2.13.0"], m, PIP, "sha256:b").tag
    (tmp_path / "install-torch.sh").write_text((tmp_path / "install-torch.sh").read_text() + "\n# changed\n")
    assert render_build_context(c["cpu-torch2.13.0"], m, PIP, "sha256:b").tag != before


def test_vendor_templates_and_small_context():
    m, c = cells()
    cpu = render_build_context(c["cpu-torch2.13.0"], m, PIP, None)
    cuda = render_build_context(c["cu130-torch2.13.0"], m, PIP, None)
    assert b"LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64" in cuda.files["Dockerfile"]
    assert b"/usr/local/cuda" not in cuda.files["Dockerfile"].split(b"ENV", 1)[1].split(b"\n# torch")[0].replace(
        b"/usr/local/cuda/lib64 there", b"")
    assert cpu.build_args == {"BASE_IMAGE": "debian:bookworm-slim", "PYTHON_VERSION": "3.11"}
    assert cuda.torch_requirement == "torch==2.13.0+cu130" and cuda.build_args["PYTHON_VERSION"] == "3.12"
    ctx = tar_context(cpu.files)
    assert len(ctx) < 20_000  # a few KB: no wheels in the context
    names = tarfile.open(fileobj=io.BytesIO(ctx)).getnames()
    assert names == ["Dockerfile", "install-python.sh", "install-torch.sh"]
    assert tar_context(cpu.files) == ctx  # deterministic
    assert cpu.labels["io.gpumatrix.managed"] == "true" and cpu.labels["io.gpumatrix.cell"] == "cpu-torch2.13.0"
    assert cpu.labels["org.opencontainers.image.base.name"] == "debian:bookworm-slim"


def test_wheel_bytes_go_into_the_tag(tmp_path):
    wheel = tmp_path / "torch-2.9.0a0+rocm6.4-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"one")
    text = MATRIX + f"  - {{wheel: {wheel.name}, vendor: cpu}}\n"
    m, c = cells(text, tmp_path / "matrix.yaml")
    cell = c["cpu-torch2.9.0a0+rocm6.4"]
    t1 = render_build_context(cell, m, PIP, None).tag
    wheel.write_bytes(b"two!")
    assert render_build_context(cell, m, PIP, None).tag != t1


def test_host_pip_settings_from_environment():
    s = host_pip_settings({"PIP_INDEX_URL": "https://mirror/simple", "PIP_EXTRA_INDEX_URL": "a b",
                           "PIP_FIND_LINKS": "/w", "PIP_CERT": "/ca.pem"})
    assert s == PipSettings("https://mirror/simple", ("a", "b"), ("/w",), "/ca.pem")


def test_build_sources_order():
    s = build_sources(PIP, "cu130", "https://download.pytorch.org/whl/{variant}", [Path("/wh")], None, None)
    assert s.index_url == "https://pypi.org/simple"
    assert s.extra_index_urls == ("https://download.pytorch.org/whl/cu130", "file:///opt/pypi/simple")
    assert s.find_links == ("/wh", "/opt/wheels")
    assert s.ca_bundle == Path(PIP.cert) and s.needs_server()
    remote = build_sources(PipSettings(), "cpu", None, [], None, None)
    assert not remote.needs_server()


def test_package_server_serves_only_what_it_maps(tmp_path):
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl").write_bytes(b"W" * 10)
    idx = tmp_path / "pypi" / "simple" / "foo"
    idx.mkdir(parents=True)
    (idx / "index.html").write_text('<a href="../../files/foo-1.0-py3-none-any.whl">foo</a>')
    (tmp_path / "pypi" / "files").mkdir()
    (tmp_path / "pypi" / "files" / "foo-1.0-py3-none-any.whl").write_bytes(b"F")
    (tmp_path / "secret.txt").write_text("no")
    ca = tmp_path / "ca.pem"
    ca.write_text("PEM")
    sources = build_sources(PipSettings(extra_index_urls=(f"file://{tmp_path}/pypi/simple",),
                                        find_links=(str(tmp_path / "wheels"),), cert=str(ca)),
                            "cpu", None, [], None, None)
    with PackageServer() as server:
        args = server.build_args(sources)
        def get(url):
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.read()

        assert b"torch-2.13.0+cpu" in get(args["PIP_FIND_LINKS"])
        foo = args["PIP_EXTRA_INDEX_URL"] + "foo/"
        assert b"../../files/" in get(foo)
        assert get(foo + "../../files/foo-1.0-py3-none-any.whl") == b"F"  # relative links resolve
        assert get(args["GPUMATRIX_CA_URL"]) == b"PEM"
        for bad in ("/secret.txt", "/r0/../../secret.txt", "/r0/%2e%2e/secret.txt", "/etc/passwd"):
            with pytest.raises(urllib.error.HTTPError) as err:
                get(server.base_url + bad)
            assert err.value.code == 404
            err.value.close()
        assert server.base_url.startswith("http://127.0.0.1:")


def test_build_failure_reason_is_the_telling_line():
    log = textwrap.dedent("""\
        Step 13/25 : RUN sh /tmp/gpumatrix/install-torch.sh
        \x1b[91mWARNING: Retrying (Retry(total=0)) after connection broken
        ERROR: Could not find a version that satisfies the requirement torch==2.12.0+cpu (from versions: 2.13.0)
        ERROR: No matching distribution found for torch==2.12.0+cpu
        \x1b[0m
        ERROR: The command '/bin/sh -c sh /tmp/gpumatrix/install-torch.sh' returned a non-zero code: 1""").splitlines()
    assert explain_build_failure(log, "x") == "No matching distribution found for torch==2.12.0+cpu"
    assert explain_build_failure(["gpumatrix: python3.11 is not packaged", "ERROR: pip"], "x").startswith("gpumatrix:")
    assert explain_build_failure(["E: Unable to locate package python3.11-venv"], "x").startswith("E: Unable")
    assert explain_build_failure(["nothing useful"], "engine said") == "engine said"
