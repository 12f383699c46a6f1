"""``matrix.schema.json``: the single source of the structure of ``matrix.yaml``.

:func:`schema_problems` validates a located document (see :mod:`gpumatrix.config.yamlloc`) with
``jsonschema``'s Draft 2020-12 validator and turns *every* error into a :class:`Problem` that names
the place (``file:line`` and the key), what is wrong, and the fix: unknown keys and enum values get
a "did you mean" suggestion, and a schema node's ``x-fix`` annotation supplies the fix for its errors.

Patterns in the schema are meant as ECMA-262 (what editors use): ``$`` is the end of the text and
``\\d`` an ASCII digit. Python's ``re`` differs on both (``$`` also matches before a final newline,
``\\d`` matches any Unicode digit), so this module checks ``pattern`` with ``$`` read as ``\\Z`` and
``re.ASCII``: ``"cu128\\n"``, or ``"3.12"`` written with Arabic-Indic digits, never pass.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

if TYPE_CHECKING:  # jsonschema is imported only to validate a matrix not yet remembered (schema_problems_of_text)
    from jsonschema import ValidationError

from gpumatrix.config.yamlloc import LocDict, LocList
from gpumatrix.errors import Problem
from gpumatrix.resources import cache_root

Path_ = Sequence[Any]  # a JSON path: keys and list indexes


@functools.lru_cache(maxsize=None)
def load_schema() -> dict[str, Any]:
    """The shipped ``gpumatrix/data/matrix.schema.json`` (cached)."""
    text = resources.files("gpumatrix").joinpath("data").joinpath("matrix.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=None)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A schema pattern as Python reads it with ECMA-262's meaning: a final ``$`` is ``\\Z``, classes are ASCII."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern, re.ASCII)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not compile_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.lru_cache(maxsize=None)
def matrix_validator_class() -> Any:
    """jsonschema's Draft 2020-12 validator with ``pattern`` read as described in the module docstring."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(Draft202012Validator, {"pattern": _pattern})


@functools.lru_cache(maxsize=None)
def validator() -> Any:
    """A validator for the shipped schema (its ``pattern`` read as described in the module docstring).

    The schema itself is checked against its meta-schema by the tests (``check_schema``), not here: it
    ships with the code, and checking it cost every run more than validating the matrix does."""
    return matrix_validator_class()(load_schema())


# ---------------------------------------------------------------------------
# Places: the line of a JSON path, and a name for it people recognise


def line_at(data: Any, path: Path_) -> int | None:
    """The 1-based line of the value at ``path`` (or of its nearest located ancestor)."""
    node, line = data, getattr(data, "line", None)
    for part in path:
        if isinstance(node, LocDict) and part in node:
            line, node = node.line_of(part), node[part]
        elif isinstance(node, LocList) and isinstance(part, int) and 0 <= part < len(node):
            line, node = node.line_of(part), node[part]
        else:
            break
    return line


_ENTRY_NAMES = {"bases": "base", "images": "image", "torch": "torch entry", "exclude": "exclude entry",
                "include": "include entry"}


def describe(data: Any, path: Path_) -> str:
    """``["bases", 0, "vendor"]`` → ``"base cu128.vendor"``; ``[]`` → ``"the matrix"``."""
    parts = list(path)
    if not parts:
        return "the matrix"
    head = parts[0]
    if head in _ENTRY_NAMES and len(parts) >= 2 and isinstance(parts[1], int):
        entry = _get(data, parts[:2])
        ident = entry.get("id") if isinstance(entry, dict) and head in ("bases", "images") else None
        if not (isinstance(ident, str) and compile_pattern(load_schema()["$defs"]["id"]["pattern"]).search(ident)):
            ident = parts[1] + 1  # an id that is itself wrong would only confuse: use the position
        name = f"{_ENTRY_NAMES[head]} {ident}"
        rest = parts[2:]
    elif head == "run":
        name, rest = "run", parts[1:]
    else:
        name, rest = "matrix", parts
    return name + "".join(f"[{p + 1}]" if isinstance(p, int) else f".{p}" for p in rest)


