"""The "wild" corpus: batches of real messages collected independently of the rules.

Each batch ``NAME`` is two files in ``tests/diagnosis/wild/``: ``NAME-holdout.yaml``, committed
on its own before any rule was written for the batch (``git log`` shows it), and
``NAME-train.yaml``, on which rules may be tuned. The split is by repository (by site for
non-GitHub sources), so that a whole thread family sits on one side; :func:`split_of` is
the rule and ``test_diagnosis_wild.py`` checks every ``split:`` field against it.

A *train-only set* ``NAME`` is a ``NAME-train.yaml`` with no held-out partner: messages collected to
train the learned last word and to write rules from, every one ``split: train``. Each was measured
once when it arrived, before anything was tuned on it (``TRAIN_ONLY`` in the test, and the docs).

``python tests/diagnosis/diagnosis_wild.py [BATCH] [holdout|train]`` prints the accuracy
on one side of a batch (default: every batch, held-out side), lists the misses, and ends with how
often the tool was right at each confidence it stated (its calibration on those messages).
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

WILD_DIR = Path(__file__).parent / "wild"
HOLDOUT_PERCENT = 40


@dataclass(frozen=True)
class WildCase:
    id: str
    source: str
    cause: str
    split: str
    text: str
    batch: str


def source_group(source: str) -> str:
    """The unit of the split: ``owner/name`` for GitHub, the host for other sites."""
    found = re.match(r"https://github\.com/([^/]+/[^/]+)/", source)
    if found:
        return found.group(1).lower()
    found = re.match(r"https?://([^/]+)/", source)
    return found.group(1).lower() if found else source


def split_of(batch: str, source: str) -> str:
    digest = hashlib.sha256(f"gpumatrix-wild-{batch}\n{source_group(source)}".encode("utf-8")).hexdigest()
    return "holdout" if int(digest[:8], 16) % 100 < HOLDOUT_PERCENT else "train"


def batches() -> list[str]:
    names = {p.name.rsplit("-", 1)[0] for p in WILD_DIR.glob("*-holdout.yaml")}
    return sorted(names, key=lambda name: (len(name), name))  # batch2 before batch10


def train_only_sets() -> list[str]:
    names = {p.name.rsplit("-", 1)[0] for p in WILD_DIR.glob("*-train.yaml")} - set(batches())
    return sorted(names, key=lambda name: (len(name), name))


def load(batch: str, side: str) -> list[WildCase]:
    path = WILD_DIR / f"{batch}-{side}.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return [WildCase(batch=batch, **entry) for entry in raw]


def measure(cases: list[WildCase]) -> tuple[int, list[str]]:
    """(number correct, one line per miss)."""
    correct, _, misses = _measure_ranked(cases)
    return correct, misses


def _measure_ranked(cases: list[WildCase],
                    by_confidence: dict[float, list[int]] | None = None) -> tuple[int, int, list[str]]:
    """(number correct, number with the label among the first three answers, one line per miss).

    ``by_confidence``, when given, gathers ``[answers, right]`` per confidence the tool stated.
    """
    from gpumatrix.diagnose import diagnose

    misses = []
    among_three = 0
    for case in cases:
        result = diagnose(case.text)
        among_three += case.cause in [result.cause, *(a.cause for a in result.alternatives)][:3]
        if by_confidence is not None:
            tally = by_confidence.setdefault(round(result.confidence, 2), [0, 0])
            tally[0] += 1
            tally[1] += result.cause == case.cause
        if result.cause != case.cause:
            misses.append(f"{case.id}: want {case.cause}, got {result.cause} ({result.rule}) "
                          f"[{result.evidence[:100]}]")
    return len(cases) - len(misses), among_three, misses


def main(argv: list[str]) -> int:
    names = [argv[0]] if argv else batches()
    side = argv[1] if len(argv) > 1 else "holdout"
    by_confidence: dict[float, list[int]] = {}
    for name in names:
        cases = load(name, side)
        correct, among_three, misses = _measure_ranked(cases, by_confidence)
        for miss in misses:
            print(f"  miss {miss}")
        print(f"{name} {side}: {correct}/{len(cases)} = {correct / len(cases):.1%} "
              f"(among the first three answers: {among_three}/{len(cases)})")
    # How far each stated confidence can be trusted on these messages (the tool's answer, not the label's).
    print("| stated confidence | answers | right |")
    print("|---:|---:|---:|")
    for confidence, (answers, right) in sorted(by_confidence.items(), reverse=True):
        print(f"| {confidence:.2f} | {answers} | {right}/{answers} = {right / answers:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
