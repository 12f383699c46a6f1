"""Loading and validating ``diagnosis_rules.yaml`` into frozen :class:`Rule` objects."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from gpumatrix.errors import ExitCode, GpumatrixError
from gpumatrix.knowledge.archs import code_runs
from gpumatrix.knowledge.versions import release

from .vocabulary import CAUSES, FACTS

DEFAULT_RULES_PATH = Path(__file__).resolve().parent.parent / "data" / "diagnosis_rules.yaml"
SCHEMA_VERSION = 1

# A pattern may not contain unbounded wildcards (.* .+), quantified groups or long
# bounded repeats: the cheap guarantee against catastrophic backtracking.
_UNBOUNDED_WILDCARD = re.compile(r"(?<!\\)\.[*+]")
_QUANTIFIED_GROUP = re.compile(r"(?<!\\)\)[*+{]")
_BOUNDED_REPEAT = re.compile(r"\{(\d*),?(\d*)\}")
MAX_REPEAT = 200

_RULE_KEYS = {"id", "cause", "patterns", "require", "exclude", "when", "weak", "fallback", "last_resort", "remedy",
              "explanation", "evidence", "hint", "source", "confidence", "alternatives"}
_TOP_KEYS = {"schema_version", "layers", "causes", "hsa_override", "fragments", "learned", "rules"}
# A named regex fragment, declared once under `fragments:` and used in any pattern as (?&name), the PCRE
# spelling of a subpattern call, which Python's re does not know: the loader writes (?:fragment) in its place.
_FRAGMENT_REF = re.compile(r"\(\?&([A-Za-z_][A-Za-z0-9_]*)\)")
_FRAGMENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_REPEATED_FRAGMENT = re.compile(_FRAGMENT_REF.pattern + r"[*+{]")  # a use followed by a quantifier
_LEARNED_KEYS = {"model", "signal", "require", "exclude", "min_posterior", "confidence", "overrule_fallbacks"}
_CAUSE_KEYS = {"summary", "remedy", "check"}
_ALTERNATIVE_KEYS = {"cause", "check", "why"}
_OPERATORS = {"eq", "ne", "in", "not_in", "contains", "not_contains", "known", "is_null", "set",
              "lt", "ge", "version_lt", "version_ge", "arch_not_in"}
_HINTS = {"hsa_override"}

# How sure a rule is when it does not say: facts are measured, text is a symptom, a weak
# symptom has several usual causes, a fallback only says which part of the stack spoke, and a
# last-resort fallback only that an error line names a component of the stack's vocabulary.
DEFAULT_CONFIDENCE = {"facts": 0.9, "strong": 0.8, "weak": 0.5, "fallback": 0.3, "last_resort": 0.25}
TIERS = ("facts", "strong", "weak", "fallback", "last_resort")


class RulesError(GpumatrixError):
    """The diagnosis rules file is invalid. Lists every problem found."""

    exit_code = ExitCode.USAGE

    def __init__(self, path: str, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__(
            f"{len(self.problems)} problem(s) in {path}:\n" + "\n".join(f"  {p}" for p in self.problems)
        )


@dataclass(frozen=True)
class FactRef:
    name: str


# ---------------------------------------------------------------- fact operators


def version_tuple(value: Any) -> tuple[int, ...]:
    """Numeric release of a version (``570.9`` < ``570.26``), by the one version type; ValueError when none."""
    numbers = release(str(value)[:64])
    if not numbers:
        raise ValueError(f"not a version: {value!r}")
    return numbers


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    raise TypeError("not a list")


def _norm(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def arch_base(arch: str) -> str:
    """``gfx90a:sramecc+:xnack-`` -> ``gfx90a``; ``sm_90a`` stays (arch-specific cubins are exact)."""
    return str(arch).strip().lower().split(":")[0]


def arch_supported(device_arch: str, arch_list: Iterable[str]) -> bool:
    """Whether a build compiled for ``arch_list`` has code that runs on ``device_arch``: the one arch rule
    (:func:`gpumatrix.knowledge.archs.code_runs`, shared with doctor and the probes)."""
    return code_runs(str(device_arch).strip(), [str(a) for a in arch_list])["match"] != "none"


_OPS = {
    "eq": lambda a, e: _norm(a) == _norm(e),
    "ne": lambda a, e: _norm(a) != _norm(e),
    "in": lambda a, e: _norm(a) in [_norm(x) for x in _as_list(e)],
    "not_in": lambda a, e: _norm(a) not in [_norm(x) for x in _as_list(e)],
    "contains": lambda a, e: _norm(e) in [_norm(x) for x in _as_list(a)],
    "not_contains": lambda a, e: _norm(e) not in [_norm(x) for x in _as_list(a)],
    "lt": lambda a, e: float(a) < float(e),
    "ge": lambda a, e: float(a) >= float(e),
    "version_lt": lambda a, e: version_tuple(a) < version_tuple(e),
    "version_ge": lambda a, e: version_tuple(a) >= version_tuple(e),
    "arch_not_in": lambda a, e: not arch_supported(str(a), _as_list(e)),
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
        if self.op == "set":  # present and neither None nor empty
            actual = facts.get(self.fact)
            return (actual not in (None, "", [], ())) == bool(self.value)
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
            return bool(_OPS[self.op](actual, expected))
        except (TypeError, ValueError):
            return False  # a fact of the wrong shape is treated as unknown


@dataclass(frozen=True)
class Alternative:
    """Another cause that explains the same symptom, and the one check that tells them apart."""

    cause: str
    check: str
    why: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"cause": self.cause, "check": self.check, "why": self.why}


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
    exclude: tuple[re.Pattern[str], ...] = ()
    when: tuple[Condition, ...] = ()
    weak: bool = False
    fallback: bool = False
    last_resort: bool = False  # a fallback that speaks only when no other fallback matched either
    evidence: str | None = None
    hint: str | None = None
    source: str | None = None
    confidence: float | None = None
    alternatives: tuple[Alternative, ...] = ()

    @property
    def uses_facts(self) -> bool:
        return bool(self.when)

    @property
    def tier(self) -> str:
        if self.uses_facts:
            return "facts"
        if self.fallback:
            return "last_resort" if self.last_resort else "fallback"
        return "weak" if self.weak else "strong"

    def sort_key(self) -> tuple[int, int, int]:
        return (TIERS.index(self.tier), self.layer, self.order)

    def facts_named(self) -> set[str]:
        names = {c.fact for c in self.when}
        names |= {c.value.name for c in self.when if isinstance(c.value, FactRef)}
        if self.evidence:
            names |= set(re.findall(r"\{([a-z_]+)\}", self.evidence))
        return names


@dataclass(frozen=True)
class Learned:
    """When the learned model (:mod:`.learned`) may speak: the rules file's ``learned`` block.

    Only when no rule matched, the input has a GPU-stack ``signal``, no ``exclude`` matches (a known
    code bug), and the model's first cause is not ``unknown`` and has at least ``min_posterior``.
    Where the input holds a report the parsers read (nvidia-smi, collect_env, ...), something must
    also have gone wrong (a ``require`` pattern): a healthy report is no failure to explain, while
    prose ("it only installs 2.3.1+cpu") names the failure without an error word. With
    ``overrule_fallbacks`` set, it may also overrule a fallback (a stack component near an error
    word, which knows the layer but not the cause) when it reads another cause with at least that
    posterior.
    """

    model: str
    signal: tuple[re.Pattern[str], ...]
    require: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    min_posterior: float = 0.05
    confidence: float = 0.2
    overrule_fallbacks: float | None = None

    def admits(self, flat: str, *, report: bool = False) -> bool:
        return (any(p.search(flat) for p in self.signal)
                and (not report or all(p.search(flat) for p in self.require))
                and not any(p.search(flat) for p in self.exclude))


@dataclass(frozen=True)
class RuleSet:
    """All rules plus the per-cause defaults, the HSA override table and the learned last word."""

    rules: tuple[Rule, ...]
    layers: Mapping[str, int]
    summaries: Mapping[str, str]
    unknown_remedy: str
    checks: Mapping[str, str] = field(default_factory=dict)
    hsa_override: Mapping[str, str] = field(default_factory=dict)
    path: str = ""
    learned: Learned | None = None
    fragments: Mapping[str, str] = field(default_factory=dict)

    def compile_pattern(self, source: str, where: str = "pattern") -> re.Pattern[str]:
        """Compile one more pattern as the loader compiles the file's own: the same checks (bounded repeats,
        no unbounded wildcard) and this file's ``(?&name)`` fragments. Raises :class:`RulesError` naming ``where``.
        """
        problems: list[str] = []
        compiled = _compile_pattern(where, source, problems, self.fragments)
        if compiled is None:
            raise RulesError(self.path, problems)
        return compiled


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
    return parse_rules(raw, path)


def _suggest(key: str, allowed: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(key), sorted(str(a) for a in allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_key_problem(where: str, key: str, allowed: Iterable[str]) -> str:
    return f"{where}: unknown key {str(key)!r}{_suggest(key, allowed)}"


def _parse_fragments(raw: Any, problems: list[str]) -> dict[str, str | None]:
    """The ``fragments:`` mapping, each checked to be a named regex that compiles on its own and as a group.

    A declared fragment that is not valid maps to None, so that its uses say so instead of "not declared".
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append("fragments: must be a mapping of NAME: regex, used in patterns as (?&NAME)")
        return {}
    fragments: dict[str, str | None] = {}
    for name, source in raw.items():
        where = f"fragments.{name}"
        if not isinstance(name, str) or not _FRAGMENT_NAME.fullmatch(name):
            problems.append(f"{where}: a fragment name is lowercase letters, digits and _ (at most 40)")
            continue
        fragments[name] = None
        if not isinstance(source, str) or not source:
            problems.append(f"{where}: must be a non-empty regex string")
        elif _FRAGMENT_REF.search(source):
            problems.append(f"{where}: a fragment may not use another fragment; write it out")
        elif _compile_pattern(where, f"(?:{source})", problems, shown=source) is not None:
            fragments[name] = source  # compiled as the group it becomes: (?i) inside would fail there
    return fragments


