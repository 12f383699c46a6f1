"""The rules file: its vocabulary, its validation, and the promise of bounded patterns."""

from __future__ import annotations

import textwrap

import pytest

from gpumatrix.diagnose import CAUSES, RulesError, diagnose, load_rules

VOCABULARY = (
    "container_toolkit_missing", "no_device_visible", "driver_not_loaded", "device_permission", "driver_too_old",
    "arch_unsupported", "cpu_only_build", "wrong_vendor_build", "runtime_init_failure", "shm_too_small",
    "out_of_memory", "collective_failure", "dnn_library_failure", "library_mismatch", "hardware_fault", "unknown",
    # build failures, added at the end so that nothing that indexes the tuple moves
    "package_unavailable", "index_unreachable", "image_unavailable", "disk_full",
)


def test_vocabulary_is_exactly_the_public_one():
    assert CAUSES == VOCABULARY


def test_packaged_rules_load_and_are_complete():
    ruleset = load_rules()
    assert set(ruleset.layers) == set(CAUSES) - {"unknown"}
    assert {r.cause for r in ruleset.rules} == set(CAUSES) - {"unknown"}
    for rule in ruleset.rules:
        assert rule.remedy and "\n" not in rule.remedy, rule.id
        assert rule.explanation, rule.id
        assert rule.patterns or rule.when, rule.id
        assert rule.when or rule.source, f"{rule.id}: a text rule names where its message was seen"


def _write(tmp_path, body: str):
    path = tmp_path / "rules.yaml"
    base = textwrap.dedent("""\
        schema_version: 1
        layers: [[LAYER]]
        causes:
    """).replace("LAYER", ", ".join(c for c in CAUSES if c != "unknown"))
    base += "".join(f"  {c}: {{summary: s{', remedy: r' if c == 'unknown' else ''}}}\n" for c in CAUSES)
    path.write_text(base + textwrap.dedent(body), encoding="utf-8")
    return path


def test_a_minimal_rules_file_works(tmp_path):
    path = _write(tmp_path, """\
        rules:
          - {id: boom, cause: hardware_fault, patterns: ['boom'], remedy: fix it, explanation: it broke}
    """)
    result = diagnose("BOOM happened", rules=load_rules(path))
    assert (result.cause, result.rule, result.remedy) == ("hardware_fault", "boom", "fix it")
    assert diagnose("nothing", rules=path).remedy == "r"


def test_all_problems_are_reported_at_once(tmp_path):
    path = _write(tmp_path, """\
        rules:
          - {id: a, cause: hardware_fault, patterns: ['x.*y'], remedy: r, explanation: e}
          - {id: b, cause: no_such_cause, patterns: ['x'], remedy: r, explanation: e}
          - {id: c, cause: hardware_fault, patern: ['x'], remedy: r, explanation: e}
          - {id: d, cause: hardware_fault, patterns: ['(a+)+'], remedy: r, explanation: e}
          - {id: e, cause: hardware_fault, when: [{fact: x, bigger: 3}], remedy: r, explanation: e, evidence: v}
          - {id: f, cause: hardware_fault, patterns: ['a{1,5000}'], remedy: '', explanation: e}
    """)
    with pytest.raises(RulesError) as err:
        load_rules(path)
    message = str(err.value)
    assert "unbounded wildcard" in message             # a: .*
    assert "no_such_cause" in message                  # b
    assert "did you mean 'patterns'" in message        # c
    assert message.count("quantified group") == 2      # a and d share the message
    assert "'bigger'" in message                       # e
    assert "repeats more than 200" in message          # f
    assert err.value.exit_code == 2


def test_missing_file_is_a_clean_error(tmp_path):
    with pytest.raises(RulesError, match="cannot read"):
        load_rules(tmp_path / "absent.yaml")
