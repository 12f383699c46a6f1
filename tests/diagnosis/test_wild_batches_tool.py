"""tools/wild_batches.py keeps the rules' author blind to held-out texts while measuring them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from diagnosis_wild import load

ROOT = Path(__file__).resolve().parents[2]
TOOL = [sys.executable, str(ROOT / "tools" / "wild_batches.py")]
BATCH = "batch183"  # any frozen batch: its held-out side has misses with today's rules


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOL, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _git_ok() -> bool:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode == 0


@pytest.mark.skipif(not _git_ok(), reason="needs the git checkout (a clone) to extract a commit's rules")
def test_freeze_prints_the_held_out_figure_and_nothing_of_its_texts():
    done = _run("freeze", BATCH)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{BATCH} holdout with the rules and model of ")
    n = len(load(BATCH, "holdout"))
    assert f"/{n} = " in lines[0]
    for case in load(BATCH, "holdout"):
        assert case.id not in done.stdout


def _has_commit(rev: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True).returncode == 0


@pytest.mark.skipif(not _has_commit("38f219e"), reason="needs the history back to 38f219e (a shallow clone lacks it)")
def test_freeze_with_a_commit_before_the_batch_gives_the_recorded_figure_at_freezing():
    # batch 183 was frozen with the rules of 38f219e: 1 of 11 (FROZEN in test_diagnosis_wild.py)
    done = _run("freeze", BATCH, "--rules-from", "38f219e")
    assert done.returncode == 0, done.stderr
    assert ": 1/11 = 9.1% (among the first three: 1/11)" in done.stdout
    train = _run("freeze", BATCH, "--rules-from", "38f219e", "--side", "train")
    assert ": 3/24 = " in train.stdout and train.stdout.count("  miss ") == 21


def test_misses_refuses_a_held_out_side():
    done = _run("misses", BATCH, "holdout")
    assert done.returncode == 2 and "train sides only" in done.stderr and done.stdout == ""


def test_compare_lists_train_changes_and_only_counts_held_out_ones(tmp_path):
    old = {"wild:b:train:a-1": {"label": "out_of_memory", "cause": "unknown", "rule": "", "confidence": 0.0},
           "wild:b:holdout:h-1": {"label": "disk_full", "cause": "unknown", "rule": "", "confidence": 0.0},
           "wild:b:holdout:h-2": {"label": "disk_full", "cause": "disk_full", "rule": "r", "confidence": 0.9},
           "corpus:x.yaml:train:c-1": {"label": "disk_full", "cause": "disk_full", "rule": "r", "confidence": 0.9}}
    new = json.loads(json.dumps(old))
    new["wild:b:train:a-1"].update(cause="out_of_memory", rule="oom", confidence=0.9)
    new["wild:b:holdout:h-1"].update(cause="disk_full", rule="r", confidence=0.9)
    new["wild:b:holdout:h-2"].update(cause="unknown", rule="", confidence=0.0)
    new["corpus:x.yaml:train:c-1"].update(cause="index_unreachable", rule="net", confidence=0.5)
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    done = _run("compare", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert done.returncode == 0, done.stderr
    assert "+ wild:b:train:a-1: label out_of_memory; unknown () -> out_of_memory (oom, 0.90)" in done.stdout
    assert "- corpus:x.yaml:train:c-1" in done.stdout
    assert "h-1" not in done.stdout and "h-2" not in done.stdout
    assert "held out (not shown): 1 now right, 1 now wrong, 0 wrong another way" in done.stdout
    shown = _run("compare", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--show-holdout")
    assert "+ wild:b:holdout:h-1" in shown.stdout and "- wild:b:holdout:h-2" in shown.stdout


def test_unknowns_lists_each_held_out_unknown_once_with_its_label():
    from gpumatrix.diagnose import diagnose

    want = [c.id for c in load(BATCH, "holdout") if diagnose(c.text).cause == "unknown"]
    done = _run("unknowns", BATCH)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == f"{len(want)} held-out messages answered unknown"
    assert [line.split()[1] for line in lines[:-1]] == want
    assert all(line.startswith(f"{BATCH} ") and "(label " in line for line in lines[:-1])


def test_misses_lists_a_train_side_with_its_alternatives():
    # batch 185's train side has messages the rules answer with alternatives; every miss is listed
    from gpumatrix.diagnose import diagnose

    want = [c.id for c in load("batch185", "train") if diagnose(c.text).cause != c.cause]
    done = _run("misses", "batch185")
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("== ")] == want
    assert done.stdout.rstrip().endswith(f"batch185 train: {len(load('batch185', 'train')) - len(want)}/"
                                         f"{len(load('batch185', 'train'))} right")
