"""Inter-annotator agreement: Fleiss' kappa (overall and per label), Gwet's AC1, percent agreement,
the majority-against-answers confusion matrix, and each
worker's agreement with the majority and quiz accuracy. Pure functions, no Django.

Items may have different numbers of answers (3, or 5 after a tie-break). The kappa here uses each
item's own count n_i; with a constant n it is exactly Fleiss (1971), which the tests check against
statsmodels. Items with fewer than two answers carry no agreement information and are left out.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RatingTable:
    categories: list[str]
    rows: list[list[int]]  # one row per item: how many answers went to each category


def rating_table(answers_by_item: Iterable[Sequence[str]], categories: Sequence[str] | None = None) -> RatingTable:
    """Count answers per category for each item with at least two answers."""
    items = [list(answers) for answers in answers_by_item if len(answers) >= 2]
    if categories is None:
        categories = sorted({answer for answers in items for answer in answers})
    index = {category: position for position, category in enumerate(categories)}
    rows = []
    for answers in items:
        row = [0] * len(categories)
        for answer in answers:
            row[index[answer]] += 1
        rows.append(row)
    return RatingTable(categories=list(categories), rows=rows)


def _counts(table: RatingTable) -> np.ndarray:
    return np.asarray(table.rows, dtype=float)


def observed_agreement(table: RatingTable) -> float | None:
    """Mean pairwise agreement P-bar: the chance two answers to the same item agree."""
    if not table.rows:
        return None
    counts = _counts(table)
    per_item_n = counts.sum(axis=1)
    per_item = (counts * (counts - 1)).sum(axis=1) / (per_item_n * (per_item_n - 1))
    return float(per_item.mean())


def fleiss_kappa(table: RatingTable) -> float | None:
    """Fleiss' kappa; None when undefined (no items, or every answer in one category)."""
    if not table.rows:
        return None
    counts = _counts(table)
    shares = counts.sum(axis=0) / counts.sum()
    expected = float((shares**2).sum())
    if expected >= 1.0:
        return None
    return (observed_agreement(table) - expected) / (1 - expected)


def gwet_ac1(table: RatingTable) -> float | None:
    """Gwet's AC1 (Gwet 2008, multiple raters): (P-bar - Pe) / (1 - Pe) with chance agreement
    Pe = sum_k pi_k (1 - pi_k) / (q - 1), pi_k the mean over items of each item's share of answers in
    category k, q the number of categories. Unlike kappa, it does not collapse when one label dominates
    (the "kappa paradox"). None when undefined (no items, or fewer than two categories)."""
    if not table.rows or len(table.categories) < 2:
        return None
    counts = _counts(table)
    shares = (counts / counts.sum(axis=1, keepdims=True)).mean(axis=0)
    expected = float((shares * (1 - shares)).sum()) / (len(table.categories) - 1)
    return (observed_agreement(table) - expected) / (1 - expected)


@dataclass(frozen=True)
class ConfusionMatrix:
    labels: list[str]  # row labels (majority) and column labels (answers), one order for both
    counts: list[list[int]]  # counts[i][j]: answers j given on items whose majority is labels[i]


def majority_confusion(items: Iterable[tuple[str | None, Sequence[str]]]) -> ConfusionMatrix:
    """The majority label (rows) against every answer given on the item (columns), items without a
    majority left out. The diagonal counts the answers that agreed with the majority."""
    pairs = [(winner, answer) for winner, answers in items if winner is not None for answer in answers]
    labels = sorted({label for pair in pairs for label in pair})
    index = {label: position for position, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for winner, answer in pairs:
        counts[index[winner]][index[answer]] += 1
    return ConfusionMatrix(labels=labels, counts=counts)


def per_label_kappa(table: RatingTable) -> dict[str, float | None]:
    """Category-specific kappa (Fleiss 1971): kappa_j = 1 - sum_i n_ij (n - n_ij) / (N n (n-1) p_j q_j),
    generalised to item counts n_i as 1 - sum_i n_ij (n_i - n_ij) / (n_i - 1) / (sum_i n_i p_j q_j)."""
    if not table.rows:
        return dict.fromkeys(table.categories)
    counts = _counts(table)
    per_item_n = counts.sum(axis=1, keepdims=True)
    shares = counts.sum(axis=0) / counts.sum()
    spread = shares * (1 - shares)
    disagreement = (counts * (per_item_n - counts) / (per_item_n - 1)).sum(axis=0)
    kappas: dict[str, float | None] = {}
    for j, category in enumerate(table.categories):
        kappas[category] = None if spread[j] == 0 else float(1 - disagreement[j] / (counts.sum() * spread[j]))
    return kappas


def unanimous_share(answers_by_item: Iterable[Sequence[str]]) -> float | None:
    """Share of items (with two or more answers) on which every answer was the same."""
    items = [answers for answers in answers_by_item if len(answers) >= 2]
    if not items:
        return None
    return sum(1 for answers in items if len(set(answers)) == 1) / len(items)


@dataclass(frozen=True)
class Rate:
    hits: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.hits / self.total if self.total else None


def agreement_with_majority(
    answers: Iterable[tuple[object, object, str]], majority: Mapping[object, str | None]
) -> dict[object, Rate]:
    """For each worker, how often their answer equals the item's majority label.

    `answers` are (item, worker, answer) triples; items without a majority are not counted, since
    there is nothing to agree with. The majority includes the worker's own vote, as in the papers.
    """
    counts: dict[object, list[int]] = defaultdict(lambda: [0, 0])
    for item, worker, answer in answers:
        winner = majority.get(item)
        if winner is None:
            continue
        counts[worker][1] += 1
        if answer == winner:
            counts[worker][0] += 1
    return {worker: Rate(hits, total) for worker, (hits, total) in counts.items()}


def quiz_accuracy(quiz_answers: Iterable[tuple[object, str, str]]) -> dict[object, Rate]:
    """For each worker, the share of quiz answers equal to the gold label: (worker, answer, gold)."""
    counts: dict[object, list[int]] = defaultdict(lambda: [0, 0])
    for worker, answer, gold in quiz_answers:
        counts[worker][1] += 1
        if answer == gold:
            counts[worker][0] += 1
    return {worker: Rate(hits, total) for worker, (hits, total) in counts.items()}


def top_confusions(pairs: Iterable[tuple[str, str]], limit: int = 3) -> dict[str, list[tuple[str, int]]]:
    """For each majority label, the other answers most often given next to it: (majority, answer)."""
    by_label: dict[str, Counter] = defaultdict(Counter)
    for winner, answer in pairs:
        if answer != winner:
            by_label[winner][answer] += 1
    return {label: counter.most_common(limit) for label, counter in by_label.items()}
