"""Readability of a turn and the ranking of crowd candidates (the papers' Appendix A). Pure: no Django.

Our reading of the formula:

    f     = f_sum / (87 + n_tokens)
    d     = 100 * distinct_tokens / n_tokens          (percentage of distinct tokens)
    score = f + 0.04 * d

`f_sum` is the sum, over every token of the turn (repeats included), of that token's corpus
frequency, and a token's corpus frequency is its relative frequency in the cleaned corpus: its count
divided by the number of tokens in the corpus. A turn made of common words scores a higher `f`; the
constant 87 in the denominator damps `f` for short turns, so two common words do not outrank a full
sentence of common words. With relative frequencies `f` stays small next to `0.04 * d` (at most 4):
diversity decides first, and among equally diverse turns the one made of more, and more common,
words wins. A token is a lower-cased run of letters, digits and apostrophes.
"""

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from annotation.papers import (
    CANDIDATES_PER_LABEL,
    PREFILTER_CONFIDENCE,
    READABILITY_DIVERSITY_WEIGHT,
    READABILITY_LENGTH_DAMPING,
)

TOKEN_PATTERN = re.compile(r"[a-z0-9']+")
LENGTH_DAMPING = READABILITY_LENGTH_DAMPING
DIVERSITY_WEIGHT = READABILITY_DIVERSITY_WEIGHT


def tokenize(text: str) -> list[str]:
    return [token for token in TOKEN_PATTERN.findall(text.lower()) if token.strip("'")]


@dataclass(frozen=True)
class Vocabulary:
    """Relative token frequencies over a corpus."""

    counts: dict[str, int]
    total: int

    def frequency(self, token: str) -> float:
        return self.counts.get(token, 0) / self.total if self.total else 0.0


def build_vocabulary(texts: Iterable[str]) -> Vocabulary:
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(tokenize(text))
    return Vocabulary(counts=dict(counts), total=sum(counts.values()))


def readability(text: str, vocabulary: Vocabulary) -> float:
    """score = f + 0.04 d; 0.0 for a turn with no tokens."""
    tokens = tokenize(text)
    if not tokens:
        return 0.0
    f_sum = sum(vocabulary.frequency(token) for token in tokens)
    f = f_sum / (LENGTH_DAMPING + len(tokens))
    d = 100.0 * len(set(tokens)) / len(tokens)
    return f + DIVERSITY_WEIGHT * d


@dataclass(frozen=True)
class Candidate:
    """A confidently weak-labeled turn: the dialogue up to and including it is the crowd candidate."""

    turn_id: int
    dialogue_id: int
    text: str
    label: str
    confidence: float


@dataclass(frozen=True)
class RankedCandidate:
    candidate: Candidate
    score: float
    rank: int  # 1-based, within its label


def rank_candidates(
    candidates: Iterable[Candidate],
    vocabulary: Vocabulary,
    *,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
) -> list[RankedCandidate]:
    """Keep candidates at or above `min_confidence`, score their readability and take the best
    `per_label` of each label. Ties break by higher confidence, then lower turn id, so the order
    is reproducible. The result is grouped by label (in first-seen order), best first."""
    by_label: dict[str, list[tuple[float, Candidate]]] = {}
    for candidate in candidates:
        if candidate.confidence >= min_confidence:
            score = readability(candidate.text, vocabulary)
            by_label.setdefault(candidate.label, []).append((score, candidate))
    ranked: list[RankedCandidate] = []
    for scored in by_label.values():
        scored.sort(key=lambda pair: (-pair[0], -pair[1].confidence, pair[1].turn_id))
        ranked.extend(
            RankedCandidate(candidate=c, score=s, rank=i) for i, (s, c) in enumerate(scored[:per_label], start=1)
        )
    return ranked
