"""Issue 14, finding 2 end to end: a container that prints a lone surrogate cannot end the run.

The probe suite is replaced (GPUMATRIX_PROBES_DIR) by one that prints a valid document whose text holds
"\\ud800" (legal JSON, a lone surrogate once parsed). The run must complete, every cell must be saved,
and the table must render. Real engine, the small python image of tests/test_reliability_engine.py.
"""

from __future__ import annotations

import json

import pytest
from tests.engine_helpers import PY_DOCKERFILE, PY_IMAGE, load_cells, tag_cells
from tests.isolation import SESSION

from gpumatrix import cli
from gpumatrix.engine.client import MANAGED_LABEL, tar_context
from gpumatrix.results.store import ResultsDir
from gpumatrix.run.pipeline import Runner
from gpumatrix.run.request import RunRequest

pytestmark = pytest.mark.engine

HOSTILE_PROBES = r'''
import json, os
text = "\ud800 lone" if os.environ.get("GPUMATRIX_FAULT") == "surrogate" else "ok"
doc = {"schema_version": 1, "accelerator": "cpu", "facts": {"note": text}, "mode": "full", "duration_s": 0.1,
       "suite": {"name": "fake", "version": "0"},
       "probes": [{"id": "framework.fake", "layer": 5, "layer_name": "framework", "status": "pass",
                   "duration_s": 0.0, "message": text, "details": {text: text}}],
       "verdict": {"status": "pass", "lowest_failing_layer": None, "failed": [], "summary": text}}
print(json.dumps(doc))  # ensure_ascii: the surrogate travels as the JSON escape \ud800
'''

MATRIX = """\
schema_version: 1
bases:
  - {id: cpu-a, vendor: cpu, image: debian:bookworm-slim, variant: cpu, env: {GPUMATRIX_FAULT: surrogate}}
  - {id: cpu-b, vendor: cpu, image: debian:bookworm-slim, variant: cpu, env: {GPUMATRIX_FAULT: ok}}
torch:
  - {version: "2.13.0", variants: [cpu]}
"""


@pytest.fixture(scope="module")
def python_image(engine):
    """The small python image of tests/test_reliability_engine.py (built once, kept as that module keeps it)."""
    if engine.image_info(PY_IMAGE) is None:
        engine.build(tar_context({"Dockerfile": PY_DOCKERFILE}), PY_IMAGE, {},
                     {MANAGED_LABEL: "true", "io.gpumatrix.cell": "test-python", **SESSION.labels}, lambda s: None, network_mode="host")
    return PY_IMAGE


def test_a_lone_surrogate_in_probe_output_does_not_end_the_run(engine, tracked, python_image, tmp_path, monkeypatch):
    folder = tmp_path / "fake" / "probes"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "__main__.py").write_text(HOSTILE_PROBES)
    monkeypatch.setenv("GPUMATRIX_PROBES_DIR", str(folder))
    matrix, cells = load_cells(tmp_path, MATRIX)
    results = tmp_path / "results"
    tracked["images"] += list(tag_cells(engine, python_image, matrix, cells, results))

    summary = Runner(engine, matrix, ResultsDir(results), RunRequest(build=False)).run(cells)

    assert summary["state"] == "complete" and not summary["not_done"]
    assert summary["cells"] == {"cpu-a-torch2.13.0": "pass", "cpu-b-torch2.13.0": "pass"}
    loaded, warnings = ResultsDir(results).load()
    assert not warnings and len(loaded) == 2
    hostile = next(r for r in loaded if r.cell_id == "cpu-a-torch2.13.0")
    assert hostile.probes["probes"][0]["message"] == "\ufffd lone"
    json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert "cpu-a-torch2.13.0" in cli.report(str(results))
