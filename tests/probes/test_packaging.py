"""The package works both as ``probes`` (mounted into containers) and under another name
(``gpumatrix.probes`` inside the wheel): only relative imports between its modules, and
children started under the package's own name."""

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from suite_helpers import REPO, by_id, suite_env

PROBES_DIR = REPO / "probes"


def test_no_absolute_imports_of_the_package_itself():
    for path in sorted(PROBES_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert node.module.split(".")[0] != "probes", "%s:%d imports %s" % (path, node.lineno, node.module)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] != "probes", "%s:%d imports %s" % (path, node.lineno, alias.name)
        assert '"probes.' not in path.read_text(), "%s names the package 'probes' in a string" % path


def test_runs_as_a_subpackage_under_another_name(tmp_path):
    """As ``gpumatrix.probes`` would run it: children must be ``<that name>._child``."""
    outer = tmp_path / "site" / "othername"
    shutil.copytree(str(PROBES_DIR), str(outer / "probes"), ignore=shutil.ignore_patterns("__pycache__"))
    (outer / "__init__.py").write_text("")
    env = suite_env()
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-m", "othername.probes", "--json", "--quick",
                           "--only", "kernel_driver.amd_driver,math_libraries.matmul_fp32"],
                          cwd=str(tmp_path / "site"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    document = json.loads(done.stdout.decode())
    probes = by_id(document)
    assert probes["math_libraries.matmul_fp32"]["status"] == "pass", probes["math_libraries.matmul_fp32"]
    assert probes["kernel_driver.amd_driver"]["status"] == "skip"
    assert document["facts"]["torch"]["version"]
    # nothing was imported from a top-level 'probes' (there is none on this path)
    assert "No module named 'probes'" not in done.stderr.decode()


def test_child_package_name_follows_the_package():
    from probes import isolation

    assert isolation.package_name() == "probes"
    assert Path(isolation.package_root()) == REPO
