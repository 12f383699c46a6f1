"""matrix.schema.json and the loader cannot drift apart.

* every dataclass field that comes from matrix.yaml is a key the schema declares, and every key the
  schema declares is a field (or a match key of exclude/include);
* a document with every key set comes back with every field set: the loader reads them all;
* documents generated *from the schema* (hypothesis) either load or fail with a ConfigError, never
  with another exception: nothing the schema lets through can crash the loader or the expansion;
* every pattern is anchored and read so that a trailing newline or a non-ASCII digit never passes.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from gpumatrix.config import (
    MATCH_KEYS, Base, ConfigError, Matrix, ReadyImage, RunOptions, TorchSpec, expand_cells, parse_matrix,
)
from gpumatrix.config.schema import compile_pattern, load_schema, matrix_validator_class, validator

SCHEMA = load_schema()
DEFS = SCHEMA["$defs"]


def yaml_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.metadata.get("yaml", True)}


@pytest.mark.parametrize("cls, properties", [
    (Matrix, SCHEMA["properties"]),
    (Base, DEFS["base"]["properties"]),
    (TorchSpec, DEFS["torch"]["properties"]),
    (ReadyImage, DEFS["ready_image"]["properties"]),
    (RunOptions, DEFS["run"]["properties"]),
])
def test_dataclass_fields_are_the_schema_keys(cls, properties):
    assert yaml_fields(cls) == set(properties), cls.__name__


def test_filter_keys_are_the_match_keys():
    assert set(DEFS["exclude"]["properties"]) == set(MATCH_KEYS)
    assert set(DEFS["include"]["properties"]) == set(MATCH_KEYS) | {"env"}


def test_schema_is_valid_and_every_node_is_closed():
    """Draft 2020-12 meta-schema; every object node lists its keys and refuses others (so typos are caught)."""
    matrix_validator_class().check_schema(load_schema())  # raises SchemaError on an invalid schema
    assert validator().schema is load_schema()

    def walk(node: Any, where: str):
        if isinstance(node, dict):
            if "properties" in node and not where.endswith("x-fix"):
                assert node.get("additionalProperties") is False, where
            fix = node.get("x-fix")
            assert fix is None or isinstance(fix, str) or all(isinstance(v, str) for v in fix.values()), where
            for k, v in node.items():
                walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}/{i}")

    walk(SCHEMA, "#")


def all_patterns(node: Any):
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        for v in node.values():
            yield from all_patterns(v)
    elif isinstance(node, list):
        for v in node:
            yield from all_patterns(v)


@pytest.mark.parametrize("pattern", sorted(set(all_patterns(SCHEMA))))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_patterns_are_anchored_and_strict_at_the_end(pattern, data):
    assert pattern.startswith("^") and pattern.endswith("$"), pattern
    compiled = compile_pattern(pattern)
    assert compiled.pattern.endswith(r"\Z")
    example = data.draw(st.from_regex(compiled, fullmatch=True))
    assert compiled.search(example)
    if pattern == "^[^\\u0000]*$":  # free text (an env value): any character but NUL, newlines included
        assert not compiled.search(example + "\0")
    else:  # an id, name, version or reference: a value that passes never passes with a newline after it
        assert not compiled.search(example + "\n")


def test_pattern_digits_are_ascii():
    python = compile_pattern(DEFS["python"]["pattern"])
    assert python.search("3.12") and not python.search("3.\u0661\u0662")  # Arabic-Indic digits


# ---------------------------------------------------------------------------
# every key is read


def test_a_document_with_every_key_sets_every_field(tmp_path):
    (tmp_path / "wheels").mkdir()
    (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    wheel = tmp_path / "wheels" / "torch-2.9.0a0+rocm6.4-cp312-cp312-linux_x86_64.whl"
    wheel.write_bytes(b"")
    doc = {
        "schema_version": 1, "python": "3.12", "index_url": "https://example.org/whl/{variant}",
        "wheelhouse": ["wheels"], "ca_bundle": "ca.pem",
        "bases": [{"id": "rocm7.2", "vendor": "amd", "image": "rocm/dev-ubuntu-24.04:7.2.4", "variant": "rocm7.2",
                   "python": "3.12", "env": {"A": "1"}, "hsa_override_gfx_version": "11.0.0", "gpus": "all"}],
        "torch": [{"version": "2.9.0a0+rocm6.4", "variants": ["rocm7.2"], "wheel": f"wheels/{wheel.name}",
                   "vendor": "amd", "variant": "rocm7.2"}],
        "images": [{"id": "rocm-pytorch", "vendor": "amd", "image": "rocm/pytorch:latest", "env": {"B": "2"},
                    "gpus": "all"}],
        "exclude": [{"id": "x*", "base": "x*", "torch": "9.*", "vendor": "cpu", "variant": "cpu"}],
        "include": [{"id": "rocm-*", "vendor": "amd", "env": {"C": "3"}}],
        "run": {"shm_size": "16g", "timeout_s": 60, "perf": False, "mem_limit": "64g", "pids_limit": 100,
                "nvidia_mode": "cdi", "ipc": "host", "seccomp_unconfined": True, "disable_require": True},
    }
    # the document covers the schema: every declared key is set
    for name, props in [("top", SCHEMA["properties"]), ("base", DEFS["base"]["properties"]),
                        ("torch", DEFS["torch"]["properties"]), ("image", DEFS["ready_image"]["properties"]),
                        ("run", DEFS["run"]["properties"])]:
        have = {"top": doc, "base": doc["bases"][0], "torch": doc["torch"][0], "image": doc["images"][0],
                "run": doc["run"]}[name]
        assert set(props) == set(have), name
    path = tmp_path / "matrix.yaml"
    m = parse_matrix(yaml.safe_dump(doc), path)
    defaults = {
        Matrix: Matrix(path=path, schema_version=1, python="3.11", index_url=None, wheelhouse=(), ca_bundle=None,
                       bases=(), torch=(), exclude=(), include=()),
        Base: Base(id="", vendor="", image="", variant=""), TorchSpec: TorchSpec(version=""),
        ReadyImage: ReadyImage(id="", vendor="", image=""), RunOptions: RunOptions(),
    }
    for obj in (m, m.bases[0], m.torch[0], m.images[0], m.run):
        for name in yaml_fields(type(obj)) - {"schema_version"}:
            assert getattr(obj, name) != getattr(defaults[type(obj)], name), (type(obj).__name__, name)
    assert m.torch[0].wheel == wheel and m.ca_bundle == tmp_path / "ca.pem"
    cells = {c.id: c for c in expand_cells(m).cells}
    assert dict(cells["rocm-pytorch"].env) == {"B": "2", "C": "3"}


# ---------------------------------------------------------------------------
# documents generated from the schema


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target = DEFS[node["$ref"].rsplit("/", 1)[1]]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def from_schema(node: dict[str, Any]) -> st.SearchStrategy:
    """A hypothesis strategy for the subset of JSON Schema matrix.schema.json uses."""
    node = resolve(node)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type", "object" if "properties" in node or "propertyNames" in node else None)
    if isinstance(kind, list):
        return st.one_of([from_schema({**node, "type": k}) for k in kind])
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(compile_pattern(node["pattern"]), fullmatch=True)
        return st.text(min_size=node.get("minLength", 0), max_size=16)
    if kind == "integer":
        return st.integers(min_value=node.get("minimum"), max_value=10**9)
    if kind == "number":
        return st.integers(-10, 10) | st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(node["items"]), min_size=node.get("minItems", 0), max_size=3)
    if kind == "object":
        if "propertyNames" in node:
            return st.dictionaries(from_schema(node["propertyNames"]), from_schema(node["additionalProperties"]),
                                   max_size=3)
        props = node["properties"]
        # Keys that bring requirements with them (anyOf, dependentRequired, dependentSchemas) are drawn
        # as whole "branches" that satisfy them; the others are optional.
        alternatives = [frozenset(b["required"]) for b in node.get("anyOf", []) if "required" in b]
        branches = {frozenset().union(*alternatives)} | set(alternatives) if alternatives else {frozenset()}
        for key, needed in node.get("dependentRequired", {}).items():
            branches = {b | set(needed) if key in b else b for b in branches}
        for key, sub in node.get("dependentSchemas", {}).items():
            options = [frozenset(a["required"]) for a in sub.get("anyOf", [])]
            branches = {b | o for b in branches for o in (options if key in b else [frozenset()])}
        gated = set().union(*alternatives, node.get("dependentRequired", {}), node.get("dependentSchemas", {}))

        def with_required(extra: frozenset[str]) -> st.SearchStrategy:
            required = set(node.get("required", ())) | extra
            optional = {k: from_schema(props[k]) for k in sorted(props) if k not in required and k not in gated}
            return st.fixed_dictionaries({k: from_schema(props[k]) for k in sorted(required)}, optional=optional)

        drawn = st.sampled_from(sorted(branches, key=sorted)).flatmap(with_required)
        return drawn.filter(lambda d: len(d) >= node.get("minProperties", 0))
    raise AssertionError(f"schema node not covered by this test's generator: {node}")


PATH = Path("/tmp/gpumatrix-schema-fuzz/matrix.yaml")


@pytest.mark.slow  # 120 generated matrices (15 s)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                                   HealthCheck.data_too_large])
@given(from_schema(SCHEMA))
def test_schema_valid_documents_load_or_fail_cleanly(doc):
    assume(validator().is_valid(doc))
    try:
        matrix = parse_matrix(yaml.safe_dump(doc, allow_unicode=True), PATH)
        expand_cells(matrix)
        event("loaded and expanded")
    except ConfigError as err:
        event("ConfigError")
        assert err.exit_code == 2 and err.problems
        for p in err.problems:
            assert p.message and p.path == str(PATH)
            # what the schema accepted is never reported as a schema problem
            assert not re.search(r"unknown key|must be one of|is missing required key", p.message), p.message
