"""The fact vocabulary, facts from a saved cell result, and the fact rules that use them."""

from __future__ import annotations

import json
import textwrap

import pytest

from gpumatrix.diagnose import (CAUSES, FACTS, RulesError, diagnose, facts_from_cell_result, load_rules,
                                required_min_driver)
from gpumatrix.diagnose.cli import main
from tests.builders import driver_too_old_cell


def test_every_fact_is_declared_with_a_type_and_a_meaning():
    for name, fact in FACTS.items():
        assert fact.name == name and fact.meaning and fact.type.rstrip("?") in (
            "str", "version", "bool", "int", "list[str]", "list[dict]"), name


def test_the_packaged_rules_name_only_declared_facts():
    for rule in load_rules().rules:
        assert rule.facts_named() <= set(FACTS), rule.id


def _rules_file(tmp_path, rule: str):
    path = tmp_path / "rules.yaml"
    layers = ", ".join(c for c in CAUSES if c != "unknown")
    causes = "".join(f"  {c}: {{summary: s{', remedy: r' if c == 'unknown' else ''}}}\n" for c in CAUSES)
    path.write_text(f"schema_version: 1\nlayers: [[{layers}]]\ncauses:\n{causes}rules:\n"
                    + textwrap.indent(textwrap.dedent(rule), "  "), encoding="utf-8")
    return path


def test_a_rule_naming_an_unknown_fact_is_rejected_with_rule_fact_and_suggestion(tmp_path):
    path = _rules_file(tmp_path, """\
        - id: old-driver
          cause: driver_too_old
          when: [{fact: host_driver_versoin, version_lt: {fact: required_min_driver}}]
          evidence: "driver {host_driver_versoin}"
          remedy: r
          explanation: e
    """)
    with pytest.raises(RulesError) as err:
        load_rules(path)
    message = str(err.value)
    assert "rule old-driver: unknown fact 'host_driver_versoin' (did you mean 'host_driver_version'?)" in message


def test_an_unknown_fact_in_an_evidence_template_is_rejected_too(tmp_path):
    path = _rules_file(tmp_path, """\
        - {id: shm, cause: shm_too_small, when: [{fact: shm_bytes, lt: 1}], evidence: "{shm_size}", remedy: r,
           explanation: e}
    """)
    with pytest.raises(RulesError, match="rule shm: unknown fact 'shm_size'"):
        load_rules(path)


# ---------------------------------------------------------------- the driver rule, right given the facts


def test_required_min_driver_from_the_data():
    assert required_min_driver("12.8") == "570.26"                      # GA driver (NVIDIA_REQUIRE_CUDA)
    assert required_min_driver("12.8", minor_version_compat=True) == "525.60.13"
    assert required_min_driver("10.2") == "440.33"                      # diagnosis_cuda_legacy.yaml
    assert required_min_driver("10.2", minor_version_compat=True) == "440.33"  # no compat before 11
    assert required_min_driver("nonsense") is None


_cell = driver_too_old_cell  # the shape gpumatrix.results.CellResult.to_dict() writes


def test_facts_from_a_saved_cell_result():
    facts = facts_from_cell_result(_cell())
    assert facts["vendor"] == "nvidia" and facts["image_cuda"] == "12.8"
    assert facts["host_driver_version"] == "535.104.05" and facts["host_gpu_vendors"] == ["nvidia"]
    assert facts["torch_cuda"] == "12.8" and facts["torch_hip"] is None and facts["torch_cuda_available"] is False
    assert facts["device_arch"] == "sm_86" and facts["shm_bytes"] == 67108864
    assert facts["hsa_override_gfx_version"] is None and facts["engine_runtimes"][1] == "nvidia"
    assert facts["probe_failures"][0]["id"] == "cuda_init"


def test_driver_too_old_fires_from_a_cell_result_and_names_the_versions():
    # real message: https://github.com/IEIT-Yuan/Yuan-2.0/issues/65 (driver 535 advised for a CUDA 12.x image)
    result = diagnose("", facts_from_cell_result(_cell()))
    assert result.cause == "driver_too_old" and result.rule == "facts-driver-too-old"
    assert result.evidence == "host driver 535.104.05 < 570.26 required by CUDA 12.8"


