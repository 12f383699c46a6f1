"""How the learned tier's settings fare on messages the rules had not seen: a replay on train sides.

    python tools/diagnosis_replay.py [--scoring complement|multinomial] [--min-posterior X]
                                     [--overrule X|none] [--alpha X]
                                     [--overrule-below C [--overrule-weak X]] [--signal-extra REGEX]

Every wild batch's train side is diagnosed by the rules as they were when its held-out side was
frozen, and every train-only set by the rules of the commit it was measured with on arrival
(``TRAIN_ONLY`` in tests/diagnosis/test_diagnosis_wild.py), each in a temporary git worktree with the
learned tier switched off there. Then today's learned tier is applied as the engine applies it (the
last word where those rules said ``unknown``, the overruling of a fallback), through the engine's own
function, with the settings given (default: the rules file's) and a model built from every train
example except that set's (leave one set out). ``--overrule-below C`` tries what the engine does not do:
letting the model overrule any rule whose stated confidence is below C (the ranked symptoms) when it
reads another cause with a posterior of at least ``--overrule-weak``. ``--signal-extra`` tries a wider gate: one
more ``learned.signal`` pattern, checked and compiled as the rules file's are. The line under the table counts the
``unknown`` answers left, the ones the issue's "no `unknown` on GPU-stack input" is about. Only train sides are read and trained on, so the
figures can be rerun while choosing settings without measuring a held-out side. docs/diagnosis.md
("Complement scoring" and the sections before it) quotes the output. It takes a few minutes.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpumatrix.diagnose.learned as learned  # noqa: E402
from gpumatrix.diagnose import RulesError, facts_from_reports, load_rules  # noqa: E402
from gpumatrix.diagnose.engine import learned_reading  # noqa: E402
from gpumatrix.diagnose.text import clean_lines, decode, prepare  # noqa: E402
from tools.build_diagnosis_model import WILD_DIR, train_examples  # noqa: E402
from tools.diagnosis_history import _git, freezing_commit, old_answers, table_row  # noqa: E402

WILD_TEST = ROOT / "tests" / "diagnosis" / "test_diagnosis_wild.py"

# Runs inside the old checkout: each text's answer with the learned tier off, and the answering rule's tier.
_OLD = """
import dataclasses, json, sys
sys.path.insert(0, '.')
from gpumatrix.diagnose import diagnose, load_rules
rules = load_rules()
if getattr(rules, 'learned', None) is not None:
    rules = dataclasses.replace(rules, learned=None)
tiers = {r.id: getattr(r, 'tier', '') for r in rules.rules}
out = []
for text in json.load(sys.stdin):
    d = diagnose(text, rules=rules)
    out.append([d.cause, d.rule, tiers.get(d.rule, ''), getattr(d, 'confidence', 0.8)])
