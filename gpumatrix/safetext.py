"""Foreign text made safe to show: the one rule every renderer and the live progress use.

Everything a container prints is hostile input. A control character reaches a terminal as a command
(``ESC [2J`` clears it; ``\\r`` overwrites a line), makes XML ill-formed, and a bidirectional override
reorders text on screen. :func:`clean` spells such characters out so the text stays readable and shows
what was there. The per-format escapes built on it are in :mod:`gpumatrix.report.escape`.
"""

from __future__ import annotations

import re

# C0 and C1 controls (tab and newline are handled apart), DEL, lone surrogates, the noncharacters XML
# forbids, and the bidirectional overrides/isolates that reorder text on screen ("Trojan Source").
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u061c\u200e\u200f\u2028-\u202e"
                     "\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: object, newlines: bool = False) -> str:
    """``text`` with unsafe characters spelled out; newlines kept if ``newlines``, else shown as ``⏎``."""
    text = _UNSAFE.sub(_shown, str(text)).replace("\t", " ")
    return text if newlines else text.replace("\n", " ⏎ ")