def _compile_pattern(where: str, source: Any, problems: list[str],
                     fragments: Mapping[str, str | None] | None = None, *,
                     shown: str | None = None) -> re.Pattern[str] | None:
    """Check and compile one pattern, writing its (?&name) fragments out first.

    Problems quote the pattern as written in the file (``shown``, else ``source``), not its expansion.
    """
    if not isinstance(source, str) or not source:
        problems.append(f"{where}: a pattern must be a non-empty string")
        return None
    shown = source if shown is None else shown
    known = fragments or {}
    for name in sorted(set(_FRAGMENT_REF.findall(source))):
        if name not in known:
            problems.append(f"{where}: pattern {shown!r} uses (?&{name}), which is not declared under "
                            f"fragments:{_suggest(name, known)}")
            return None
        if known[name] is None:
            problems.append(f"{where}: pattern {shown!r} uses (?&{name}), whose declaration is invalid "
                            f"(see fragments.{name})")
            return None
    if _REPEATED_FRAGMENT.search(source):
        problems.append(f"{where}: pattern {shown!r} repeats a fragment ((?&name) followed by *, + or {{}}); "
                        "write the repeat inside the fragment, bounded")
        return None
    expanded = _FRAGMENT_REF.sub(lambda m: f"(?:{known[m.group(1)]})", source)
    if _UNBOUNDED_WILDCARD.search(expanded) or _QUANTIFIED_GROUP.search(expanded):
        problems.append(f"{where}: pattern {shown!r} has an unbounded wildcard or a quantified "
                        "group; use a bounded class such as [^ ]{0,80}")
        return None
    for low, high in _BOUNDED_REPEAT.findall(expanded):
        if (high or low) and int(high or low) > MAX_REPEAT:
            problems.append(f"{where}: pattern {shown!r} repeats more than {MAX_REPEAT} times")
            return None
    try:
        return re.compile(expanded, re.IGNORECASE)
    except re.error as err:
        with_fragments = " (with its fragments written out)" if expanded != source else ""
        problems.append(f"{where}: pattern {shown!r} does not compile{with_fragments}: {err}")
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


