"""A matrix found valid is remembered, so that a warm rerun does not import jsonschema; no error is ever hidden."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpumatrix.config import ConfigError, parse_matrix
from gpumatrix.config import schema as schema_module

VALID = """\
schema_version: 1
bases:
  - id: cpu
    image: debian:bookworm-slim
    vendor: cpu
    variant: cpu
    python: "3.11"
torch:
  - version: "2.13.0"
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(root))
    return root


def marks(cache: Path) -> list[Path]:
    folder = cache / "valid-matrices"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_a_second_load_of_a_valid_matrix_imports_no_jsonschema(tmp_path, cache):
    path = tmp_path / "matrix.yaml"
    path.write_text(VALID, encoding="utf-8")
    code = ("import sys; from gpumatrix.config import load_matrix; m = load_matrix(sys.argv[1]); "
            "print(len(m.bases), 'jsonschema' in sys.modules)")
    env = dict(os.environ, GPUMATRIX_CACHE_DIR=str(cache))
    runs = [subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["1", "True"], ["1", "False"]]
    assert len(marks(cache)) == 1


def test_remembered_validity_never_hides_an_error(tmp_path, cache):
    path = tmp_path / "matrix.yaml"
    parse_matrix(VALID, path)
    assert len(marks(cache)) == 1
    broken = VALID.replace('python: "3.11"', "python: 3.11")  # a float: the schema wants a quoted string
    with pytest.raises(ConfigError) as err:
        parse_matrix(broken, path)
    assert f"{path}:7" in str(err.value) and "quote it" in str(err.value)
    assert len(marks(cache)) == 1  # an invalid text is never remembered
    with pytest.raises(ConfigError):
        parse_matrix(broken, path)  # and fails again


def test_a_changed_schema_or_validator_is_another_key(cache, monkeypatch):
    key = schema_module._validity_key(VALID)
    assert key is not None and key == schema_module._validity_key(VALID)
    assert schema_module._validity_key(VALID + "\n# a comment\n") != key
    changed = dict(schema_module.load_schema(), description="another schema")
    monkeypatch.setattr(schema_module, "load_schema", lambda: changed)
    assert schema_module._validity_key(VALID) != key


def test_the_remembered_mark_is_the_only_thing_skipped(tmp_path, cache):
    """Cross-field checks run every time: a duplicate id is caught with the mark in place."""
    path = tmp_path / "matrix.yaml"
    twice = VALID.replace("torch:", "  - id: cpu\n    image: debian:bookworm-slim\n    vendor: cpu\n"
                                    "    variant: cpu\ntorch:")
    for _ in range(2):
        with pytest.raises(ConfigError) as err:
            parse_matrix(twice, path)
        assert "cpu" in str(err.value) and "duplicate" in str(err.value).lower()
    assert len(marks(cache)) == 1  # schema-valid (the structure is fine), so remembered


def test_an_unwritable_cache_only_costs_a_validation(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(blocker))
    matrix = parse_matrix(VALID, tmp_path / "matrix.yaml")
    assert [b.id for b in matrix.bases] == ["cpu"]
