"""Which cells a run takes: id-glob selection, shards of a matrix, and the GitHub Actions job matrix.

* :func:`select` keeps the cells whose id matches glob patterns with brace alternatives
  (``--only 'cu12*-torch2.{8,9}*'``), as cibuildwheel's build selectors do; ``exclude``/``include``
  in matrix.yaml match with the same :func:`matches`.
* :func:`shard_cells` splits the cells so ``N`` runners share one matrix, each cell on exactly one.
* :func:`gha_matrix` is the ``{"include": [...]}`` a workflow fans out over (one job per cell).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Mapping, Protocol, Sequence, TypeVar

from gpumatrix.errors import ConfigError, Problem

# Runner labels a cell's job needs, per vendor. GPU cells go to self-hosted runners carrying the
# vendor's label; CPU cells run anywhere Docker runs, GitHub's hosted runners included.
RUNNER_LABELS: Mapping[str, tuple[str, ...]] = {
    "nvidia": ("self-hosted", "linux", "gpu", "nvidia"),
    "amd": ("self-hosted", "linux", "gpu", "amd"),
    "cpu": ("ubuntu-latest",),
}


class _HasId(Protocol):
    @property
    def id(self) -> str: ...  # read-only, so frozen dataclasses (Cell) fit


C = TypeVar("C", bound=_HasId)


# -- id globs ---------------------------------------------------------------
def has_glob(text: str) -> bool:
    """Whether ``text`` is a pattern rather than an exact value."""
    return any(ch in text for ch in "*?[{")


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
    """Whole-value glob match with brace alternatives: ``matches('cu128-torch2.9.1', 'cu12*-torch2.{8,9}*')``."""
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


def select(cells: Sequence[C], only: str | Sequence[str] | None) -> list[C]:
    """Cells whose id matches any of the glob patterns (comma-separated or a list); all cells when none."""
    if not only:
        return list(cells)
    patterns = split_patterns(only) if isinstance(only, str) else list(only)
    return [cell for cell in cells if any(matches(cell.id, p) for p in patterns)]


# -- shards -----------------------------------------------------------------
def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with ``1 <= K <= N``; :class:`ConfigError` otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m:
        raise ConfigError([Problem("--shard", None, f"{text!r} is not K/N (e.g. 2/4: the second of four shards)")])
    return _check_shard(int(m.group(1)), int(m.group(2)))


def _check_shard(k: int, n: int) -> tuple[int, int]:
    if n < 1:
        raise ConfigError([Problem("--shard", None, f"the number of shards must be at least 1, not {n}")])
    if not 1 <= k <= n:
        raise ConfigError([Problem("--shard", None, f"shard {k} does not exist; shards are numbered 1 to {n}")])
    return k, n


def _balanced_slice(items: Sequence[C], k: int, n: int) -> list[C]:
    """The K-th of N contiguous slices whose sizes differ by at most one."""
    size = len(items)
    return list(items[(k - 1) * size // n: k * size // n])


def shard_cells(cells: Sequence[C], k: int, n: int) -> list[C]:
    """Shard ``k`` of ``n`` (1-based): a deterministic, even split in which every cell lands in exactly one shard.

    Cells are sorted by id, so the split does not depend on the order of ``matrix.yaml``. Applicable
    cells (those that build and run) and not-applicable ones (which only record a reason) are split
    separately into contiguous runs of sizes differing by at most one, so each shard gets an even share
    of the real work, and neighbouring cells of one base (which share image layers) stay together.
    """
    k, n = _check_shard(int(k), int(n))
    ordered = sorted(cells, key=lambda c: c.id)
    runs = [c for c in ordered if getattr(c, "applicable", True)]
    rest = [c for c in ordered if not getattr(c, "applicable", True)]
    return sorted(_balanced_slice(runs, k, n) + _balanced_slice(rest, k, n), key=lambda c: c.id)


def select_shard(cells: Sequence[C], shard: str | None) -> list[C]:
    """``cells`` restricted to the ``--shard K/N`` given (all of them when ``shard`` is None)."""
    if not shard:
        return list(cells)
    return shard_cells(cells, *parse_shard(shard))


# -- GitHub Actions ---------------------------------------------------------
def gha_matrix(cells: Sequence[Any], labels: Mapping[str, Sequence[str]] = RUNNER_LABELS) -> dict[str, Any]:
    """``{"include": [...]}`` with one entry per applicable cell, for ``strategy.matrix: ${{ fromJSON(...) }}``.

    Each entry has the cell ``id``, ``vendor``, ``base``, ``torch`` and ``runner`` (the runner labels
    for ``runs-on``). Not-applicable cells get no job: there is nothing to run.
    """
    include = []
    for cell in sorted(cells, key=lambda c: c.id):
        if not getattr(cell, "applicable", True):
            continue
        include.append({"id": cell.id, "vendor": cell.vendor, "base": cell.base.id, "torch": cell.torch.version,
                        "runner": list(labels[cell.vendor])})
    return {"include": include}
