"""The last word: a naive Bayes reading of input that no rule matched but that names the GPU stack.

Rules are precise but only know the wordings they were written for; on batches of real messages
collected later, most misses were ``unknown`` on text a practitioner classifies at a glance
(docs/diagnosis.md, "The learned last word"). This module scores such text against a complement
naive Bayes model over words and word pairs, trained on the labelled *train* sides of the
diagnosis corpora only (never a held-out side), and shipped as ``gpumatrix/data/diagnosis_model.json``.

The engine asks it only when no rule (fallbacks included) matched and the rules file's ``learned``
block lets it speak (a GPU-stack signal in the input, no known code bug). Its answer is a ranked
guess: low confidence, the runner-up causes as alternatives with their checks, and the words that
decided it. ``python tools/build_diagnosis_model.py`` rebuilds the model; a test checks that the
shipped file is exactly what the train sides give.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from gpumatrix.errors import GpumatrixError

from .vocabulary import CAUSES

MODEL_FORMAT = "gpumatrix-diagnosis-naive-bayes/1"
FEATURES = "lowercase words and adjacent word pairs, each counted once per message"
ALPHA = 0.3  # additive smoothing; chosen by leave-one-batch-out accuracy on the train sides
# How counts become scores. "complement" (Rennie et al. 2003: a class is scored by how unlike the other
# classes' text the input is) reads unbalanced classes better than "multinomial": on the train-side replay
# it is right 605/736 times alone vs 585/736 (docs/diagnosis.md). Files without the key are multinomial.
SCORING = "complement"
SCORINGS = ("multinomial", "complement")
MAX_SCAN_CHARS = 10_000  # from each end of the text: errors sit at the end of logs, context at the start

_WORD = re.compile(r"[a-z][a-z0-9_]{1,39}|(?<![0-9])\d{1,4}(?![0-9])")  # long numbers are ids, not codes


class ModelError(GpumatrixError):
    """The model file is missing or not a model this code can read."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}; rebuild it with `python tools/build_diagnosis_model.py`")
        self.path = path


def features(text: str) -> set[str]:
    """The features of one message: its words and adjacent word pairs, lowercased, as a set."""
    if len(text) > 2 * MAX_SCAN_CHARS:
        text = text[:MAX_SCAN_CHARS] + "\n" + text[-MAX_SCAN_CHARS:]
    words = _WORD.findall(text.lower())
    found = set(words)
    found.update(f"{a} {b}" for a, b in zip(words, words[1:]))
    return found


def build(examples: Iterable[tuple[str, str]], sources: Mapping[str, int] | None = None) -> dict[str, Any]:
    """A model document from ``(cause, text)`` pairs; deterministic for the same pairs in any order."""
    documents: Counter[str] = Counter()
    counts: dict[str, Counter[str]] = {}
    for cause, text in examples:
        documents[cause] += 1
        for feature in features(text):
            counts.setdefault(feature, Counter())[cause] += 1
    classes = sorted(documents)
    index = {cause: i for i, cause in enumerate(classes)}
    totals = [0] * len(classes)
    table: dict[str, list[list[int]]] = {}
    for feature in sorted(counts):
        row = sorted([index[cause], n] for cause, n in counts[feature].items())
        table[feature] = row
        for i, n in row:
            totals[i] += n
    return {"format": MODEL_FORMAT, "features_are": FEATURES, "alpha": ALPHA, "scoring": SCORING,
            "trained_on": dict(sorted((sources or {}).items())),
            "classes": classes, "documents": [documents[c] for c in classes], "totals": totals,
            "features": table}


def dumps(document: Mapping[str, Any]) -> str:
    """The model as JSON text, one feature per line so that a rebuild's diff reads as a list of words."""
    head = {key: value for key, value in document.items() if key != "features"}
    lines = [json.dumps(head, sort_keys=True, ensure_ascii=True)[:-1] + ', "features": {']
    rows = sorted((document.get("features") or {}).items())
    lines += [f"{json.dumps(f, ensure_ascii=True)}: {json.dumps(row, separators=(',', ':'))}"
              + ("," if n < len(rows) - 1 else "") for n, (f, row) in enumerate(rows)]
    return "\n".join(lines) + "\n}}\n"


@dataclass(frozen=True)
class Reading:
    """The model's ranked causes for one text, with the words that weighed most for the first."""

    ranked: tuple[tuple[str, float], ...]
    words: tuple[str, ...]
    examples: int

    @property
    def cause(self) -> str:
        return self.ranked[0][0]

    @property
    def posterior(self) -> float:
        return self.ranked[0][1]


