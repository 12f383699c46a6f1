"""Files that are never half-written: temp file in the same folder, fsync, rename.

Text written here may come from a container or another host, so encoding never fails: a lone
surrogate (valid in a Python str, not in UTF-8) becomes U+FFFD. Files get the mode the user's umask
gives a new file (as ``open()`` would), or an explicit ``mode``: 0644 for a file a container's
unprivileged user must read.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize_text(text: str) -> str:
    """``text`` with every surrogate code point (unencodable in UTF-8) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _create_temp(path: Path, mode: int | None) -> tuple[int, Path]:
    """An exclusively created temp file beside ``path``; its mode is the umask default unless ``mode``."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            # 0o666 minus the umask, as open() gives a new file (mkstemp's 0600 would hide it from others).
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            os.fchmod(fd, mode)
        return fd, tmp
    raise FileExistsError(f"no free temporary name beside {path}")


def write_bytes_atomic(path: str | Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old file or the new one, never a part.

    ``mode`` (e.g. ``0o644``) sets the file's permissions regardless of the umask; by default a new
    file gets what the umask allows, as with ``open()``. Raises ``OSError`` (ENOSPC, EACCES …) and
    leaves no temp file behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp(path, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text_atomic(path: str | Path, text: str, mode: int | None = None) -> None:
    """``text`` as UTF-8, atomically; lone surrogates become U+FFFD instead of failing the write."""
    write_bytes_atomic(path, sanitize_text(text).encode("utf-8"), mode=mode)


def json_bytes(data: Any) -> bytes:
    """Deterministic JSON (sorted keys, 2-space indent, trailing newline) as UTF-8, lone surrogates as U+FFFD."""
    return sanitize_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write_json_atomic(path: str | Path, data: Any, mode: int | None = None) -> None:
    """:func:`json_bytes` of ``data``, written atomically.

    Any ``str`` content is writable: lone surrogates in keys or values become U+FFFD.
    """
    write_bytes_atomic(path, json_bytes(data), mode=mode)


def holds(path: str | Path, data: bytes) -> bool:
    """Whether the file at ``path`` already holds exactly ``data`` (False when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return os.fstat(f.fileno()).st_size == len(data) and f.read(len(data) + 1) == data
    except OSError:
        return False
