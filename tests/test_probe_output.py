"""A probe container's stdout is hostile input: whatever it prints, the parser returns a document or ValueError."""

from __future__ import annotations

import json

from gpumatrix.run.probe import parse_probe_output


def test_hostile_output_never_crashes_the_parser():
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.binary(max_size=4096), st.text(max_size=2048).map(str.encode),
                     st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                                  lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                                                             max_size=4),
                                  max_leaves=30).map(lambda v: json.dumps(v).encode())))
    def check(data):
        try:
            doc = parse_probe_output(data)
        except ValueError:
            return
        assert doc["schema_version"] == 1 and isinstance(doc["probes"], list)

    check()
