"""Every way matrix.yaml can be wrong gets one message that names file:line, what is wrong, and the fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpumatrix.config import expand_cells, parse_matrix, torch_version_of_wheel, version_problem
from gpumatrix.errors import ConfigError

GOOD = """\
schema_version: 1
python: "3.11"
bases:
  - id: cu130
    vendor: nvidia
    image: nvidia/cuda:13.0.2-runtime-ubuntu24.04
    variant: cu130
    python: "3.12"
    env: {NCCL_DEBUG: WARN}
  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
torch:
  - version: "2.15.0"
images:
  - {id: ngc-25.12, vendor: nvidia, image: "nvcr.io/nvidia/pytorch:25.12-py3"}
exclude:
  - {base: cpu, torch: "2.15.*"}
include:
  - {base: cu130, torch: "2.15.0", env: {A: "1"}}
run:
  shm_size: 8g
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        m = parse_matrix(textwrap.dedent(text), Path("/tmp/m/matrix.yaml"))
        expand_cells(m)
    assert info.value.exit_code == 2
    return [str(p) for p in info.value.problems]


def test_good_document_loads():
    m = parse_matrix(GOOD, Path("/tmp/m/matrix.yaml"))
    assert [c.id for c in expand_cells(m).cells] == ["cu130-torch2.15.0", "ngc-25.12"]


