"""``matrix.yaml``: parse once, validate everything, expand into cells.

Nothing downstream sees a raw dict: :func:`load_matrix` returns a frozen
:class:`Matrix` or raises :class:`~gpumatrix.errors.ConfigError` listing every
problem with ``file:line``. :func:`expand_cells` applies GitHub Actions'
``strategy.matrix`` semantics (cartesian product, then ``exclude``, then
``include``) and marks the cells that cannot exist (no wheel for the variant)
as not applicable instead of dropping them.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from gpumatrix.knowledge import releases
from gpumatrix.errors import ConfigError, Problem
from gpumatrix.config.yamlloc import LocDict, LocList, load_located

SCHEMA_VERSION = 1
VENDORS = ("nvidia", "amd", "cpu")

# Strict patterns: anything that reaches a Dockerfile or a tag must match one.
ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,47}$")
VARIANT_RE = re.compile(r"^(cpu|cu\d{2,3}|rocm\d+(\.\d+){0,2}|xpu)$")
PYTHON_RE = re.compile(r"^3\.\d{1,2}$")
TORCH_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
SIZE_RE = re.compile(r"^\d+[kmgKMG]?$")
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?)"
IMAGE_REF_RE = re.compile(
    rf"^(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?(?:@sha256:[0-9a-f]{{64}})?$"
)
INDEX_URL_RE = re.compile(r"^(https?|file)://[^\s\"'`$\\]+$")


@dataclass(frozen=True)
class Base:
    """A base image: the OS + vendor stack a torch wheel is installed onto."""

    id: str
    vendor: str
    image: str
    variant: str
    python: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    line: int = 0
    hsa_override_gfx_version: str | None = None  # AMD consumer cards: e.g. "10.3.0", "11.0.0"
    gpus: str = "1"  # "1": the cell's container gets one GPU; "all": every GPU of its vendor


@dataclass(frozen=True)
class TorchSpec:
    """One ``torch:`` entry: a released version (from an index) or a local wheel file."""

    version: str
    variants: tuple[str, ...] | None = None
    wheel: Path | None = None
    vendor: str | None = None
    variant: str | None = None
    line: int = 0

    @property
    def label(self) -> str:
        return self.version


@dataclass(frozen=True)
class RunOptions:
    """How probe containers run (``run:`` in matrix.yaml)."""

    shm_size: str = "8g"
    timeout_s: int = 1800
    perf: bool = True
    mem_limit: str | None = None
    pids_limit: int = 4096
    nvidia_mode: str = "auto"  # auto | gpus | cdi | runtime (see gpumatrix/passthrough.py)
    ipc: str | None = None  # "host": share the host's IPC namespace and /dev/shm (shm_size then unused)
    seccomp_unconfined: bool = False  # opt-in: security_opt seccomp=unconfined (some ROCm setups)
    disable_require: bool = False  # opt-in: NVIDIA_DISABLE_REQUIRE=1 (skip nvidia/cuda images' driver check)


@dataclass(frozen=True)
class Matrix:
    """A validated ``matrix.yaml``."""

    path: Path
    schema_version: int
    python: str
    index_url: str | None
    wheelhouse: tuple[Path, ...]
    ca_bundle: Path | None
    bases: tuple[Base, ...]
    torch: tuple[TorchSpec, ...]
    exclude: tuple[Mapping[str, str], ...]
    include: tuple[Mapping[str, Any], ...]
    run: RunOptions = field(default_factory=RunOptions)

    def base(self, base_id: str) -> Base:
        return next(b for b in self.bases if b.id == base_id)


@dataclass(frozen=True)
class Cell:
    """One (base × torch) combination: the unit that is built, probed and reported."""

    id: str
    base: Base
    torch: TorchSpec
    python: str
    env: tuple[tuple[str, str], ...] = ()
    applicable: bool = True
    reason: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def vendor(self) -> str:
        return self.base.vendor

    @property
    def torch_requirement(self) -> str:
        """The pip requirement that installs this cell's torch (exact variant pinned)."""
        if self.torch.wheel is not None:
            return self.torch.wheel.name
        version = self.torch.version
        return f"torch=={version}" if "+" in version else f"torch=={version}+{self.base.variant}"


@dataclass(frozen=True)
class Excluded:
    """A combination removed by an ``exclude`` entry (shown by ``invoke list``)."""

    id: str
    line: int
    rule: Mapping[str, str]


