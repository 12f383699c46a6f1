"""Say why a cell failed, in words a user can act on.

Input is whatever is known about a failure: the text of a log (a probe's traceback,
a build log, the engine's error when a container could not start, or anything a
user pastes) and the facts the runner measured (host driver version, device arch,
device nodes present, ...). Output is one :class:`Diagnosis`: a cause from the
fixed vocabulary :data:`CAUSES`, a one-line remedy, the evidence that decided it
and a short explanation.

The knowledge lives in ``gpumatrix/data/diagnosis_rules.yaml`` as data: each rule
has text patterns and/or declarative fact conditions, a cause, a remedy and an
explanation. When several rules match, one is chosen by a fixed order:

1. a rule that tested facts beats one that only read text (facts are measured,
   text is a symptom);
2. a strong rule beats a ``weak`` one (generic symptoms such as
   ``No CUDA GPUs are available`` only decide when nothing more specific matched);
3. the rule whose cause sits in the lower *layer* wins (engine below driver below
   runtime below libraries): the root cause, not the errors it caused;
4. file order breaks the remaining ties.

Nothing matched means ``unknown``, with the most error-like line as evidence.
The module never raises on odd input: huge, binary or empty text is capped,
decoded with replacement characters and scanned with bounded patterns only.

``python -m gpumatrix.diagnose [--json] [FILE|-]`` classifies a pasted log.
"""

from __future__ import annotations

import argparse
import bisect
import difflib
import functools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from gpumatrix.errors import ExitCode, GpumatrixError

__all__ = [
    "CAUSES",
    "Diagnosis",
    "Rule",
    "RuleSet",
    "RulesError",
    "diagnose",
    "load_rules",
    "main",
]

#: The public vocabulary, in the order the issue defines it.
CAUSES: tuple[str, ...] = (
    "container_toolkit_missing",
    "no_device_visible",
    "driver_not_loaded",
    "device_permission",
    "driver_too_old",
    "arch_unsupported",
    "cpu_only_build",
    "wrong_vendor_build",
    "runtime_init_failure",
    "shm_too_small",
    "out_of_memory",
    "collective_failure",
    "dnn_library_failure",
    "library_mismatch",
    "hardware_fault",
    "unknown",
)

DEFAULT_RULES_PATH = Path(__file__).parent / "data" / "diagnosis_rules.yaml"
SCHEMA_VERSION = 1

# Only the start and the end of a log matter: the command that was run and the
# error it ended with. Everything in between is capped away so that a 5 GB log
# costs the same as a 320 KB one.
HEAD_CHARS = 64 * 1024
TAIL_CHARS = 256 * 1024
MAX_LINE_CHARS = 4096
EVIDENCE_CHARS = 300

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_WHITESPACE_RUN = re.compile(r"\s+")
_ERROR_LIKE = re.compile(
    r"error|exception|fail|fatal|abort|denied|not found|cannot|unable|killed|assert",
    re.IGNORECASE,
)
# A pattern may not contain unbounded wildcards (.* .+), quantified groups or long
# bounded repeats: the cheap guarantee against catastrophic backtracking.
_UNBOUNDED_WILDCARD = re.compile(r"(?<!\\)\.[*+]")
_QUANTIFIED_GROUP = re.compile(r"(?<!\\)\)[*+{]")
_BOUNDED_REPEAT = re.compile(r"\{(\d*),?(\d*)\}")
MAX_REPEAT = 200

_RULE_KEYS = {"id", "cause", "patterns", "require", "when", "weak", "remedy", "explanation",
              "evidence", "hint", "source"}
_TOP_KEYS = {"schema_version", "layers", "causes", "hsa_override", "rules"}
_CAUSE_KEYS = {"summary", "remedy"}
_OPERATORS = {"eq", "ne", "in", "not_in", "contains", "not_contains", "known", "is_null",
              "lt", "ge", "version_lt", "version_ge", "arch_not_in"}
_HINTS = {"hsa_override"}