# (what to replace, with what) → the line and the words (place, what is wrong, fix) the message must carry
CASES = [
    ('python: "3.11"', "pyton: \"3.11\"", 2, ["unknown key 'pyton' in the matrix", "did you mean 'python'?"]),
    ('python: "3.11"', "python: 3.10", 2, ["matrix.python must be a string", 'quote it ("3.10")']),
    ('python: "3.11"', 'python: "3.11\\n"', 2, ["matrix.python '3.11\\n' is not valid", 'like "3.12"']),
    ("    vendor: nvidia", "    vendor: nvida", 5,
     ["base cu130.vendor 'nvida' must be one of", "did you mean 'nvidia'?"]),
    ("    vendor: nvidia", "    vendr: nvidia", 5, ["unknown key 'vendr' in base cu130", "did you mean 'vendor'?"]),
    ("  - id: cu130", '  - id: "cu130\\n"', 4, ["'cu130\\n' is not valid", "lowercase letters, digits"]),
    ("  - id: cu130", "  - id: CU130", 4, ["base 1.id 'CU130' is not valid", "lowercase letters"]),
    ("    variant: cu130", '    variant: "cu130\\n"', 7, ["base cu130.variant", "expected cpu, cuNNN"]),
    ("    variant: cu130", "    variant: rocm7.2", 7,
     ["variant 'rocm7.2' does not fit vendor 'nvidia'", "expected cu"]),
    ("    variant: cu130\n", "", 4, ["base cu130 is missing required key 'variant'", "add 'variant:'"]),
    ("image: nvidia/cuda:13.0.2-runtime-ubuntu24.04", 'image: "nvidia/cuda:13.0.2\\n"', 6,
     ["base cu130.image", "is not valid", "expected an image reference"]),
    ("image: nvidia/cuda:13.0.2-runtime-ubuntu24.04", 'image: "nvidia/cuda@sha256:abc"', 6,
     ["is not valid", "@sha256: pin"]),
    ("env: {NCCL_DEBUG: WARN}", 'env: {"NCCL_DEBUG\\n": WARN}', 9,
     ["base cu130.env: 'NCCL_DEBUG\\n' is not a valid name", "letters, digits and '_'"]),
    ("env: {NCCL_DEBUG: WARN}", "env: {NCCL_DEBUG: [a]}", 9, ["base cu130.env.NCCL_DEBUG must be", "scalar value"]),
    ("env: {NCCL_DEBUG: WARN}", "env: [NCCL_DEBUG]", 9, ["base cu130.env must be a mapping, not a list"]),
    ('  - version: "2.15.0"', '  - version: "2.15.0\\n"', 12, ["torch entry 1.version", "is not valid", '"2.15.0"']),
    ('  - version: "2.15.0"', '  - version: "02.15.0"', 12, ["torch entry 1.version '02.15.0'",
                                                            "write '2.15.0'"]),
    ('  - version: "2.15.0"', "  - version: 2.15", 12, ["torch entry 1.version must be a string", 'quote it ("2.15")']),
    ('  - version: "2.15.0"', "  - 2.15", 12, ["torch entry 1 must be a mapping", "write '- version: \"2.15\"'"]),
    ('  - version: "2.15.0"', "  - {variants: [cpu]}", 12, ["torch entry 1 needs 'version' (a release) or 'wheel'"]),
    ('  - version: "2.15.0"', "  - {wheel: torch.whl}", 12, ["torch entry 1 needs 'vendor' or 'variant'"]),
    ('  - version: "2.15.0"', "  - {wheel: torch-2.15.0-cp312-cp312-linux_x86_64.whl, vendor: cpu}", 12,
     ["torch entry 1.wheel: /tmp/m/torch-2.15.0-cp312-cp312-linux_x86_64.whl does not exist", "relative to this file"]),
    ('  - version: "2.15.0"', '  - version: "2.15.0"\n  - version: "2.15.0"', 13,
     ["duplicate torch version '2.15.0' (first at line 12)", "remove one"]),
    ("  - {id: cpu, vendor: cpu", "  - {id: cu130, vendor: cpu", 10, ["duplicate base id 'cu130' (first at line 4)",
                                                                      "its own id"]),
    ("id: ngc-25.12,", "id: ngc-25.12, gpu: all,", 14,
     ["unknown key 'gpu' in image ngc-25.12", "did you mean 'gpus'?"]),
    ("id: ngc-25.12,", "id: cpu,", 14, ["image id 'cpu' is also a base id", "rename one"]),
    ("id: ngc-25.12,", 'id: "ngc\\n",', 14, ["image 1.id 'ngc\\n' is not valid"]),
    ("id: ngc-25.12,", "id: cu130-torch2.15.0,", 14, ["image id 'cu130-torch2.15.0' is also the id of a built cell",
                                                      "rename the image"]),
    ('image: "nvcr.io/nvidia/pytorch:25.12-py3"}', "}", 14, ["image ngc-25.12 is missing required key 'image'"]),
    ("  - {base: cpu, torch", "  - {base: cpy, torch", 16, ["exclude names base 'cpy', which is not in bases",
                                                           "did you mean 'cpu'?"]),
    ("  - {base: cpu, torch", "  - {vendor: nvdia, torch", 16,
     ["exclude entry 1.vendor 'nvdia' matches no vendor; use one of nvidia, amd, cpu", "did you mean 'nvidia'?"]),
    ("  - {base: cpu, torch", "  - {bsae: cpu, torch", 16, ["unknown key 'bsae' in exclude entry 1",
                                                           "did you mean 'base'?"]),
    ('  - {base: cu130, torch: "2.15.0", env', '  - {base: cu130, torch: "2.14.1\\n", env', 18,
     ["include entry 1.torch '2.14.1\\n'", "write '2.14.1'"]),
    ('  - {base: cu130, torch: "2.15.0", env', '  - {base: cu130, torch: "3.*", env', 18,
     ["include entry matches no cell, and cannot add one", "exact 'base' and 'torch'"]),
    ("  shm_size: 8g", "  shm_size: 8 GB", 20, ["run.shm_size '8 GB' is not valid", "like 8g or 512m"]),
    ("  shm_size: 8g", "  timeout_s: 0", 20, ["run.timeout_s must be at least 1"]),
    ("  shm_size: 8g", "  nvidia_mode: cdl", 20, ["run.nvidia_mode 'cdl' must be one of", "did you mean 'cdi'?"]),
    ("  shm_size: 8g", "  shm_sise: 8g", 20, ["unknown key 'shm_sise' in run", "did you mean 'shm_size'?"]),
    ('images:\n  - {id: ngc-25.12, vendor: nvidia, image: "nvcr.io/nvidia/pytorch:25.12-py3"}\n', "images: []\n", 13,
     ["matrix.images must not be empty"]),
    ("torch:\n  - version: \"2.15.0\"\n", "", 3, ["matrix has 'bases' but no 'torch'", "add 'torch:'"]),
    ('python: "3.11"', 'python: "3.11"\nwheelhouse: [no-such-folder]', 3,
     ["wheelhouse 'no-such-folder' is not a folder (looked at /tmp/m/no-such-folder)", "create it or fix the path"]),
    ('python: "3.11"', "python: \"3.11\"\nwheelhouse: 7", 3, ["matrix.wheelhouse must be a string or a list"]),
    ('python: "3.11"', 'python: "3.11"\nca_bundle: /no/such.pem', 3,
     ["ca_bundle /no/such.pem is not a file", "point it at a PEM bundle"]),
    ('python: "3.11"', 'python: "3.11"\nindex_url: "ftp://x/{variant}"', 3,
     ["matrix.index_url 'ftp://x/{variant}' is not valid", "http(s):// or file:// URL"]),
    ('python: "3.11"', 'python: "3.11"\nindex_url: "https://x/$(id)"', 3, ["matrix.index_url", "is not valid"]),
    ('  - version: "2.15.0"', "  - {wheel: mytorch.whl, vendor: cpu}", 12,
     ["torch entry 1: cannot read a torch version from 'mytorch.whl'", "add 'version:'"]),
    ('  - version: "2.15.0"', "  - {wheel: torch-2.15.0.tar.gz, vendor: cpu}", 12,
     ["torch entry 1.wheel 'torch-2.15.0.tar.gz' is not valid", "name a .whl file"]),
    ('  - version: "2.15.0"', '  - {version: "2.15.0", variants: [cuda13]}', 12,
     ["torch entry 1.variants[1] 'cuda13' is not valid", "expected cpu, cuNNN"]),
    ("  - {base: cpu, torch", "  - {}\n  - {base: cpu, torch", 16, ["exclude entry 1 must not be empty"]),
    ('env: {A: "1"}}', 'env: {"A-B": "1"}}', 18, ["include entry 1.env: 'A-B' is not a valid name"]),
    ("  shm_size: 8g", "  perf: maybe", 20, ["run.perf must be true or false, not a string"]),
    ("  shm_size: 8g", "  ipc: hots", 20, ["run.ipc 'hots' must be one of host, private", "did you mean 'host'?"]),
    ("run:\n  shm_size: 8g\n", "run: fast\n", 19, ["run must be a mapping, not a string"]),
    ("  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}",
     "  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu, hsa_override_gfx_version: \"11.0.0\"}", 10,
     ["base cpu: hsa_override_gfx_version is for amd bases only", "remove it"]),
]


