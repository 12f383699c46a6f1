"""Random, huge, binary and hostile input gives a diagnosis, never a crash or a hang."""

from __future__ import annotations

import os
import random
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gpumatrix.diagnose import CAUSES, diagnose, load_rules

FIVE_MB = 5 * 1024 * 1024
# A guard against a hang (a backtracking pattern on hostile input takes minutes), not a speed goal:
# these inputs take about 0.03-1.7 s here (2 cores), measured side by side by bench/diagnosis_speed.py.
TIME_LIMIT_S = 10.0


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_random_text(text):
    assert diagnose(text).cause in CAUSES


@settings(max_examples=300, deadline=None)
@given(st.binary())
def test_random_bytes(data):
    assert diagnose(data).cause in CAUSES


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["vendor", "host_gpu_vendors", "host_driver_version", "required_min_driver",
                                        "device_arch", "torch_arch_list", "torch_cuda", "torch_hip",
                                        "dev_kfd_present", "device_nodes_present", "shm_bytes", "probe_failures"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                                 st.lists(st.text(max_size=10), max_size=4))),
       st.text(max_size=200))
def test_random_facts(facts, text):
    assert diagnose(text, facts).cause in CAUSES


def _timed(data) -> float:
    diagnose("RuntimeError: CUDA error: unknown error")  # the rules and the model are loaded before timing
    start = time.perf_counter()
    result = diagnose(data)
    elapsed = time.perf_counter() - start
    assert result.cause in CAUSES
    return elapsed


def test_five_megabytes_of_random_bytes_is_fast():
    assert _timed(os.urandom(FIVE_MB)) < TIME_LIMIT_S


def test_five_megabyte_single_line_is_fast():
    assert _timed("a" * FIVE_MB) < TIME_LIMIT_S


def test_five_megabytes_of_newlines_and_nuls_is_fast():
    assert _timed(("\n\x00\r" * (FIVE_MB // 3)).encode()) < TIME_LIMIT_S


def test_hostile_text_built_from_the_rules_own_fragments_is_fast():
    # Near-misses of every pattern, repeated: the worst case for a backtracking matcher.
    fragments = []
    for rule in load_rules().rules:
        for pattern in rule.patterns + rule.require:
            literal = re.sub(r"\\.|[\[\](){}?*+|^$]", " ", pattern.pattern)
            fragments.extend(w for w in literal.split() if len(w) > 2)
    rng = random.Random(1)
    chunks, size = [], 0
    while size < FIVE_MB:
        chunk = " ".join(rng.choice(fragments) for _ in range(20)) + rng.choice([" ", "\n", ": ", "("])
        chunks.append(chunk)
        size += len(chunk)
    assert _timed("".join(chunks)) < TIME_LIMIT_S


def test_error_at_the_end_of_a_huge_log_is_still_found():
    log = ("noise line\n" * 600_000) + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert diagnose(log).cause == "arch_unsupported"
    assert diagnose(log.encode()).cause == "arch_unsupported"


def test_invalid_utf8_is_replaced_not_fatal():
    data = b"\xff\xfe RuntimeError: No CUDA GPUs are available \xc3\x28"
    assert diagnose(data).cause == "no_device_visible"


def test_ansi_colours_and_crlf_are_ignored():
    log = "\x1b[31mRuntimeError\x1b[0m: Torch not compiled with CUDA enabled\r\n"
    assert diagnose(log).cause == "cpu_only_build"
