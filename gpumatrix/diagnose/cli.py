"""``python -m gpumatrix.diagnose``: classify a pasted log or a saved cell result."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from .cellresult import facts_from_cell_result, failure_text_of_cell
from .engine import Diagnosis, diagnose
from .rules import RulesError, load_rules
from .text import HEAD_CHARS, TAIL_CHARS

# The keys --json always printed; new keys are only ever added after them.
JSON_KEYS = ("cause", "remedy", "evidence")


def _read_input(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read((HEAD_CHARS + TAIL_CHARS) * 64)
    path = Path(source)
    size = path.stat().st_size
    limit = (HEAD_CHARS + TAIL_CHARS) * 4
    with path.open("rb") as handle:
        if size <= limit:
            return handle.read()
        head = handle.read(HEAD_CHARS * 4)
        handle.seek(size - TAIL_CHARS * 4)
        return head + b"\n" + handle.read()


def format_text(diagnosis: Diagnosis) -> str:
    """The human rendering of a diagnosis, as the CLI prints it."""
    lines = [
        f"cause:    {diagnosis.cause}",
        f"remedy:   {diagnosis.remedy}",
        f"evidence: {diagnosis.evidence}",
        f"why:      {diagnosis.explanation}",
        f"rule:     {diagnosis.rule or '-'}",
        f"confidence: {diagnosis.confidence:.2f}",
    ]
    for alternative in diagnosis.alternatives:
        lines.append(f"or:       {alternative.cause} - check: {alternative.check}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m gpumatrix.diagnose`` (its help is quoted by tests and the README)."""
    parser = argparse.ArgumentParser(
        prog="python -m gpumatrix.diagnose",
        description="Classify a pasted GPU/container error log (or reports such as collect_env, nvidia-smi, "
                    "rocminfo, docker info) and print its cause, remedy, confidence and alternatives.",
        epilog="Rules decide first. Where none matches, or only a generic fallback, but the log names the GPU "
               "stack, a model trained on real messages gives a low-confidence guess (rule: learned-naive-bayes, "
               "confidence 0.2) with the checks that tell it apart. The confidence is a tier, not a probability: "
               "on held-out real messages, answers at 0.8-0.9 were right about 19 times in 20, and those at "
               "0.2 (the model) and 0.3 (a fallback) about 7 in 10, so below 0.5 run the alternatives' checks too; "
               "see docs/diagnosis.md.",
    )
    parser.add_argument("log", nargs="?", default="-", help="log file to read, or - for stdin (default)")
    parser.add_argument("--json", action="store_true",
                        help='print {"cause","remedy","evidence","confidence","alternatives"} as JSON')
    parser.add_argument("--rules", default=None, help="rules file to use instead of the packaged one")
    parser.add_argument("--cell", action="store_true",
                        help="the file is a saved cell result (results/cells/<cell>.json): use its facts")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpumatrix.diagnose [--json] [--rules FILE] [--cell] [FILE|-]``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        data = _read_input(args.log)
        if not data.strip():
            where = "standard input" if args.log == "-" else args.log
            print(f"diagnose: {where} is empty: give the log to classify (a file, or '-' with the log piped in, "
                  "e.g. 'docker run … 2>&1 | gpumatrix diagnose --log -')", file=sys.stderr)
            return 2
        ruleset = load_rules(args.rules)
        if args.cell:
            document = json.loads(data.decode("utf-8", errors="replace"))
            if not isinstance(document, dict):
                raise ValueError("not a JSON object")
            result = diagnose(failure_text_of_cell(document), facts_from_cell_result(document), rules=ruleset)
        else:
            result = diagnose(data, rules=ruleset)
    except OSError as err:
        print(f"diagnose: cannot read {args.log}: {err.strerror or err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"diagnose: {args.log} is not a cell result: {err}", file=sys.stderr)
        return 2
    except RulesError as err:
        print(f"diagnose: {err}", file=sys.stderr)
        return err.exit_code
    if args.json:
        full = result.to_dict()
        out = {key: full[key] for key in JSON_KEYS}
        out["confidence"] = full["confidence"]
        out["alternatives"] = full["alternatives"]
        print(json.dumps(out, ensure_ascii=False, sort_keys=True))
    else:
        print(format_text(result))
    return 0
