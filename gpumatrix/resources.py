"""Where the files gpumatrix ships with live: the probe suite, the Dockerfile templates, the data.

In the repository they are the top-level ``probes/`` and ``images/`` folders; in a wheel they are the
packages ``gpumatrix.probes`` and ``gpumatrix.templates`` (``pyproject.toml`` maps the folders onto
those names), so the same :mod:`importlib.resources` lookup finds them in an editable checkout and in
a plain ``pip install .``. ``GPUMATRIX_PROBES_DIR`` / ``GPUMATRIX_IMAGES_DIR`` point elsewhere (tests,
a probe suite under development).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

CACHE_ENV = "GPUMATRIX_CACHE_DIR"


def _package_dir(package: str) -> Path:
    # Both packages are plain folders on disk (never zipped): they are bind-mounted into containers
    # and sent as build contexts, so a real path is required.
    return Path(str(resources.files(package)))


def probes_dir() -> Path:
    """The probe suite's folder, bind-mounted read-only into every probe container."""
    return Path(os.environ.get("GPUMATRIX_PROBES_DIR") or _package_dir("gpumatrix.probes"))


def templates_dir() -> Path:
    """The Dockerfile templates and install scripts (the repository's ``images/``)."""
    return Path(os.environ.get("GPUMATRIX_IMAGES_DIR") or _package_dir("gpumatrix.templates"))


def cache_root() -> Path:
    """``$GPUMATRIX_CACHE_DIR``, else platformdirs' user cache folder for gpumatrix (the wheelhouse, the
    compile caches, remembered matrix validations)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    import platformdirs

    return platformdirs.user_cache_path("gpumatrix")
