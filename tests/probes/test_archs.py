"""The one arch rule (probes/archs.py): stdlib only, and each semantic pinned."""

import ast
import copy
from pathlib import Path

import pytest

from probes import archs

RULES = archs.load_arch_rules()
CU128_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]


def match(device, arch_list, rules=RULES, override=None):
    return archs.arch_compatibility(device, arch_list, rules, override=override)["match"]


def test_archs_is_standalone():
    """No torch, nothing from the rest of the package: the host imports this file alone."""
    tree = ast.parse(Path(archs.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import in archs.py"
            imported.add(node.module.split(".")[0])
    assert imported <= {"json", "os", "re", "typing"}, imported


def test_rules_come_from_the_data_file_next_to_the_module():
    assert Path(archs.ARCH_RULES_FILE) == Path(archs.__file__).parent / "data" / "arch_compat.json"
    assert "cuda_isolated" in RULES and "rocm_generic" in RULES
    assert archs.arch_compatibility("sm_90", ["sm_90"])["match"] == "exact"  # rules=None reads the file


def test_result_shape():
    result = archs.arch_compatibility("sm_86", ["sm_80", "sm_75", "bogus"], RULES)
    assert set(result) >= {"device", "match", "via", "unparsed", "description"}
    assert result == dict(result, device="sm_86", match="binary_compatible", via=["sm_80"], unparsed=["bogus"])
    assert result["description"] == "binary_compatible (sm_86 via sm_80)"
    assert set(archs.MATCHES) == {"exact", "binary_compatible", "generic", "ptx_jit", "override", "none"}


@pytest.mark.parametrize("device, arch_list, expected", [
    ("sm_90", CU128_ARCHS, "exact"),
    ("sm_89", CU128_ARCHS, "binary_compatible"),  # sm_80/sm_86 cubins run on 8.9
    ("sm_86", ["sm_80"], "binary_compatible"),
    ("sm_80", ["sm_86"], "none"),  # never onto a lower minor
    ("sm_103", ["sm_100"], "binary_compatible"),
    ("sm_121", ["sm_120"], "binary_compatible"),
    ("sm_61", ["sm_60", "sm_70"], "binary_compatible"),
    ("sm_61", ["sm_50", "sm_70"], "none"),  # never across majors
    ("sm_90", ["sm_80"], "none"),
    # integrated/Tegra isolation from the data file
    ("sm_87", ["sm_80", "sm_86"], "none"),  # Jetson Orin is not a discrete 8.x
    ("sm_62", ["sm_60"], "none"),  # Jetson TX2
    ("sm_101", ["sm_100"], "none"),
    ("sm_110", ["sm_101"], "binary_compatible"),  # 10.1 was renamed 11.0
    ("sm_87", ["sm_87"], "exact"),
    # arch-specific 'a': exactly that capability
    ("sm_90", ["sm_90a"], "exact"),
    ("sm_100", ["sm_90a", "compute_90a"], "none"),
    ("sm_103", ["sm_100a"], "none"),
    # family 'f': same major, minor >=
    ("sm_103", ["sm_100f"], "binary_compatible"),
    ("sm_100", ["sm_100f"], "exact"),
    ("sm_120", ["sm_100f"], "none"),
    ("sm_103", ["compute_100f"], "ptx_jit"),
    ("sm_120", ["compute_100f"], "none"),
    # PTX: any later capability, across majors
    ("sm_120", ["sm_80", "compute_90"], "ptx_jit"),
    ("sm_87", ["compute_80"], "ptx_jit"),  # PTX is JIT-compiled even for Tegra
    ("sm_75", ["sm_80", "compute_80"], "none"),
    ("sm_90", ["compute_90a"], "ptx_jit"),
])
def test_cuda(device, arch_list, expected):
    assert match(device, arch_list) == expected


def test_same_major_rule_without_isolation_data():
    """The generic rule on its own: sm_80 code runs on 8.7; only the data file's isolation stops it."""
    rules = copy.deepcopy(RULES)
    rules["cuda_isolated"] = {}
    assert match("sm_87", ["sm_80"], rules) == "binary_compatible"
    assert match("sm_87", ["sm_80"]) == "none"


def test_best_match_and_all_providers():
    result = archs.arch_compatibility("sm_90", ["sm_80", "sm_90a", "compute_90"], RULES)
    assert result["match"] == "exact" and result["via"] == ["sm_90a"]
    result = archs.arch_compatibility("sm_89", ["sm_80", "sm_86", "compute_89"], RULES)
    assert result["match"] == "binary_compatible" and result["via"] == ["sm_80", "sm_86"]


@pytest.mark.parametrize("device, arch_list, expected", [
    ("gfx942", ["gfx90a", "gfx942", "gfx1100"], "exact"),
    ("gfx1101", ["gfx1100"], "none"),  # no binary compatibility between ISAs
    ("gfx1101", ["gfx90a", "gfx11-generic"], "generic"),
    ("gfx90a", ["gfx90a:xnack-"], "exact"),  # device features unknown: the code object may run
    ("gfx90a:sramecc+:xnack-", ["gfx90a:xnack-"], "exact"),
    ("gfx90a:sramecc+:xnack+", ["gfx90a:xnack-"], "none"),  # xnack mode differs: does not load
    ("gfx90a:sramecc+:xnack+", ["gfx90a"], "exact"),  # feature-any code object runs either way
    ("gfx942:sramecc+:xnack-", ["gfx9-4-generic:xnack-"], "generic"),
    ("gfx1030", ["gfx10-1-generic"], "none"),
    ("gfx1036", ["gfx10-3-generic"], "generic"),
])
def test_rocm(device, arch_list, expected):
    assert match(device, arch_list) == expected


def test_hsa_override():
    result = archs.arch_compatibility("gfx1031", ["gfx900", "gfx1030", "gfx1100"], RULES, override="gfx1030")
    assert result["match"] == "override"
    assert result["description"] == "override (gfx1031 runs as gfx1030)"
    assert result["via"] == ["gfx1030"] and result["runs_as"] == "gfx1030"
    # without the override the real ISA has no code
    assert match("gfx1031", ["gfx900", "gfx1030"]) == "none"
    # the runtime loads code for the override only, even when the real ISA is in the build
    assert match("gfx1031", ["gfx1031"], override="gfx1100") == "none"
    none = archs.arch_compatibility("gfx1031", ["gfx1031"], RULES, override="gfx1100")
    assert "runs as gfx1100" in none["description"]
    # an override equal to the real ISA changes nothing
    assert match("gfx1030", ["gfx1030"], override="gfx1030") == "exact"
    assert match("gfx1032", ["gfx10-3-generic"], override="gfx1030") == "override"


@pytest.mark.parametrize("value, gfx", [("10.3.0", "gfx1030"), ("11.0.0", "gfx1100"), ("9.4.2", "gfx942"),
                                        ("9.0.10", "gfx90a"), (" 9.0.6 ", "gfx906"), ("10.3", None),
                                        ("", None), (None, None), ("x.y.z", None)])
def test_gfx_from_override(value, gfx):
    assert archs.gfx_from_override(value) == gfx


def test_unparsed_device():
    result = archs.arch_compatibility("?", ["sm_80"], RULES)
    assert result["match"] == "none" and result["unparsed"] == ["?"]


def test_the_arch_probe_uses_the_same_rule():
    from probes import programming_interface

    assert programming_interface.arch_compatibility is archs.arch_compatibility