class RulesError(GpumatrixError):
    """The diagnosis rules file is invalid. Lists every problem found."""

    exit_code = ExitCode.USAGE

    def __init__(self, path: str, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__(
            f"{len(self.problems)} problem(s) in {path}:\n" + "\n".join(f"  {p}" for p in self.problems)
        )


@dataclass(frozen=True)
class Diagnosis:
    """Why a cell did not pass: a cause from :data:`CAUSES` and what to do about it."""

    cause: str
    remedy: str
    evidence: str
    explanation: str
    rule: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "remedy": self.remedy,
            "evidence": self.evidence,
            "explanation": self.explanation,
            "rule": self.rule,
        }


@dataclass(frozen=True)
class Condition:
    """One declarative test on a fact, e.g. ``{fact: device_arch, arch_not_in: {fact: torch_arch_list}}``."""

    fact: str
    op: str
    value: Any  # a literal, or FactRef

    def holds(self, facts: Mapping[str, Any]) -> bool:
        if self.op == "known":
            return (self.fact in facts) == bool(self.value)
        if self.fact not in facts:
            return False  # unknown facts never decide anything
        actual = facts[self.fact]
        if self.op == "is_null":
            return (actual is None) == bool(self.value)
        expected = self.value
        if isinstance(expected, FactRef):
            if expected.name not in facts or facts[expected.name] is None:
                return False
            expected = facts[expected.name]
        if actual is None:
            return self.op in ("ne", "not_in", "not_contains")
        try:
            return _OPS[self.op](actual, expected)
        except (TypeError, ValueError):
            return False  # a fact of the wrong shape is treated as unknown


@dataclass(frozen=True)
class FactRef:
    name: str


@dataclass(frozen=True)
class Rule:
    """One piece of diagnostic knowledge, loaded from the rules file."""

    id: str
    cause: str
    remedy: str
    explanation: str
    layer: int
    order: int
    patterns: tuple[re.Pattern[str], ...] = ()
    require: tuple[re.Pattern[str], ...] = ()
    when: tuple[Condition, ...] = ()
    weak: bool = False
    evidence: str | None = None
    hint: str | None = None
    source: str | None = None

    @property
    def uses_facts(self) -> bool:
        return bool(self.when)

    def sort_key(self) -> tuple[int, int, int, int]:
        return (0 if self.uses_facts else 1, 1 if self.weak else 0, self.layer, self.order)


@dataclass(frozen=True)
class RuleSet:
    """All rules plus the per-cause defaults and the HSA override table."""

    rules: tuple[Rule, ...]
    layers: Mapping[str, int]
    summaries: Mapping[str, str]
    unknown_remedy: str
    hsa_override: Mapping[str, str] = field(default_factory=dict)
    path: str = ""


# ---------------------------------------------------------------- fact operators


def _version_tuple(value: Any) -> tuple[int, ...]:
    parts = re.findall(r"\d+", str(value))
    if not parts:
        raise ValueError(f"not a version: {value!r}")
    return tuple(int(p) for p in parts)


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    raise TypeError("not a list")


