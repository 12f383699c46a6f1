"""Say why a cell failed, in words a user can act on.

Input is whatever is known about a failure: the text of a log (a probe's traceback,
a build log, the engine's error when a container could not start, or anything a
user pastes, including reports such as ``collect_env`` or ``nvidia-smi``) and the facts
the runner measured. Output is one :class:`Diagnosis`: a cause from the fixed vocabulary
:data:`CAUSES`, a one-line remedy, the evidence that decided it, a short explanation, a
confidence and the alternatives with the check that tells each apart.

The knowledge lives in ``gpumatrix/data/diagnosis_rules.yaml`` as data. When several
rules match, one is chosen by a fixed order: a rule on facts beats a text rule, a strong
text rule beats a weak one, a weak one beats a fallback; then the lower *layer* wins (the
root cause, not the errors it caused); file order breaks the remaining ties.

Rooms: :mod:`.vocabulary` (causes and facts, declared once), :mod:`.rules` (loading),
:mod:`.text` (capping and cleaning), :mod:`.reports` (pasted reports -> facts),
:mod:`.engine` (matching and ranking), :mod:`.cellresult` (a saved cell -> facts),
:mod:`.cli` (``python -m gpumatrix.diagnose``).
"""

from __future__ import annotations

from .cellresult import facts_from_cell_result, failure_text_of_cell
from .cli import format_text, main
from .engine import Diagnosis, derive_facts, diagnose, required_min_driver
from .reports import facts_from_reports
from .rules import Alternative, Rule, RulesError, RuleSet, arch_supported, load_rules
from .vocabulary import CAUSES, FACTS, Fact

__all__ = [
    "CAUSES",
    "FACTS",
    "Alternative",
    "Diagnosis",
    "Fact",
    "Rule",
    "RuleSet",
    "RulesError",
    "arch_supported",
    "derive_facts",
    "diagnose",
    "facts_from_cell_result",
    "failure_text_of_cell",
    "facts_from_reports",
    "format_text",
    "load_rules",
    "main",
    "required_min_driver",
]
