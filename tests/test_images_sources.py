"""Content-addressed tags over the exact wheels, build contexts and build-failure reasons (no engine).

The wheels are resolved by the real pip into a real wheelhouse, from a local ``wheelhouse:`` folder.
"""

from __future__ import annotations

import io
import tarfile
import textwrap
from pathlib import Path

import pytest

from tests._wheels import make_numpy, make_wheel, pip_env
from tests.isolation import SESSION
from gpumatrix.config.matrix import expand_cells, parse_matrix
from gpumatrix.engine.client import tar_context
from gpumatrix.errors import BuildError
from gpumatrix.images.build import explain_build_failure, render_build_context
from gpumatrix.images.naming import NAMESPACE_BUILD_ARG, NAMESPACE_LABEL
from gpumatrix.images.wheelhouse import Wheelhouse
from gpumatrix.resources import templates_dir


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """A matrix whose torch 9.9.9 comes from a local wheelhouse folder, released and as a local wheel."""
    pip_env(monkeypatch)
    src = tmp_path / "wheels"
    torch = make_wheel(src, "torch", "9.9.9+cpu", requires=("gmtestdep",))
    make_wheel(src, "gmtestdep", "1.0")
    make_wheel(src, "torch", "9.9.8+cpu")
    make_numpy(src)
    text = textwrap.dedent(f"""\
        schema_version: 1
        index_url: null
        wheelhouse: [wheels]
        bases:
          - {{id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}}
          - {{id: cu130, vendor: nvidia, image: nvidia/cuda:13.0.2-runtime-ubuntu24.04, variant: cu130}}
        torch:
          - {{version: "9.9.9", variants: [cpu]}}
          - {{version: "9.9.8", variants: [cpu]}}
          - {{wheel: wheels/{torch.name}, vendor: cpu}}
        """)
    (tmp_path / "matrix.yaml").write_text(text)
    matrix = parse_matrix(text, tmp_path / "matrix.yaml")
    cells = {c.id: c for c in expand_cells(matrix).cells}
    return matrix, cells, Wheelhouse(tmp_path / "cache", resolve_ttl_s=0), src


def test_tag_is_stable_and_depends_on_inputs(setup):
    m, c, wh, _ = setup
    a1 = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:base1")
    a2 = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:base1")
    # the test session's namespace (GPUMATRIX_IMAGE_NAMESPACE), never the user's gpumatrix/
    assert a1.tag == a2.tag and a1.tag.startswith(f"{SESSION.namespace}/cpu:torch9.9.9-")
    assert render_build_context(c["cpu-torch9.9.8"], m, wh, "sha256:base1").tag != a1.tag
    assert render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:base2").tag != a1.tag  # base moved
    assert [w[0] for w in a1.wheels.describe()] == ["gmtestdep-1.0-py3-none-any.whl", "numpy-2.0.0-py3-none-any.whl",
                                                    "torch-9.9.9+cpu-py3-none-any.whl"]
    assert a1.build_args == {"BASE_IMAGE": "debian:bookworm-slim", "PYTHON_VERSION": "3.11",
                             "TORCH_REQUIREMENT": "torch==9.9.9+cpu", "NUMPY_REQUIREMENT": "numpy==2.0.0"}


def test_every_image_gets_the_numpy_pip_resolves_with_its_torch(setup):
    """torch imports NumPy without requiring it: the request asks for it, the build installs the resolved one."""
    m, c, wh, src = setup
    recipe = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b")
    assert recipe.wheels.request is not None and recipe.wheels.request.companions == ("numpy",)
    assert recipe.wheels.request.pip_args()[-2:] == ["torch==9.9.9+cpu", "numpy"]  # one pip run resolves both
    assert recipe.build_args["NUMPY_REQUIREMENT"] == recipe.wheels.pin("numpy") == "numpy==2.0.0"
    # a newer NumPy for this Python is a new resolution, so a new tag (at the next run)
    make_numpy(src, "2.1.0")
    after = render_build_context(c["cpu-torch9.9.9"], m, Wheelhouse(wh.root, resolve_ttl_s=0), "sha256:b")
    assert after.build_args["NUMPY_REQUIREMENT"] == "numpy==2.1.0" and after.tag != recipe.tag
    for template in ("cpu.Dockerfile", "cuda.Dockerfile", "rocm.Dockerfile"):
        assert "ARG NUMPY_REQUIREMENT" in (Path(templates_dir()) / template).read_text()
    script = (Path(templates_dir()) / "install-torch.sh").read_text()
    assert '"$TORCH_REQUIREMENT" "$NUMPY_REQUIREMENT"' in script


def test_a_resolution_without_numpy_is_refused(setup):
    m, c, wh, src = setup
    (src / "numpy-2.0.0-py3-none-any.whl").unlink()
    with pytest.raises(BuildError, match=r"No matching distribution found for numpy"):
        render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b")


