"""Loading the diagnosis corpus: real error texts with their expected cause and source."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CORPUS_DIR = Path(__file__).parent / "corpus"


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    cause: str
    split: str
    text: str
    facts: dict[str, Any] = field(default_factory=dict)
    file: str = ""


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CORPUS_DIR.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            cases.append(Case(file=path.name, facts=raw.pop("facts", None) or {}, **raw))
    return cases


CASES = load_cases()


def cases_in(split: str) -> list[Case]:
    return [c for c in CASES if c.split == split]
