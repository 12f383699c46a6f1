#!/usr/bin/env python3
"""How long reading the learned tier's model takes, against another copy's code on the same model file.

The first question that reaches the learned tier pays, once per process, for parsing the shipped model
(``gpumatrix/data/diagnosis_model.json``, about 10^5 features) and turning its counts into a ``Model``.
``bench/diagnosis_speed.py`` times that end to end with each copy's own model file; this script holds the
file fixed (this checkout's) and times only the code: each round parses the JSON once, then builds a
``Model`` with each copy's ``learned.py``, interleaved so that both see the same load on a noisy machine.
It prints the medians and the ratios (this / baseline).

Usage::

    git archive 6fbfabf | tar -x -C /tmp/gpumatrix-before
    .venv/bin/python bench/model_load.py --baseline /tmp/gpumatrix-before --rounds 15 --out bench/results/model-load.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "gpumatrix" / "data" / "diagnosis_model.json"


def _learned(repo: Path, name: str):
    """``gpumatrix/diagnose/learned.py`` of the copy at ``repo``, loaded as its own module."""
    spec = importlib.util.spec_from_file_location(name, repo / "gpumatrix" / "diagnose" / "learned.py")
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "gpumatrix.diagnose"  # its relative imports resolve to this checkout's package
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another copy of the repository")
    parser.add_argument("--rounds", type=int, default=15, help="rounds, each parsing once and building both")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    this, base = _learned(REPO, "learned_this"), _learned(args.baseline.resolve(), "learned_baseline")
    parse, built_this, built_base = [], [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        document = json.loads(MODEL.read_text(encoding="utf-8"))
        parse.append(time.perf_counter() - start)
        for module, times in ((base, built_base), (this, built_this)):
            start = time.perf_counter()
            module.Model(document)
            times.append(time.perf_counter() - start)
    p, t, b = (statistics.median(x) for x in (parse, built_this, built_base))
    print(f"model {MODEL.name}: {len(document['features'])} features, {args.rounds} rounds (medians, s)")
    print(f"{'step':28} {'this':>7} {'baseline':>9} {'ratio':>6}")
    print(f"{'parse the JSON':28} {p:7.3f} {p:9.3f} {1:6.2f}")
    print(f"{'build the Model':28} {t:7.3f} {b:9.3f} {t / b:6.2f}")
    print(f"{'whole load':28} {p + t:7.3f} {p + b:9.3f} {(p + t) / (p + b):6.2f}")
    if args.out:
        document = {"command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
                    "cpus": os.cpu_count(), "python": sys.version.split()[0], "rounds": args.rounds,
                    "features": len(document["features"]),
                    "seconds": {"parse": p, "build this": t, "build baseline": b}}
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
