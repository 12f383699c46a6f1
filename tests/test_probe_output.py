"""A probe container's stdout is hostile input: whatever it prints, the parser returns a document or ValueError."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpumatrix.run.probe import PROBE_STATUSES, parse_probe_output
from tests.fake_engine import FIXTURES, PROBE_FAIL, PROBE_PASS

REAL = [(FIXTURES / name).read_bytes() for name in (PROBE_PASS, PROBE_FAIL)]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                    max_leaves=30)


def test_real_suite_output_parses_to_its_document():
    for stdout in REAL:
        assert parse_probe_output(stdout) == json.loads(stdout)
        # a library that prints a line at import time does not hide the document
        assert parse_probe_output(b"Warning: something at import\n" + stdout) == json.loads(stdout)


@pytest.mark.parametrize("change, reason", [
    (lambda d: d.update(schema_version=2), "probe output has schema_version '2', expected 1"),
    (lambda d: d.pop("verdict"), "probe output unreadable: missing 'probes' or 'verdict'"),
    (lambda d: d["verdict"].update(status="maybe"), "verdict status 'maybe' is not pass or fail"),
    (lambda d: d.update(facts=[]), "'facts' is not an object"),
    (lambda d: d["probes"][0].pop("id"), "probe 0 has no id"),
    (lambda d: d["probes"][0].update(status="great"), "has status 'great'"),
    (lambda d: d["probes"][0].update(layer=7), "has layer '7'"),
    (lambda d: d["probes"][0].update(layer=True), "has layer 'True'"),
    (lambda d: d["probes"][0].update(details="x"), "has details that are not an object"),
])
def test_a_malformed_document_is_refused_with_its_reason(change, reason):
    doc = json.loads(REAL[0])
    change(doc)
    with pytest.raises(ValueError) as err:
        parse_probe_output(json.dumps(doc).encode())
    assert reason in str(err.value)


def test_output_that_is_not_a_document_is_refused_with_its_reason():
    for stdout, reason in ((b"", "the probe suite printed nothing"), (b"Segmentation fault\n", "not a JSON document"),
                           (b"[1, 2]", "not a JSON object"), (b"{" * 100_000, "not a JSON document")):
        with pytest.raises(ValueError, match=reason):
            parse_probe_output(stdout)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=4096), st.text(max_size=2048).map(str.encode), JSON.map(lambda v: json.dumps(v).encode())))
def test_hostile_output_never_crashes_the_parser(data):
    try:
        doc = parse_probe_output(data)
    except ValueError:
        return
    assert doc["schema_version"] == 1 and isinstance(doc["probes"], list)


@settings(max_examples=300, deadline=None)
@given(real=st.sampled_from(REAL), where=st.lists(st.integers(0, 50), min_size=1, max_size=4), value=JSON)
def test_a_real_document_with_any_field_replaced_parses_to_a_valid_shape_or_is_refused(real, where, value):
    """Near-valid input (a real document, one field replaced by any JSON): what gets through is well-formed."""
    doc = json.loads(real)
    node = doc
    for i in where[:-1]:  # walk down to a random container
        keys = sorted(node) if isinstance(node, dict) else range(len(node))
        if not keys or not isinstance(node[list(keys)[i % len(keys)]], (dict, list)):
            break
        node = node[list(keys)[i % len(keys)]]
    keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
    if keys:
        node[keys[where[-1] % len(keys)]] = copy.deepcopy(value)
    try:
        parsed = parse_probe_output(json.dumps(doc).encode())
    except ValueError:
        return
    assert parsed == doc
    assert parsed["verdict"]["status"] in ("pass", "fail")
    for probe in parsed["probes"]:
        assert isinstance(probe["id"], str) and probe["status"] in PROBE_STATUSES and 1 <= probe["layer"] <= 6


def test_a_status_that_is_a_list_is_refused():
    doc = json.loads(REAL[0])
    doc["probes"][0]["status"] = []
    with pytest.raises(ValueError, match="has status"):
        parse_probe_output(json.dumps(doc).encode())
