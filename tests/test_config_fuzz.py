"""Property tests: any input to matrix.yaml parsing gives a matrix or a clean ConfigError, and
expansion keeps GitHub Actions' invariants for any combination of bases, versions, exclude, include."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from gpumatrix.config import ConfigError, expand_cells, parse_matrix

PATH = Path("/tmp/fuzz/matrix.yaml")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_any_text_parses_or_fails_cleanly(text):
    try:
        parse_matrix(text, PATH)
    except ConfigError as err:
        assert err.exit_code == 2 and err.problems and all(p.message for p in err.problems)


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12))
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids,
                                                                                          max_size=3), max_leaves=12)
keys = st.sampled_from(["schema_version", "python", "bases", "torch", "exclude", "include", "run", "index_url",
                        "id", "vendor", "image", "variant", "version", "variants", "wheel", "env", "base"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, values, max_size=8))
def test_any_structure_parses_or_fails_cleanly(doc):
    doc.setdefault("schema_version", 1)
    try:
        m = parse_matrix(yaml.safe_dump(doc), PATH)
        expand_cells(m)
    except ConfigError as err:
        # a usage error (exit 2) that names the file and says what is wrong with each problem
        assert err.problems and err.exit_code == 2
        assert all(p.path == str(PATH) and p.message.strip() for p in err.problems), err.problems


IDS = ["a", "b", "c"]
VERSIONS = ["2.13.0", "2.14.1", "2.15.0"]


@settings(max_examples=200, deadline=None)
@given(bases=st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True),
       versions=st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=3, unique=True),
       exclude=st.lists(st.fixed_dictionaries({}, optional={"base": st.sampled_from(IDS + ["*"]),
                                                            "torch": st.sampled_from(VERSIONS + ["2.1*"])}),
                        max_size=3).map(lambda xs: [x for x in xs if x]),
       include=st.lists(st.fixed_dictionaries({"base": st.sampled_from(IDS), "torch": st.sampled_from(VERSIONS),
                                               "env": st.fixed_dictionaries({"K": st.sampled_from(["1", "2"])})}),
                        max_size=3))
def test_expansion_invariants(bases, versions, exclude, include):
    doc = {"schema_version": 1,
           "bases": [{"id": b, "vendor": "cpu", "image": "debian:bookworm-slim", "variant": "cpu"} for b in bases],
           "torch": [{"version": v, "variants": ["cpu"]} for v in versions],
           "exclude": [e for e in exclude if e.get("base", "*") in bases + ["*"]], "include": [i for i in include if i["base"] in bases]}
    exp = expand_cells(parse_matrix(yaml.safe_dump(doc), PATH))
    ids = [c.id for c in exp.cells]
    assert len(ids) == len(set(ids))  # unique ids
    product = {f"{b}-torch{v}" for b in bases for v in versions}
    excluded = {e.id for e in exp.excluded}
    assert excluded <= product
    kept = product - excluded
    assert kept <= set(ids)  # exclude removes only what it matched
    added = set(ids) - kept
    # an include adds a cell only when it matched none of the remaining combinations
    for cid in added:
        assert any(f"{i['base']}-torch{i['torch']}" == cid for i in doc["include"])
    for cell in exp.cells:  # includes that match a kept cell put their env on it (last one wins)
        hits = [i for i in doc["include"] if f"{i['base']}-torch{i['torch']}" == cell.id]
        if hits:
            assert dict(cell.env) == {"K": hits[-1]["env"]["K"]}
