"""A ready-made image is a cell like any other downstream: merged, gated and recommended, pinned by digest."""

from __future__ import annotations

from gpumatrix.results.merge import merge_results
from gpumatrix.results.recommend import recommend
from gpumatrix.results.store import CellResult
from tests.builders import H100, H100_LABEL, probes_doc, result

NGC_DIGEST = "nvcr.io/nvidia/pytorch@sha256:" + "ab" * 32


def ready_made(torch: str, status: str = "pass", fail_layer: int | None = None) -> CellResult:
    # As the runner records it: the image's own torch read from inside, the digest it pulled.
    return CellResult(cell_id="ngc-26.09", base_id="ngc-26.09", base_image="nvcr.io/nvidia/pytorch:26.09-py3",
                      vendor="nvidia", variant="", torch=torch, python="", status=status, reason=None, host=H100,
                      probes=probes_doc(fail_layer=fail_layer), image={"tag": NGC_DIGEST, "id": "sha256:" + "cd" * 32, "reused": False,
                                                  "ready_made": "nvcr.io/nvidia/pytorch:26.09-py3",
                                                  "pulled": NGC_DIGEST, "repo_digests": [NGC_DIGEST]})


def test_recommend_can_pick_a_ready_made_image_by_its_digest():
    built = result("cu130-torch2.13.0", "pass", H100, probes=probes_doc(),
                   image={"tag": "gpumatrix/cu130:torch2.13.0-x", "id": "sha256:" + "ef" * 32,
                          "repo_digests": ["reg/gpumatrix/cu130@sha256:" + "12" * 32]})
    merged = merge_results([("a", built), ("a", ready_made("2.14.0a0+nv26.09"))])
    chosen = recommend(merged, H100_LABEL)
    assert chosen.cell_id == "ngc-26.09"  # the newer torch, as the image ships it
    assert chosen.reference == NGC_DIGEST and chosen.pinned
    failing = merge_results([("a", built), ("a", ready_made("2.14.0a0+nv26.09", status="fail", fail_layer=4))])
    assert recommend(failing, H100_LABEL).cell_id == "cu130-torch2.13.0"
