"""matrix.yaml: validation with file:line, and GitHub Actions' include/exclude semantics."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from gpumatrix.config import expand_cells, load_matrix, matches, parse_matrix, select
from gpumatrix.config.schema import compile_pattern, load_schema
from gpumatrix.errors import ConfigError
from gpumatrix.knowledge import releases

ROOT = Path(__file__).resolve().parent.parent

FAKE_RELEASES = {
    "2.9.1": {"variants": ["cpu", "cu126", "cu128", "cu130", "rocm6.4"], "python": ["3.10", "3.11", "3.12"]},
    "2.8.0": {"variants": ["cpu", "cu126", "cu128", "cu129", "rocm6.3", "rocm6.4"], "python": ["3.11", "3.12"]},
    "2.7.1": {"variants": ["cpu", "cu118", "cu126", "cu128", "rocm6.3"], "python": ["3.11", "3.12"]},
}


@pytest.fixture(autouse=True)
def fixed_releases(monkeypatch):
    """Expansion tests must not change when the shipped release data is updated."""
    monkeypatch.setattr(releases, "torch_release", lambda v: FAKE_RELEASES.get(v.split("+")[0]))


def parse(text: str, name: str = "matrix.yaml"):
    return parse_matrix(textwrap.dedent(text), Path("/tmp") / name)


BASIC = """\
schema_version: 1
python: "3.11"
bases:
  - {id: cu128, vendor: nvidia, image: nvidia/cuda:12.8.1-runtime-ubuntu24.04, variant: cu128, python: "3.12"}
  - {id: rocm6.4, vendor: amd, image: rocm/dev-ubuntu-24.04:6.4.4, variant: rocm6.4, python: "3.12"}
  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
torch:
  - version: "2.9.1"
  - version: "2.8.0"
"""


def ids(expansion):
    return [c.id for c in expansion.cells]


def test_product_and_ids():
    exp = expand_cells(parse(BASIC))
    assert ids(exp) == ["cu128-torch2.9.1", "cu128-torch2.8.0", "rocm6.4-torch2.9.1", "rocm6.4-torch2.8.0",
                        "cpu-torch2.9.1", "cpu-torch2.8.0"]
    cell = exp.cells[0]
    assert cell.python == "3.12" and cell.torch_requirement == "torch==2.9.1+cu128"
    assert exp.cells[4].python == "3.11"


def test_exclude_glob_then_include_adds_keys_to_matches():
    m = parse(BASIC + """\
exclude:
  - {base: rocm6.4, torch: "2.8.*"}
include:
  - {base: cu128, torch: "2.9.1", env: {NCCL_DEBUG: INFO}}
  - {torch: "2.8.0", env: {A: "1"}}
""")
    exp = expand_cells(m)
    assert "rocm6.4-torch2.8.0" not in ids(exp)
    assert [(e.id, e.line) for e in exp.excluded] == [("rocm6.4-torch2.8.0", 11)]
    env = {c.id: dict(c.env) for c in exp.cells}
    assert env["cu128-torch2.9.1"] == {"NCCL_DEBUG": "INFO"}
    assert env["cu128-torch2.8.0"] == {"A": "1"} and env["cpu-torch2.8.0"] == {"A": "1"}
    assert env["cpu-torch2.9.1"] == {}


def test_include_matching_nothing_adds_a_cell():
    m = parse(BASIC + """\
include:
  - {base: cpu, torch: "2.7.1", env: {X: "y"}}
""")
    exp = expand_cells(m)
    added = [c for c in exp.cells if c.id == "cpu-torch2.7.1"]
    assert len(added) == 1 and dict(added[0].env) == {"X": "y"} and added[0].applicable


def test_include_with_pattern_matching_nothing_is_an_error():
    m = parse(BASIC + """\
include:
  - {base: cpu, torch: "3.*", env: {X: "y"}}
""")
    with pytest.raises(ConfigError) as err:
        expand_cells(m)
    assert "matches no cell" in str(err.value) and "matrix.yaml:11" in str(err.value)


def test_exclude_everything_of_a_vendor():
    exp = expand_cells(parse(BASIC + "exclude:\n  - {vendor: amd}\n"))
    assert not [c for c in exp.cells if c.vendor == "amd"] and len(exp.excluded) == 2


def test_missing_variant_is_not_applicable_with_reason():
    m = parse(BASIC.replace("cu128, python", "cu130, python").replace("variant: cu128", "variant: cu130")
              .replace("id: cu128", "id: cu130"))
    exp = expand_cells(m)
    cell = next(c for c in exp.cells if c.id == "cu130-torch2.8.0")
    assert not cell.applicable
    assert "no cu130 wheel" in cell.reason and "cu126" in cell.reason
    assert next(c for c in exp.cells if c.id == "cu130-torch2.9.1").applicable


def test_python_without_wheels_is_not_applicable():
    exp = expand_cells(parse(BASIC.replace('python: "3.11"', 'python: "3.13"')))
    cell = next(c for c in exp.cells if c.id == "cpu-torch2.8.0")
    assert not cell.applicable and "Python 3.13" in cell.reason


def test_unknown_version_is_applicable_with_note():
    exp = expand_cells(parse(BASIC.replace('"2.8.0"', '"2.99.0"')))
    cell = next(c for c in exp.cells if c.id == "cpu-torch2.99.0")
    assert cell.applicable and "not in the release data" in cell.notes[0]


def test_explicit_variants_override_release_data():
    exp = expand_cells(parse(BASIC.replace('- version: "2.8.0"', '- {version: "2.8.0", variants: [cpu]}')))
    assert not next(c for c in exp.cells if c.id == "cu128-torch2.8.0").applicable
    assert next(c for c in exp.cells if c.id == "cpu-torch2.8.0").applicable


def test_wheel_entry(tmp_path):
    wheel = tmp_path / "torch-2.9.0a0+rocm6.4-cp312-cp312-linux_x86_64.whl"
    wheel.write_bytes(b"not really a wheel")
    text = BASIC + f"  - {{wheel: {wheel.name}, vendor: amd}}\n"
    (tmp_path / "matrix.yaml").write_text(text)
    exp = expand_cells(load_matrix(tmp_path / "matrix.yaml"))
    rocm = next(c for c in exp.cells if c.id == "rocm6.4-torch2.9.0a0+rocm6.4")
    assert rocm.applicable and rocm.torch.wheel == wheel
    cu = next(c for c in exp.cells if c.id == "cu128-torch2.9.0a0+rocm6.4")
    assert not cu.applicable and "for amd" in cu.reason
    cpu = next(c for c in exp.cells if c.id == "cpu-torch2.9.0a0+rocm6.4")
    assert not cpu.applicable


def test_all_problems_reported_together_with_lines():
    text = """\
