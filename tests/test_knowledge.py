"""The knowledge layer as the probes and the doctor read it."""

from __future__ import annotations

from gpumatrix.knowledge.peaks import peaks_table
from gpumatrix.knowledge.releases import load_data


def test_peaks_carry_the_matrix_core_fp32_and_the_arch_keys():
    table = peaks_table()
    cdna = [name for name, e in load_data("gpu_peaks")["gpus"].items() if "fp32_matrix" in e]
    assert cdna, "gpu_peaks.yaml lists no fp32_matrix peak"
    for name in cdna:
        assert table[name]["fp32_matrix_tflops"] >= table[name]["fp32_tflops"] > 0  # fp32 GEMMs are compared to it
    for arch in ("gfx942", "gfx90a", "gfx1100"):  # looked up by arch when the name is unknown
        assert arch in table and table[arch]["bf16_tflops"] > 0, arch


def test_every_data_file_reads_as_yaml_safe_load_reads_it():
    """load_data parses with libyaml where PyYAML has it: the objects must be exactly safe_load's."""
    from importlib import resources

    import yaml

    folder = resources.files("gpumatrix").joinpath("data")
    names = sorted(f.name.removesuffix(".yaml") for f in folder.iterdir() if f.name.endswith(".yaml"))
    assert "torch_releases" in names and len(names) >= 5
    for name in names:
        load_data.cache_clear()
        assert load_data(name) == yaml.safe_load(folder.joinpath(f"{name}.yaml").read_text(encoding="utf-8")), name
    load_data.cache_clear()


def test_numpy_beside_torch_fits_torchs_numpy_abi():
    """torch built against NumPy 1.x cannot load NumPy 2; from 2.3.0 on every NumPy works (torch_releases.yaml)."""
    from gpumatrix.knowledge.releases import load_data, numpy_requirement

    assert numpy_requirement("2.13.0+cpu") == numpy_requirement("2.3.0") == "numpy"
    assert numpy_requirement("2.3.0a0+rocm6.1") == "numpy"  # a pre-release of 2.3 is built like 2.3
    assert numpy_requirement("2.2.2+cu121") == numpy_requirement("2.1.0") == "numpy<2"
    assert numpy_requirement("not a version") == "numpy"
    rules = load_data("torch_releases")["numpy"]["rules"]
    assert rules and all(r["source"].startswith("https://") for r in rules)
