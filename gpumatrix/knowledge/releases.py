"""Release data that changes with PyTorch, CUDA and ROCm releases.

The facts live in YAML files under ``gpumatrix/data/`` with their sources; this
module only reads them. Update the files, not the code, when a release lands.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml

from gpumatrix.knowledge.versions import release

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


def numpy_requirement(torch_version: str) -> str:
    """The NumPy requirement an image with ``torch_version`` gets (``numpy``, or ``numpy<2`` before torch 2.3).

    pip resolves it with torch for the image's Python; the rules live in ``torch_releases.yaml`` (``numpy:``).
    A version that does not parse (a local wheel named oddly) gets the default."""
    data = load_data("torch_releases").get("numpy") or {}
    have = release(torch_version)  # release numbers only: a 2.3.0 pre-release is built like 2.3.0
    for rule in data.get("rules") or []:
        below = release(rule.get("torch_below"))
        if have and below and have < below:
            return str(rule["requirement"])
    return str(data.get("default") or "numpy")
