"""Ready-made images (``images:``): one cell each, probed as they are, selected and filtered like built cells."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from gpumatrix.config import (
    TORCH_IN_IMAGE, TORCH_IN_IMAGE_LABEL, ConfigError, expand_cells, gha_matrix, load_matrix, parse_matrix, select,
    shard_cells,
)
from gpumatrix.config.schema import validator

DIGEST = "sha256:" + "0123456789abcdef" * 4
TEXT = f"""\
schema_version: 1
bases:
  - {{id: cu130, vendor: nvidia, image: nvidia/cuda:13.0.2-runtime-ubuntu24.04, variant: cu130, python: "3.12"}}
torch:
  - {{version: "2.15.0", variants: [cu130]}}
images:
  - id: ngc-25.12
    vendor: nvidia
    image: nvcr.io/nvidia/pytorch:25.12-py3
    env: {{NCCL_DEBUG: WARN}}
  - id: rocm-pytorch-2.8.0
    vendor: amd
    image: rocm/pytorch:rocm7.1_ubuntu22.04_py3.10_pytorch_release_2.8.0@{DIGEST}
    gpus: all
"""


def parse(text: str = TEXT):
    return parse_matrix(textwrap.dedent(text), Path("/tmp/r/matrix.yaml"))


def cells_of(text: str = TEXT):
    return {c.id: c for c in expand_cells(parse(text)).cells}


def test_each_image_is_one_ready_made_cell():
    cells = cells_of()
    assert list(cells) == ["cu130-torch2.15.0", "ngc-25.12", "rocm-pytorch-2.8.0"]
    ngc = cells["ngc-25.12"]
    assert ngc.ready_made and ngc.applicable and ngc.vendor == "nvidia"
    assert ngc.image == ngc.base.image == "nvcr.io/nvidia/pytorch:25.12-py3"
    assert ngc.torch.in_image and ngc.torch.version == TORCH_IN_IMAGE and ngc.torch.label == TORCH_IN_IMAGE_LABEL
    assert ngc.torch_requirement == ngc.torch_label == "torch (in image)"
    assert dict(ngc.env) == {"NCCL_DEBUG": "WARN"} and ngc.python == ""
    # the synthetic base keeps code written for built cells working: str fields, no variant
    assert ngc.base.id == "ngc-25.12" and ngc.base.variant == "" and ngc.base.python is None
    rocm = cells["rocm-pytorch-2.8.0"]
    assert rocm.base.gpus == "all" and rocm.image.endswith("@" + DIGEST) and rocm.vendor == "amd"
    built = cells["cu130-torch2.15.0"]
    assert not built.ready_made and not built.torch.in_image and built.image == built.base.image
    assert built.torch_label == built.torch_requirement == "torch==2.15.0+cu130"


def test_images_only_matrix():
    cells = cells_of("""\
        schema_version: 1
        images:
          - {id: pt, vendor: nvidia, image: "pytorch/pytorch:2.9.0-cuda13.0-cudnn9-runtime"}
        """)
    assert list(cells) == ["pt"] and cells["pt"].ready_made


def test_exclude_by_vendor_and_id_globs():
    exp = expand_cells(parse(TEXT + "exclude:\n  - {vendor: amd}\n  - {id: 'ngc-*'}\n"))
    assert [c.id for c in exp.cells] == ["cu130-torch2.15.0"]
    assert [(e.id, e.line) for e in exp.excluded] == [("ngc-25.12", 17), ("rocm-pytorch-2.8.0", 16)]


def test_filters_on_keys_a_ready_made_cell_lacks_never_match_it():
    exp = expand_cells(parse(TEXT + "exclude:\n  - {torch: '2.*'}\n  - {base: '*'}\n  - {variant: '*'}\n"))
    assert [c.id for c in exp.cells] == ["ngc-25.12", "rocm-pytorch-2.8.0"]
    assert [e.id for e in exp.excluded] == ["cu130-torch2.15.0"]


def test_exclude_by_id_works_for_built_cells_too():
    exp = expand_cells(parse(TEXT + "exclude:\n  - {id: 'cu130-torch2.1*'}\n"))
    assert "cu130-torch2.15.0" not in [c.id for c in exp.cells]


def test_include_adds_env_by_id_or_vendor():
    cells = cells_of(TEXT + "include:\n  - {id: 'rocm-*', env: {HSA_OVERRIDE_GFX_VERSION: '11.0.0'}}\n"
                            "  - {vendor: nvidia, env: {X: '1'}}\n")
    assert dict(cells["rocm-pytorch-2.8.0"].env) == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    assert dict(cells["ngc-25.12"].env) == {"NCCL_DEBUG": "WARN", "X": "1"}
    assert dict(cells["cu130-torch2.15.0"].env) == {"X": "1"}


def test_include_by_id_matching_nothing_is_an_error():
    with pytest.raises(ConfigError) as info:
        cells_of(TEXT + "include:\n  - {id: 'vllm-*', env: {X: '1'}}\n")
    assert "/tmp/r/matrix.yaml:16: include entry matches no cell, and cannot add one" in str(info.value)


def test_selection_shards_and_gha_treat_them_like_built_cells():
    cells = list(expand_cells(parse()).cells)
    assert [c.id for c in select(cells, "ngc-*,cu130-*")] == ["cu130-torch2.15.0", "ngc-25.12"]
    assert [c.id for c in select(cells, "*-{25.12,2.8.0}")] == ["ngc-25.12", "rocm-pytorch-2.8.0"]
    shards = [shard_cells(cells, k, 3) for k in (1, 2, 3)]
    assert sorted(c.id for s in shards for c in s) == sorted(c.id for c in cells) and all(len(s) == 1 for s in shards)
    jobs = {j["id"]: j for j in gha_matrix(cells)["include"]}
    assert jobs["ngc-25.12"]["vendor"] == "nvidia" and jobs["rocm-pytorch-2.8.0"]["runner"][-1] == "amd"


@pytest.mark.parametrize("old, new, line, words", [
    ("id: ngc-25.12", "id: cu130", 7, ["image id 'cu130' is also a base id"]),
    ("id: ngc-25.12", "id: rocm-pytorch-2.8.0", 11, ["duplicate image id 'rocm-pytorch-2.8.0' (first at line 7)"]),
    ("id: ngc-25.12", "id: cu130-torch2.15.0", 7, ["is also the id of a built cell (base cu130 × torch 2.15.0)"]),
    ("id: ngc-25.12", 'id: "ngc-25.12\\n"', 7, ["image 1.id", "is not valid"]),
    ("vendor: amd", "vendor: amdgpu", 12, ["image rocm-pytorch-2.8.0.vendor 'amdgpu' must be one of",
                                          "did you mean 'amd'?"]),
    ("image: nvcr.io/nvidia/pytorch:25.12-py3", "image: nvcr.io/nvidia/pytorch:25.12-py3@sha256:abc", 9,
     ["image ngc-25.12.image", "is not valid", "@sha256: pin"]),
    ("image: nvcr.io/nvidia/pytorch:25.12-py3", 'image: "nvcr.io/nvidia/pytorch:25.12-py3\\n"', 9,
     ["image ngc-25.12.image", "is not valid"]),
    ("    gpus: all", "    gpus: 2", 14, ["image rocm-pytorch-2.8.0.gpus must be 1 (one GPU per cell) or all"]),
    ("    gpus: all", "    torch: '2.8.0'", 14, ["unknown key 'torch' in image rocm-pytorch-2.8.0"]),
])
def test_image_entry_problems(old, new, line, words):
    assert old in TEXT
    with pytest.raises(ConfigError) as info:
        cells_of(TEXT.replace(old, new, 1))
    found = [str(p) for p in info.value.problems]
    assert any(p.startswith(f"/tmp/r/matrix.yaml:{line}: ") and all(w in p for w in words) for p in found), found


# ---------------------------------------------------------------------------
# the curated data and the shipped matrix

ROOT = Path(__file__).resolve().parent.parent
READY = yaml.safe_load((ROOT / "gpumatrix/data/ready_images.yaml").read_text())


def test_curated_ready_images_are_valid_entries_with_sources():
    entries = READY["images"]
    assert {e["vendor"] for e in entries} >= {"nvidia", "amd"}
    assert len({e["id"] for e in entries}) == len(entries) and len({e["image"] for e in entries}) == len(entries)
    ids_only = [{k: e[k] for k in ("id", "vendor", "image")} for e in entries]
    assert validator().is_valid({"schema_version": 1, "images": ids_only})  # pasteable into matrix.yaml
    for e in entries:
        assert e["source"].startswith("https://") and e["evidence"], e["id"]
        assert e["kind"] in ("framework", "serving") and e["torch"], e["id"]
        assert ("cuda" in e) == (e["vendor"] == "nvidia") and ("rocm" in e) == (e["vendor"] == "amd"), e["id"]
        digest = e.get("digest_seen")
        assert digest is None or validator().is_valid(
            {"schema_version": 1, "images": [{"id": "x", "vendor": e["vendor"], "image": f"{e['image']}@{digest}"}]})


def test_shipped_matrix_probes_curated_ready_images_of_both_vendors():
    m = load_matrix(ROOT / "matrix.yaml")
    curated = {e["image"]: e for e in READY["images"]}
    assert {i.vendor for i in m.images} == {"nvidia", "amd"}
    for image in m.images:
        assert image.image in curated and curated[image.image]["id"] == image.id and \
            curated[image.image]["vendor"] == image.vendor, image
    cells = {c.id: c for c in expand_cells(m).cells}
    assert all(cells[i.id].ready_made and cells[i.id].applicable for i in m.images)


def test_shipped_matrix_has_a_base_for_the_newest_rocm_torch_ships_wheels_for():
    from gpumatrix.knowledge import releases

    def rocm_key(variant: str) -> tuple[int, ...]:
        return tuple(int(x) for x in variant[len("rocm"):].split("."))

    shipped = [v for r in releases.load_data("torch_releases")["releases"].values() for v in r["variants"]
               if v.startswith("rocm")]
    newest = max(shipped, key=rocm_key)
    m = load_matrix(ROOT / "matrix.yaml")
    base = next(b for b in m.bases if b.variant == newest)
    refs = {i["ref"]: i for i in releases.load_data("base_images")["images"]}
    assert refs[base.image]["torch_variant"] == newest


def test_readme_examples_are_schema_valid():
    """The matrix.yaml section of the README shows documents the schema accepts (no drift in the docs)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## matrix.yaml"):text.index("## How a cell is built")]
    blocks = [b.split("```", 1)[0] for b in section.split("```yaml\n")[1:]]
    assert len(blocks) >= 2
    for block in blocks:
        doc = yaml.safe_load(block)
        doc.setdefault("schema_version", 1)
        errors = [e.message for e in validator().iter_errors(doc)]
        assert not errors, (block[:60], errors)
    assert any("images" in yaml.safe_load(b) and {"nvidia", "amd"} <= {i["vendor"] for i in yaml.safe_load(b)["images"]}
               for b in blocks)
