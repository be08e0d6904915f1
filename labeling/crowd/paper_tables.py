"""The tables a paper's reviewer asks of a crowd study, from (item, worker, answer) triples and the
items' majority labels. Pure, no Django.

- each worker's Cohen's kappa against the majority (items with a majority the worker answered);
- Cohen's kappa of every pair of workers over the items both answered;
- the label distribution: answers per label and items each label won by majority;
- the confusion of the majority (rows) against one worker's answers (columns);
- per label, positive specific agreement: of the answer pairs on one item that include this label,
  the share where both answers are it. Unlike one-vs-rest kappa or AC1 over many labels, whose
  "any other label" category dominates every table and pushes agreement near 1 for every label,
  it counts only the pairs where someone chose the label (Uebersax 1982; Fleiss 1975).

A worker's own answer is part of the majority it is compared with, so the kappa against the majority
leans high (with three answers a lone dissent still agrees with itself); the pairwise table has no
such lean. A worker who answered an item twice counts with its first answer.
"""

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations

from labeling.crowd.agreement import ConfusionMatrix, RatingTable, majority_confusion
from labeling.crowd.rater_agreement import cohen_kappa

Answer = tuple[Hashable, Hashable, str]  # (item, worker, answer)


@dataclass(frozen=True)
class WorkerKappa:
    worker: Hashable
    items: int  # items with a majority that the worker answered: the N of both figures
    agreement: float | None  # share of those answers equal to the majority
    kappa: float | None


@dataclass(frozen=True)
class PairKappa:
    first: Hashable
    second: Hashable
    items: int  # items both answered
    agreement: float | None
    kappa: float | None


@dataclass(frozen=True)
class LabelCount:
    label: str
    answers: int
    answer_share: float
    majority_items: int
    majority_share: float | None  # of the items with a majority


@dataclass(frozen=True)
class SpecificAgreement:
    label: str
    items: int  # items with at least two answers where someone gave the label
    value: float | None  # None when no item has the label twice or more answers beside it


def by_worker(answers: Iterable[Answer]) -> dict[Hashable, dict[Hashable, str]]:
    """worker -> item -> answer, the first answer of a worker to an item kept."""
    table: dict[Hashable, dict[Hashable, str]] = defaultdict(dict)
    for item, worker, answer in answers:
        table[worker].setdefault(item, answer)
    return table


def worker_kappas(answers: Iterable[Answer], majority: Mapping[Hashable, str | None]) -> list[WorkerKappa]:
    rows = []
    for worker, given in by_worker(answers).items():
        pairs = [(answer, majority[item]) for item, answer in given.items() if majority.get(item) is not None]
        rows.append(_worker_row(worker, pairs))
    return sorted(rows, key=lambda row: (-row.items, str(row.worker)))


def _worker_row(worker: Hashable, pairs: list[tuple[str, str]]) -> WorkerKappa:
    if not pairs:
        return WorkerKappa(worker, 0, None, None)
    mine, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    return WorkerKappa(worker, len(pairs), _agreement(mine, theirs), cohen_kappa(mine, theirs))


def pairwise_kappas(answers: Iterable[Answer], *, min_items: int = 1) -> list[PairKappa]:
    """Every pair of workers who answered at least `min_items` items in common."""
    given = by_worker(answers)
    rows = []
    for first, second in combinations(sorted(given, key=str), 2):
        shared = sorted(set(given[first]) & set(given[second]), key=str)
        if len(shared) < min_items or not shared:
            continue
        a = [given[first][item] for item in shared]
        b = [given[second][item] for item in shared]
        rows.append(PairKappa(first, second, len(shared), _agreement(a, b), cohen_kappa(a, b)))
    return rows


def label_distribution(answers: Iterable[Answer], majority: Mapping[Hashable, str | None]) -> list[LabelCount]:
    answered = Counter(answer for _, _, answer in answers)
    won = Counter(label for label in majority.values() if label is not None)
    total, decided = sum(answered.values()), sum(won.values())
    labels = sorted(set(answered) | set(won), key=lambda label: (-won[label], -answered[label], label))
    return [
        LabelCount(
            label,
            answered[label],
            answered[label] / total if total else 0.0,
            won[label],
            won[label] / decided if decided else None,
        )
        for label in labels
    ]


def worker_confusion(
    answers: Iterable[Answer], majority: Mapping[Hashable, str | None], worker: Hashable
) -> ConfusionMatrix:
    """The majority label (rows) against this worker's answer (columns), items with a majority
    (agreement.majority_confusion over this worker's answers alone)."""
    return majority_confusion((majority.get(item), [answer]) for item, who, answer in answers if who == worker)


def specific_agreement(table: RatingTable) -> dict[str, SpecificAgreement]:
    """Positive specific agreement per category: sum_i n_ij (n_ij - 1) / sum_i n_ij (n_i - 1)."""
    agreeing: dict[str, int] = defaultdict(int)
    possible: dict[str, int] = defaultdict(int)
    items: dict[str, int] = defaultdict(int)
    for row in table.rows:
        n = sum(row)
        for category, count in zip(table.categories, row, strict=True):
            if count:
                agreeing[category] += count * (count - 1)
                possible[category] += count * (n - 1)
                items[category] += 1
    return {
        category: SpecificAgreement(
            category, items[category], agreeing[category] / possible[category] if possible[category] else None
        )
        for category in table.categories
    }


def _agreement(first: list[str], second: list[str]) -> float | None:
    if not first:
        return None
    return sum(1 for a, b in zip(first, second, strict=True) if a == b) / len(first)
