"""Release data that changes with PyTorch, CUDA and ROCm releases.

The facts live in YAML files under ``gpumatrix/data/`` with their sources; this
module only reads them. Update the files, not the code, when a release lands.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml

# libyaml's parser with PyYAML's safe constructors, where PyYAML was built with it: the same objects as
# yaml.safe_load (tests/test_knowledge.py compares every data file), several times faster.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=None)
def load_data(name: str) -> dict[str, Any]:
    """Load ``gpumatrix/data/<name>.yaml`` (parsed once per process)."""
    text = resources.files("gpumatrix").joinpath("data").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    data = yaml.load(text, Loader=SafeLoader)
    if not isinstance(data, dict):
        raise ValueError(f"gpumatrix/data/{name}.yaml is not a mapping")
    return data


def torch_release(version: str) -> dict[str, Any] | None:
    """Release facts for a torch version (``{"variants": [...], "python": [...]}``), or None if unknown."""
    releases = load_data("torch_releases").get("releases", {})
    entry = releases.get(version) or releases.get(version.split("+", 1)[0])
    return entry if isinstance(entry, dict) else None
