"""The deterministic train/holdout split of the diagnosis corpus.

A case's split depends only on its source URL and its text, so adding cases never
moves old ones, and nobody can move a case to make a rule look better:
``test_diagnosis_corpus.py`` checks every ``split:`` field against :func:`split_of`.

Run ``python tests/diagnosis/diagnosis_split.py`` to (re)write the ``split:`` fields.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

HOLDOUT_PERCENT = 30
CORPUS_DIR = Path(__file__).parent / "corpus"


def split_of(source: str, text: str) -> str:
    """``"holdout"`` for about HOLDOUT_PERCENT % of cases, ``"train"`` for the rest."""
    digest = hashlib.sha256(f"{source}\n{text}".encode("utf-8")).hexdigest()
    return "holdout" if int(digest[:8], 16) % 100 < HOLDOUT_PERCENT else "train"


def _rewrite(path: Path) -> None:
    import yaml

    cases = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    splits = iter(split_of(c["source"], c["text"]) for c in cases)
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.match(r"  split: ", line):
            continue
        lines.append(line)
        if re.match(r"  cause: ", line):
            lines.append(f"  split: {next(splits)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    for path in sorted(CORPUS_DIR.glob("*.yaml")):
        _rewrite(path)
    sys.exit(0)
