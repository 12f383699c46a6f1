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


def test_a_fragment_is_written_once_and_used_as_a_subpattern(tmp_path):
    path = _write(tmp_path, """\
        fragments:
          failure: 'fail(?:s|ed)?|broke'
        rules:
          - {id: fan, cause: hardware_fault, patterns: ['\\bfan\\b[^\\n]{0,20}\\b(?&failure)\\b'], remedy: r,
             explanation: e}
    """)
    ruleset = load_rules(path)
    assert ruleset.rules[0].patterns[0].pattern == r"\bfan\b[^\n]{0,20}\b(?:fail(?:s|ed)?|broke)\b"
    assert diagnose("the fan failed at boot", rules=ruleset).cause == "hardware_fault"
    assert diagnose("the fan is fine", rules=ruleset).cause == "unknown"


def test_a_pattern_compiled_later_gets_the_files_fragments_and_checks(tmp_path):
    # what tools/diagnosis_replay.py --signal-extra does with a pattern given on its command line
    path = _write(tmp_path, """\
        fragments:
          failure: 'fail(?:s|ed)?|broke'
        rules:
          - {id: fan, cause: hardware_fault, patterns: ['fan'], remedy: r, explanation: e}
    """)
    ruleset = load_rules(path)
    assert ruleset.compile_pattern(r"\bpump (?&failure)\b").search("the pump broke")
    with pytest.raises(RulesError) as err:
        ruleset.compile_pattern("pump.*(?&failure)", "--signal-extra")
    assert err.value.problems == ["--signal-extra: pattern 'pump.*(?&failure)' has an unbounded wildcard or a "
                                  "quantified group; use a bounded class such as [^ ]{0,80}"]
    with pytest.raises(RulesError, match=r"uses \(\?&failur\), which is not declared"):
        ruleset.compile_pattern("pump (?&failur)")


def test_fragment_mistakes_name_the_place_and_the_fix(tmp_path):
    path = _write(tmp_path, """\
        fragments:
          failure: 'fail(?:s|ed)?'
          nested: 'x(?&failure)'
          Bad-Name: 'x'
          wild: 'a.*b'
          flagged: '(?i)abc'
        rules:
          - {id: typo, cause: hardware_fault, patterns: ['fan (?&failur)'], remedy: r, explanation: e}
          - {id: counted, cause: hardware_fault, patterns: ['fan (?&failure){2}'], remedy: r, explanation: e}
          - {id: uses-wild, cause: hardware_fault, patterns: ['fan (?&wild)'], remedy: r, explanation: e}
          - {id: long, cause: hardware_fault, patterns: ['(?&failure)x{1,500}'], remedy: r, explanation: e}
    """)
    with pytest.raises(RulesError) as err:
        load_rules(path)
    lines = [line.strip() for line in str(err.value).splitlines()]
    assert "rule typo: pattern 'fan (?&failur)' uses (?&failur), which is not declared under fragments: " \
           "(did you mean 'failure'?)" in lines
    assert "fragments.nested: a fragment may not use another fragment; write it out" in lines
    assert "fragments.Bad-Name: a fragment name is lowercase letters, digits and _ (at most 40)" in lines
    assert "fragments.wild: pattern 'a.*b' has an unbounded wildcard or a quantified group; use a bounded class " \
           "such as [^ ]{0,80}" in lines
    # compiled as the group it becomes: a global flag inside it would not compile there
    assert any(line.startswith("fragments.flagged: pattern '(?i)abc' does not compile: global flags") for line in lines)
    assert "rule counted: pattern 'fan (?&failure){2}' repeats a fragment ((?&name) followed by *, + or {}); " \
           "write the repeat inside the fragment, bounded" in lines
    assert "rule uses-wild: pattern 'fan (?&wild)' uses (?&wild), whose declaration is invalid " \
           "(see fragments.wild)" in lines
    # problems quote the pattern as written, not its expansion
    assert "rule long: pattern '(?&failure)x{1,500}' repeats more than 200 times" in lines


def test_the_packaged_fallbacks_share_one_failure_fragment():
    import yaml

    from gpumatrix.diagnose.rules import DEFAULT_RULES_PATH

    raw = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    shared = "(?:" + raw["fragments"]["stack_failure"] + ")"
    ruleset = load_rules()
    stack_named = [r for r in ruleset.rules if r.id.startswith("fallback-") and r.tier == "last_resort"]
    assert len(stack_named) >= 5
    for rule in stack_named:
        sharing = [p for p in rule.patterns if shared in p.pattern]
        assert len(sharing) == 2, rule.id  # a component then a failure word, and the other way round
