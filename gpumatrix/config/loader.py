"""``matrix.yaml`` → :class:`~gpumatrix.config.model.Matrix`: read, check, build frozen objects.

Checking has two layers, and every problem of both is reported in one :class:`ConfigError`:

1. the structure, by ``matrix.schema.json`` (:mod:`gpumatrix.config.schema`): keys, types, patterns;
2. what a schema cannot say (this module): duplicate ids, a variant that does not fit its vendor,
   names that must refer to a base, files and folders that must exist, versions that must parse
   as PEP 440 (``packaging.version``), a version readable from a wheel's file name.

Values the schema already rejected are left alone here, so nothing is reported twice.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpumatrix.config.model import (
    SCHEMA_VERSION,
    VENDORS,
    Base,
    Matrix,
    ReadyImage,
    RunOptions,
    TorchSpec,
)
from gpumatrix.config.schema import compile_pattern, has_error_at, line_at, load_schema, schema_problems_of_text
from gpumatrix.config.select import has_glob
from gpumatrix.config.yamlloc import LocDict, load_located
from gpumatrix.errors import ConfigError, Problem

DEFAULT_PYTHON = "3.11"
DEFAULT_INDEX_URL = "https://download.pytorch.org/whl/{variant}"
# Which variants fit which vendor (the schema checks each on its own; this is the pair).
_VARIANT_PREFIX = {"nvidia": "cu", "amd": "rocm", "cpu": "cpu"}


def load_matrix(path: str | Path) -> Matrix:
    """Read and validate ``matrix.yaml``; raise :class:`ConfigError` listing every problem."""
    path = Path(path)
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([Problem(shown, None, "file not found; pass --matrix PATH or create matrix.yaml")]) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError([Problem(shown, None, f"cannot read: {err}")]) from err
    return parse_matrix(text, path)


def parse_matrix(text: str, path: Path) -> Matrix:
    """Validate the text of a matrix file (``path`` is used for messages and relative paths)."""
    where = str(path)
    try:
        data, duplicates = load_located(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise ConfigError([Problem(where, mark.line + 1 if mark else None, f"YAML syntax error: {problem}")]) from None
    problems = [Problem(where, dup.line, str(dup)) for dup in duplicates]
    if not isinstance(data, LocDict):
        problems.append(Problem(where, 1, "the file must be a mapping with schema_version and bases + torch "
                                          "(images to build) and/or images (ready-made images)"))
        raise ConfigError(problems)

    version = data.get("schema_version")
    if version is None:
        problems.append(Problem(where, data.line,
                                f"missing schema_version; add 'schema_version: {SCHEMA_VERSION}' at the top"))
    elif version != SCHEMA_VERSION or isinstance(version, bool):
        problems.append(Problem(where, data.line_of("schema_version"),
                                f"unsupported schema_version {version!r}; this gpumatrix reads "
                                f"schema_version {SCHEMA_VERSION}"))
        raise ConfigError(problems)  # another version's rules would only produce noise

    found, bad = schema_problems_of_text(text, data, where)
    checks = _Checks(data, path, bad)
    matrix = checks.build()
    problems += found + checks.problems
    if problems or matrix is None:
        problems.sort(key=lambda p: p.line or 0)
        raise ConfigError(problems)
    return matrix


def version_problem(text: str) -> str | None:
    """Why ``text`` is not a torch version as pip writes it (PEP 440, canonical form), or None."""
    try:
        parsed = Version(text)
    except InvalidVersion:
        return "is not a PEP 440 version (expected a release like \"2.15.0\")"
    if str(parsed) != text:
        return f"is not written the way pip writes it; write {str(parsed)!r}"
    if not compile_pattern(load_schema()["$defs"]["version"]["pattern"]).search(text):
        return "is not a plain release version (expected a release like \"2.15.0\")"
    return None


def torch_version_of_wheel(name: str) -> str | None:
    """The version of a torch wheel from its file name (``torch-2.9.0a0+rocm6.4-cp312-….whl`` → ``2.9.0a0+rocm6.4``)."""
    try:
        project, version, _build, _tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return str(version) if project == "torch" else None


class _Checks:
    """The cross-field checks, run on whatever parts of the document the schema accepted."""

    def __init__(self, data: LocDict, path: Path, bad: set[tuple[Any, ...]]):
        self.data, self.path, self.bad = data, path, bad
        self.where = str(path)
        self.root = path.parent
        self.problems: list[Problem] = []

    def add(self, at: list[Any], message: str) -> None:
        self.problems.append(Problem(self.where, line_at(self.data, at), message))

    def ok(self, *at: Any) -> bool:
        """Whether the schema found nothing wrong at this path (and below)."""
        return not has_error_at(self.bad, at)

    def _entries(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        raw = self.data.get(key)
        if not isinstance(raw, list):
            return []
        return [(i, e) for i, e in enumerate(raw) if isinstance(e, dict)]

    def _str(self, at: list[Any]) -> str | None:
        node: Any = self.data
        for part in at:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return None
        return node if isinstance(node, str) and self.ok(*at) else None

    # -- build -----------------------------------------------------------------
    def build(self) -> Matrix | None:
        d = self.data
        bases = self.bases()
        base_ids: set[str] = {b.id for b in bases}
        for i, _ in self._entries("bases"):
            bid = self._str(["bases", i, "id"])
            if bid is not None:
                base_ids.add(bid)
        images = self.images(base_ids)
        torch = self.torch()
        self.filters(base_ids)
        wheelhouse = self.wheelhouse()
        ca_bundle = self.ca_bundle()
        if self.problems or not self.ok():
            return None
        return Matrix(path=self.path, schema_version=SCHEMA_VERSION, python=d.get("python", DEFAULT_PYTHON),
                      index_url=d["index_url"] if "index_url" in d else DEFAULT_INDEX_URL,
                      wheelhouse=wheelhouse, ca_bundle=ca_bundle, bases=tuple(bases), torch=tuple(torch),
                      exclude=tuple(d.get("exclude") or ()), include=tuple(d.get("include") or ()),
                      run=RunOptions(**dict(d.get("run") or {})), images=tuple(images))

    def bases(self) -> list[Base]:
        out: list[Base] = []
        seen: dict[str, int | None] = {}
        for i, entry in self._entries("bases"):
            at = ["bases", i]
            bid, vendor, variant = (self._str(at + [k]) for k in ("id", "vendor", "variant"))
            name = f"base {bid or i + 1}"
            if bid is not None:
                if bid in seen:
                    self.add(at, f"duplicate base id {bid!r} (first at line {seen[bid]}); give each base its own id")
                else:
                    seen[bid] = line_at(self.data, at)
            if vendor in VENDORS and variant is not None and not variant.startswith(_VARIANT_PREFIX[vendor]):
                self.add(at + ["variant"], f"{name}: variant {variant!r} does not fit vendor {vendor!r} "
                                           f"(expected {_VARIANT_PREFIX[vendor]}…)")
            if "hsa_override_gfx_version" in entry and vendor in VENDORS and vendor != "amd":
                self.add(at + ["hsa_override_gfx_version"],
                         f"{name}: hsa_override_gfx_version is for amd bases only; remove it")
            if self.ok(*at):
                out.append(Base(id=entry["id"], vendor=entry["vendor"], image=entry["image"], variant=entry["variant"],
                                python=entry.get("python"), env=_env(entry.get("env")),
                                line=line_at(self.data, at) or 0,
                                hsa_override_gfx_version=entry.get("hsa_override_gfx_version"),
                                gpus=str(entry.get("gpus", "1"))))
        return out

    def images(self, base_ids: set[str]) -> list[ReadyImage]:
        out: list[ReadyImage] = []
        seen: dict[str, int | None] = {}
        for i, entry in self._entries("images"):
            at = ["images", i]
            iid = self._str(at + ["id"])
            if iid is not None:
                if iid in seen:
                    self.add(at, f"duplicate image id {iid!r} (first at line {seen[iid]}); "
                                 "each ready-made image is one cell and needs its own id")
                elif iid in base_ids:
                    self.add(at + ["id"], f"image id {iid!r} is also a base id; rename one of them "
                                          "(e.g. add the vendor or the image's release to the image id)")
                seen.setdefault(iid, line_at(self.data, at))
            if self.ok(*at):
                out.append(ReadyImage(id=entry["id"], vendor=entry["vendor"], image=entry["image"],
                                      env=_env(entry.get("env")), gpus=str(entry.get("gpus", "1")),
                                      line=line_at(self.data, at) or 0))
        return out

    def torch(self) -> list[TorchSpec]:
        out: list[TorchSpec] = []
        seen: dict[str, int | None] = {}
        for i, entry in self._entries("torch"):
            at = ["torch", i]
            before = len(self.problems)
            version = self._str(at + ["version"])
            if version is not None and (why := version_problem(version)):
                self.add(at + ["version"], f"torch entry {i + 1}.version {version!r} {why}")
                version = None
            wheel = None
            wname = self._str(at + ["wheel"])
            if wname is not None:
                wheel = _local_path(wname, self.root)
                if not wheel.is_file():
                    self.add(at + ["wheel"], f"torch entry {i + 1}.wheel: {wheel} does not exist; "
                                             "give its path relative to this file")
                if "version" not in entry:
                    version = torch_version_of_wheel(wheel.name)
                    if version is None or version_problem(version):
                        self.add(at + ["wheel"], f"torch entry {i + 1}: cannot read a torch version from "
                                                 f"{wheel.name!r}; add 'version:'")
                        version = None
            if version is None:
                continue
            if version in seen:
                self.add(at, f"duplicate torch version {version!r} (first at line {seen[version]}); remove one")
                continue
            seen[version] = line_at(self.data, at)
            if self.ok(*at) and len(self.problems) == before:
                variants = entry.get("variants")
                out.append(TorchSpec(version=version, variants=tuple(variants) if variants else None, wheel=wheel,
                                     vendor=entry.get("vendor"), variant=entry.get("variant"),
                                     line=line_at(self.data, at) or 0))
        return out

    def filters(self, base_ids: set[str]) -> None:
        for key in ("exclude", "include"):
            for i, _entry in self._entries(key):
                at = [key, i]
                b = self._str(at + ["base"])
                if b is not None and not has_glob(b) and b not in base_ids:
                    hint = _suggest(b, sorted(base_ids))
                    self.add(at + ["base"], f"{key} names base {b!r}, which is not in bases{hint}")
                v = self._str(at + ["vendor"])
                if v is not None and not has_glob(v) and v not in VENDORS:
                    self.add(at + ["vendor"], f"{key} entry {i + 1}.vendor {v!r} matches no vendor; use one of "
                                              f"{', '.join(VENDORS)}{_suggest(v, list(VENDORS))}")
                t = self._str(at + ["torch"])
                if key == "include" and t is not None and not has_glob(t) and (why := version_problem(t)):
                    self.add(at + ["torch"], f"include entry {i + 1}.torch {t!r} {why}")

    def wheelhouse(self) -> tuple[Path, ...]:
        value = self.data.get("wheelhouse")
        if value is None or not self.ok("wheelhouse"):
            return ()
        out = []
        for item in [value] if isinstance(value, str) else value:
            folder = _local_path(item, self.root)
            if not folder.is_dir():
                self.add(["wheelhouse"], f"wheelhouse {item!r} is not a folder (looked at {folder}); "
                                         "create it or fix the path (relative to this file)")
            out.append(folder)
        return tuple(out)

    def ca_bundle(self) -> Path | None:
        value = self._str(["ca_bundle"])
        if value is None:
            return None
        bundle = _local_path(value, self.root)
        if not bundle.is_file():
            self.add(["ca_bundle"], f"ca_bundle {bundle} is not a file; point it at a PEM bundle")
        return bundle


def _local_path(item: str, root: Path) -> Path:
    """A path from matrix.yaml: ``file://`` and ``~`` allowed, relative to the matrix file's folder."""
    p = Path(item[len("file://"):] if item.startswith("file://") else item)
    try:
        p = p.expanduser()
    except RuntimeError:  # "~someone" with no such user: keep it as written (it then does not exist)
        pass
    return p if p.is_absolute() else root / p


def _env(value: Any) -> tuple[tuple[str, str], ...]:
    if not value:
        return ()
    return tuple(sorted((str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items()))


def _suggest(value: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
