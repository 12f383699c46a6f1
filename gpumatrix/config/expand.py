"""A :class:`Matrix` → its cells, with GitHub Actions' ``strategy.matrix`` semantics.

Built cells are the cartesian product bases × torch; ready-made cells are the ``images:`` entries,
one each. ``exclude`` then removes every cell whose values match all of an entry's keys; ``include``
adds its ``env`` to every cell it matches, or, when it matches none and names an exact ``base`` and
``torch``, adds that built cell. Cells that cannot exist (no wheel for the variant or Python) are
kept as not applicable, with the reason, instead of being dropped.

The values a filter key is matched against (glob patterns allowed):

============  ======================  ==================
key           built cell              ready-made cell
============  ======================  ==================
``id``        ``cu130-torch2.15.0``   the entry's id
``vendor``    the base's vendor       the entry's vendor
``base``      the base id             (none)
``torch``     the torch version       (none)
``variant``   the base's variant      (none)
============  ======================  ==================

A filter naming a key the cell does not have never matches it: ``{torch: "2.13.*"}`` removes no
ready-made cell.
"""

from __future__ import annotations

from typing import Any, Mapping

from packaging.tags import parse_tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from gpumatrix.config.model import Base, Cell, Excluded, Expansion, Matrix, ReadyImage, TorchSpec, cell_id
from gpumatrix.config.select import has_glob, matches
from gpumatrix.errors import ConfigError, Problem
from gpumatrix.knowledge import releases

#: The keys ``exclude``/``include`` entries match on (``include`` also carries ``env``).
MATCH_KEYS = ("id", "base", "torch", "vendor", "variant")


def match_values(base: Base, spec: TorchSpec, ready_made: bool = False) -> dict[str, str]:
    """The values filter keys are matched against, for one cell (see the module docstring)."""
    if ready_made:
        return {"id": base.id, "vendor": base.vendor}
    return {"id": cell_id(base.id, spec.version), "base": base.id, "torch": spec.version, "vendor": base.vendor,
            "variant": base.variant}


def filter_matches(entry: Mapping[str, Any], values: Mapping[str, str]) -> bool:
    """Whether every match key of an exclude/include entry matches the cell's value (a missing value never does)."""
    return all(k in values and matches(values[k], str(v)) for k, v in entry.items() if k in MATCH_KEYS)


def _python_of_wheel(name: str) -> str | None:
    """``torch-…-cp312-cp312-linux_x86_64.whl`` → ``3.12`` (None when the name does not say)."""
    try:
        tags = parse_wheel_filename(name)[3]
    except InvalidWheelFilename:
        try:  # a wheel named by hand may still carry a readable tag triple
            tags = parse_tag("-".join(name[:-len(".whl")].split("-")[-3:]))
        except (ValueError, IndexError):
            return None
    interpreters = {t.interpreter for t in tags if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit()}
    if len(interpreters) != 1:
        return None
    digits = interpreters.pop()[2:]
    return f"{digits[0]}.{digits[1:]}"


def applicability(base: Base, spec: TorchSpec, python: str) -> tuple[bool, str | None, tuple[str, ...]]:
    """Whether a built cell can exist: (applicable, reason when not, notes)."""
    notes: tuple[str, ...] = ()
    if spec.wheel is not None:
        if spec.vendor and spec.vendor != base.vendor:
            return False, f"the wheel {spec.wheel.name} is for {spec.vendor}; this base is {base.vendor}", notes
        if spec.variant and spec.variant != base.variant:
            return False, f"the wheel {spec.wheel.name} is built for {spec.variant}; this base is {base.variant}", notes
        wheel_python = _python_of_wheel(spec.wheel.name)
        if wheel_python and wheel_python != python:
            return False, f"the wheel is for Python {wheel_python}; this cell uses Python {python}", notes
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


def _line(entry: Any) -> int:
    return int(getattr(entry, "line", 0) or 0)


