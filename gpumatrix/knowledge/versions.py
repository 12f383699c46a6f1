"""The one version type: :class:`packaging.version.Version`, with a lenient parser for what tools print.

Driver versions (``580.95.05``), CUDA versions (``13.0``), torch versions (``2.9.0a0+rocm6.4``) and engine
versions (``20.10.24+dfsg1``) all parse as PEP 440 versions. Tools also print things that do not
(``28.0.1-ce``, ``V12.8.93``, ``6.4.1-120``): :func:`parse_version` then keeps the leading dotted number.
"""

from __future__ import annotations

import re
from typing import Any

from packaging.version import InvalidVersion, Version

__all__ = ["Version", "at_least", "parse_version", "release", "version_key"]

_LEADING_NUMBER = re.compile(r"[vV]?(\d+(?:\.\d+)*)", re.ASCII)  # Version() takes ASCII digits only


def parse_version(value: Any) -> Version | None:
    """``value`` as a :class:`Version`, or None when it holds no version at all.

    >>> parse_version("580.95.05").release
    (580, 95, 5)
    >>> parse_version("28.0.1-ce")
    <Version('28.0.1')>
    """
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    try:
        return Version(text)
    except InvalidVersion:
        m = _LEADING_NUMBER.match(text)
        return Version(m.group(1)) if m else None


def release(value: Any, parts: int | None = None) -> tuple[int, ...]:
    """The numeric release of ``value`` (``()`` when there is none), cut to ``parts`` components.

    For comparisons of release numbers only (``(12, 8) <= (13, 0)``); local labels and pre-releases
    are ignored.
    """
    v = parse_version(value)
    numbers = v.release if v is not None else ()
    return numbers[:parts] if parts is not None else numbers


def version_key(value: Any) -> tuple:
    """Sort key: ``2.9.0a0+rocm6.4`` < ``2.9.1`` < ``2.10.0``; what is not a version sorts first, by text.

    Total over any value, so a corrupt ``torch`` field in a results file never breaks sorting.
    """
    v = parse_version(value)
    return (1, v, str(value)) if v is not None else (0, str(value))


def at_least(value: Any, minimum: Any) -> bool:
    """Whether ``value`` is ``minimum`` or newer (``2.9.1+cu130`` is at least ``2.9``); False if either is no version."""
    have, want = parse_version(value), parse_version(minimum)
    return have is not None and want is not None and have >= want