schema_version: 1
pyhton: "3.11"
bases:
  - {id: cu128, vendor: nvdia, image: "Nvidia/CUDA:bad tag", variant: cu128}
  - {id: cu128, vendor: cpu, image: debian:bookworm-slim, variant: cpu}
  - {id: x, vendor: cpu, image: debian:bookworm-slim}
torch:
  - version: "2.9.1; rm -rf /"
  - version: 2.9
exclude:
  - {base: nope}
"""
    with pytest.raises(ConfigError) as info:
        parse(text)
    msg = str(info.value)
    expected = [
        ("matrix.yaml:2", "did you mean 'python'"),
        ("matrix.yaml:4", "'nvdia'"),
        ("matrix.yaml:4", "image"),
        ("matrix.yaml:5", "duplicate base id 'cu128'"),
        ("matrix.yaml:6", "missing required key 'variant'"),
        ("matrix.yaml:8", "is not valid"),
        ("matrix.yaml:9", "must be a string; quote it"),
        ("matrix.yaml:11", "base 'nope'"),
    ]
    for where, what in expected:
        assert any(where in line and what in line for line in msg.splitlines()), (where, what, msg)
    assert info.value.exit_code == 2 and len(info.value.problems) >= len(expected)


def test_schema_version_required_and_checked():
    with pytest.raises(ConfigError, match="missing schema_version"):
        parse(BASIC.replace("schema_version: 1\n", ""))
    with pytest.raises(ConfigError, match="unsupported schema_version 2"):
        parse(BASIC.replace("schema_version: 1", "schema_version: 2"))


def test_yaml_syntax_error_has_line():
    with pytest.raises(ConfigError) as info:
        parse("schema_version: 1\nbases: [\n  {id: a\n")
    assert "YAML syntax error" in str(info.value) and ":4" in str(info.value)


def test_duplicate_keys_are_reported():
    with pytest.raises(ConfigError, match=r"matrix.yaml:3: duplicate key 'python'"):
        parse(BASIC.replace('python: "3.11"\n', 'python: "3.11"\npython: "3.12"\n'))


def test_missing_file():
    with pytest.raises(ConfigError, match="file not found"):
        load_matrix("/nonexistent/matrix.yaml")


def test_glob_selection_with_braces():
    exp = expand_cells(parse(BASIC))
    assert [c.id for c in select(exp.cells, "cu12*-torch2.{8,9}*")] == ["cu128-torch2.9.1", "cu128-torch2.8.0"]
    assert [c.id for c in select(exp.cells, "cpu-*,rocm*2.9.1")] == ["rocm6.4-torch2.9.1", "cpu-torch2.9.1",
                                                                      "cpu-torch2.8.0"]
    assert matches("a-torch2.10.0", "*2.1{0,1}.*") and not matches("a-torch2.1.0", "*2.1{0,1}.*")


def test_injection_attempts_rejected():
    # Each replaces one value of an otherwise valid base, so the one problem must be that value (the old
    # form also dropped 'variant:', and passed on "missing required key" whatever the image check did).
    for field, bad in (("image", '"debian:bookworm; rm -rf /"'), ("image", '"$(id)"'), ("variant", "\"cpu' && x\"")):
        good = {"image": "image: debian:bookworm-slim", "variant": "variant: cpu"}[field]
        text = BASIC.replace(good, f"{field}: {bad}")
        assert text != BASIC
        with pytest.raises(ConfigError) as err:
            parse(text)
        (problem,) = err.value.problems
        assert problem.message.startswith(f"base cpu.{field} ") and "is not valid" in problem.message


def test_shipped_matrix_is_valid_and_matches_schema():
    path = ROOT / "matrix.yaml"
    m = load_matrix(path)
    assert m.bases and m.torch
    assert any(b.vendor == "cpu" for b in m.bases)
    assert any(b.vendor == "nvidia" for b in m.bases) and any(b.vendor == "amd" for b in m.bases)
    schema = json.loads((ROOT / "gpumatrix/data/matrix.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_schema_rejects_what_the_parser_rejects():
    schema = json.loads((ROOT / "gpumatrix/data/matrix.schema.json").read_text())
    bad = yaml.safe_load(BASIC.replace("python: \"3.11\"", "pyhton: \"3.11\""))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_id_pattern_is_strict():
    id_re = compile_pattern(load_schema()["$defs"]["id"]["pattern"])
    assert id_re.search("rocm6.4") and not id_re.search("Bad Id") and not id_re.search("rocm6.4\n")


def test_old_import_path_still_works():
    """Other packages import from gpumatrix.config.matrix until main switches them."""
    from gpumatrix.config import matrix as shim

    assert shim.expand_cells is expand_cells and shim.Cell.__name__ == "Cell" and shim.RunOptions().shm_size == "8g"