def test_the_namespace_names_and_labels_the_image_but_is_not_hashed(setup):
    m, c, wh, _ = setup
    ours = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b", namespace="gpumatrix")
    team = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b", namespace="ci/team-a")
    assert ours.tag.startswith("gpumatrix/cpu:torch9.9.9-") and team.tag.startswith("ci/team-a/cpu:torch9.9.9-")
    assert ours.tag.split(":")[1] == team.tag.split(":")[1] and ours.inputs_hash == team.inputs_hash
    assert ours.labels[NAMESPACE_LABEL] == "gpumatrix" and team.labels[NAMESPACE_LABEL] == "ci/team-a"
    assert NAMESPACE_BUILD_ARG not in team.build_args and team.namespace == "ci/team-a"  # given at build time
    for template in ("cpu.Dockerfile", "cuda.Dockerfile", "rocm.Dockerfile"):
        lines = (Path(templates_dir()) / template).read_text().splitlines()
        after_from = [x for x in lines[[i for i, x in enumerate(lines) if x.startswith("FROM ")][0] + 1:]
                      if x and not x.startswith("#")]
        # the first instructions after FROM: every layer of the build carries the namespace label
        assert after_from[:2] == [f"ARG {NAMESPACE_BUILD_ARG}=gpumatrix",
                                  f"LABEL {NAMESPACE_LABEL}=${{{NAMESPACE_BUILD_ARG}}}"], template


def test_same_wheels_same_base_one_tag(setup):
    """A release and the same file given as a local wheel install the same bytes: one image."""
    m, c, wh, _ = setup
    release = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b")
    local = render_build_context(c["cpu-torch9.9.9+cpu"], m, wh, "sha256:b")
    assert release.cell_id != local.cell_id and release.tag == local.tag
    assert release.torch_requirement == local.torch_requirement == "torch==9.9.9+cpu"


def test_sources_are_not_in_the_tag_but_wheel_bytes_are(setup, tmp_path):
    m, c, wh, src = setup
    before = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b").tag
    # The same files from another folder: same tag (the tag names bytes, not places).
    moved = tmp_path / "elsewhere"
    src.rename(moved)
    m2 = parse_matrix((tmp_path / "matrix.yaml").read_text().replace("[wheels]", "[elsewhere]").replace(
        "wheel: wheels/", "wheel: elsewhere/"), tmp_path / "matrix.yaml")
    assert render_build_context(c["cpu-torch9.9.9"], m2, wh, "sha256:b").tag == before
    # A new release of a dependency upstream: a new tag (at the next run: a run resolves each request once).
    make_wheel(moved, "gmtestdep", "1.1")
    assert render_build_context(c["cpu-torch9.9.9"], m2, wh, "sha256:b").tag == before
    after = render_build_context(c["cpu-torch9.9.9"], m2, Wheelhouse(wh.root, resolve_ttl_s=0), "sha256:b")
    assert after.tag != before and "gmtestdep-1.1-py3-none-any.whl" in [w[0] for w in after.wheels.describe()]


def test_local_wheel_bytes_go_into_the_tag(setup):
    m, c, wh, src = setup
    cell = c["cpu-torch9.9.9+cpu"]
    t1 = render_build_context(cell, m, wh, None).tag
    make_wheel(src, "torch", "9.9.9+cpu", requires=("gmtestdep",), payload="rebuilt")
    assert render_build_context(cell, m, wh, None).tag != t1


def test_template_change_changes_tag(setup, tmp_path, monkeypatch):
    m, c, wh, _ = setup
    folder = tmp_path / "templates"
    folder.mkdir()
    for f in Path(templates_dir()).iterdir():
        if f.is_file():
            (folder / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("GPUMATRIX_IMAGES_DIR", str(folder))
    before = render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b").tag
    (folder / "install-torch.sh").write_text((folder / "install-torch.sh").read_text() + "\n# changed\n")
    assert render_build_context(c["cpu-torch9.9.9"], m, wh, "sha256:b").tag != before


def test_vendor_templates_and_small_context(setup):
    m, c, wh, _ = setup
    cpu = render_build_context(c["cpu-torch9.9.9"], m, wh, None)
    cuda_template = (Path(templates_dir()) / "cuda.Dockerfile").read_bytes()
    assert b"LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64" in cuda_template
    assert b"/usr/local/cuda" not in cuda_template.split(b"ENV", 1)[1].split(b"\n# torch")[0].replace(
        b"/usr/local/cuda/lib64 there", b"")
    ctx = tar_context(cpu.files)
    assert len(ctx) < 20_000  # a few KB: no wheels in the context
    names = tarfile.open(fileobj=io.BytesIO(ctx)).getnames()
    assert names == ["Dockerfile", "install-python.sh", "install-torch.sh"]
    assert tar_context(cpu.files) == ctx  # deterministic
    assert cpu.labels["io.gpumatrix.managed"] == "true" and cpu.labels["io.gpumatrix.cell"] == "cpu-torch9.9.9"
    assert cpu.labels["org.opencontainers.image.base.name"] == "debian:bookworm-slim"
    for template in ("cpu.Dockerfile", "cuda.Dockerfile", "rocm.Dockerfile"):
        text = (Path(templates_dir()) / template).read_text()
        assert "ARG WHEELS_URL" in text and "PIP_INDEX_URL" not in text and "CA_URL" not in text
    script = (Path(templates_dir()) / "install-torch.sh").read_text()
    assert '--no-index --find-links "$WHEELS_URL"' in script and "PIP_CONFIG_FILE=/dev/null" in script


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
