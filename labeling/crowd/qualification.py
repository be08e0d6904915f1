"""The qualification quiz's arithmetic: who passes, how long the quiz takes, a worker's quiz history.

Pure: no Django. The shell (labeling.services.qualification) reads the rows and calls these; the campaign's
settings (its mark, its items) come in as arguments, their defaults live in annotation.papers.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotation.taxonomy import normalise_label_name


def passes(correct: int, total: int, mark: int) -> bool:
    """Whether `correct` answers right of `total` reach the qualification mark. A mark above the
    quiz's size asks for every answer right (a quiz of fewer items than the mark is still passable)."""
    if total < 1:
        return False
    return correct >= min(mark, total)


def answered_right(given: str | None, known_answer: str | None) -> bool:
    """Whether a quiz answer is the known answer. Decided once, for every page: right only when it
    names the known answer, picked or typed through "Other" in any spelling the label rule folds
    (NFKC, case, spaces: "sad " is "Sad"). Anything else is wrong, never unknown: a typed label
    that names no label or another one, a look-alike ("Sаd" with a Cyrillic а), no answer."""
    if not given or not known_answer:
        return False
    return normalise_label_name(given) == normalise_label_name(known_answer)


def quiz_minutes(estimated_minutes: int, screens_per_hit: int, quiz_items: int) -> int:
    """Minutes the qualification quiz takes a careful worker: the paid HIT's estimate per screen,
    times the quiz's screens, rounded up (at least one). What its pay is checked against."""
    per_screen = estimated_minutes / max(1, screens_per_hit)
    return max(1, math.ceil(per_screen * quiz_items))


@dataclass(frozen=True)
class QuizTally:
    right: int = 0
    total: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.right / self.total if self.total else None

    def plus(self, correct: bool) -> "QuizTally":
        return QuizTally(self.right + int(correct), self.total + 1)


@dataclass(frozen=True)
class QuizHistory:
    """Every quiz answer of one worker: right of total over every campaign, and per campaign."""

    overall: QuizTally = QuizTally()
    by_campaign: dict[object, QuizTally] = field(default_factory=dict)

    @property
    def campaigns(self) -> int:
        return len(self.by_campaign)


def quiz_history(answers: Iterable[tuple[object, bool]]) -> QuizHistory:
    """A history from (campaign, answered right) pairs, one per quiz answer."""
    overall, by_campaign = QuizTally(), {}
    for campaign, correct in answers:
        overall = overall.plus(correct)
        by_campaign[campaign] = by_campaign.get(campaign, QuizTally()).plus(correct)
    return QuizHistory(overall, by_campaign)


def histories(answers: Iterable[tuple[object, object, bool]]) -> dict[object, QuizHistory]:
    """quiz_history per worker, from (worker, campaign, answered right) triples."""
    grouped: dict[object, list[tuple[object, bool]]] = {}
    for worker, campaign, correct in answers:
        grouped.setdefault(worker, []).append((campaign, correct))
    return {worker: quiz_history(rows) for worker, rows in grouped.items()}


def setting_errors(items: int | None, mark: int | None) -> dict[str, str]:
    """What is wrong with a campaign's qualification settings, by field name (empty: nothing)."""
    if items is not None and mark is not None and mark > items:
        return {"qualification_mark": f"the mark cannot be above the quiz's {items} items"}
    return {}
