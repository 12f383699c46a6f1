"""Rebuild ``gpumatrix/data/diagnosis_model.json`` from the TRAIN sides of the diagnosis corpora.

    python tools/build_diagnosis_model.py          # write the model
    python tools/build_diagnosis_model.py --check  # exit 1 if the shipped model is stale

The examples are the curated corpus's ``split: train`` cases (``tests/diagnosis/corpus/``) and
every wild batch's ``*-train.yaml`` (``tests/diagnosis/wild/``). Held-out sides are never
trained on: a held-out figure must stay a measurement, not a fit. They are read for one thing
only: a train message whose text is word for word a held-out one (the same error reported in
another thread) is left out, so that no held-out text reaches the model by another door.

Run it after adding or changing a train case; ``tests/diagnosis/test_diagnosis_learned.py`` fails
while the shipped model is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpumatrix.diagnose.learned import build, dumps  # noqa: E402
from gpumatrix.fsutil import write_bytes_atomic  # noqa: E402

MODEL_PATH = ROOT / "gpumatrix" / "data" / "diagnosis_model.json"
CORPUS_DIR = ROOT / "tests" / "diagnosis" / "corpus"
WILD_DIR = ROOT / "tests" / "diagnosis" / "wild"


def _cases(path: Path) -> list[dict]:
    return [case for case in yaml.safe_load(path.read_text(encoding="utf-8")) or [] if isinstance(case, dict)]


def train_examples(root: Path = ROOT) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """``(cause, text)`` for every train case with text, and how many came from each file."""
    examples: list[tuple[str, str]] = []
    used: dict[str, int] = {}
    corpus = sorted((root / CORPUS_DIR.relative_to(ROOT)).glob("*.yaml"))
    wild = root / WILD_DIR.relative_to(ROOT)
    held_out = {str(case.get("text") or "").strip() for path in corpus for case in _cases(path)
                if case.get("split") == "holdout"}
    held_out |= {str(case.get("text") or "").strip()
                 for path in wild.glob("*-holdout.yaml") for case in _cases(path)}
    for path in corpus + sorted(wild.glob("*-train.yaml")):
        n = 0
        for case in _cases(path):
            text = str(case.get("text") or "").strip()
            if case.get("split") != "train" or not text or text in held_out:
                continue
            examples.append((str(case["cause"]), str(case["text"])))
            n += 1
        used[path.relative_to(root).as_posix()] = n
    return examples, used


def model_bytes(root: Path = ROOT) -> bytes:
    examples, used = train_examples(root)
    return dumps(build(examples, used)).encode("ascii")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the shipped model is current")
    args = parser.parse_args(argv)
    wanted = model_bytes()
    current = MODEL_PATH.read_bytes() if MODEL_PATH.exists() else b""
    if args.check:
        if current != wanted:
            print(f"{MODEL_PATH.relative_to(ROOT)} is stale: run python tools/build_diagnosis_model.py")
            return 1
        print(f"{MODEL_PATH.relative_to(ROOT)} is current")
        return 0
    if current != wanted:
        write_bytes_atomic(MODEL_PATH, wanted)
    print(f"wrote {MODEL_PATH.relative_to(ROOT)} ({len(wanted) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