def _norm(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _arch_base(arch: str) -> str:
    # "gfx90a:sramecc+:xnack-" -> "gfx90a"; "sm_90a" stays (arch-specific cubins are exact)
    return str(arch).strip().lower().split(":")[0]


def arch_supported(device_arch: str, arch_list: Iterable[str]) -> bool:
    """Whether a build compiled for ``arch_list`` has code that runs on ``device_arch``.

    NVIDIA: a ``sm_XY`` cubin runs on the same major with an equal or higher minor,
    and ``compute_XY`` PTX is JIT-compiled for any equal or newer device.
    AMD: code objects only run on exactly their ``gfx`` target.
    """
    device = _arch_base(device_arch)
    targets = [_arch_base(a) for a in arch_list]
    if device in targets:
        return True
    m = re.fullmatch(r"sm_(\d+)(\d)", device)
    if not m:
        return False
    major, minor = int(m.group(1)), int(m.group(2))
    for target in targets:
        t = re.fullmatch(r"(sm|compute)_(\d+)(\d)", target)
        if not t:
            continue
        t_major, t_minor = int(t.group(2)), int(t.group(3))
        if t.group(1) == "sm" and t_major == major and t_minor <= minor:
            return True
        if t.group(1) == "compute" and (t_major, t_minor) <= (major, minor):
            return True
    return False


_OPS = {
    "eq": lambda a, e: _norm(a) == _norm(e),
    "ne": lambda a, e: _norm(a) != _norm(e),
    "in": lambda a, e: _norm(a) in [_norm(x) for x in _as_list(e)],
    "not_in": lambda a, e: _norm(a) not in [_norm(x) for x in _as_list(e)],
    "contains": lambda a, e: _norm(e) in [_norm(x) for x in _as_list(a)],
    "not_contains": lambda a, e: _norm(e) not in [_norm(x) for x in _as_list(a)],
    "lt": lambda a, e: float(a) < float(e),
    "ge": lambda a, e: float(a) >= float(e),
    "version_lt": lambda a, e: _version_tuple(a) < _version_tuple(e),
    "version_ge": lambda a, e: _version_tuple(a) >= _version_tuple(e),
    "arch_not_in": lambda a, e: not arch_supported(str(a), _as_list(e)),
}


# ---------------------------------------------------------------- loading


def load_rules(path: str | Path | None = None) -> RuleSet:
    """Load and validate a rules file (the packaged one by default). Raises :class:`RulesError`."""
    resolved = Path(path) if path is not None else DEFAULT_RULES_PATH
    return _load_rules_cached(str(resolved.resolve()))


@functools.lru_cache(maxsize=8)
def _load_rules_cached(path: str) -> RuleSet:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise RulesError(path, [f"cannot read: {err}"]) from err
    return _parse_rules(raw, path)


def _unknown_key_problem(where: str, key: str, allowed: Iterable[str]) -> str:
    key = str(key)
    close = difflib.get_close_matches(key, sorted(str(a) for a in allowed), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{where}: unknown key {key!r}{hint}"


def _compile_pattern(where: str, source: Any, problems: list[str]) -> re.Pattern[str] | None:
    if not isinstance(source, str) or not source:
        problems.append(f"{where}: a pattern must be a non-empty string")
        return None
    if _UNBOUNDED_WILDCARD.search(source) or _QUANTIFIED_GROUP.search(source):
        problems.append(f"{where}: pattern {source!r} has an unbounded wildcard or a quantified "
                        "group; use a bounded class such as [^ ]{{0,80}}")
        return None
    for low, high in _BOUNDED_REPEAT.findall(source):
        if (high or low) and int(high or low) > MAX_REPEAT:
            problems.append(f"{where}: pattern {source!r} repeats more than {MAX_REPEAT} times")
            return None
    try:
        return re.compile(source, re.IGNORECASE)
    except re.error as err:
        problems.append(f"{where}: pattern {source!r} does not compile: {err}")
        return None


def _parse_condition(where: str, raw: Any, problems: list[str]) -> Condition | None:
    if not isinstance(raw, Mapping) or "fact" not in raw or len(raw) != 2:
        problems.append(f"{where}: a condition is {{fact: NAME, OPERATOR: VALUE}}, got {raw!r}")
        return None
    op = str(next(k for k in raw if k != "fact"))
    if op not in _OPERATORS:
        problems.append(_unknown_key_problem(where, op, _OPERATORS))
        return None
    value = raw[op]
    if isinstance(value, Mapping):
        if set(value) != {"fact"}:
            problems.append(f"{where}: a reference to another fact is {{fact: NAME}}, got {value!r}")
            return None
        value = FactRef(str(value["fact"]))
    return Condition(fact=str(raw["fact"]), op=op, value=value)


def _parse_rules(raw: Any, path: str) -> RuleSet:
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        raise RulesError(path, ["the file must be a mapping"])
    for key in raw:
        if key not in _TOP_KEYS:
            problems.append(_unknown_key_problem("top level", str(key), _TOP_KEYS))
    if raw.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"schema_version must be {SCHEMA_VERSION}, got {raw.get('schema_version')!r}")

    layers: dict[str, int] = {}
    for rank, group in enumerate(raw.get("layers") or []):
        for cause in group or []:
            if cause not in CAUSES or cause == "unknown":
                problems.append(f"layers[{rank}]: {cause!r} is not a diagnosable cause")
            elif cause in layers:
                problems.append(f"layers[{rank}]: {cause!r} is already in layer {layers[cause]}")
            else:
                layers[cause] = rank
    for cause in CAUSES:
        if cause != "unknown" and cause not in layers:
            problems.append(f"layers: cause {cause!r} has no layer")

    summaries: dict[str, str] = {}
    causes_raw = raw.get("causes") or {}
    for cause in CAUSES:
        entry = causes_raw.get(cause)
        if not isinstance(entry, Mapping) or not entry.get("summary"):
            problems.append(f"causes: {cause!r} needs a summary")
            continue
        for key in entry:
            if key not in _CAUSE_KEYS:
                problems.append(_unknown_key_problem(f"causes.{cause}", str(key), _CAUSE_KEYS))
        summaries[cause] = str(entry["summary"]).strip()
    for cause in causes_raw:
        if cause not in CAUSES:
            problems.append(_unknown_key_problem("causes", str(cause), CAUSES))
    unknown_remedy = str((causes_raw.get("unknown") or {}).get("remedy", "")).strip()
    if not unknown_remedy:
        problems.append("causes.unknown needs a remedy")

    hsa_override = {str(k).lower(): str(v) for k, v in (raw.get("hsa_override") or {}).items()}

    rules: list[Rule] = []
    seen_ids: set[str] = set()
    for order, entry in enumerate(raw.get("rules") or []):
        where = f"rules[{order}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: a rule must be a mapping")
            continue
        rule_id = str(entry.get("id", ""))
        where = f"rule {rule_id or order}"
        for key in entry:
            if key not in _RULE_KEYS:
                problems.append(_unknown_key_problem(where, str(key), _RULE_KEYS))
        if not rule_id:
            problems.append(f"{where}: needs an id")
        elif rule_id in seen_ids:
            problems.append(f"{where}: duplicate id")
        seen_ids.add(rule_id)
        cause = entry.get("cause")
        if cause not in CAUSES or cause == "unknown":
            problems.append(f"{where}: cause {cause!r} is not in the vocabulary")
            continue
        remedy = str(entry.get("remedy") or "").strip()
        explanation = str(entry.get("explanation") or "").strip()
        if not remedy or "\n" in remedy:
            problems.append(f"{where}: needs a one-line remedy")
        if not explanation:
            problems.append(f"{where}: needs an explanation")
        patterns = [_compile_pattern(where, p, problems) for p in entry.get("patterns") or []]
        require = [_compile_pattern(where, p, problems) for p in entry.get("require") or []]
        when = [_parse_condition(where, c, problems) for c in entry.get("when") or []]
        if not patterns and not when:
            problems.append(f"{where}: needs patterns, conditions (when), or both")
        if require and not patterns:
            problems.append(f"{where}: 'require' only narrows 'patterns'")
        if when and not entry.get("evidence"):
            problems.append(f"{where}: a rule on facts needs an evidence template")
        hint = entry.get("hint")
        if hint is not None and hint not in _HINTS:
            problems.append(_unknown_key_problem(f"{where} hint", str(hint), _HINTS))
        rules.append(Rule(
            id=rule_id, cause=cause, remedy=remedy, explanation=" ".join(explanation.split()),
            layer=layers.get(cause, len(layers)), order=order,
            patterns=tuple(p for p in patterns if p is not None),
            require=tuple(p for p in require if p is not None),
            when=tuple(c for c in when if c is not None),
            weak=bool(entry.get("weak", False)),
            evidence=entry.get("evidence"), hint=hint, source=entry.get("source"),
        ))
    if problems:
        raise RulesError(path, problems)
    return RuleSet(rules=tuple(rules), layers=layers, summaries=summaries,
                   unknown_remedy=unknown_remedy, hsa_override=hsa_override, path=path)


