#!/usr/bin/env python3
"""How long ``diagnose`` takes on big and hostile input, and (with ``--baseline``) against another copy.

A cell's log, or whatever a user pastes, may be megabytes of noise: the diagnosis reads at most its
capped window of it, matches every rule's patterns and asks the model. This script times that on the
inputs the robustness tests use (5 MB of random bytes, one 5 MB line, 5 MB of newlines and NULs, near
misses built from the rules' own words, a 6.6 MB log with the error on its last line) and on one ordinary
wild message; every copy measured reads the same inputs (the near misses come from this checkout's rules). Each figure is the median of ``--runs`` timed calls after one warm-up call (the
model and the rules are loaded once per process, before any timing). One more row times what the first
question that reaches the learned tier pays once per process: reading the shipped model file into a
``Model`` (``load_model`` without its cache).

``--baseline DIR`` times another copy of the repository (e.g. ``git archive <rev> | tar -x -C DIR``) in
a child process per round, interleaved with this checkout's, so both see the same load on a noisy
machine; the table then shows both medians and their ratio (this / baseline).

Usage::

    .venv/bin/python bench/diagnosis_speed.py --runs 5
    git archive e52fdd8 | tar -x -C /tmp/gpumatrix-before
    .venv/bin/python bench/diagnosis_speed.py --runs 5 --baseline /tmp/gpumatrix-before --out bench/results/diagnosis-speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIVE_MB = 5 * 1024 * 1024
ORDINARY = ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
            "    model.cuda()\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n")


def inputs() -> dict[str, bytes | str]:
    """The inputs, the same for every copy measured (seeded).

    The hostile one is built from the words of this checkout's rules file (read as YAML, not through the
    copy being measured), so a baseline with other rules reads the very same text.
    """
    rng = random.Random(1)
    fragments = []
    rules = yaml.safe_load((REPO / "gpumatrix" / "data" / "diagnosis_rules.yaml").read_text(encoding="utf-8"))
    for rule in rules["rules"]:
        for pattern in rule.get("patterns", []) + rule.get("require", []):
            literal = re.sub(r"\\.|[\[\](){}?*+|^$]", " ", pattern)
            fragments.extend(w for w in literal.split() if len(w) > 2)
    chunks, size = [], 0
    while size < FIVE_MB:
        chunk = " ".join(rng.choice(fragments) for _ in range(20)) + rng.choice([" ", "\n", ": ", "("])
        chunks.append(chunk)
        size += len(chunk)
    return {
        "random bytes, 5 MB": rng.randbytes(FIVE_MB),
        "one line, 5 MB": "a" * FIVE_MB,
        "newlines and NULs, 5 MB": ("\n\x00\r" * (FIVE_MB // 3)).encode(),
        "near misses of the rules, 5 MB": "".join(chunks),
        "error on the last line of 6.6 MB": ("noise line\n" * 600_000) + ORDINARY,
        "one ordinary message": ORDINARY,
    }


def measure(repo: Path, runs: int) -> dict[str, float]:
    """Median seconds per input for the copy of gpumatrix at ``repo`` (in this process)."""
    sys.path.insert(0, str(repo))
    from gpumatrix.diagnose import diagnose, learned

    diagnose(ORDINARY)  # loads the rules and the model
    medians = {}
    load = getattr(learned.load_model, "__wrapped__", learned.load_model)  # the file read each time, no cache
    model = str(repo / "gpumatrix" / "data" / "diagnosis_model.json")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        load(model)
        times.append(time.perf_counter() - start)
    medians["loading the model (once per process)"] = statistics.median(times)
    for name, data in inputs().items():
        diagnose(data)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            diagnose(data)
            times.append(time.perf_counter() - start)
        medians[name] = statistics.median(times)
    return medians


def _child(repo: Path, runs: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", str(repo), "--runs", str(runs)],
                          capture_output=True, text=True, check=True, cwd=repo)
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed calls per input and round (median)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each copy measured once per round")
    parser.add_argument("--baseline", type=Path, help="another copy of the repository to compare with")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child, args.runs)))
        return 0
    copies = {"this": REPO} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in copies}
    for _ in range(args.rounds):
        for name, repo in copies.items():  # interleaved: both see the same load
            rounds[name].append(_child(repo, args.runs))
    figures = {name: {key: statistics.median(r[key] for r in results) for key in results[0]}
               for name, results in rounds.items()}
    header = f"{'input':36} {'this (s)':>9}" + (f" {'baseline (s)':>13} {'ratio':>6}" if args.baseline else "")
    print(header)
    for key, value in figures["this"].items():
        row = f"{key:36} {value:9.3f}"
        if args.baseline:
            base = figures["baseline"][key]
            row += f" {base:13.3f} {value / base:6.2f}"
        print(row)
    if args.out:
        document = {"command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
                    "cpus": os.cpu_count(), "python": sys.version.split()[0], "runs": args.runs,
                    "rounds": args.rounds, "seconds": figures}
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
