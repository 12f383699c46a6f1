"""matrix.yaml → cells: the config stage.

Rooms: :mod:`~gpumatrix.config.model` (frozen dataclasses), :mod:`~gpumatrix.config.schema`
(``matrix.schema.json`` and its error messages), :mod:`~gpumatrix.config.loader` (read, validate,
build a :class:`Matrix`), :mod:`~gpumatrix.config.expand` (include/exclude expansion into cells),
:mod:`~gpumatrix.config.select` (id globs, shards, the GitHub Actions job matrix) and
:mod:`~gpumatrix.config.yamlloc` (YAML with line numbers). Import the public names from here.
"""

from gpumatrix.config.expand import MATCH_KEYS, applicability, expand_cells
from gpumatrix.config.loader import load_matrix, parse_matrix, torch_version_of_wheel, version_problem
from gpumatrix.config.model import (
    IPC_MODES,
    NVIDIA_MODES,
    SCHEMA_VERSION,
    TORCH_IN_IMAGE,
    TORCH_IN_IMAGE_LABEL,
    VENDORS,
    Base,
    Cell,
    Excluded,
    Expansion,
    Matrix,
    ReadyImage,
    RunOptions,
    TorchSpec,
    cell_id,
)
from gpumatrix.config.schema import load_schema
from gpumatrix.config.select import (
    expand_braces,
    gha_matrix,
    has_glob,
    matches,
    parse_shard,
    select,
    select_shard,
    shard_cells,
    split_patterns,
)
from gpumatrix.errors import ConfigError

__all__ = [
    "Base", "Cell", "ConfigError", "Excluded", "Expansion", "IPC_MODES", "MATCH_KEYS", "Matrix", "NVIDIA_MODES",
    "ReadyImage", "RunOptions", "SCHEMA_VERSION", "TORCH_IN_IMAGE", "TORCH_IN_IMAGE_LABEL", "TorchSpec", "VENDORS",
    "applicability", "cell_id", "expand_braces", "expand_cells", "gha_matrix", "has_glob", "load_matrix",
    "load_schema", "matches", "parse_matrix", "parse_shard", "select", "select_shard", "shard_cells",
    "split_patterns", "torch_version_of_wheel", "version_problem",
]
