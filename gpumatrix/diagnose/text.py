"""Turning any input into bounded, clean text: decoding, capping, flattening."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# Only the start and the end of a log matter: the command that was run and the
# error it ended with. Everything in between is capped away so that a 5 GB log
# costs the same as a 320 KB one.
HEAD_CHARS = 64 * 1024
TAIL_CHARS = 256 * 1024
MAX_LINE_CHARS = 4096
EVIDENCE_CHARS = 300

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_WHITESPACE_RUN = re.compile(r"\s+")
_ERROR_LIKE = re.compile(
    r"error|exception|fail|fatal|abort|denied|not found|cannot|unable|killed|assert",
    re.IGNORECASE,
)


def decode(text: str | bytes | bytearray | memoryview | None) -> str:
    """Any input as ``str``: bytes as UTF-8 with replacement characters, capped before decoding."""
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if len(raw) > (HEAD_CHARS + TAIL_CHARS) * 4:
            raw = raw[: HEAD_CHARS * 4] + b"\n" + raw[-TAIL_CHARS * 4 :]
        return raw.decode("utf-8", errors="replace")
    return str(text)


def clean_lines(text: str) -> list[str]:
    """The capped text as lines: colours and control characters dropped, long lines cut, CRLF handled.

    Leading whitespace is kept (reports such as ``nvidia-smi -q`` are indented), trailing is not.
    """
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    text = _ANSI_ESCAPE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_CHARS.sub(" ", text)
    return [line[:MAX_LINE_CHARS].rstrip() for line in text.split("\n")]


@dataclass(frozen=True)
class Text:
    """A log flattened to one line for matching, with the original line boundaries kept."""

    lines: tuple[str, ...]
    starts: tuple[int, ...]
    flat: str

    def evidence(self, start: int, end: int) -> str:
        """The line(s) holding ``flat[start:end]``, trimmed to about EVIDENCE_CHARS."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, max(start, end - 1)) - 1
        seg_start = self.starts[first]
        seg_end = self.starts[last] + len(self.lines[last])
        if seg_end - seg_start <= EVIDENCE_CHARS:
            return self.flat[seg_start:seg_end]
        lo = max(seg_start, min(start - 60, seg_end - EVIDENCE_CHARS))
        hi = min(seg_end, lo + EVIDENCE_CHARS)
        return ("…" if lo > seg_start else "") + self.flat[lo:hi] + ("…" if hi < seg_end else "")

    def most_error_like(self) -> str:
        """The last line that looks like an error, else the last line."""
        if not self.lines:
            return "(no log text and no deciding facts)"
        for line in reversed(self.lines):
            if _ERROR_LIKE.search(line):
                return line[:EVIDENCE_CHARS]
        return self.lines[-1][:EVIDENCE_CHARS]


def prepare(lines: list[str]) -> Text:
    """Flatten cleaned lines to one string (so wrapped messages still match), whitespace squeezed."""
    kept: list[str] = []
    starts: list[int] = []
    pos = 0
    for raw_line in lines:
        line = _WHITESPACE_RUN.sub(" ", raw_line).strip()
        if not line:
            continue
        kept.append(line)
        starts.append(pos)
        pos += len(line) + 1
    return Text(tuple(kept), tuple(starts), " ".join(kept))