def _parse_alternatives(where: str, raw: Any, problems: list[str]) -> tuple[Alternative, ...]:
    out = []
    for index, entry in enumerate(raw or []):
        here = f"{where} alternatives[{index}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{here}: an alternative is {{cause, check, why}}")
            continue
        for key in entry:
            if key not in _ALTERNATIVE_KEYS:
                problems.append(_unknown_key_problem(here, str(key), _ALTERNATIVE_KEYS))
        cause = entry.get("cause")
        if cause not in CAUSES or cause == "unknown":
            problems.append(f"{here}: cause {cause!r} is not in the vocabulary{_suggest(str(cause), CAUSES)}")
            continue
        if not entry.get("check"):
            problems.append(f"{here}: needs the one check that tells {cause} apart")
            continue
        out.append(Alternative(cause=str(cause), check=str(entry["check"]).strip(),
                               why=" ".join(str(entry.get("why") or "").split())))
    return tuple(out)


def _fraction(where: str, value: Any, default: float | None, problems: list[str]) -> float | None:
    """``value`` as a number in (0, 1]; ``default`` when it is absent or (with a problem) not such a number."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        problems.append(f"{where} must be a number in (0, 1], got {value!r}")
        return default
    return float(value)


def _parse_learned(raw: Any, path: str, problems: list[str],
                   fragments: Mapping[str, str | None]) -> Learned | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append("learned: must be a mapping with " + ", ".join(sorted(_LEARNED_KEYS)))
        return None
    for key in raw:
        if key not in _LEARNED_KEYS:
            problems.append(_unknown_key_problem("learned", str(key), _LEARNED_KEYS))
    model = raw.get("model")
    if not isinstance(model, str) or not model:
        problems.append("learned.model: name the model file (relative to the rules file)")
        model = None
    lists = {}
    for key in ("signal", "require", "exclude"):
        value = raw.get(key) or []
        if not isinstance(value, list):
            problems.append(f"learned.{key}: must be a list of patterns")
            value = []
        lists[key] = [_compile_pattern(f"learned.{key}", p, problems, fragments) for p in value]
    signal, require, exclude = lists["signal"], lists["require"], lists["exclude"]
    if not signal:
        problems.append("learned.signal: give at least one pattern; the model speaks only on GPU-stack input")
    min_posterior = _fraction("learned.min_posterior", raw.get("min_posterior"), Learned.min_posterior, problems)
    confidence = _fraction("learned.confidence", raw.get("confidence"), Learned.confidence, problems)
    overrule = (None if raw.get("overrule_fallbacks") is None
                else _fraction("learned.overrule_fallbacks", raw.get("overrule_fallbacks"), None, problems))
    if model is None or min_posterior is None or confidence is None:
        return None
    return Learned(model=str(Path(path).parent / model),
                   signal=tuple(p for p in signal if p is not None),
                   require=tuple(p for p in require if p is not None),
                   exclude=tuple(p for p in exclude if p is not None),
                   min_posterior=min_posterior, confidence=confidence, overrule_fallbacks=overrule)


def parse_rules(raw: Any, path: str) -> RuleSet:
    """Validate a parsed rules document; raise :class:`RulesError` listing every problem."""
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
    checks: dict[str, str] = {}
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
        if entry.get("check"):
            checks[cause] = str(entry["check"]).strip()
    for cause in causes_raw:
        if cause not in CAUSES:
            problems.append(_unknown_key_problem("causes", str(cause), CAUSES))
    unknown_remedy = str((causes_raw.get("unknown") or {}).get("remedy", "")).strip()
    if not unknown_remedy:
        problems.append("causes.unknown needs a remedy")

    hsa_override = {str(k).lower(): str(v) for k, v in (raw.get("hsa_override") or {}).items()}
    fragments = _parse_fragments(raw.get("fragments"), problems)
    learned = _parse_learned(raw.get("learned"), path, problems, fragments)

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
            problems.append(f"{where}: cause {cause!r} is not in the vocabulary{_suggest(str(cause), CAUSES)}")
            continue
        remedy = str(entry.get("remedy") or "").strip()
        explanation = str(entry.get("explanation") or "").strip()
        if not remedy or "\n" in remedy:
            problems.append(f"{where}: needs a one-line remedy")
        if not explanation:
            problems.append(f"{where}: needs an explanation")
        patterns = [_compile_pattern(where, p, problems, fragments) for p in entry.get("patterns") or []]
        require = [_compile_pattern(where, p, problems, fragments) for p in entry.get("require") or []]
        exclude = [_compile_pattern(where, p, problems, fragments) for p in entry.get("exclude") or []]
        when = [_parse_condition(where, c, problems) for c in entry.get("when") or []]
        if not patterns and not when:
            problems.append(f"{where}: needs patterns, conditions (when), or both")
        if (require or exclude) and not patterns:
            problems.append(f"{where}: 'require' and 'exclude' only narrow 'patterns'")
        if when and not entry.get("evidence"):
            problems.append(f"{where}: a rule on facts needs an evidence template")
        if entry.get("fallback") and (entry.get("weak") or when):
            problems.append(f"{where}: a fallback rule is text-only and neither weak nor on facts")
        if entry.get("last_resort") and not entry.get("fallback"):
            problems.append(f"{where}: 'last_resort' only applies to a fallback rule")
        hint = entry.get("hint")
        if hint is not None and hint not in _HINTS:
            problems.append(_unknown_key_problem(f"{where} hint", str(hint), _HINTS))
        confidence = _fraction(f"{where}: confidence", entry.get("confidence"), None, problems)
        rule = Rule(
            id=rule_id, cause=cause, remedy=remedy, explanation=" ".join(explanation.split()),
            layer=layers.get(cause, len(layers)), order=order,
            patterns=tuple(p for p in patterns if p is not None),
            require=tuple(p for p in require if p is not None),
            exclude=tuple(p for p in exclude if p is not None),
            when=tuple(c for c in when if c is not None),
            weak=bool(entry.get("weak", False)), fallback=bool(entry.get("fallback", False)),
            last_resort=bool(entry.get("last_resort", False)),
            evidence=entry.get("evidence"), hint=hint, source=entry.get("source"),
            confidence=confidence,
            alternatives=_parse_alternatives(where, entry.get("alternatives"), problems),
        )
        for name in sorted(rule.facts_named()):
            if name not in FACTS:
                problems.append(f"{where}: unknown fact {name!r}{_suggest(name, FACTS)}; the facts are "
                                "declared in gpumatrix/diagnose/vocabulary.py")
        rules.append(rule)
    if problems:
        raise RulesError(path, problems)
    return RuleSet(rules=tuple(rules), layers=layers, summaries=summaries, unknown_remedy=unknown_remedy,
                   checks=checks, hsa_override=hsa_override, path=path, learned=learned,
                   fragments={name: source for name, source in fragments.items() if source is not None})