@pytest.mark.parametrize("old, new, line, words", CASES, ids=[c[1][:40] for c in CASES])
def test_each_problem_names_place_and_fix(old, new, line, words):
    assert old in GOOD, old
    found = problems_of(GOOD.replace(old, new, 1))
    assert any(p.startswith(f"/tmp/m/matrix.yaml:{line}: ") and all(w in p for w in words) for p in found), found


def test_a_matrix_needs_something_to_probe():
    found = problems_of("schema_version: 1\npython: \"3.12\"\n")
    assert found == ["/tmp/m/matrix.yaml:1: the matrix needs 'bases' and 'torch' (images to build), "
                     "'images' (ready-made images to probe as they are), or both"]


def test_not_a_mapping():
    assert problems_of("- a\n- b\n") == ["/tmp/m/matrix.yaml:1: the file must be a mapping with schema_version and "
                                         "bases + torch (images to build) and/or images (ready-made images)"]


def test_every_problem_at_once_sorted_by_line():
    text = GOOD.replace("vendor: nvidia", "vendor: nvida").replace("shm_size: 8g", "shm_size: huge") \
        .replace("  - {id: cpu, vendor: cpu", "  - {id: cu130, vendor: cpu")
    found = problems_of(text)
    assert [p.split(":")[1] for p in found] == ["5", "10", "14", "16", "20"], found


def test_unicode_digits_are_not_digits():
    found = problems_of(GOOD.replace('python: "3.11"', 'python: "3.\u0661\u0661"'))
    assert "matrix.python" in found[0] and "is not valid" in found[0]


@pytest.mark.parametrize("text, problem", [
    ("2.15.0", None), ("2.9.0a0+rocm6.4", None), ("2.10.0.post1", None), ("2.9", None),
    ("2.15.0\n", "write '2.15.0'"), (" 2.15.0", "write '2.15.0'"), ("v2.15.0", "write '2.15.0'"),
    ("2.15.0-1", "write '2.15.0.post1'"), ("2.15.0+CU130", "write '2.15.0+cu130'"),
    ("latest", "is not a PEP 440 version"), ("1!2.0", "is not a plain release version"),
])
def test_versions_are_read_with_packaging(text, problem):
    found = version_problem(text)
    assert (found is None) if problem is None else (problem in found), found


def test_torch_version_of_wheel():
    assert torch_version_of_wheel("torch-2.9.0a0+rocm6.4-cp312-cp312-linux_x86_64.whl") == "2.9.0a0+rocm6.4"
    assert torch_version_of_wheel("torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl") == "2.10.0"
    assert torch_version_of_wheel("numpy-2.0.0-cp312-cp312-linux_x86_64.whl") is None
    assert torch_version_of_wheel("mytorch.whl") is None


def test_wheel_for_another_python_is_not_applicable(tmp_path):
    wheel = tmp_path / "torch-2.9.0a0+rocm6.4-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    text = GOOD.replace('  - version: "2.15.0"', f"  - {{wheel: {wheel.name}, vendor: nvidia}}") \
        .replace('{base: cu130, torch: "2.15.0", env: {A: "1"}}', "{base: cu130, env: {A: \"1\"}}") \
        .replace('{base: cpu, torch: "2.15.*"}', "{base: cpu}")
    m = parse_matrix(text, tmp_path / "matrix.yaml")
    cell = next(c for c in expand_cells(m).cells if c.id.startswith("cu130"))
    assert not cell.applicable and cell.reason == "the wheel is for Python 3.11; this cell uses Python 3.12"


def test_unsupported_schema_version_stops_early():
    found = problems_of(GOOD.replace("schema_version: 1", "schema_version: 2").replace("vendor: nvidia", "vendor: x"))
    assert found == ["/tmp/m/matrix.yaml:1: unsupported schema_version 2; this gpumatrix reads schema_version 1"]


def test_duplicate_yaml_keys_are_reported_with_the_schema_problems():
    found = problems_of(GOOD.replace('python: "3.11"', 'python: "3.11"\npython: "3.12"').replace("shm_size: 8g",
                                                                                               "shm_size: big"))
    assert found[0] == "/tmp/m/matrix.yaml:3: duplicate key 'python' (first defined at line 2)"
    assert any(p.startswith("/tmp/m/matrix.yaml:21: run.shm_size 'big'") for p in found)
