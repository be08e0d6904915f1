"""Pairwise (ACUTE-Eval) aggregation: win rates with Wilson intervals, agreement, position bias.

Pure functions, no Django. A judgment is one worker's pick on one question of one pair, already
un-shuffled: `winner` is the *source* ("a" or "b") the worker preferred and `left` the source that
was shown on the left, so both the win rate (by source) and the position bias (by side) come from
the same records.
"""

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Z_95 = 1.959963984540054  # two-sided 95 % normal quantile


@dataclass(frozen=True)
class Judgment:
    item_id: int
    worker_id: int
    question: str
    winner: str  # "a" or "b": the source the worker picked
    left: str  # "a" or "b": the source shown on the left


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class AxisResult:
    question: str
    wins_a: int
    wins_b: int
    win_rate_a: float | None  # share of judgments that picked source a
    interval_a: Interval | None  # Wilson 95 % for win_rate_a
    items: int  # pairs with at least one judgment
    item_majority_a: int  # pairs whose judges' majority picked a
    item_majority_b: int

    @property
    def total(self) -> int:
        return self.wins_a + self.wins_b


@dataclass(frozen=True)
class PositionBias:
    left_wins: int
    total: int
    rate: float | None  # share of judgments that picked the left side (0.5 = no bias)
    interval: Interval | None


@dataclass(frozen=True)
class WorkerAgreement:
    worker_id: int
    judgments: int  # judgments with at least one other judge on the same pair and question
    agreeing: int  # of those, how many match the other judges' majority (ties count half)
    rate: float | None


@dataclass(frozen=True)
class PairwiseResults:
    axes: list[AxisResult]
    position_bias: PositionBias
    workers: list[WorkerAgreement] = field(default_factory=list)
    pairwise_agreement: float | None = None  # share of agreeing judge pairs, over pairs and questions


def wilson_interval(successes: int, total: int, z: float = Z_95) -> Interval | None:
    """The Wilson score interval for a binomial proportion; None for no trials."""
    if total <= 0:
        return None
    if not 0 <= successes <= total:
        raise ValueError(f"successes must lie in 0..{total}, not {successes}")
    p = successes / total
    z2 = z * z
    denominator = 1 + z2 / total
    centre = (p + z2 / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def axis_result(question: str, judgments: Sequence[Judgment]) -> AxisResult:
    wins = Counter(j.winner for j in judgments)
    total = wins["a"] + wins["b"]
    by_item: dict[int, Counter] = defaultdict(Counter)
    for judgment in judgments:
        by_item[judgment.item_id][judgment.winner] += 1
    majority_a = sum(1 for votes in by_item.values() if votes["a"] > votes["b"])
    majority_b = sum(1 for votes in by_item.values() if votes["b"] > votes["a"])
    return AxisResult(
        question,
        wins["a"],
        wins["b"],
        wins["a"] / total if total else None,
        wilson_interval(wins["a"], total),
        len(by_item),
        majority_a,
        majority_b,
    )


def position_bias(judgments: Iterable[Judgment]) -> PositionBias:
    judgments = list(judgments)
    left = sum(1 for j in judgments if j.winner == j.left)
    total = len(judgments)
    return PositionBias(left, total, left / total if total else None, wilson_interval(left, total))


def worker_agreement(judgments: Iterable[Judgment]) -> list[WorkerAgreement]:
    """Each worker against the others who judged the same pair on the same question
    (leave-one-out majority; a tie among the others counts half)."""
    groups: dict[tuple[int, str], list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        groups[(judgment.item_id, judgment.question)].append(judgment)
    seen: dict[int, list[float]] = defaultdict(list)
    for group in groups.values():
        for judgment in group:
            others = Counter(o.winner for o in group if o.worker_id != judgment.worker_id)
            if not others:
                continue
            mine, theirs = others[judgment.winner], sum(others.values()) - others[judgment.winner]
            seen[judgment.worker_id].append(1.0 if mine > theirs else 0.5 if mine == theirs else 0.0)
    return [
        WorkerAgreement(worker, len(scores), sum(scores), sum(scores) / len(scores))
        for worker, scores in sorted(seen.items())
    ]


def pairwise_agreement(judgments: Iterable[Judgment]) -> float | None:
    """Share of pairs of judges that picked the same source, over every pair and question."""
    groups: dict[tuple[int, str], list[str]] = defaultdict(list)
    for judgment in judgments:
        groups[(judgment.item_id, judgment.question)].append(judgment.winner)
    agreeing = pairs = 0
    for winners in groups.values():
        counts = Counter(winners)
        n = len(winners)
        pairs += n * (n - 1) // 2
        agreeing += sum(c * (c - 1) // 2 for c in counts.values())
    return agreeing / pairs if pairs else None


def pairwise_results(judgments: Iterable[Judgment], questions: Sequence[str]) -> PairwiseResults:
    """Win rate per question (in the order given), position bias and agreement over all judgments."""
    judgments = list(judgments)
    by_question: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        by_question[judgment.question].append(judgment)
    return PairwiseResults(
        [axis_result(question, by_question.get(question, [])) for question in questions],
        position_bias(judgments),
        worker_agreement(judgments),
        pairwise_agreement(judgments),
    )


def unshuffle(side: str, left_is: str) -> str:
    """The source ("a"/"b") behind the side ("left"/"right") a worker picked."""
    if side not in ("left", "right") or left_is not in ("a", "b"):
        raise ValueError(f"side must be left or right and left_is a or b, not {side!r}/{left_is!r}")
    other = "b" if left_is == "a" else "a"
    return left_is if side == "left" else other
