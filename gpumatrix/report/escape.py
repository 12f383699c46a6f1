"""Text from a container (reasons, probe messages, host names, cell ids) made safe for each format.

Everything a container prints is hostile input. A control character reaches a terminal as a command
(``ESC [2J`` clears it; ``\\r`` overwrites a line), makes XML ill-formed (``\\x00``, ``\\x0c``,
``\\ufffe``), and a Markdown ``<!--`` hides the rest of a job summary. Each renderer passes every piece
of foreign text through one of these functions; they keep the text readable and show what was there
(``\\x1b`` is shown as the four characters ``\\x1b``).
"""

from __future__ import annotations

import re

from gpumatrix.safetext import clean as clean  # the renderers import every escape from here

# Characters Markdown (GitHub's) gives a meaning to inside a table or a list item; an underscore only
# where it can open or close emphasis (not inside a word such as math_libraries).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def markdown(text: object) -> str:
    """One line of literal text for a Markdown table cell or list item: nothing in it formats, links,
    opens an HTML comment or tag, or splits the row."""
    text = clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(), text)


def xml(text: object) -> str:
    """Text for an XML 1.0 attribute or element: only characters XML allows (newlines kept)."""
    return clean(text, newlines=True)
