"""The rules author's bench for wild batches: freeze a held-out side blind, then see what a rule change moves.

    python tools/wild_batches.py freeze BATCH [--rules-from REV] [--side holdout|train]
    python tools/wild_batches.py misses BATCH            # a TRAIN side's misses, with the answers ranked
    python tools/wild_batches.py answers OUT.json        # every labelled message's answer, saved
    python tools/wild_batches.py compare OLD.json NEW.json [--show-holdout]
    python tools/wild_batches.py unknowns [BATCH ...]     # held-out `unknown`s, for the docs' list

The procedure they serve is docs/diagnosis.md "A new wild batch, kept honest":

``freeze`` measures one side of a batch with the rules and model of a commit (default ``HEAD``: the
commit's ``gpumatrix`` package is extracted with ``git archive`` into a temporary folder and imported from
there, so uncommitted rule edits never leak into a figure at freezing). On a held-out side it prints the
figure and nothing else (no miss, no answer), so that measuring it does not show its texts to the rules'
author; on a train side it prints the misses too (the train side's "at arrival" figure).

``misses`` lists a train side's misses with the rule that answered, the stated confidence, the first three
answers and the lines around the evidence: what the author reads to write rules. It refuses held-out sides.

``answers`` diagnoses every labelled message (both sides of every wild batch, the train-only sets, the curated
corpus, the messages recorded on a real GPU) and saves the answers. ``compare`` shows what a change moved between
two such files: the train-side, corpus and recorded messages one by one (``+`` now right, ``-`` now wrong, ``~``
another wrong answer), the held-out ones only as counts unless ``--show-holdout`` is given (for after a batch's
figures are recorded). Keeping the author blind is the point of both defaults.

``unknowns`` lists the held-out messages answered ``unknown`` (all batches, or those named) with the line the
tool showed: the docs' list of unknowns left on GPU-stack input is written from it, after the figures are
recorded, and a rule later written for one of them is not blind (the docs say so).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "diagnosis"
RECORDED = TESTS / "recorded"

# Runs under the extracted package: measures one side with the measuring script's own counting
# (diagnosis_wild._measure_ranked) and prints one JSON line (counts, and the misses for a train side).
_MEASURE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from diagnosis_wild import _measure_ranked, load
cases = load(sys.argv[2], sys.argv[3])
right, three, misses = _measure_ranked(cases)
print(json.dumps({"cases": len(cases), "right": right, "three": three, "misses": misses}))
"""