@dataclass(frozen=True)
class Expansion:
    cells: tuple[Cell, ...]
    excluded: tuple[Excluded, ...]


# ---------------------------------------------------------------------------
# Loading and validation

_TOP_KEYS = {"schema_version", "python", "index_url", "wheelhouse", "ca_bundle", "bases", "torch",
             "exclude", "include", "run"}
_BASE_KEYS = {"id", "vendor", "image", "variant", "python", "env", "hsa_override_gfx_version", "gpus"}
_TORCH_KEYS = {"version", "variants", "wheel", "vendor", "variant"}
_EXCLUDE_KEYS = {"base", "torch", "vendor", "variant"}
_INCLUDE_KEYS = {"base", "torch", "env"}
_RUN_KEYS = {"shm_size", "timeout_s", "perf", "mem_limit", "pids_limit", "nvidia_mode", "ipc",
             "seccomp_unconfined", "disable_require"}
NVIDIA_MODES = ("auto", "gpus", "cdi", "runtime")
IPC_MODES = ("host", "private")
HSA_OVERRIDE_RE = re.compile(r"^\d{1,2}\.\d{1,2}\.\d{1,2}$")


class _Collector:
    """Gathers problems so that all of them are reported together."""

    def __init__(self, path: str):
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int | None, message: str) -> None:
        self.problems.append(Problem(self.path, line, message))

    def unknown_keys(self, mapping: LocDict, allowed: set[str], what: str) -> None:
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; allowed: {', '.join(sorted(allowed))}"
                self.add(mapping.line_of(key), f"unknown key {key!r} in {what}{hint}")

    def require(self, mapping: LocDict, keys: Iterable[str], what: str) -> None:
        for key in keys:
            if key not in mapping:
                self.add(mapping.line, f"{what} is missing required key {key!r}")

    def string(self, mapping: LocDict, key: str, what: str, pattern: re.Pattern | None = None,
               hint: str = "") -> str | None:
        if key not in mapping:
            return None
        value = mapping[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # YAML reads python: 3.10 as the float 3.1; make the user quote it.
            self.add(mapping.line_of(key), f"{what}.{key} must be a string; quote it (\"{value}\")")
            return None
        if not isinstance(value, str):
            self.add(mapping.line_of(key), f"{what}.{key} must be a string, not {type(value).__name__}")
            return None
        if pattern is not None and not pattern.match(value):
            self.add(mapping.line_of(key), f"{what}.{key} {value!r} is not valid{hint}")
            return None
        return value

    def env_map(self, mapping: LocDict, key: str, what: str) -> tuple[tuple[str, str], ...]:
        value = mapping.get(key)
        if value is None:
            return ()
        if not isinstance(value, dict):
            self.add(mapping.line_of(key), f"{what}.{key} must be a mapping of NAME: value")
            return ()
        out = []
        for name, val in value.items():
            line = value.line_of(name) if isinstance(value, LocDict) else mapping.line_of(key)
            if not isinstance(name, str) or not ENV_NAME_RE.match(name):
                self.add(line, f"{what}.{key}: {name!r} is not a valid environment variable name")
            elif not isinstance(val, (str, int, float, bool)) or "\0" in str(val):
                self.add(line, f"{what}.{key}.{name} must be a scalar string")
            else:
                out.append((name, str(val).lower() if isinstance(val, bool) else str(val)))
        return tuple(sorted(out))


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
    c = _Collector(str(path))
    try:
        data, duplicates = load_located(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        c.add(mark.line + 1 if mark else None, f"YAML syntax error: {problem}")
        raise ConfigError(c.problems) from None
    for dup in duplicates:
        c.add(dup.line, str(dup))
    if not isinstance(data, LocDict):
        c.add(1, "the file must be a mapping with schema_version, bases and torch")
        raise ConfigError(c.problems)

    version = data.get("schema_version")
    if version is None:
        c.add(data.line, f"missing schema_version; add 'schema_version: {SCHEMA_VERSION}' at the top")
    elif version != SCHEMA_VERSION:
        c.add(data.line_of("schema_version"),
              f"unsupported schema_version {version!r}; this gpumatrix reads schema_version {SCHEMA_VERSION}")
        raise ConfigError(c.problems)
    c.unknown_keys(data, _TOP_KEYS, "the matrix")
    c.require(data, ("bases", "torch"), "the matrix")

    python = c.string(data, "python", "matrix", PYTHON_RE, " (expected a version like \"3.11\")") or "3.11"
    index_url: str | None = "https://download.pytorch.org/whl/{variant}"
    if "index_url" in data:
        index_url = None if data["index_url"] is None else c.string(
            data, "index_url", "matrix", INDEX_URL_RE, " (expected an http(s):// or file:// URL)")
    root = path.parent
    wheelhouse = tuple(_paths(c, data, "wheelhouse", root))
    ca_list = _paths(c, data, "ca_bundle", root, single=True)
    ca_bundle = ca_list[0] if ca_list else None
    if ca_bundle is not None and not ca_bundle.is_file():
        c.add(data.line_of("ca_bundle"), f"ca_bundle {ca_bundle} is not a file")

    bases = _parse_bases(c, data.get("bases"), data)
    torch_specs = _parse_torch(c, data.get("torch"), data, root)
    base_ids = {b.id for b in bases}
    exclude = _parse_filters(c, data, "exclude", _EXCLUDE_KEYS, base_ids)
    include = _parse_filters(c, data, "include", _INCLUDE_KEYS, base_ids)
    run = _parse_run(c, data)
    if c.problems:
        raise ConfigError(c.problems)
    return Matrix(path=path, schema_version=SCHEMA_VERSION, python=python, index_url=index_url,
                  wheelhouse=wheelhouse, ca_bundle=ca_bundle, bases=tuple(bases), torch=tuple(torch_specs),
                  exclude=tuple(exclude), include=tuple(include), run=run)


def _paths(c: _Collector, data: LocDict, key: str, root: Path, single: bool = False) -> list[Path]:
    value = data.get(key)
    if value is None:
        return []
    items = [value] if isinstance(value, str) or single else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        c.add(data.line_of(key), f"{key} must be {'a path' if single else 'a path or a list of paths'}")
        return []
    out = []
    for item in items:
        p = Path(item[len("file://"):] if item.startswith("file://") else item).expanduser()
        p = p if p.is_absolute() else (root / p)
        if key == "wheelhouse" and not p.is_dir():
            c.add(data.line_of(key), f"wheelhouse {item!r} is not a folder (looked at {p})")
        out.append(p)
    return out


def _parse_bases(c: _Collector, raw: Any, data: LocDict) -> list[Base]:
    if raw is None:
        return []
    if not isinstance(raw, LocList) or not raw:
        c.add(data.line_of("bases"), "bases must be a non-empty list of {id, vendor, image, variant}")
        return []
    bases, seen = [], {}
    for i, entry in enumerate(raw):
        line = raw.line_of(i)
        if not isinstance(entry, LocDict):
            c.add(line, "each base must be a mapping with id, vendor, image and variant")
            continue
        what = f"base {entry.get('id', i + 1)!s}"
        c.unknown_keys(entry, _BASE_KEYS, what)
        c.require(entry, ("id", "vendor", "image", "variant"), what)
        bid = c.string(entry, "id", what, ID_RE, " (lowercase letters, digits, '.', '_', '-'; at most 48)")
        vendor = c.string(entry, "vendor", what)
        if vendor is not None and vendor not in VENDORS:
            close = difflib.get_close_matches(vendor, VENDORS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            c.add(entry.line_of("vendor"), f"{what}.vendor {vendor!r} must be one of {', '.join(VENDORS)}{hint}")
            vendor = None
        image = c.string(entry, "image", what, IMAGE_REF_RE,
                         " (expected an image reference like nvidia/cuda:12.8.1-runtime-ubuntu24.04)")
        variant = c.string(entry, "variant", what, VARIANT_RE, " (expected cpu, cuNNN or rocmX.Y)")
        python = c.string(entry, "python", what, PYTHON_RE, " (expected a version like \"3.12\")")
        env = c.env_map(entry, "env", what)
        hsa = c.string(entry, "hsa_override_gfx_version", what, HSA_OVERRIDE_RE,
                       " (expected a version like \"11.0.0\"; quote it)")
        if hsa is not None and vendor not in (None, "amd"):
            c.add(entry.line_of("hsa_override_gfx_version"), f"{what}: hsa_override_gfx_version is for amd bases only")
        gpus = "1"
        if "gpus" in entry:
            raw_gpus = entry["gpus"]
            if raw_gpus in (1, "1", "all") and not isinstance(raw_gpus, bool):
                gpus = str(raw_gpus)
            else:
                c.add(entry.line_of("gpus"), f"{what}.gpus must be 1 (one GPU per cell) or all (every GPU)")
        if vendor and variant:
            expected = "cpu" if vendor == "cpu" else ("cu" if vendor == "nvidia" else "rocm")
            if not variant.startswith(expected):
                c.add(entry.line_of("variant"),
                      f"{what}: variant {variant!r} does not fit vendor {vendor!r} (expected {expected}…)")
        if bid is not None:
            if bid in seen:
                c.add(line, f"duplicate base id {bid!r} (first at line {seen[bid]})")
            seen[bid] = line
        if None not in (bid, vendor, image, variant):
            bases.append(Base(id=bid, vendor=vendor, image=image, variant=variant, python=python, env=env,
                              line=line, hsa_override_gfx_version=hsa, gpus=gpus))
    return bases


def _wheel_version(name: str) -> str | None:
    """The version field of a wheel file name (``torch-2.9.0a0+rocm6.4-cp312-….whl`` → ``2.9.0a0+rocm6.4``)."""
    parts = name[:-len(".whl")].split("-") if name.endswith(".whl") else []
    return parts[1] if len(parts) >= 2 and parts[0] in ("torch",) else None


def _parse_torch(c: _Collector, raw: Any, data: LocDict, root: Path) -> list[TorchSpec]:
    if raw is None:
        return []
    if not isinstance(raw, LocList) or not raw:
        c.add(data.line_of("torch"), "torch must be a non-empty list of {version: ...} or {wheel: ...}")
        return []
    specs, seen = [], {}
    for i, entry in enumerate(raw):
        line = raw.line_of(i)
        if isinstance(entry, (str, float, int)) and not isinstance(entry, bool):
            c.add(line, f"torch entry {entry!r} must be a mapping; write '- version: \"{entry}\"'")
            continue
        if not isinstance(entry, LocDict):
            c.add(line, "each torch entry must be a mapping with 'version' or 'wheel'")
            continue
        what = f"torch entry {i + 1}"
        c.unknown_keys(entry, _TORCH_KEYS, what)
        if "version" not in entry and "wheel" not in entry:
            c.add(line, f"{what} needs 'version' (a release) or 'wheel' (a local file)")
            continue
        vendor = c.string(entry, "vendor", what)
        if vendor is not None and vendor not in VENDORS:
            c.add(entry.line_of("vendor"), f"{what}.vendor {vendor!r} must be one of {', '.join(VENDORS)}")
        variant = c.string(entry, "variant", what, VARIANT_RE, " (expected cpu, cuNNN or rocmX.Y)")
        variants = None
        if "variants" in entry:
            v = entry["variants"]
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and VARIANT_RE.match(x) for x in v):
                c.add(entry.line_of("variants"), f"{what}.variants must be a list like [cpu, cu128, rocm6.4]")
            else:
                variants = tuple(v)
        wheel = None
        version = c.string(entry, "version", what, TORCH_VERSION_RE, " (expected a release like \"2.9.1\")")
        if "wheel" in entry:
            wname = c.string(entry, "wheel", what)
            if wname is None:
                continue
            wheel = Path(wname).expanduser()
            wheel = wheel if wheel.is_absolute() else root / wheel
            if not wname.endswith(".whl"):
                c.add(entry.line_of("wheel"), f"{what}.wheel {wname!r} must be a .whl file")
            elif not wheel.is_file():
                c.add(entry.line_of("wheel"), f"{what}.wheel: {wheel} does not exist")
            if version is None:
                version = _wheel_version(wheel.name)
                if version is None or not TORCH_VERSION_RE.match(version):
                    c.add(entry.line_of("wheel"),
                          f"{what}: cannot read a torch version from {wheel.name!r}; add 'version:'")
                    continue
            if vendor is None and variant is None:
                c.add(line, f"{what}: a wheel entry needs 'vendor' or 'variant' to know which bases it fits")
        if version is None:
            continue
        if version in seen:
            c.add(line, f"duplicate torch version {version!r} (first at line {seen[version]})")
            continue
        seen[version] = line
        specs.append(TorchSpec(version=version, variants=variants, wheel=wheel, vendor=vendor,
                               variant=variant, line=line))
    return specs


def _parse_filters(c: _Collector, data: LocDict, key: str, allowed: set[str],
                   base_ids: set[str]) -> list[LocDict]:
    raw = data.get(key)
    if raw is None:
        return []
    if not isinstance(raw, LocList):
        c.add(data.line_of(key), f"{key} must be a list of mappings")
        return []
    out = []
    for i, entry in enumerate(raw):
        line = raw.line_of(i)
        if not isinstance(entry, LocDict) or not entry:
            c.add(line, f"each {key} entry must be a non-empty mapping of {', '.join(sorted(allowed))}")
            continue
        c.unknown_keys(entry, allowed, f"{key} entry")
        for k in ("base", "torch", "vendor", "variant"):
            if k in entry and not isinstance(entry[k], str):
                c.add(entry.line_of(k), f"{key}.{k} must be a string; quote versions (\"{entry[k]}\")")
        if key == "include":
            c.env_map(entry, "env", "include entry")
        b = entry.get("base")
        if isinstance(b, str) and not _has_glob(b) and b not in base_ids:
            close = difflib.get_close_matches(b, sorted(base_ids), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            c.add(entry.line_of("base"), f"{key} names base {b!r}, which is not in bases{hint}")
        out.append(entry)
    return out


def _parse_run(c: _Collector, data: LocDict) -> RunOptions:
    raw = data.get("run")
    if raw is None:
        return RunOptions()
    if not isinstance(raw, LocDict):
        c.add(data.line_of("run"), "run must be a mapping")
        return RunOptions()
    c.unknown_keys(raw, _RUN_KEYS, "run")
    opts: dict[str, Any] = {}
    for key in ("shm_size", "mem_limit"):
        v = c.string(raw, key, "run", SIZE_RE, " (expected a size like 8g or 512m)")
        if v is not None:
            opts[key] = v
    for key in ("timeout_s", "pids_limit"):
        if key in raw:
            v = raw[key]
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                c.add(raw.line_of(key), f"run.{key} must be a positive integer")
            else:
                opts[key] = v
    for key in ("perf", "seccomp_unconfined", "disable_require"):
        if key in raw:
            if not isinstance(raw[key], bool):
                c.add(raw.line_of(key), f"run.{key} must be true or false")
            else:
                opts[key] = raw[key]
    for key, allowed in (("nvidia_mode", NVIDIA_MODES), ("ipc", IPC_MODES)):
        if key in raw:
            v = raw[key]
            if v not in allowed:
                close = difflib.get_close_matches(str(v), allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                c.add(raw.line_of(key), f"run.{key} {v!r} must be one of {', '.join(allowed)}{hint}")
            else:
                opts[key] = v
    return RunOptions(**opts)


# ---------------------------------------------------------------------------
# Expansion


def _has_glob(s: str) -> bool:
    return any(ch in s for ch in "*?[{")


def expand_braces(pattern: str) -> list[str]:
    """Expand ``{a,b}`` alternatives (nested allowed) as shells and cibuildwheel do."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(pattern[:m.start()] + alt + pattern[m.end():]))
    return out


def matches(value: str, pattern: str) -> bool:
    """Glob match with brace alternatives: ``matches('cu128-torch2.9.1', 'cu12*-torch2.{8,9}*')``."""
    return any(fnmatch.fnmatchcase(value, p) for p in expand_braces(pattern))


def split_patterns(only: str) -> list[str]:
    """Split ``a*,b{1,2}`` on the commas that are not inside braces."""
    out, depth, current = [], 0, ""
    for ch in only:
        depth += ch == "{"
        depth -= ch == "}" and depth > 0
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    out.append(current)
    return [p.strip() for p in out if p.strip()]


def select(cells: Sequence[Cell], only: str | Sequence[str] | None) -> list[Cell]:
    """Cells whose id matches any of the glob patterns (comma-separated or a list)."""
    if not only:
        return list(cells)
    patterns = split_patterns(only) if isinstance(only, str) else list(only)
    return [cell for cell in cells if any(matches(cell.id, p) for p in patterns)]


def cell_id(base_id: str, version: str) -> str:
    return f"{base_id}-torch{version}"


def _combo_values(base: Base, spec: TorchSpec) -> dict[str, str]:
    return {"base": base.id, "torch": spec.version, "vendor": base.vendor, "variant": base.variant}


def _filter_matches(entry: Mapping[str, Any], values: Mapping[str, str]) -> bool:
    return all(matches(values[k], str(v)) for k, v in entry.items() if k in values)


def _applicability(matrix: Matrix, base: Base, spec: TorchSpec, python: str) -> tuple[bool, str | None, tuple]:
    notes: tuple[str, ...] = ()
    if spec.wheel is not None:
        if spec.vendor and spec.vendor != base.vendor:
            return False, f"the wheel {spec.wheel.name} is for {spec.vendor}; this base is {base.vendor}", notes
        if spec.variant and spec.variant != base.variant:
            return False, f"the wheel {spec.wheel.name} is built for {spec.variant}; this base is {base.variant}", notes
        tag = re.search(r"-cp(\d)(\d+)-", spec.wheel.name)
        if tag and f"{tag.group(1)}.{tag.group(2)}" != python:
            return False, f"the wheel is for Python {tag.group(1)}.{tag.group(2)}; this cell uses Python {python}", notes
        return True, None, notes
    release = releases.torch_release(spec.version)
    variants = spec.variants or (tuple(release["variants"]) if release else None)
    if variants is None:
        notes = (f"torch {spec.version} is not in the release data; its variants are not checked",)
    elif base.variant not in variants:
        return False, (f"torch {spec.version} has no {base.variant} wheel "
                       f"(it ships {', '.join(variants)})"), notes
    if release and release.get("python") and python not in release["python"]:
        return False, (f"torch {spec.version} has no wheel for Python {python} "
                       f"(it ships {', '.join(release['python'])})"), notes
    return True, None, notes


def expand_cells(matrix: Matrix) -> Expansion:
    """Bases × torch, minus ``exclude``, plus ``include`` (GitHub Actions semantics).

    An ``include`` entry whose ``base``/``torch`` match existing combinations adds its
    extra keys (``env``) to each of them; one that matches none adds a new cell,
    which needs an exact ``base`` and ``torch``.
    """
    combos: list[dict[str, Any]] = []
    excluded: list[Excluded] = []
    for base in matrix.bases:
        for spec in matrix.torch:
            values = _combo_values(base, spec)
            rule = next((e for e in matrix.exclude if _filter_matches(e, values)), None)
            if rule is not None:
                line = rule.line if isinstance(rule, LocDict) else 0
                excluded.append(Excluded(cell_id(base.id, spec.version), line, dict(rule)))
                continue
            combos.append({"base": base, "torch": spec, "env": dict(base.env)})
    original = len(combos)
    problems: list[Problem] = []
    for entry in matrix.include:
        env = dict(entry.get("env") or {})
        hit = False
        for combo in combos[:original]:
            if _filter_matches(entry, _combo_values(combo["base"], combo["torch"])):
                combo["env"].update({k: str(v) for k, v in env.items()})
                hit = True
        if hit:
            continue
        line = entry.line if isinstance(entry, LocDict) else None
        b, t = entry.get("base"), entry.get("torch")
        if not isinstance(b, str) or not isinstance(t, str) or _has_glob(b) or _has_glob(t):
            problems.append(Problem(str(matrix.path), line,
                                    "include entry matches no cell, and cannot add one: "
                                    "a new cell needs an exact 'base' and 'torch'"))
            continue
        base = next((x for x in matrix.bases if x.id == b), None)
        if base is None:
            continue  # already reported by validation
        if not TORCH_VERSION_RE.match(t):
            problems.append(Problem(str(matrix.path), line, f"include: torch {t!r} is not a valid version"))
            continue
        added = next((c for c in combos[original:] if c["base"].id == b and c["torch"].version == t), None)
        if added is not None:  # a cell an earlier include added: added values may be overwritten
            added["env"].update({k: str(v) for k, v in env.items()})
            continue
        spec = next((s for s in matrix.torch if s.version == t), TorchSpec(version=t, line=line or 0))
        combos.append({"base": base, "torch": spec, "env": {**dict(base.env), **env}})
    if problems:
        raise ConfigError(problems)

    cells, seen = [], set()
    for combo in combos:
        base, spec = combo["base"], combo["torch"]
        cid = cell_id(base.id, spec.version)
        if cid in seen:
            continue
        seen.add(cid)
        python = base.python or matrix.python
        ok, reason, notes = _applicability(matrix, base, spec, python)
        cells.append(Cell(id=cid, base=base, torch=spec, python=python,
                          env=tuple(sorted((k, str(v)) for k, v in combo["env"].items())),
                          applicable=ok, reason=reason, notes=notes))
    return Expansion(cells=tuple(cells), excluded=tuple(excluded))
