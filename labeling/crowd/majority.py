"""Majority vote over crowd answers, with typed "Other" answers folded onto known labels.

Pure functions, no Django: the campaign aggregation, the EDOS importer and the dashboard all call
these, so every place agrees on what "a majority" is.

The rule: an answer wins when it has MORE than half of the answers given for the item (2 of 3,
3 of 5 after a tie-break, 3 of 4 ...) and at least two answers agree (one answer alone is no
majority). Anything else is unresolved.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from annotation.taxonomy import canonical_label, normalise_label_name

MIN_AGREEING = 2  # answers that must agree before a label is a majority


@dataclass(frozen=True)
class MajorityResult:
    label: str | None  # None when no answer has more than half of the votes
    votes: dict[str, int] = field(default_factory=dict)  # answer -> count, most voted first
    answer_count: int = 0

    @property
    def is_majority(self) -> bool:
        return self.label is not None

    @property
    def agreement(self) -> float | None:
        """Share of the answers that went to the most voted answer (the winner when there is one)."""
        if not self.answer_count:
            return None
        return max(self.votes.values()) / self.answer_count


def known_label_index(label_names: Iterable[str]) -> dict[str, str]:
    """Map each label's folded spelling (case and spaces aside) to its own spelling."""
    return {normalise_label_name(name): name for name in label_names}


def normalise_answer(text: str, known_labels: Mapping[str, str] | None = None) -> str:
    """The label `text` names: a taxonomy label or a known label (e.g. one accepted later as
    "proposed") in its own spelling when it matches case and spaces aside; otherwise the typed
    text folded the same way and capitalised, so "greeting" and "Greeting " are one new label."""
    canonical = canonical_label(text)
    if canonical:
        return canonical
    if known_labels:
        known = known_labels.get(normalise_label_name(text))
        if known:
            return known
    return normalise_label_name(text).capitalize()


def answer_normaliser(known_labels: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """normalise_answer with `known_labels` bound, remembering each distinct text: a campaign's
    answers repeat a few dozen texts (a report normalises a million answers several times)."""
    memo: dict[str, str] = {}

    def normalise(text: str) -> str:
        found = memo.get(text)
        if found is None:
            found = memo[text] = normalise_answer(text, known_labels)
        return found

    return normalise


def majority_vote(answers: Sequence[str]) -> MajorityResult:
    """Strict majority of `answers` (already normalised, or as given for the paper's rule).

    A winner needs more than half of the answers *and* at least MIN_AGREEING of them: a single
    answer (1 of 3 still to come) is no majority, however "100 %" it looks.
    """
    counts = Counter(answers)
    ordered = dict(sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])))
    total = len(answers)
    winner = None
    if ordered:
        top_label, top_count = next(iter(ordered.items()))
        if top_count * 2 > total and top_count >= MIN_AGREEING:
            winner = top_label
    return MajorityResult(label=winner, votes=ordered, answer_count=total)


def majority_vote_normalised(answers: Sequence[str], known_labels: Mapping[str, str] | None = None) -> MajorityResult:
    return majority_vote([normalise_answer(answer, known_labels) for answer in answers])


def majority_by_item(
    answers_by_item: Mapping[object, Sequence[str]], known_labels: Mapping[str, str] | None = None
) -> dict[object, MajorityResult]:
    return {item: majority_vote_normalised(answers, known_labels) for item, answers in answers_by_item.items()}


def majority_rate(results: Iterable[MajorityResult]) -> float | None:
    results = list(results)
    if not results:
        return None
    return sum(1 for result in results if result.is_majority) / len(results)