class Model:
    """A loaded model; :meth:`read` scores a text."""

    def __init__(self, document: Mapping[str, Any], path: str = "<model>"):
        if not isinstance(document, Mapping) or document.get("format") != MODEL_FORMAT:
            raise ModelError(path, f"not a {MODEL_FORMAT} document")
        try:
            self.classes = [str(c) for c in document["classes"]]
            documents = [int(n) for n in document["documents"]]
            alpha = float(document["alpha"])
            scoring = str(document.get("scoring", "multinomial"))
            rows = document["features"]
            if not isinstance(rows, Mapping):
                raise TypeError(f"features is a {type(rows).__name__}, not a mapping")
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
            raise ModelError(path, f"malformed ({type(err).__name__}: {err})") from err
        width = len(self.classes)
        strangers = sorted(set(self.classes) - set(CAUSES))
        if strangers:
            raise ModelError(path, f"classes outside the vocabulary: {', '.join(strangers[:5])}")
        if not width or len(documents) != width or min(documents) <= 0 or len(set(self.classes)) != width:
            raise ModelError(path, "classes and documents disagree")
        if not rows or not math.isfinite(alpha) or alpha <= 0:
            raise ModelError(path, "no features, or a smoothing that is not a positive number")
        if scoring not in SCORINGS:
            raise ModelError(path, f"scoring {scoring!r} is not one of {', '.join(SCORINGS)}")
        # One pass over the ~10^5 features: check each row, add up the class totals and turn its counts into
        # gains (what a feature adds to a class's score), which need only the row itself. A shipped model is
        # read on the first question that needs it, so this pass is most of that first answer's time.
        log = math.log
        complement = scoring == "complement"
        log_alpha = log(alpha)
        totals = [0] * width
        self._gain = {}
        try:
            for feature, row in rows.items():
                seen = alpha
                for i, n in row:
                    if type(i) is not int or type(n) is not int or not 0 <= i < width or n <= 0:
                        raise ModelError(path, "a feature names a class that is not listed, or a count below 1")
                    totals[i] += n
                    seen += n
                if complement:
                    # -log P(feature | every other class), less the part all classes share: a class gains where the
                    # other classes rarely show the feature. No prior: the complement already weighs class sizes.
                    log_seen = log(seen)
                    self._gain[str(feature)] = [(i, log_seen - log(seen - n)) for i, n in row]
                else:
                    # log P(feature | class) - log P(unseen feature | class): only the classes it was seen in.
                    self._gain[str(feature)] = [(i, log((n + alpha) / alpha)) for i, n in row]
        except (TypeError, ValueError) as err:
            raise ModelError(path, f"malformed ({type(err).__name__}: {err})") from err
        if [int(n) for n in document.get("totals", totals)] != totals:
            raise ModelError(path, "the totals are not the sums of the feature counts")
        self.examples = sum(documents)
        vocabulary = len(self._gain)
        if complement:
            everything = sum(totals)
            self._prior = [0.0] * width
            self._unseen = [log(everything - t + alpha * vocabulary) for t in totals]
        else:
            self._prior = [log(n / self.examples) for n in documents]
            self._unseen = [log_alpha - log(t + alpha * vocabulary) for t in totals]

    def read(self, text: str) -> Reading:
        """The causes ranked by posterior, and the three words that favoured the first most."""
        present = [f for f in features(text) if f in self._gain]
        scores = list(self._prior)
        # Every class pays its base price for each present feature (multinomial: an unseen feature's log
        # probability; complement: its complement's size), then gets back what it saw.
        for i, unseen in enumerate(self._unseen):
            scores[i] += unseen * len(present)
        for feature in present:
            for i, gain in self._gain[feature]:
                scores[i] += gain
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        ranked = tuple(sorted(((c, w / total) for c, w in zip(self.classes, weights)), key=lambda cw: -cw[1]))
        best = self.classes.index(ranked[0][0])
        lift = []
        for feature in present:
            gains = dict(self._gain[feature])
            if best in gains:
                others = [gains.get(i, 0.0) + self._unseen[i] - self._unseen[best] for i in range(len(self.classes))
                          if i != best]
                lift.append((gains[best] - max(others, default=0.0), feature))
        words = tuple(feature for _, feature in sorted(lift, key=lambda lf: (-lf[0], lf[1]))[:3])
        return Reading(ranked=ranked, words=words, examples=self.examples)


@functools.lru_cache(maxsize=4)
def load_model(path: str) -> Model:
    """The model at ``path`` (cached). Raises :class:`ModelError`."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise ModelError(path, f"cannot read ({type(err).__name__}: {err})") from err
    return Model(document, path)
