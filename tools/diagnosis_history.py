"""How much the learned last word adds on messages the rules had not seen: a replay of history.

    python tools/diagnosis_history.py

For each wild batch, the rules as they were when its held-out side was frozen (the commit that
added ``BATCHn-holdout.yaml``, checked out into a temporary git worktree) diagnose the batch's
TRAIN side, which no rule had been tuned on yet. Then the current learned tier answers where those
rules said ``unknown``, with a model built from every train side except this batch's (leave one
batch out). Only train sides are scored and trained on (held-out texts are read for one thing, by
``train_examples``: to leave out a train text that repeats one word for word), so the figures can be
rerun while designing the tier without measuring a held-out side. Batches frozen after the tier existed (batch 8 on) are left out:
their figure at freezing already includes it (FROZEN in test_diagnosis_wild.py). docs/diagnosis.md
("The learned last word") quotes the output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpumatrix.diagnose import facts_from_reports, load_rules  # noqa: E402
from gpumatrix.diagnose.learned import Model, build  # noqa: E402
from gpumatrix.diagnose.text import clean_lines, decode, prepare  # noqa: E402
from tools.build_diagnosis_model import WILD_DIR, train_examples  # noqa: E402

# Runs inside the old checkout: diagnose each text of a JSON list read from stdin.
_OLD = ("import json, sys\nsys.path.insert(0, '.')\nfrom gpumatrix.diagnose import diagnose\n"
        "json.dump([diagnose(t).cause for t in json.load(sys.stdin)], sys.stdout)\n")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def freezing_commit(batch: str) -> str:
    """The commit that added the batch's held-out side: the rules had not seen the batch there."""
    path = (WILD_DIR / f"{batch}-holdout.yaml").relative_to(ROOT).as_posix()
    return _git("log", "--format=%H", "--diff-filter=A", "--", path).splitlines()[-1]


def _has_learned_tier(commit: str) -> bool:
    found = subprocess.run(["git", "cat-file", "-e", f"{commit}:gpumatrix/diagnose/learned.py"], cwd=ROOT,
                           capture_output=True, check=False)
    return found.returncode == 0


def old_answers(commit: str, texts: list[str], scratch: Path, script: str = _OLD) -> list[Any]:
    """What ``script`` (run in a temporary worktree of ``commit``) prints as JSON for the texts on its stdin."""
    tree = scratch / commit[:12]
    _git("worktree", "add", "--detach", "--quiet", str(tree), commit)
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=tree, input=json.dumps(texts),
                              capture_output=True, text=True, check=True, env={"PYTHONPATH": str(tree)})
        return list(json.loads(done.stdout))
    finally:
        _git("worktree", "remove", "--force", str(tree))


def main() -> int:
    gate = load_rules().learned
    if gate is None:
        print("the rules file has no learned block: nothing to replay", file=sys.stderr)
        return 1
    examples_by_file: dict[str, list[tuple[str, str]]] = {}
    all_examples, _ = train_examples()
    for path in sorted(WILD_DIR.glob("*-train.yaml")):
        if not (WILD_DIR / path.name.replace("-train.yaml", "-holdout.yaml")).exists():
            continue  # a train-only set: no freezing commit to replay (its figure on arrival is in TRAIN_ONLY)
        cases = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        examples_by_file[path.name] = [(c["cause"], c["text"]) for c in cases]
    totals = [0, 0, 0, 0, 0]
    print("| batch (train side) | cases | rules at freezing | + learned | learned spoke | of which right |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="gpumatrix-history-") as scratch:
        for name, cases in examples_by_file.items():
            batch = name.rsplit("-", 1)[0]
            commit = freezing_commit(batch)
            if _has_learned_tier(commit):
                continue  # frozen with the learned tier already: its figure at freezing is in FROZEN
            mine = set(cases)
            model = Model(build([e for e in all_examples if e not in mine]))
            old = old_answers(commit, [text for _, text in cases], Path(scratch))
            rules_right = learned_right = spoke = spoke_right = 0
            for (cause, text), answer in zip(cases, old):
                final = answer
                lines = clean_lines(decode(text))
                flat = prepare(lines).flat
                if answer == "unknown" and gate.admits(flat, report=bool(facts_from_reports(lines))):
                    reading = model.read(flat)
                    if reading.cause != "unknown" and reading.posterior >= gate.min_posterior:
                        final = reading.cause
                        spoke += 1
                        spoke_right += final == cause
                rules_right += answer == cause
                learned_right += final == cause
            n = len(cases)
            for i, value in enumerate((n, rules_right, learned_right, spoke, spoke_right)):
                totals[i] += value
            print(table_row(batch, (n, rules_right, learned_right, spoke, spoke_right)))
    print(table_row("all", totals))
    return 0


def table_row(name: str, counts: list[int] | tuple[int, ...], *cells: str) -> str:
    """``| name | cells... | n | before | after | changed | right |``: a row of the replay tables."""
    n, before, after, changed, right = counts
    return " | ".join(["", name, *cells, str(n), f"{before}/{n} = {before / n:.1%}", f"{after}/{n} = {after / n:.1%}",
                       str(changed), str(right), ""]).strip()


if __name__ == "__main__":
    sys.exit(main())
