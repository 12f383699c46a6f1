"""Matching rules against text and facts, and ranking what matched."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .learned import ModelError, load_model
from .reports import facts_from_reports
from .rules import DEFAULT_CONFIDENCE, Alternative, Rule, RuleSet, arch_base, load_rules
from .text import Text, clean_lines, decode, prepare

MAX_ALTERNATIVES = 4


@dataclass(frozen=True)
class Diagnosis:
    """Why a cell did not pass: a cause from :data:`CAUSES`, what to do, and how sure we are.

    ``confidence`` is in [0, 1]; ``alternatives`` are other causes that explain the same
    symptom, each with the one check that tells it apart from ``cause``.
    """

    cause: str
    remedy: str
    evidence: str
    explanation: str
    rule: str | None = None
    confidence: float = 0.0
    alternatives: tuple[Alternative, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "remedy": self.remedy,
            "evidence": self.evidence,
            "explanation": self.explanation,
            "rule": self.rule,
            "confidence": self.confidence,
            "alternatives": [a.to_dict() for a in self.alternatives],
        }


# ---------------------------------------------------------------- derived facts


def _cuda_xy(value: Any) -> tuple[int, int] | None:
    found = re.match(r"\s*(\d{1,2})\.(\d{1,2})", str(value)[:32])
    return (int(found.group(1)), int(found.group(2))) if found else None


def required_min_driver(cuda: str, *, minor_version_compat: bool = False) -> str | None:
    """The minimum NVIDIA Linux driver for CUDA ``x.y`` (None when the data does not say).

    By default the GA driver of that release (what an image's ``NVIDIA_REQUIRE_CUDA`` enforces). With
    ``minor_version_compat``, for CUDA 11 and newer, the floor of the major's minor-version compatibility
    range, which is what a torch wheel needs. The figures are the knowledge layer's
    (:func:`gpumatrix.knowledge.drivers.driver_need` over ``cuda_drivers.yaml``, 11.8 on); older CUDA
    comes from ``diagnosis_cuda_legacy.yaml``, which only diagnosis needs.
    """
    from gpumatrix.knowledge.drivers import driver_need
    from gpumatrix.knowledge.releases import load_data

    xy = _cuda_xy(cuda)
    if xy is None:
        return None
    major, minor = xy
    need = driver_need(f"{major}.{minor}")
    if minor_version_compat and major >= 11 and need.floor:
        return need.floor
    if need.ga:
        return need.ga
    legacy = (load_data("diagnosis_cuda_legacy").get("toolkits") or {}).get(f"{major}.{minor}")
    return str(legacy) if legacy else None


_NVIDIA_GPU_NODE = re.compile(r"/dev/nvidia\d{1,3}")  # a GPU's own node, not nvidiactl, nvidia-uvm or nvidia-caps


def derive_facts(facts: Mapping[str, Any], ruleset: RuleSet) -> dict[str, Any]:
    """Add the facts that follow from others and from the data files (never overwriting one given)."""
    from gpumatrix.knowledge.archs import gfx_from_override

    out = dict(facts)
    nodes = out.get("container_device_nodes")
    if "device_nodes_present" not in out and isinstance(nodes, (list, tuple)):
        out["device_nodes_present"] = bool(nodes)
    if "nvidia_gpu_nodes_present" not in out and isinstance(nodes, (list, tuple)):
        out["nvidia_gpu_nodes_present"] = any(_NVIDIA_GPU_NODE.fullmatch(str(n)) for n in nodes)
    if "required_min_driver" not in out and out.get("host_os") not in ("windows", "wsl"):
        cuda, compat = out.get("image_cuda"), False
        if not cuda and out.get("torch_cuda"):
            cuda, compat = out.get("torch_cuda"), True  # a torch wheel runs under minor-version compatibility
        if cuda:
            needed = required_min_driver(str(cuda), minor_version_compat=compat)
            if needed:
                out["required_min_driver"] = needed
                out["required_by_cuda"] = str(cuda)
    elif "required_by_cuda" not in out and out.get("image_cuda"):
        out["required_by_cuda"] = str(out["image_cuda"])
    override = out.get("hsa_override_gfx_version")
    if override not in (None, "") and "hsa_override_arch" not in out:
        arch = gfx_from_override(str(override)[:32])
        if arch:
            out["hsa_override_arch"] = arch
    device = out.get("device_arch")
    if isinstance(device, str) and "hsa_override_expected" not in out:
        expected = ruleset.hsa_override.get(arch_base(device))
        if expected:
            out["hsa_override_expected"] = expected
    return out


# ---------------------------------------------------------------- matching


def _probe_text(facts: Mapping[str, Any]) -> str:
    """The messages of failed probes, so that they are read like any other log."""
    out = []
    failures = facts.get("probe_failures") or []
    if isinstance(failures, Sequence) and not isinstance(failures, (str, bytes)):
        for failure in failures[:200]:
            if not isinstance(failure, Mapping):
                continue
            status = str(failure.get("status", "fail")).lower()
            if status in ("pass", "passed", "ok", "skip", "skipped"):
                continue
            out.append(f"[probe {failure.get('id', '?')}] {str(failure.get('message', ''))[:4096]}")
    return "\n".join(out)


class _Formatter(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _format_fact_template(template: str, facts: Mapping[str, Any]) -> str:
    values = _Formatter()
    for key, value in facts.items():
        if isinstance(value, (list, tuple, set)):
            values[key] = " ".join(str(v) for v in value) or "(none)"
        elif value is None:
            values[key] = "none"
        else:
            values[key] = str(value)[:200]
    try:
        return template.format_map(values)
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


def _match(rule: Rule, text: Text, facts: Mapping[str, Any]) -> str | None:
    """The evidence if ``rule`` matches, else None."""
    if not all(condition.holds(facts) for condition in rule.when):
        return None
    line_evidence = ""
    if rule.patterns:
        found = None
        for pattern in rule.patterns:
            found = pattern.search(text.flat)
            if found:
                break
        if found is None:
            return None
        if not all(r.search(text.flat) for r in rule.require):
            return None
        if any(r.search(text.flat) for r in rule.exclude):
            return None
        line_evidence = text.evidence(found.start(), found.end())
    if rule.evidence:
        fact_evidence = _format_fact_template(rule.evidence, facts)
        return f"{fact_evidence}; log: {line_evidence}" if line_evidence else fact_evidence
    return line_evidence


_GFX_IN_TEXT = re.compile(r"\bgfx ?(\d{3,4}[a-f]?)\b", re.IGNORECASE)


def _hsa_override_hint(ruleset: RuleSet, text: Text, facts: Mapping[str, Any]) -> str:
    """Whether HSA_OVERRIDE_GFX_VERSION can help this AMD card, from the data table."""
    from gpumatrix.knowledge.archs import gfx_from_override

    arch = str(facts.get("device_arch") or "")
    if not arch.lower().startswith("gfx"):
        found = _GFX_IN_TEXT.search(text.flat)
        arch = f"gfx{found.group(1)}" if found else ""
    arch = arch_base(arch) if arch else ""
    if not arch:
        if str(facts.get("vendor", "")).lower() == "nvidia":
            return ""
        return (" On an AMD consumer card, HSA_OVERRIDE_GFX_VERSION=10.3.0 (RDNA2) or 11.0.0 (RDNA3) "
                "may help; `rocminfo | grep gfx` tells which card it is.")
    version = ruleset.hsa_override.get(arch)
    if version is None:
        return (f" HSA_OVERRIDE_GFX_VERSION will not help {arch}: no close architecture is built; "
                f"use a build whose arch list includes {arch}.")
    target = gfx_from_override(version) or version
    arch_list = facts.get("torch_arch_list")
    if isinstance(arch_list, (list, tuple)) and arch_list and target not in [arch_base(a) for a in arch_list]:
        return (f" HSA_OVERRIDE_GFX_VERSION={version} would not help: this build has no {target} "
                "kernels either.")
    return (f" HSA_OVERRIDE_GFX_VERSION={version} can help: {arch} runs {target} kernels, "
            "which this build has.")


def _alternatives(ruleset: RuleSet, best: Rule, others: list[Rule]) -> tuple[Alternative, ...]:
    """The rule's own alternatives, then the causes of the other rules that matched."""
    out: list[Alternative] = []
    seen = {best.cause}
    for alternative in best.alternatives:
        if alternative.cause not in seen:
            out.append(alternative)
            seen.add(alternative.cause)
    for rule in others:
        if rule.cause in seen or rule.tier == "fallback":
            continue
        check = ruleset.checks.get(rule.cause)
        if check:
            out.append(Alternative(cause=rule.cause, check=check, why=rule.explanation))
            seen.add(rule.cause)
    return tuple(out[:MAX_ALTERNATIVES])


LEARNED_RULE = "learned-naive-bayes"

# Causes a measured or reported fact rules out: the model reads words, so it must not overrule facts.
_BUILD_HAS_GPU = ("cpu_only_build",)
_GPU_WORKS = ("cpu_only_build", "wrong_vendor_build", "driver_not_loaded", "no_device_visible",
              "container_toolkit_missing", "device_permission", "driver_too_old", "runtime_init_failure")


def _ruled_out_by_facts(cause: str, facts: Mapping[str, Any]) -> bool:
    if cause in _BUILD_HAS_GPU and (facts.get("torch_cuda") or facts.get("torch_hip")):
        return True
    return cause in _GPU_WORKS and facts.get("torch_cuda_available") is True


def learned_reading(ruleset: RuleSet, prepared: Text, facts: Mapping[str, Any], *, report: bool,
                    fallback: Rule | None = None) -> tuple[Diagnosis | None, str]:
    """The model's reading of input no rule matched, or only a ``fallback`` (see .learned).

    Public so that tools/diagnosis_replay.py replays exactly the engine's logic on old rules' answers.

    A fallback knows the layer (a component near an error word), not the cause; the model overrules
    it only when the rules file sets ``overrule_fallbacks`` and it reads another cause at least that
    sure. Returns the diagnosis, or None and a note for the ``unknown`` answer (why the model was not read).
    """
    gate = ruleset.learned
    if gate is None:
        return None, ""
    threshold = gate.min_posterior if fallback is None else gate.overrule_fallbacks
    if threshold is None or not gate.admits(prepared.flat, report=report):
        return None, ""
    try:
        model = load_model(gate.model)
    except ModelError as err:
        return None, f" The learned model was not consulted: {err}"
    reading = model.read(prepared.flat)
    if reading.cause == "unknown" or not reading.posterior >= threshold:
        return None, ""
    if fallback is not None and reading.cause == fallback.cause:
        return None, ""
    if _ruled_out_by_facts(reading.cause, facts):
        return None, f" The learned model's guess, {reading.cause}, is ruled out by the facts read from the input."
    overruled: tuple[Alternative, ...] = ()
    if fallback is not None and fallback.cause in ruleset.checks:
        overruled = (Alternative(cause=fallback.cause, check=ruleset.checks[fallback.cause],
                                 why=f"{fallback.explanation} (the fallback rule {fallback.id})"),)
    # The runners-up by rank: naive Bayes posteriors are overconfident, so their size says little.
    alternatives = overruled + tuple(
        Alternative(cause=cause, check=ruleset.checks[cause],
                    why=f"{ruleset.summaries.get(cause, cause)} (the model's next guess)")
        for cause, _ in reading.ranked[1:]
        if cause not in ("unknown", getattr(fallback, "cause", None)) and cause in ruleset.checks
        and not _ruled_out_by_facts(cause, facts)
    )[:3 - len(overruled)]
    words = ", ".join(repr(w) for w in reading.words) or "its words"
    check = ruleset.checks.get(reading.cause, "")
    opening = ("No rule matched." if fallback is None else
               f"Only a fallback matched ({fallback.id}: a part of the stack near an error word, read as "
               f"{fallback.cause}), and the model overrules it.")
    return Diagnosis(
        cause=reading.cause,
        remedy=f"Likely: {ruleset.summaries.get(reading.cause, reading.cause)} Check first: {check}".strip(),
        evidence=prepared.most_error_like(),
        explanation=(f"{opening} A naive Bayes model trained on {reading.examples} labelled real messages "
                     f"reads this as {reading.cause} (posterior {reading.posterior:.2f}), mostly from {words}. "
                     "It is a guess: run the check, and the alternatives' checks."),
        rule=LEARNED_RULE, confidence=gate.confidence, alternatives=alternatives), ""


def diagnose(
    text: str | bytes = "",
    facts: Mapping[str, Any] | None = None,
    *,
    rules: RuleSet | str | Path | None = None,
) -> Diagnosis:
    """Classify a failure from its log text and/or measured facts.

    Reports pasted in ``text`` (collect_env, nvidia-smi, rocminfo, docker info, pip, ...)
    are parsed into facts too; a fact given in ``facts`` wins over one read from text.
    ``rules`` is a :class:`RuleSet` from :func:`load_rules`, a path to a rules file, or None
    for the packaged rules. Never raises on odd ``text`` or ``facts``.
    """
    ruleset = rules if isinstance(rules, RuleSet) else load_rules(rules)
    given = dict(facts) if isinstance(facts, Mapping) else {}
    lines = clean_lines(decode(text))
    reported = facts_from_reports(lines)
    known = {**reported, **given}
    known = derive_facts(known, ruleset)
    probe = _probe_text(known)
    prepared = prepare((clean_lines(probe) if probe else []) + lines)

    matched: list[tuple[Rule, str]] = []
    # Fallbacks only speak when nothing specific did, and the last-resort ones (a component of the
    # stack's vocabulary near an error word) only when no other fallback did either.
    for stage in (("facts", "strong", "weak"), ("fallback",), ("last_resort",)):
        for rule in ruleset.rules:
            if rule.tier in stage:
                evidence = _match(rule, prepared, known)
                if evidence is not None:
                    matched.append((rule, evidence))
        if matched:
            break
    if not matched:
        learned, note = learned_reading(ruleset, prepared, known, report=bool(reported))
        if learned is not None:
            return learned
        return Diagnosis(cause="unknown", remedy=ruleset.unknown_remedy, evidence=prepared.most_error_like(),
                         explanation=ruleset.summaries.get("unknown", "") + note, rule=None, confidence=0.0)
    matched.sort(key=lambda pair: pair[0].sort_key())
    best, evidence = matched[0]
    if best.tier in ("fallback", "last_resort"):
        learned, _ = learned_reading(ruleset, prepared, known, report=bool(reported), fallback=best)
        if learned is not None:
            return learned
    others = [rule for rule, _ in matched[1:]]
    confidence = best.confidence if best.confidence is not None else DEFAULT_CONFIDENCE[best.tier]
    if any(rule.cause != best.cause and rule.tier == best.tier for rule in others):
        confidence = max(0.1, confidence - 0.1)  # a rival of the same standing matched too
    remedy = best.remedy
    if best.hint == "hsa_override":
        remedy += _hsa_override_hint(ruleset, prepared, known)
    return Diagnosis(cause=best.cause, remedy=remedy, evidence=evidence, explanation=best.explanation,
                     rule=best.id, confidence=round(confidence, 2),
                     alternatives=_alternatives(ruleset, best, others))
