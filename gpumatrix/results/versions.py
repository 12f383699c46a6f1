"""Torch versions, compared as versions (PEP 440 via :mod:`packaging.version`), never as strings."""

from __future__ import annotations

from functools import lru_cache

from packaging.version import InvalidVersion, Version


@lru_cache(maxsize=1024)
def parse_version(text: str) -> Version | None:
    """``text`` as a :class:`~packaging.version.Version`, or None when it is not one."""
    try:
        return Version(str(text))
    except InvalidVersion:
        return None


def version_key(text: str) -> tuple:
    """Sort key: ``2.9.0a0+rocm6.4`` < ``2.9.1`` < ``2.10.0``; text that is not a version sorts first, by text.

    Total over any string, so a corrupt ``torch`` field never breaks sorting.
    """
    version = parse_version(text)
    return (1, version, text) if version is not None else (0, str(text))


def at_least(text: str, minimum: str) -> bool:
    """Whether torch ``text`` is ``minimum`` or newer (``2.9.1+cu130`` is at least ``2.9``); False if not a version."""
    have, want = parse_version(text), parse_version(minimum)
    return have is not None and want is not None and have >= want