def _get(data: Any, path: Path_) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


# ---------------------------------------------------------------------------
# Messages

_TYPE_WORDS = {"string": "a string", "array": "a list", "object": "a mapping", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}


def _yaml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "empty (null)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return f"a YAML {type(value).__name__}"


def _fix(schema: Any, keyword: str, value: Any = None) -> str | None:
    """The ``x-fix`` annotation of a schema node for an error of ``keyword`` (``{value}`` filled in)."""
    if not isinstance(schema, dict):
        return None
    fix = schema.get("x-fix")
    if isinstance(fix, dict):
        fix = fix.get(keyword)
    if not isinstance(fix, str):
        return None
    return fix.replace("{value}", str(value))


def _resolve(schema: Any) -> Any:
    """Follow a local ``$ref`` (``#/$defs/name``) once, keeping the referring node's own keys."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/$defs/"):
        target = load_schema()["$defs"].get(schema["$ref"][len("#/$defs/"):], {})
        return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _suggest(value: Any, choices: Sequence[Any]) -> str:
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _in_property_names(error: ValidationError) -> bool:
    return "propertyNames" in error.relative_schema_path


def _messages(error: ValidationError, data: Any) -> Iterator[tuple[Path_, str]]:
    """(path of the place, message) for one validation error; some errors name several places."""
    path = list(error.absolute_path)
    what = describe(data, path)
    kind, value, instance = error.validator, error.validator_value, error.instance

    if _in_property_names(error):  # the instance is a key of the mapping at ``path``
        fix = _fix(error.schema, kind)
        yield path + [instance], (f"{what}: {instance!r} is not a valid name" + (f"; {fix}" if fix else ""))
    elif kind == "additionalProperties" and value is False:
        allowed = sorted((error.schema.get("properties") or {}).keys())
        for key in instance:
            if key not in allowed:
                hint = _suggest(key, allowed) or f"; allowed keys: {', '.join(allowed)}"
                yield path + [key], f"unknown key {key!r} in {what}{hint}"
    elif kind == "required":
        props = error.schema.get("properties") or {}
        for key in value:
            if key in instance or (not path and key == "schema_version"):  # the version gate reports that one
                continue
            fix = _fix(_resolve(props.get(key)), "pattern")
            yield path, f"{what} is missing required key {key!r}; add '{key}:'" + (f" ({fix})" if fix else "")
    elif kind == "dependentRequired":
        for key, needed in value.items():
            if key in instance:
                for other in needed:
                    if other not in instance:
                        yield path + [key], f"{what} has {key!r} but no {other!r}; add '{other}:' (or remove '{key}:')"
    elif kind == "enum" and _fix(error.schema, kind):
        yield path, f"{what} must be {_fix(error.schema, kind)}, not {instance!r}"
    elif kind in ("enum", "const"):
        choices = list(value) if kind == "enum" else [value]
        yield path, (f"{what} {instance!r} must be {'one of ' if len(choices) > 1 else ''}"
                     f"{', '.join(str(c) for c in choices)}{_suggest(instance, choices)}")
    elif kind == "type":
        expected = [value] if isinstance(value, str) else list(value)
        if "string" in expected and set(expected) <= {"string", "null"} and isinstance(instance, (int, float)) \
                and not isinstance(instance, bool):
            # YAML reads python: 3.10 as the float 3.1 and version: 2.9 as a number: make the user quote it.
            yield path, f"{what} must be a string; quote it (\"{getattr(instance, 'source', instance)}\")"
        else:
            words = [_TYPE_WORDS.get(t, t) for t in expected]
            want = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
            fix = _fix(error.schema, "type", instance)
            yield path, f"{what} must be {want}, not {_yaml_type(instance)}" + (f"; {fix}" if fix else "")
    elif kind == "pattern":
        fix = _fix(error.schema, "pattern")
        yield path, f"{what} {instance!r} is not valid" + (f" ({fix})" if fix else "")
    elif kind in ("minItems", "minProperties", "minLength"):
        yield path, f"{what} must not be empty"
    elif kind == "minimum":
        yield path, f"{what} must be at least {value}, not {instance!r}"
    elif kind in ("anyOf", "oneOf"):
        fix = _fix(error.schema, kind)
        if fix:
            yield path, f"{what} {fix}"
        else:  # fall back on the most relevant alternative's own message
            best = min(error.context, key=lambda e: len(e.absolute_path), default=None)
            yield path, f"{what}: {best.message if best else error.message}"
    else:
        yield path, f"{what}: {error.message}"


def schema_problems(data: Any, where: str) -> tuple[list[Problem], set[tuple[Any, ...]]]:
    """Every schema error of ``data`` as a :class:`Problem`, sorted by line.

    Also returns the paths that have an error, so that the cross-field checks that follow can
    leave those values alone instead of reporting them twice.
    """
    problems: list[Problem] = []
    bad: set[tuple[Any, ...]] = set()
    for error in validator().iter_errors(data):
        for path, message in _messages(error, data):
            bad.add(tuple(error.absolute_path))
            bad.add(tuple(path))
            problems.append(Problem(where, line_at(data, path), message))
    unique = list(dict.fromkeys(problems))
    unique.sort(key=lambda p: (p.line or 0, p.message))
    return unique, bad


def schema_problems_of_text(text: str, data: Any, where: str) -> tuple[list[Problem], set[tuple[Any, ...]]]:
    """:func:`schema_problems` of ``data``, parsed from ``text``, skipped for a text already found valid.

    A valid matrix is remembered by a hash of everything its validity depends on — its text, the shipped
    schema, this module's and the YAML loader's code, PyYAML's and Python's versions, and jsonschema's
    installed files (their size and mtime: an upgrade rewrites them) — as an empty file under
    ``$GPUMATRIX_CACHE_DIR/valid-matrices``. An unchanged matrix then costs no jsonschema import (~45 ms, a
    tenth of a warm rerun). Only valid texts are remembered, so no error can be hidden: a changed text,
    schema or validator has another key and is validated again. The cross-field checks run every time.
    """
    key = _validity_key(text)
    mark = cache_root() / "valid-matrices" / key if key else None
    if mark is not None and mark.is_file():
        return [], set()
    problems, bad = schema_problems(data, where)
    if not problems and mark is not None:
        try:
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.touch()
        except OSError:
            pass  # a read-only cache only costs the next run a validation
    return problems, bad


def _validity_key(text: str) -> str | None:
    """The hash described in :func:`schema_problems_of_text`, or None when jsonschema's files cannot be found."""
    import hashlib
    import importlib.util
    import sys

    import yaml

    spec = importlib.util.find_spec("jsonschema")
    if spec is None or not spec.submodule_search_locations:
        return None
    h = hashlib.sha256()
    for folder in spec.submodule_search_locations:
        try:
            entries = sorted(Path(folder).iterdir())
        except OSError:
            return None
        for entry in entries:
            if entry.suffix == ".py":
                st = entry.stat()
                h.update(f"{entry.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    h.update(f"{sys.version}\0{yaml.__version__}\0".encode())
    for source in (__file__, sys.modules[LocDict.__module__].__file__ or ""):
        h.update(Path(source).read_bytes())
    h.update(json.dumps(load_schema(), sort_keys=True).encode())
    h.update(b"\0" + text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def has_error_at(bad: set[tuple[Any, ...]], path: Path_) -> bool:
    """Whether the schema found a problem at ``path`` or inside it."""
    prefix = tuple(path)
    return any(p[:len(prefix)] == prefix for p in bad)