# ---------------------------------------------------------------- text handling


@dataclass(frozen=True)
class _Text:
    """A log flattened to one line for matching, with the original line boundaries kept."""

    lines: tuple[str, ...]
    starts: tuple[int, ...]
    flat: str

    def evidence(self, start: int, end: int) -> str:
        """The line(s) holding ``flat[start:end]``, trimmed to about EVIDENCE_CHARS."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, max(start, end - 1)) - 1
        seg_start = self.starts[first]
        seg_end = self.starts[last] + len(self.lines[last])
        if seg_end - seg_start <= EVIDENCE_CHARS:
            return self.flat[seg_start:seg_end]
        lo = max(seg_start, min(start - 60, seg_end - EVIDENCE_CHARS))
        hi = min(seg_end, lo + EVIDENCE_CHARS)
        return ("…" if lo > seg_start else "") + self.flat[lo:hi] + ("…" if hi < seg_end else "")


def _decode(text: str | bytes | bytearray | memoryview | None) -> str:
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if len(raw) > (HEAD_CHARS + TAIL_CHARS) * 4:  # cap before decoding, too
            raw = raw[: HEAD_CHARS * 4] + b"\n" + raw[-TAIL_CHARS * 4 :]
        return raw.decode("utf-8", errors="replace")
    return str(text)


def _prepare(text: str) -> _Text:
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    text = _ANSI_ESCAPE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_CHARS.sub(" ", text)
    lines: list[str] = []
    starts: list[int] = []
    pos = 0
    for raw_line in text.split("\n"):
        line = _WHITESPACE_RUN.sub(" ", raw_line[:MAX_LINE_CHARS]).strip()
        if not line:
            continue
        lines.append(line)
        starts.append(pos)
        pos += len(line) + 1
    return _Text(tuple(lines), tuple(starts), " ".join(lines))


def _probe_text(facts: Mapping[str, Any]) -> str:
    """The messages of failed probes, so that they are read like any other log."""
    out = []
    failures = facts.get("probe_failures") or []
    if isinstance(failures, Sequence) and not isinstance(failures, (str, bytes)):
        for failure in failures:
            if not isinstance(failure, Mapping):
                continue
            status = str(failure.get("status", "fail")).lower()
            if status in ("pass", "passed", "ok", "skip", "skipped"):
                continue
            out.append(f"[probe {failure.get('id', '?')}] {failure.get('message', '')}")
    return "\n".join(out)


# ---------------------------------------------------------------- matching


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
            values[key] = str(value)
    try:
        return template.format_map(values)
    except (ValueError, IndexError, AttributeError):
        return template


def _match(rule: Rule, text: _Text, facts: Mapping[str, Any]) -> str | None:
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
        line_evidence = text.evidence(found.start(), found.end())
    if rule.evidence:
        fact_evidence = _format_fact_template(rule.evidence, facts)
        return f"{fact_evidence}; log: {line_evidence}" if line_evidence else fact_evidence
    return line_evidence


_GFX_IN_TEXT = re.compile(r"\bgfx ?(\d{3,4}[a-f]?)\b", re.IGNORECASE)


def _hsa_override_hint(ruleset: RuleSet, text: _Text, facts: Mapping[str, Any]) -> str:
    """Whether HSA_OVERRIDE_GFX_VERSION can help this AMD card, from the data table."""
    arch = str(facts.get("device_arch") or "")
    if not arch.lower().startswith("gfx"):
        found = _GFX_IN_TEXT.search(text.flat)
        arch = f"gfx{found.group(1)}" if found else ""
    arch = _arch_base(arch) if arch else ""
    if not arch:
        if str(facts.get("vendor", "")).lower() == "nvidia":
            return ""
        return (" On an AMD consumer card, HSA_OVERRIDE_GFX_VERSION=10.3.0 (RDNA2) or 11.0.0 (RDNA3) "
                "may help; `rocminfo | grep gfx` tells which card it is.")
    version = ruleset.hsa_override.get(arch)
    if version is None:
        return (f" HSA_OVERRIDE_GFX_VERSION will not help {arch}: no close architecture is built; "
                f"use a build whose arch list includes {arch}.")
    major, minor, step = (version.split(".") + ["0", "0"])[:3]
    target = f"gfx{major}{minor}{step}" if int(major) >= 10 else f"gfx{major}0{step}"
    arch_list = facts.get("torch_arch_list")
    if isinstance(arch_list, (list, tuple)) and arch_list and target not in [_arch_base(a) for a in arch_list]:
        return (f" HSA_OVERRIDE_GFX_VERSION={version} would not help: this build has no {target} "
                "kernels either.")
    return (f" HSA_OVERRIDE_GFX_VERSION={version} can help: {arch} runs {target} kernels, "
            "which this build has.")


def diagnose(
    text: str | bytes = "",
    facts: Mapping[str, Any] | None = None,
    *,
    rules: RuleSet | str | Path | None = None,
) -> Diagnosis:
    """Classify a failure from its log text and/or measured facts.

    ``rules`` is a :class:`RuleSet` from :func:`load_rules`, a path to a rules file,
    or None for the packaged rules. Never raises on odd ``text`` or ``facts``.
    """
    ruleset = rules if isinstance(rules, RuleSet) else load_rules(rules)
    facts = dict(facts) if isinstance(facts, Mapping) else {}
    body = _decode(text)
    probe = _probe_text(facts)
    prepared = _prepare(f"{probe}\n{body}" if probe else body)

    best: tuple[Rule, str] | None = None
    for rule in ruleset.rules:
        if best is not None and rule.sort_key() > best[0].sort_key():
            continue  # cannot win: skip the (costlier) matching
        evidence = _match(rule, prepared, facts)
        if evidence is not None and (best is None or rule.sort_key() < best[0].sort_key()):
            best = (rule, evidence)

    if best is None:
        return Diagnosis(
            cause="unknown",
            remedy=ruleset.unknown_remedy,
            evidence=_unknown_evidence(prepared),
            explanation=ruleset.summaries.get("unknown", ""),
            rule=None,
        )
    rule, evidence = best
    remedy = rule.remedy
    if rule.hint == "hsa_override":
        remedy += _hsa_override_hint(ruleset, prepared, facts)
    return Diagnosis(cause=rule.cause, remedy=remedy, evidence=evidence,
                     explanation=rule.explanation, rule=rule.id)


def _unknown_evidence(text: _Text) -> str:
    if not text.lines:
        return "(no log text and no deciding facts)"
    for line in reversed(text.lines):
        if _ERROR_LIKE.search(line):
            return line[:EVIDENCE_CHARS]
    return text.lines[-1][:EVIDENCE_CHARS]


# ---------------------------------------------------------------- command line


def _read_input(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read((HEAD_CHARS + TAIL_CHARS) * 64)
    path = Path(source)
    size = path.stat().st_size
    limit = (HEAD_CHARS + TAIL_CHARS) * 4
    with path.open("rb") as handle:
        if size <= limit:
            return handle.read()
        head = handle.read(HEAD_CHARS * 4)
        handle.seek(size - TAIL_CHARS * 4)
        return head + b"\n" + handle.read()


def format_text(diagnosis: Diagnosis) -> str:
    """The human rendering of a diagnosis, as the CLI prints it."""
    return "\n".join([
        f"cause:    {diagnosis.cause}",
        f"remedy:   {diagnosis.remedy}",
        f"evidence: {diagnosis.evidence}",
        f"why:      {diagnosis.explanation}",
        f"rule:     {diagnosis.rule or '-'}",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpumatrix.diagnose [--json] [--rules FILE] [FILE|-]``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m gpumatrix.diagnose",
        description="Classify a pasted GPU/container error log and print its cause and remedy.",
    )
    parser.add_argument("log", nargs="?", default="-", help="log file to read, or - for stdin (default)")
    parser.add_argument("--json", action="store_true", help='print {"cause","remedy","evidence"} as JSON')
    parser.add_argument("--rules", default=None, help="rules file to use instead of the packaged one")
    args = parser.parse_args(argv)
    try:
        data = _read_input(args.log)
        result = diagnose(data, rules=load_rules(args.rules))
    except OSError as err:
        print(f"diagnose: cannot read {args.log}: {err.strerror or err}", file=sys.stderr)
        return 2
    except RulesError as err:
        print(f"diagnose: {err}", file=sys.stderr)
        return err.exit_code
    if args.json:
        print(json.dumps({k: result.to_dict()[k] for k in ("cause", "remedy", "evidence")},
                         ensure_ascii=False, sort_keys=True))
    else:
        print(format_text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
