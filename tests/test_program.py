"""The command users type: ``gpumatrix`` (installed) and ``invoke`` (in a checkout) over one Collection.

Flags mean one thing everywhere, usage errors exit 2 in one line, ``--help`` lists the exit codes, and a
plain (non-editable) install works from any directory with the probes and templates inside the wheel.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from gpumatrix.errors import ExitCode
from gpumatrix.tasks import SHORT_FLAGS, ns
from tests.builders import driver_too_old_cell

REPO = Path(__file__).resolve().parent.parent


def gpumatrix(*args: str, cwd: Path | None = None, stdin: str | None = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpumatrix", *args], capture_output=True, text=True,
                          cwd=cwd, input=stdin, timeout=120)


def test_each_short_flag_means_one_thing_in_every_task():
    seen: dict[str, str] = {}
    for name in ns.task_names:
        for arg in ns[name].get_arguments():
            longs = [n for n in arg.names if len(n) > 1]
            shorts = [n for n in arg.names if len(n) == 1]
            assert "h" not in shorts, f"{name}: -h is help, never {longs}"
            for s in shorts:
                assert seen.setdefault(s, longs[0]) == longs[0], f"-{s} is --{seen[s]} elsewhere, --{longs[0]} in {name}"
                assert SHORT_FLAGS.get(longs[0]) == s
    assert seen["f"] == "format" and seen["m"] == "matrix"


@pytest.mark.slow  # one invoke process per task (4 s)
def test_dash_h_is_help_in_every_task():
    for name in ("matrix", "build", "probe", "report", "merge", "list"):
        done = gpumatrix(name, "-h")
        assert done.returncode == 0 and "Exit codes:" in done.stdout, (name, done.stderr)


@pytest.mark.parametrize("argv,needle", [
    (["matrix", "--jobs", "abc"], "--jobs: 'abc' is not a whole number"),
    (["matrix", "--format", "pdf"], "--format: unknown format 'pdf'"),
    (["matrix", "--shard", "5/2"], "--shard: shard 5 does not exist"),
    (["matrix", "--nvidia-mode", "magic"], "--nvidia-mode: unknown mode 'magic'"),
    (["matrix", "--bogus"], "No idea what '--bogus' is"),
    (["list", "--matrix"], "needed value"),
])
def test_usage_errors_exit_2_in_one_line(argv, needle, tmp_path):
    done = gpumatrix(*argv, "--matrix", str(REPO / "matrix.yaml"), cwd=tmp_path) if argv[-1] != "--matrix" \
        else gpumatrix(*argv, cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE, (done.returncode, done.stderr)
    assert needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_diagnose_without_input_says_what_it_wants():
    # No --log and no piped input: the task must not sit waiting on a terminal. Under pytest stdin is not a
    # TTY, so drive the branch through a pseudo-terminal.
    import os
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # child: stdin is the pty
        os.execv(sys.executable, [sys.executable, "-m", "gpumatrix", "diagnose"])
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == ExitCode.USAGE
    assert b"--log: give the log to classify" in output


_saved_cell = driver_too_old_cell


def test_diagnose_a_saved_cell_with_its_facts(tmp_path):
    path = tmp_path / "cu128-torch2.9.1.json"
    path.write_text(json.dumps(_saved_cell()), encoding="utf-8")
    done = gpumatrix("diagnose", "--cell", str(path), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # decided by the cell's facts (driver 535 < the CUDA 12.8 minimum), not only by the probe's message
    assert out["cause"] == "driver_too_old" and "535.104.05" in out["evidence"] and "12.8" in out["evidence"]
    # the same message pasted as a log has no facts to compare versions with
    log = tmp_path / "probe.log"
    log.write_text(_saved_cell()["probes"]["probes"][0]["message"], encoding="utf-8")
    assert "535.104.05" not in json.loads(gpumatrix("diagnose", "--log", str(log), "--json").stdout)["evidence"]
    assert "--cell" in gpumatrix("diagnose", "--help").stdout


@pytest.mark.parametrize("argv,code,needle", [
    (["--cell", "CELL", "--log", "-"], ExitCode.USAGE, "--cell: give either --log or --cell, not both"),
    (["--cell", "NOT_A_CELL"], ExitCode.USAGE, "is not a cell result"),
])
def test_diagnose_cell_usage_errors(argv, code, needle, tmp_path):
    cell = tmp_path / "cell.json"
    cell.write_text(json.dumps(_saved_cell()), encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text("[1, 2]", encoding="utf-8")
    argv = [str(cell) if a == "CELL" else str(other) if a == "NOT_A_CELL" else a for a in argv]
    done = gpumatrix("diagnose", *argv)
    assert done.returncode == code, (done.returncode, done.stderr)
    assert needle in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_readme_lists_the_exit_codes_of_the_code():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("Exit codes:")
    section = readme[start:readme.index("\n## ", start)]
    for code in ExitCode:
        assert re.search(rf"`{int(code)}`", section), f"README's exit codes lack {int(code)} ({code.name})"


@pytest.mark.slow  # builds the wheel with pip (4 s)
def test_wheel_carries_probes_templates_and_data_but_no_dev_tools(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("gpumatrix-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("gpumatrix/probes/__main__.py", "gpumatrix/probes/archs.py", "gpumatrix/probes/schema.json",
                   "gpumatrix/probes/data/arch_compat.json", "gpumatrix/templates/cpu.Dockerfile",
                   "gpumatrix/templates/install-torch.sh", "gpumatrix/data/torch_releases.yaml",
                   "gpumatrix/data/matrix.schema.json", "gpumatrix/program.py"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("tools/", "tests/", "gpumatrix/devengine"))]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "gpumatrix = gpumatrix.program:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_packaging_lists_every_package_folder():
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "gpumatrix").rglob("__init__.py")}
    assert on_disk <= listed, f"add to pyproject.toml [tool.setuptools] packages: {sorted(on_disk - listed)}"


@pytest.mark.slow
def test_plain_install_works_from_any_directory(tmp_path):
    """``pip install .`` (not editable) into a fresh venv: ``gpumatrix list`` runs outside the checkout and
    finds the probe suite and templates inside the installed package."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(REPO)], check=True, capture_output=True, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([str(env_dir / "bin" / "gpumatrix"), "list", "--matrix", str(REPO / "matrix.yaml")],
                          capture_output=True, text=True, cwd=elsewhere, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "cpu-torch2.13.0" in done.stdout
    where = subprocess.run([str(py), "-c", "from gpumatrix.resources import probes_dir, templates_dir; "
                                           "print(probes_dir()); print(templates_dir())"],
                           capture_output=True, text=True, cwd=elsewhere, check=True).stdout.split()
    assert all(str(env_dir) in w for w in where), where
    assert (Path(where[0]) / "__main__.py").is_file() and (Path(where[1]) / "cuda.Dockerfile").is_file()


def test_bad_matrix_builds_nothing(tmp_path):
    from gpumatrix import cli
    from gpumatrix.errors import ConfigError
    from gpumatrix.run.request import RunRequest

    (tmp_path / "matrix.yaml").write_text("schema_version: 1\nbases:\n  - id: x\n    vendor: cpux\n"
                                          "    image: debian:bookworm-slim\n    variant: cpu\ntorch:\n"
                                          "  - version: \"2.13.0\"\n")
    with pytest.raises(ConfigError) as info:
        cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(tmp_path / "results")),
                       echo=lambda s: None)
    assert "matrix.yaml:4" in str(info.value) and info.value.exit_code == 2
    assert not (tmp_path / "results").exists()


def test_a_version_yaml_reads_as_a_number_is_quoted_as_written(tmp_path):
    (tmp_path / "matrix.yaml").write_text("schema_version: 1\npython: 3.10\nbases:\n"
                                          "  - {id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}\n"
                                          "torch:\n  - version: \"2.13.0\"\n")
    done = gpumatrix("list", "--matrix", str(tmp_path / "matrix.yaml"))
    assert done.returncode == ExitCode.USAGE
    assert 'matrix.yaml:2: matrix.python must be a string; quote it ("3.10")' in done.stderr