def expand_cells(matrix: Matrix) -> Expansion:
    """Bases × torch, plus one cell per ready-made image; minus ``exclude``, plus ``include``.

    An ``include`` entry whose match keys fit existing cells adds its ``env`` to each of them; one
    that fits none adds a new built cell, which needs an exact ``base`` and ``torch`` and no other
    match key. Raises :class:`ConfigError` for an include that can do neither, and for a ready-made
    image whose id is also the id of a built cell.
    """
    where = str(matrix.path)
    combos: list[dict[str, Any]] = []
    excluded: list[Excluded] = []

    def consider(base: Base, spec: TorchSpec, ready: ReadyImage | None) -> None:
        values = match_values(base, spec, ready is not None)
        rule = next((e for e in matrix.exclude if filter_matches(e, values)), None)
        if rule is not None:
            excluded.append(Excluded(values["id"], _line(rule), dict(rule)))
        else:
            combos.append({"base": base, "torch": spec, "ready": ready, "env": dict(base.env)})

    for base in matrix.bases:
        for spec in matrix.torch:
            consider(base, spec, None)
    for image in matrix.images:
        consider(image.as_base(), image.torch_spec(), image)

    original = len(combos)
    problems: list[Problem] = []
    for entry in matrix.include:
        include_env = {k: str(v).lower() if isinstance(v, bool) else str(v)
                       for k, v in dict(entry.get("env") or {}).items()}
        hit = False
        for combo in combos[:original]:
            if filter_matches(entry, match_values(combo["base"], combo["torch"], combo["ready"] is not None)):
                combo["env"].update(include_env)
                hit = True
        if hit:
            continue
        b, t = entry.get("base"), entry.get("torch")
        others = [k for k in entry if k in MATCH_KEYS and k not in ("base", "torch")]
        if not isinstance(b, str) or not isinstance(t, str) or has_glob(b) or has_glob(t) or others:
            problems.append(Problem(where, _line(entry) or None,
                                    "include entry matches no cell, and cannot add one: a new cell needs an exact "
                                    "'base' and 'torch' (and no other match key); fix the patterns or remove it"))
            continue
        include_base = next((x for x in matrix.bases if x.id == b), None)
        if include_base is None:
            continue  # reported by the loader ("include names base …, which is not in bases")
        added = next((c for c in combos[original:] if c["base"].id == b and c["torch"].version == t), None)
        if added is not None:  # a cell an earlier include added: added values may be overwritten
            added["env"].update(include_env)
            continue
        spec = next((s for s in matrix.torch if s.version == t), TorchSpec(version=t, line=_line(entry)))
        combos.append({"base": include_base, "torch": spec, "ready": None,
                       "env": {**dict(include_base.env), **include_env}})

    cells: list[Cell] = []
    seen: dict[str, Cell] = {}
    for combo in combos:
        base, spec, ready = combo["base"], combo["torch"], combo["ready"]
        cell_env = tuple(sorted(combo["env"].items()))
        if ready is not None:
            cell = Cell(id=ready.id, base=base, torch=spec, python="", env=cell_env, ready_made=True)
        else:
            python = base.python or matrix.python
            ok, reason, notes = applicability(base, spec, python)
            cell = Cell(id=cell_id(base.id, spec.version), base=base, torch=spec, python=python, env=cell_env,
                        applicable=ok, reason=reason, notes=notes)
        if cell.id in seen:
            if cell.ready_made != seen[cell.id].ready_made:
                image_cell, built = (cell, seen[cell.id]) if cell.ready_made else (seen[cell.id], cell)
                problems.append(Problem(where, image_cell.base.line or None,
                                        f"image id {cell.id!r} is also the id of a built cell "
                                        f"(base {built.base.id} × torch {built.torch.version}); rename the image"))
            continue
        seen[cell.id] = cell
        cells.append(cell)
    if problems:
        raise ConfigError(problems)
    return Expansion(cells=tuple(cells), excluded=tuple(excluded))