json.dump(out, sys.stdout)
"""


def arrival_commits() -> dict[str, str]:
    """The train-only sets and the commit each was measured with on arrival, read from the test (no import)."""
    tree = ast.parse(WILD_TEST.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "TRAIN_ONLY" for t in node.targets):
            return {name: figures["commit"] for name, figures in ast.literal_eval(node.value).items()}
    raise SystemExit(f"{WILD_TEST}: no TRAIN_ONLY table")


def _natural(path: Path) -> tuple[str, int]:
    """batch2 before batch10, batches before extras."""
    stem = path.name.rsplit("-", 1)[0]
    digits = stem.lstrip("abcdefghijklmnopqrstuvwxyz")
    return stem[: len(stem) - len(digits)], int(digits or 0)


def replay_sets() -> list[tuple[str, str]]:
    """``(set name, commit whose rules had not seen it)`` for every train side that has one."""
    arrivals = arrival_commits()
    sets = []
    for path in sorted(WILD_DIR.glob("*-train.yaml"), key=_natural):
        name = path.name.rsplit("-", 1)[0]
        if (WILD_DIR / f"{name}-holdout.yaml").exists():
            sets.append((name, freezing_commit(name)))
        elif name in arrivals:
            sets.append((name, _git("rev-parse", arrivals[name])))
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scoring", choices=learned.SCORINGS, default=learned.SCORING)
    parser.add_argument("--alpha", type=float, default=learned.ALPHA)
    parser.add_argument("--min-posterior", type=float, default=None)
    parser.add_argument("--overrule", default=None, help="overrule_fallbacks, or 'none' for never")
    parser.add_argument("--overrule-below", type=float, default=None,
                        help="also let the model overrule a rule whose stated confidence is below this (an experiment)")
    parser.add_argument("--overrule-weak", type=float, default=0.9,
                        help="the posterior the model needs for that (default 0.9)")
    parser.add_argument("--signal-extra", default=None, metavar="REGEX",
                        help="one more learned.signal pattern, case-insensitive (an experiment)")
    args = parser.parse_args(argv)

    rules = load_rules()
    if rules.learned is None:
        print("the rules file has no learned block: nothing to replay", file=sys.stderr)
        return 1
    gate = rules.learned
    if args.min_posterior is not None:
        gate = dataclasses.replace(gate, min_posterior=args.min_posterior)
    if args.overrule is not None:
        gate = dataclasses.replace(gate, overrule_fallbacks=None if args.overrule == "none" else float(args.overrule))
    if args.signal_extra:
        try:  # the loader's own checks (bounded repeats, flags) and the file's fragments for a pattern given here
            extra = rules.compile_pattern(args.signal_extra, "--signal-extra")
        except RulesError as err:
            parser.error("; ".join(err.problems))
        gate = dataclasses.replace(gate, signal=gate.signal + (extra,))
    by_id = {rule.id: rule for rule in rules.rules}
    all_examples, _ = train_examples()
    print(f"scoring {args.scoring}, alpha {args.alpha}, min_posterior {gate.min_posterior}, "
          f"overrule_fallbacks {gate.overrule_fallbacks}"
          + (f", overrule below {args.overrule_below} at {args.overrule_weak}" if args.overrule_below else "")
          + (f", signal also {args.signal_extra!r}" if args.signal_extra else ""))
    print("| set (train side) | rules of | cases | rules then | + learned tier | changed | of which right |")
    print("|---|---|---:|---:|---:|---:|---:|")
    totals = [0, 0, 0, 0, 0]
    unknown_left = unknown_labelled = 0
    with tempfile.TemporaryDirectory(prefix="gpumatrix-replay-") as scratch:
        for name, commit in replay_sets():
            cases = [(c["cause"], c["text"]) for c in yaml.safe_load((WILD_DIR / f"{name}-train.yaml").read_text(
                encoding="utf-8")) or []]
            mine = {text for _, text in cases}
            document = learned.build([e for e in all_examples if e[1] not in mine])
            document.update(alpha=args.alpha, scoring=args.scoring)
            model_path = Path(scratch) / f"{name}.json"
            model_path.write_text(learned.dumps(document), encoding="utf-8")
            ruleset = dataclasses.replace(rules, learned=dataclasses.replace(gate, model=str(model_path)))
            weak_rules = dataclasses.replace(rules, learned=dataclasses.replace(
                gate, model=str(model_path), overrule_fallbacks=args.overrule_weak))
            rules_right = final_right = changed = changed_right = 0
            answers = old_answers(commit, [text for _, text in cases], Path(scratch), _OLD)
            for (label, text), (answer, rule_id, tier, confidence) in zip(cases, answers):
                final = answer
                current = by_id.get(rule_id)
                tier = tier or (current.tier if current else "")  # old checkouts without tiers: today's
                is_fallback = current is not None and tier in ("fallback", "last_resort") and current.tier == tier
                fallback = current if is_fallback else None
                overruled, gate_rules = None, None
                if answer == "unknown":
                    gate_rules = ruleset
                elif fallback is not None:
                    overruled, gate_rules = fallback, ruleset
                elif args.overrule_below is not None and current is not None and confidence < args.overrule_below:
                    # the experiment: the rule stands in for a fallback, with the weak threshold
                    overruled, gate_rules = dataclasses.replace(current, cause=answer), weak_rules
                if gate_rules is not None:
                    lines = clean_lines(decode(text))
                    reported = facts_from_reports(lines)
                    diagnosis, _ = learned_reading(gate_rules, prepare(lines), reported, report=bool(reported),
                                                   fallback=overruled)
                    if diagnosis is not None:
                        final = diagnosis.cause
                unknown_left += final == "unknown"
                unknown_labelled += final == "unknown" and label == "unknown"
                rules_right += answer == label
                final_right += final == label
                changed += final != answer
                changed_right += final != answer and final == label
            n = len(cases)
            for i, value in enumerate((n, rules_right, final_right, changed, changed_right)):
                totals[i] += value
            print(table_row(name, (n, rules_right, final_right, changed, changed_right), commit[:7]), flush=True)
    print(table_row("all", totals, ""))
    print(f"\nunknown after the learned tier: {unknown_left} (labelled unknown: {unknown_labelled})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
