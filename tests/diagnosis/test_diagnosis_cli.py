"""``python -m gpumatrix.diagnose`` / ``main(argv)``."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from gpumatrix.diagnose import main

LOG = (
    "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n"
    "ERRO[0000] error waiting for container: context canceled\n"
)


def test_json_output_keeps_the_old_keys_and_adds_confidence_and_alternatives(tmp_path, capsys):
    log = tmp_path / "engine.log"
    log.write_text(LOG)
    assert main(["--json", str(log)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"cause", "remedy", "evidence", "confidence", "alternatives"}
    assert isinstance(out["confidence"], float) and 0 < out["confidence"] <= 1
    assert isinstance(out["alternatives"], list)
    assert out["cause"] == "container_toolkit_missing"
    assert "could not select device driver" in out["evidence"]


def test_stdin_dash_and_human_output(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"AssertionError: Torch not compiled with CUDA enabled")))
    assert main(["-"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "cause:    cpu_only_build"
    assert "remedy:" in out and "evidence:" in out


def test_unknown_log_still_succeeds(tmp_path, capsys):
    log = tmp_path / "x.log"
    log.write_bytes(b"\x00\x01\x02")
    assert main(["--json", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["cause"] == "unknown"


def test_empty_input_says_what_it_wants_and_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b" \n")))  # e.g. 'invoke diagnose < /dev/null'
    assert main(["-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "standard input is empty: give the log to classify" in err
    (tmp_path / "empty.log").write_text("")
    assert main([str(tmp_path / "empty.log")]) == 2 and "empty.log is empty" in capsys.readouterr().err


def test_missing_file_is_a_clean_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope.log")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_module_entry_point(tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(LOG)
    done = subprocess.run([sys.executable, "-m", "gpumatrix.diagnose", "--json", str(log)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cause"] == "container_toolkit_missing"
