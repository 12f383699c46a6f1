"""The wheelhouse with the real engine: real pip, real builds, real images.

torch here is a tiny wheel (``torch-9.9.9+cpu``) in a local ``wheelhouse:`` folder, given twice: as a
release and as a local ``wheel:`` entry; a tiny ``numpy`` beside it stands for the NumPy every image gets
with torch. torch's dependency lives on an index that wants credentials
(``http://user:TOKEN@127.0.0.1:PORT/simple``, as a host's pip configuration would give it), whose pages
link to the files on another host. The builds must make one image of the two cells, and neither the
image nor its history nor its config may hold the token.
"""

from __future__ import annotations

import base64
import json
import textwrap

import pytest

from tests._wheels import IndexServer, make_numpy, make_wheel, pip_env
from gpumatrix import cli
from gpumatrix.run.request import RunRequest
from gpumatrix.engine.client import ContainerSpec
from gpumatrix.results.store import ResultsDir

pytestmark = [pytest.mark.engine]

TOKEN = "TOKEN4f9c2e"


@pytest.fixture
def credentialed_index(tmp_path, monkeypatch):
    files, index = IndexServer(), IndexServer(auth=f"user:{TOKEN}")
    index.file_host = files
    index.add(make_wheel(tmp_path / "upstream", "gmtestdep", "1.0", payload="VALUE = 42\n"))
    pip_env(monkeypatch, f"http://user:{TOKEN}@127.0.0.1:{index.port}/simple")
    yield index, files
    files.close()
    index.close()


def test_two_cells_same_wheels_one_image_and_no_token_anywhere(engine, tracked, tmp_path, monkeypatch,
                                                             credentialed_index):
    index, files = credentialed_index
    monkeypatch.setenv("GPUMATRIX_CACHE_DIR", str(tmp_path / "cache"))
    torch = make_wheel(tmp_path / "wheels", "torch", "9.9.9+cpu", requires=("gmtestdep",),
                       payload="__version__ = '9.9.9+cpu'\n")
    numpy = make_numpy(tmp_path / "wheels")
    installed = {torch.name, numpy.name, "gmtestdep-1.0-py3-none-any.whl"}  # what the image must get, each once
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(f"""\
        schema_version: 1
        python: "3.11"
        index_url: null
        wheelhouse: [wheels]
        bases:
          - {{id: cpu, vendor: cpu, image: debian:bookworm-slim, variant: cpu}}
        torch:
          - {{version: "9.9.9", variants: [cpu]}}
          - {{wheel: wheels/{torch.name}, vendor: cpu}}
        """))
    lines: list[str] = []
    try:
        cli.run_matrix(RunRequest(matrix_path=str(tmp_path / "matrix.yaml"), results_path=str(tmp_path / "results"),
                                  probe=False, jobs=2), echo=lines.append)
    finally:
        cells, _ = ResultsDir(tmp_path / "results").load()
        tracked["images"].extend({c.image["tag"] for c in cells if c.image})
    by_id = {c.cell_id: c for c in cells}
    release, local = by_id["cpu-torch9.9.9"], by_id["cpu-torch9.9.9+cpu"]
    assert release.status == local.status == "skipped", (release.reason, local.reason)  # built, not probed
    # One build, one tag, both cells pointing at it.
    assert release.image["tag"] == local.image["tag"] and release.image["id"] == local.image["id"]
    # one "CELL: building TAG (log: …)" message; the live progress also shows "CELL [0:00] building TAG"
    assert sum(": building " in line for line in lines) == 1, lines
    assert sorted([release.image["reused"], local.image["reused"]]) == [False, True]
    built = release if not release.image["reused"] else local
    assert built.image["downloads"]["files"] == len(installed) and built.image["downloads"]["upstream_bytes"] > 0
    tag = release.image["tag"]

    # The image has what the wheelhouse had: torch and the credentialed index's dependency.
    out = engine.run(ContainerSpec(image=tag, command=["/opt/venv/bin/python", "-c",
                                                       "import torch, gmtestdep, numpy; "
                                                       "print(torch.__version__, gmtestdep.VALUE, numpy.__version__)"]))
    assert out.exit_code == 0 and out.stdout.decode().split() == ["9.9.9+cpu", "42", "2.0.0"], out.stderr

    # The credentials went to their index only, from the host's pip; never to the file host, never to the build.
    basic = "Basic " + base64.b64encode(f"user:{TOKEN}".encode()).decode()
    assert index.requests and all(auth == basic for _, auth in index.requests)
    assert files.hits("gmtestdep-1.0-py3-none-any.whl") == 1 and all(auth is None for _, auth in files.requests)
    history = engine.api.history(tag)
    config = engine.api.inspect_image(tag)
    for what, data in (("history", history), ("image config", config)):
        text = json.dumps(data)
        assert TOKEN not in text and "user:" not in text, what
    created_by = " ".join(h.get("CreatedBy") or "" for h in history)
    assert "WHEELS_URL=http://127.0.0.1:" in created_by  # the only package location a build ever sees
    assert "PIP_INDEX_URL" not in created_by and str(tmp_path) not in json.dumps(config["Config"])
    logs = list((tmp_path / "results").rglob("*.log"))
    assert logs and not any(TOKEN in log.read_text() for log in logs)