def _extract(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", "--format=tar", rev, "gpumatrix"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    tar_path = into / "gpumatrix.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    tar_path.unlink()


def measure_at(rev: str, batch: str, side: str) -> dict[str, Any]:
    """One side of a batch (read from this tree) diagnosed by the package of commit ``rev``."""
    with tempfile.TemporaryDirectory(prefix="gpumatrix-rules-") as tmp:
        _extract(rev, Path(tmp))
        env = {**os.environ, "PYTHONPATH": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
        out = subprocess.run([sys.executable, "-c", _MEASURE, str(TESTS), batch, side], cwd=tmp, env=env,
                             check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def cmd_freeze(args: argparse.Namespace) -> int:
    rev = subprocess.run(["git", "rev-parse", "--short", args.rules_from], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    got = measure_at(rev, args.batch, args.side)
    n = got["cases"]
    print(f"{args.batch} {args.side} with the rules and model of {rev}: {got['right']}/{n} = "
          f"{got['right'] / max(n, 1):.1%} (among the first three: {got['three']}/{n})")
    if args.side == "train":
        for miss in got["misses"]:
            print(f"  miss {miss}")
    return 0


def _wild() -> Any:
    sys.path.insert(0, str(TESTS))
    import diagnosis_wild
    return diagnosis_wild


def _around(text: str, evidence: str, width: int = 600) -> str:
    at = text.find(evidence[:60]) if evidence else -1
    start = max(0, at - width // 3) if at >= 0 else 0
    return text[start:start + width]


def cmd_misses(args: argparse.Namespace) -> int:
    if args.side != "train":
        print("misses reads train sides only: a held-out side is measured blind (freeze)", file=sys.stderr)
        return 2
    from gpumatrix.diagnose import diagnose

    wild = _wild()
    cases = wild.load(args.batch, "train")
    shown = 0
    for case in cases:
        result = diagnose(case.text)
        if result.cause == case.cause:
            continue
        shown += 1
        ranked = ", ".join(a.cause for a in result.alternatives[:2])
        print(f"== {case.id} ({case.source})\n   want {case.cause}; got {result.cause} via {result.rule} "
              f"at {result.confidence:.2f}; then {ranked or 'nothing'}")
        print("   " + _around(case.text, result.evidence).replace("\n", "\n   "))
    print(f"{args.batch} train: {len(cases) - shown}/{len(cases)} right")
    return 0


def labelled() -> list[tuple[str, str, str]]:
    """(key, label, text) for every labelled message; the key says where it lives and on which side."""
    wild = _wild()
    from diagnosis_corpus import CASES

    items = []
    for batch in wild.batches():
        for side in ("train", "holdout"):
            items += [(f"wild:{batch}:{side}:{c.id}", c.cause, c.text) for c in wild.load(batch, side)]
    for name in wild.train_only_sets():
        items += [(f"wild:{name}:train:{c.id}", c.cause, c.text) for c in wild.load(name, "train")]
    items += [(f"corpus:{c.file}:{c.split}:{c.id}", c.cause, c.text) for c in CASES]
    for path in sorted(RECORDED.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            items.append((f"recorded:{path.stem}:train:{raw['id']}", raw["cause"], raw["text"]))
    return items


def _answer(item: tuple[str, str, str]) -> tuple[str, dict[str, Any]]:
    from gpumatrix.diagnose import diagnose

    key, label, text = item
    result = diagnose(text)
    ranked = [result.cause, *(a.cause for a in result.alternatives)][:3]
    return key, {"label": label, "cause": result.cause, "rule": result.rule,
                 "confidence": round(result.confidence, 2), "three": ranked}


def cmd_answers(args: argparse.Namespace) -> int:
    items = labelled()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        answers = dict(pool.map(_answer, items, chunksize=64))
    out = Path(args.out)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(answers, indent=0, sort_keys=True), encoding="utf-8")
    tmp.replace(out)
    right = sum(a["cause"] == a["label"] for a in answers.values())
    print(f"{len(answers)} messages answered, {right} right; saved in {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    old = json.loads(Path(args.old).read_text(encoding="utf-8"))
    new = json.loads(Path(args.new).read_text(encoding="utf-8"))
    held = {"+": 0, "-": 0, "~": 0}
    shown = {"+": 0, "-": 0, "~": 0}
    for key in sorted(set(old) & set(new)):
        a, b = old[key], new[key]
        if a["cause"] == b["cause"]:
            continue
        mark = "+" if b["cause"] == b["label"] else "-" if a["cause"] == a["label"] else "~"
        if ":holdout:" in key and not args.show_holdout:
            held[mark] += 1
            continue
        shown[mark] += 1
        print(f"{mark} {key}: label {b['label']}; {a['cause']} ({a['rule']}) -> {b['cause']} ({b['rule']}, "
              f"{b['confidence']:.2f})")
    print(f"shown: {shown['+']} now right, {shown['-']} now wrong, {shown['~']} wrong another way")
    print(f"held out (not shown): {held['+']} now right, {held['-']} now wrong, {held['~']} wrong another way")
    if set(old) ^ set(new):
        print(f"{len(set(new) - set(old))} messages only in NEW, {len(set(old) - set(new))} only in OLD")
    return 0


def cmd_unknowns(args: argparse.Namespace) -> int:
    from gpumatrix.diagnose import diagnose

    wild = _wild()
    count = 0
    for batch in args.batches or wild.batches():
        for case in wild.load(batch, "holdout"):
            result = diagnose(case.text)
            if result.cause == "unknown":
                count += 1
                print(f"{batch} {case.id} (label {case.cause}): {result.evidence[:160]!r}")
    print(f"{count} held-out messages answered unknown")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    freeze = sub.add_parser("freeze", help="measure one side with a commit's rules (held out: the figure only)")
    freeze.add_argument("batch")
    freeze.add_argument("--rules-from", default="HEAD", help="the commit whose rules and model answer")
    freeze.add_argument("--side", choices=("holdout", "train"), default="holdout")
    freeze.set_defaults(run=cmd_freeze)
    misses = sub.add_parser("misses", help="a train side's misses, with answers ranked and the evidence's lines")
    misses.add_argument("batch")
    misses.add_argument("side", nargs="?", default="train")
    misses.set_defaults(run=cmd_misses)
    answers = sub.add_parser("answers", help="save every labelled message's answer as JSON")
    answers.add_argument("out")
    answers.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    answers.set_defaults(run=cmd_answers)
    compare = sub.add_parser("compare", help="what changed between two saved answer files")
    compare.add_argument("old")
    compare.add_argument("new")
    compare.add_argument("--show-holdout", action="store_true", help="list held-out changes one by one")
    compare.set_defaults(run=cmd_compare)
    unknowns = sub.add_parser("unknowns", help="held-out messages answered unknown, with the line shown")
    unknowns.add_argument("batches", nargs="*")
    unknowns.set_defaults(run=cmd_unknowns)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