def test_driver_too_old_does_not_fire_on_a_new_enough_driver_or_an_amd_cell():
    new = _cell(host={"nvidia_driver": "570.86.15", "gpus": []})
    new["probes"]["facts"]["driver"]["nvidia"]["version"] = "570.86.15"
    new["probes"]["probes"] = []
    assert diagnose("", facts_from_cell_result(new)).cause != "driver_too_old"
    amd = _cell(vendor="amd", variant="rocm6.2", host={"amd_driver": "6.8.5", "dev_kfd": True, "gpus": []})
    amd["probes"] = {"facts": {"torch": {"version": "2.9.1+rocm6.2", "cuda": None, "hip": "6.2"}}}
    facts = facts_from_cell_result(amd)
    assert "host_driver_version" not in facts and facts["image_rocm"] == "6.2"
    assert diagnose("", facts).cause != "driver_too_old"


def test_ill_typed_values_are_dropped_at_the_boundary():
    doc = _cell(vendor=7)
    doc["probes"]["facts"]["shm_bytes"] = "lots"
    facts = facts_from_cell_result(doc, extra={"required_min_driver": ["x"], "no_such_fact": 1,
                                               "container_device_nodes": ["/dev/nvidia0"]})
    assert "vendor" not in facts and "shm_bytes" not in facts and "required_min_driver" not in facts
    assert "no_such_fact" not in facts and facts["container_device_nodes"] == ["/dev/nvidia0"]
    assert facts_from_cell_result({}) == {}
    assert facts_from_cell_result({"probes": "junk", "host": [1], "env": None}) == {}


def test_torch_that_failed_to_import_says_nothing_about_the_build():
    doc = _cell()
    doc["probes"]["facts"]["torch"] = {"version": None, "cuda": None, "hip": None, "import_error": "libcudart"}
    facts = facts_from_cell_result(doc)
    assert "torch_cuda" not in facts and "torch_hip" not in facts


def test_cli_reads_a_saved_cell(tmp_path, capsys):
    path = tmp_path / "cell.json"
    path.write_text(json.dumps(_cell()), encoding="utf-8")
    assert main(["--json", "--cell", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["cause"] == "driver_too_old"
    path.write_text("[1, 2]", encoding="utf-8")
    assert main(["--cell", str(path)]) == 2


# ---------------------------------------------------------------- the HSA override is judged, not ignored

# real message: https://github.com/NixOS/nixpkgs/issues/207109
NO_BINARY = '4. Error: `"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"'


def test_arch_rule_does_not_fire_when_an_override_is_configured():
    facts = {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx1030", "gfx1100"],
             "hsa_override_gfx_version": "10.3.0"}
    result = diagnose("", facts)
    assert result.cause == "unknown"  # the override is right and the build has gfx1030
    unset = dict(facts, hsa_override_gfx_version=None)  # None / "" mean "not set", as the probes report it
    assert diagnose("", unset).rule == "facts-arch-not-in-build"
    assert diagnose("", dict(facts, hsa_override_gfx_version="")).rule == "facts-arch-not-in-build"


def test_an_override_to_an_arch_the_build_lacks():
    facts = {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx900", "gfx906", "gfx90a"],
             "hsa_override_gfx_version": "10.3.0"}
    result = diagnose(NO_BINARY, facts)
    assert result.cause == "arch_unsupported" and result.rule == "facts-hsa-override-arch-not-in-build"
    assert "gfx1030" in result.evidence


def test_an_override_of_the_wrong_family_for_the_card():
    facts = {"vendor": "amd", "device_arch": "gfx1031", "torch_arch_list": ["gfx1030", "gfx1100"],
             "hsa_override_gfx_version": "11.0.0"}
    result = diagnose(NO_BINARY, facts)
    assert result.cause == "arch_unsupported" and result.rule == "facts-hsa-override-wrong-for-card"
    assert "10.3.0" in result.evidence


def test_docs_list_every_cause_and_every_fact():
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "diagnosis.md").read_text(encoding="utf-8")
    assert [c for c in CAUSES if f"| `{c}` |" not in docs] == []
    assert [f for f in FACTS if f"| `{f}` |" not in docs] == []
