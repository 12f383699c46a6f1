"""The learned last word: a naive Bayes model over the train sides, asked only when no rule matched."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
import yaml
from diagnosis_corpus import CASES
from diagnosis_wild import batches, load

from gpumatrix.diagnose import RulesError, diagnose, load_rules
from gpumatrix.diagnose.engine import LEARNED_RULE
from gpumatrix.diagnose.learned import Model, ModelError, build, dumps, features, load_model
from gpumatrix.diagnose.rules import DEFAULT_RULES_PATH, parse_rules

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.build_diagnosis_model import MODEL_PATH, model_bytes, train_examples  # noqa: E402


def _wild_case(batch: str, case_id: str):
    return next(c for c in load(batch, "train") if c.id == case_id)


def _rules_without_rules(tmp_path: Path, model: dict | str | None) -> Path:
    """The packaged rules file with no rules, its learned block pointing at ``model`` in tmp_path."""
    raw = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    raw["rules"] = []
    raw["learned"]["model"] = "model.json"
    if isinstance(model, dict):
        (tmp_path / "model.json").write_text(dumps(model), encoding="utf-8")
    elif isinstance(model, str):
        (tmp_path / "model.json").write_text(model, encoding="utf-8")
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_the_shipped_model_is_exactly_what_the_train_sides_give():
    assert MODEL_PATH.read_bytes() == model_bytes(), "stale model: run python tools/build_diagnosis_model.py"


def test_no_held_out_text_is_trained_on():
    # Also the same error word for word from another thread: three held-out messages repeat a train
    # message (seqnet-36 = curated fooocus-1313, stream-whisper-18 = batch 1's stream-whisper-28,
    # worddumb-91 = batch 7's localgpt-221); the model leaves those train texts out.
    trained = {text.strip() for _, text in train_examples()[0]}
    held_out = {c.text.strip() for c in CASES if c.split == "holdout"}
    held_out |= {c.text.strip() for batch in batches() for c in load(batch, "holdout")}
    assert held_out and not trained & held_out
    assert all(path.endswith("-train.yaml") or "/corpus/" in path for path in train_examples()[1])


# Real train messages (sources in tests/diagnosis/wild/): a model built WITHOUT the message still
# reads it right, through a rules file with no rules at all.
UNSEEN = [("batch6", "cornernet-76", "index_unreachable"),
          ("batch7", "neural-style-312", "hardware_fault"),
          ("batch7", "pamir-17", "runtime_init_failure")]


@pytest.mark.parametrize(("batch", "case_id", "cause"), UNSEEN)
def test_a_message_the_model_never_saw_is_read_by_its_words(tmp_path, batch, case_id, cause):
    case = _wild_case(batch, case_id)
    assert case.cause == cause
    model = build(e for e in train_examples()[0] if e != (case.cause, case.text))
    result = diagnose(case.text, rules=_rules_without_rules(tmp_path, model))
    assert (result.cause, result.rule) == (cause, LEARNED_RULE), case.source
    assert result.confidence == load_rules().learned.confidence < 0.25  # below every rule tier
    assert result.alternatives and all(a.check and a.cause not in (cause, "unknown") for a in result.alternatives)
    assert "posterior" in result.explanation and "guess" in result.explanation
    assert result.evidence and result.evidence.strip("…")[:60] in case.text
    assert result.remedy.startswith("Likely: ") and "Check first: " in result.remedy


def test_the_packaged_rules_still_win_where_they_match():
    case = _wild_case("batch7", "pamir-17")
    assert (diagnose(case.text).rule, diagnose(case.text).cause) == ("devices-busy", "runtime_init_failure")


# A healthy report in collect_env's full format: its "Could not collect" lines are no failure.
HEALTHY_REPORT = """PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.3 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Clang version: Could not collect
CMake version: Could not collect
Libc version: glibc-2.35

Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)
Python platform: Linux-6.2.0-37-generic-x86_64-with-glibc2.35
Is CUDA available: True
CUDA runtime version: Could not collect
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090
Nvidia driver version: 545.23.08
HIP runtime version: N/A
Is XNNPACK available: True
"""


@pytest.mark.parametrize("text", [
    HEALTHY_REPORT,
    # Healthy report: GPU words, nothing wrong (pytorch/pytorch#40682's collect_env, shortened).
    "PyTorch version: 1.5.0+cu101\nIs CUDA available: Yes\nGPU 0: TITAN RTX\nNvidia driver version: 442.92\n",
    # A failure, but nothing of the GPU stack in it.
    "Traceback (most recent call last):\nKeyError: 'model_state_dict'\nprocess failed",
    # Known code bugs stay unknown (the exclude list).
    "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported",
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10) on cuda:0",
    # Everyday engine and apt errors that are no GPU setup problem (docker's and apt's own wording).
    'docker: Error response from daemon: Conflict. The container name "/trainer" is already in use by container '
    '"3f4e". You have to remove (or rename) that container to be able to reuse that name.',
    "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 2412 (apt-get)",
    # The words "device" and "driver" alone are no GPU signal (they were tried for the gate and left out): a busy
    # mount, a network interface, a database driver.
    "umount: /mnt/data: target is busy.\nrm: cannot remove '/mnt/data': Device or resource busy",
    "Error: Cannot find device \"eth1\"\nRTNETLINK answers: No such device",
    "sqlalchemy.exc.NoSuchModuleError: Can't load plugin: sqlalchemy.dialects:postgres (driver failed to load)",
    # Mesa alone is also an agent-based modelling library, so it was left out of the GL words
    "mesa.space.PropertyLayer: ValueError: failed to place agent at (3, 4): cell is full",
    # the network words name the stack only as words: a 'roce' or 'ucx' inside another word is none
    "error: failed to parse the procedure file: unexpected token in source line 12",
    # a Python exception whose message names no part of the stack stays a code bug, even with the GPU farther on
    "IndexError: list index out of range while reading the batch of samples from the dataset shard that was written by "
    "the loader\nprocess failed on cuda:0",
    # ... and the device mix-ups that name CUDA in a code bug's exception stay code bugs
    "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
    "first.",
    "AttributeError: 'NoneType' object has no attribute 'cuda'",
    "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
    # (the review of that change): API changes, type mix-ups, undefined names, a method called on a class, code names
    # joined with '_' and English words that begin with 'hip'
    "TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'",
    "TypeError: expected torch.cuda.FloatTensor (got torch.FloatTensor)",
    "TypeError: unsupported operand type(s) for *: 'NoneType' and 'torch.cuda.FloatTensor'",
    "ValueError: Expected a cuda device, but got: cpu",
    "NameError: name 'cupy' is not defined",
    "TypeError: cuda() missing 1 required positional argument: 'self'",
    "KeyError: 'use_cuda'",
    "KeyError: 'hippocampus'",
    # the glued names count only capitalised inside an identifier: 'barracuda' is no CUDA
    "barracuda_backup: failed to open archive: permission denied",
])
def test_the_model_is_not_asked_without_signal_and_failure_or_on_a_code_bug(tmp_path, text):
    rules = _rules_without_rules(tmp_path, build(train_examples()[0]))
    assert diagnose(text, rules=rules).cause == "unknown"


@pytest.mark.parametrize("text", [
    # The stack's other parts, added to the gate after batch 62 (docs/diagnosis.md, "A wider gate"): with no CUDA
    # or ROCm word, these reach the model now (TensorRT's and XLA's own words, ollama's server).
    "[TensorRT] ERROR: INVALID_CONFIG: The engine plan file is generated on an incompatible device, expecting "
    "compute 8.6 got compute 7.5, please rebuild.",
    "XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call failed",
    "Error: ollama server failed to start the model runner",
    # Linux's GL stack, added after batch 138 (docs/diagnosis.md, "A wider gate, a third time")
    "libGL error: failed to load driver: swrast",
    "Error: couldn't find RGB GLX visual or fbconfig",
    # the network between GPU hosts, profilers and GPU libraries outside the frameworks, added after batch 154
    # (docs/diagnosis.md, "A wider gate, a fourth time")
    "src/host/init/init.cu:  nvshmem setup connections failed",
    "terminate called after throwing an instance of 'gloo::EnforceNotMet' what(): [enforce fail at gloo/transport/tcp/pair.cc:446]",
    "[ 1632.420957] infiniband mlx5_0: Failed to allocate pd",
    # NVIDIA's video codec and other SDKs, the fabric, conmon, and the stack's names inside an identifier, added
    # after batch 221 (docs/diagnosis.md, "A wider gate, a fifth time")
    "Failed to create decoder (NvDecoder : cuvidCreateVideoParser(&m_hParser, &p) returned error -45206992)",
    "ERROR: UndefVarError: @cutensor not defined",
    "nvswitch-fabric: fabric manager config file item FABRIC_NODE_CONFIG_FILE has an invalid value",
    'OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library',
    # a Python exception whose own message names the stack is no code bug (after batch 224; docs/diagnosis.md)
    "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
    "AttributeError: module 'torch._C' has no attribute '_cuda_getDeviceCount'",
])
def test_the_stacks_other_parts_let_the_model_speak(tmp_path, text):
    rules = _rules_without_rules(tmp_path, build(train_examples()[0]))
    result = diagnose(text, rules=rules)
    assert result.cause != "unknown" and result.rule == "learned-naive-bayes"


@pytest.mark.parametrize("content", [None, "{not json", json.dumps({"format": "something else"}),
                                     json.dumps({"format": "gpumatrix-diagnosis-naive-bayes/1", "classes": ["a"]})])
def test_an_unreadable_model_leaves_unknown_and_says_why(tmp_path, content):
    case = _wild_case("batch6", "cornernet-76")
    result = diagnose(case.text, rules=_rules_without_rules(tmp_path, content))
    assert result.cause == "unknown" and result.rule is None
    assert "learned model was not consulted" in result.explanation
    assert "model.json" in result.explanation and "tools/build_diagnosis_model.py" in result.explanation


@pytest.mark.parametrize(("block", "problem"), [
    ({"model": "m.json", "signal": ["gpu"], "min_posteriour": 0.5}, "did you mean 'min_posterior'"),
    ({"model": "m.json", "signal": []}, "learned.signal: give at least one pattern"),
    ({"model": "m.json", "signal": ["gpu"], "confidence": 2}, "learned.confidence must be a number in (0, 1]"),
    ({"model": "m.json", "signal": "gpu"}, "learned.signal: must be a list"),
    ({"model": "m.json", "signal": ["gpu.*"]}, "unbounded wildcard"),
    ({"signal": ["gpu"]}, "learned.model: name the model file"),
])
def test_a_bad_learned_block_is_a_rules_error_naming_the_key(block, problem):
    raw = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    raw["learned"] = block
    with pytest.raises(RulesError) as caught:
        parse_rules(raw, "rules.yaml")
    assert problem in str(caught.value)


def test_the_build_is_the_same_in_any_order_and_the_posterior_is_a_distribution():
    examples = train_examples()[0]
    assert dumps(build(examples)) == dumps(build(reversed(examples)))
    reading = load_model(str(MODEL_PATH)).read("nvidia-smi failed: couldn't communicate with the NVIDIA driver")
    assert abs(sum(p for _, p in reading.ranked) - 1) < 1e-9
    assert [p for _, p in reading.ranked] == sorted((p for _, p in reading.ranked), reverse=True)
    assert reading.words and all(w in features("nvidia-smi failed: couldn't communicate with the NVIDIA driver")
                                 for w in reading.words)


def test_a_model_document_that_names_an_unlisted_class_is_refused():
    document = build([("driver_not_loaded", "nvidia driver failed")])
    document["features"]["nvidia"] = [[3, 1]]
    with pytest.raises(ModelError, match="names a class that is not listed"):
        Model(document)


def test_features_are_bounded_on_huge_input():
    text = "cuda error " * 1_000_000
    assert features(text) == {"cuda", "error", "cuda error", "error cuda"}
    assert len(features("x" * 10_000_000)) == 2  # one capped word, and itself as a pair
    middle = "cuda " * 5_000 + "needle " + "cuda " * 5_000  # only the two ends of a huge log are read
    assert "needle" not in features(middle) and "needle" in features("cuda " * 100 + "needle")


def _tiny_model(tmp_path: Path, examples, **learned) -> Path:
    rules = _rules_without_rules(tmp_path, build(examples))
    raw = yaml.safe_load(rules.read_text(encoding="utf-8"))
    raw["learned"].update(learned)
    rules.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return rules


def test_the_model_is_silent_below_min_posterior(tmp_path):
    examples = [("driver_not_loaded", "cuda failed on this node"), ("runtime_init_failure", "cuda failed on this box")]
    # The two classes tie: each has a posterior of one half.
    (tmp_path / "strict").mkdir()
    (tmp_path / "lenient").mkdir()  # rules files are cached by path: one folder each
    assert diagnose("cuda failed", rules=_tiny_model(tmp_path / "strict", examples, min_posterior=0.6)).cause == "unknown"
    assert diagnose("cuda failed", rules=_tiny_model(tmp_path / "lenient", examples, min_posterior=0.45)).cause != "unknown"


def test_the_model_reading_unknown_leaves_unknown(tmp_path):
    examples = [("unknown", "cuda failed in my own code"), ("unknown", "cuda failed again in my code"),
                ("driver_not_loaded", "nvidia driver missing")]
    result = diagnose("cuda failed in my code", rules=_tiny_model(tmp_path, examples))
    assert (result.cause, result.rule) == ("unknown", None)


def test_the_model_does_not_overrule_the_facts(tmp_path):
    # The model reads "CPU build" from the words; a report or the runner says the build has CUDA.
    examples = [("cpu_only_build", "torch failed on the gpu, runs on cpu"), ("out_of_memory", "cuda out of memory")]
    rules = _tiny_model(tmp_path, examples)
    text = "torch failed on the gpu, runs on cpu"
    assert diagnose(text, rules=rules).cause == "cpu_only_build"
    result = diagnose(text, {"torch_cuda": "12.1", "torch_cuda_available": True}, rules=rules)
    assert result.cause == "unknown" and "ruled out by the facts" in result.explanation


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d.update(alpha=float("nan")), "positive number"),
    (lambda d: d.update(alpha=-1), "positive number"),
    (lambda d: d.update(features={}), "no features"),
    (lambda d: d["features"].update(nvidia=[[0, -3]]), "count below 1"),
    (lambda d: d.update(totals=[1] * len(d["classes"])), "totals are not the sums"),
    (lambda d: d.update(classes=["made_up_cause"] + d["classes"][1:]), "outside the vocabulary"),
    (lambda d: d.update(documents=[0] * len(d["classes"])), "classes and documents disagree"),
    (lambda d: d.update(alpha="many"), "malformed"),
    (lambda d: d.update(scoring="bernoulli"), "scoring 'bernoulli' is not one of multinomial, complement"),
])
def test_a_model_with_bad_numbers_is_refused_by_name(change, problem):
    document = build([("driver_not_loaded", "nvidia driver failed"), ("out_of_memory", "cuda out of memory")])
    change(document)
    with pytest.raises(ModelError, match=problem):
        Model(document)


# ---------------------------------------------------------------- overruling a fallback, and prose

def test_the_model_overrules_a_fallback_only_when_very_sure_and_keeps_it_as_the_first_alternative():
    # batch 17's dusty-nv/jetson-containers#879: a cuDNN package the apt step could not get; the dnn fallback
    # reads the cuDNN words of the build log
    case = _wild_case("batch17", "jetson-containers-879")
    result = diagnose(case.text)
    assert (result.cause, result.rule, result.confidence) == ("package_unavailable", LEARNED_RULE, 0.2)
    assert result.alternatives[0].cause == "dnn_library_failure" and "fallback rule" in result.alternatives[0].why
    assert "overrules" in result.explanation
    ruleset = load_rules()
    never = dataclasses.replace(ruleset, learned=dataclasses.replace(ruleset.learned, overrule_fallbacks=None))
    fallback = diagnose(case.text, rules=never)
    assert fallback.cause == "dnn_library_failure" and fallback.rule != LEARNED_RULE


def test_prose_without_an_error_word_reaches_the_model_but_a_healthy_report_does_not():
    case = _wild_case("extra3", "key-face-frame-2")  # "the automatically installed torch is the cpu version"
    assert (diagnose(case.text).cause, diagnose(case.text).rule) == ("cpu_only_build", LEARNED_RULE)
    healthy = ("+-----------------------------------------------------------------------------+\n"
               "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
               "|   0  NVIDIA A100-SXM4-80GB  On   | 00000000:07:00.0 Off |                    0 |\n")
    assert diagnose(healthy).cause == "unknown"


@pytest.mark.parametrize("value", [0, 1.5, "sure", True])
def test_a_bad_overrule_threshold_is_refused_with_its_place(tmp_path, value):
    raw = yaml.safe_load(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))
    raw["learned"]["overrule_fallbacks"] = value
    with pytest.raises(RulesError, match=r"learned\.overrule_fallbacks must be a number in \(0, 1\]"):
        parse_rules(raw, str(tmp_path / "rules.yaml"))



def test_complement_scoring_follows_its_formula_and_older_files_stay_multinomial():
    import math

    examples = [("out_of_memory", "socket"), ("out_of_memory", "socket node"), ("out_of_memory", "driver cuda"),
                ("driver_not_loaded", "cuda shm"), ("driver_not_loaded", "shm failed"),
                ("collective_failure", "socket"), ("collective_failure", "driver failed"),
                ("collective_failure", "node"), ("collective_failure", "cuda"), ("collective_failure", "cuda")]
    document = build(examples)
    assert document["scoring"] == "complement"
    text = "shm node"
    # score(c) = sum over the text's known features f of log(T - total_c + a*V) - log(seen_f - n_fc + a)
    table, alpha = document["features"], document["alpha"]
    totals, everything = document["totals"], sum(document["totals"])
    present = [f for f in features(text) if f in table]
    scores = []
    for c in range(len(document["classes"])):
        scores.append(sum(math.log(everything - totals[c] + alpha * len(table))
                          - math.log(sum(n for _, n in table[f]) - dict(table[f]).get(c, 0) + alpha) for f in present))
    top = max(scores)
    expected = {cls: math.exp(x - top) / sum(math.exp(y - top) for y in scores)
                for cls, x in zip(document["classes"], scores)}
    reading = Model(document).read(text)
    assert reading.cause == "driver_not_loaded" == max(expected, key=expected.get)
    assert all(math.isclose(p, expected[cls], rel_tol=1e-9) for cls, p in reading.ranked)
    older = {key: value for key, value in document.items() if key != "scoring"}  # a file from before the key
    assert Model(older).read(text).cause == "collective_failure"  # the prior of the biggest class wins there


@pytest.mark.parametrize("row", [[["3", 1]], [[3, "1"]], [[3, True]], [[3, 1.5]], [[3, 0]]])
def test_a_model_row_whose_class_or_count_is_no_whole_number_is_refused(row):
    document = build([("driver_not_loaded", "nvidia driver failed"), ("out_of_memory", "cuda out of memory")])
    document["features"]["nvidia"] = row
    with pytest.raises(ModelError, match="names a class that is not listed, or a count below 1"):
        Model(document)


@pytest.mark.parametrize("row", [[[3]], 7, [[1, 2, 3]]])
def test_a_model_row_that_is_no_list_of_pairs_is_malformed(row):
    document = build([("driver_not_loaded", "nvidia driver failed"), ("out_of_memory", "cuda out of memory")])
    document["features"]["nvidia"] = row
    with pytest.raises(ModelError, match="malformed"):
        Model(document)
