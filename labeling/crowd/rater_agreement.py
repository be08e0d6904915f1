"""One rater (a model, or one worker) against the crowd's gold: accuracy, Cohen's kappa, Gwet's
AC1, the confusion matrix and the expected calibration error. Pure, no Django.

AC1 reuses agreement.gwet_ac1 on the two-answer table (with two raters Gwet's multi-rater AC1 is
his two-rater AC1). Kappa here is Cohen's (each rater's own marginals), which tests check against
scikit-learn; Fleiss' kappa with two raters would be Scott's pi.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from labeling.crowd.agreement import gwet_ac1, rating_table
from labeling.crowd.majority import majority_vote

CALIBRATION_BINS = 10


@dataclass(frozen=True)
class RaterAgreement:
    items: int
    accuracy: float | None
    kappa: float | None
    ac1: float | None
    calibration_error: float | None  # None when the rater gave no confidences
    labels: list[str]
    confusion: list[list[int]]  # confusion[i][j]: items with gold labels[i] the rater called labels[j]


def cohen_kappa(rater: Sequence[str], gold: Sequence[str]) -> float | None:
    labels = sorted(set(rater) | set(gold))
    index = {label: k for k, label in enumerate(labels)}
    if not rater:
        return None
    observed = sum(1 for a, b in zip(rater, gold, strict=True) if a == b) / len(rater)
    rater_shares = np.bincount([index[a] for a in rater], minlength=len(labels)) / len(rater)
    gold_shares = np.bincount([index[b] for b in gold], minlength=len(labels)) / len(gold)
    expected = float(rater_shares @ gold_shares)
    return None if expected >= 1 else (observed - expected) / (1 - expected)


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], bins: int = CALIBRATION_BINS):
    """Sum over equal-width confidence bins of (share of items in the bin) x |accuracy - mean confidence|."""
    if not confidences:
        return None
    confidence = np.clip(np.asarray(confidences, dtype=float), 0, 1)
    hits = np.asarray(correct, dtype=float)
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    error = 0.0
    for b in range(bins):
        chosen = which == b
        if chosen.any():
            error += chosen.mean() * abs(hits[chosen].mean() - confidence[chosen].mean())
    return float(error)


def rater_agreement(
    rater: Sequence[str], gold: Sequence[str], confidences: Sequence[float | None] | None = None
) -> RaterAgreement:
    """`rater[i]` against `gold[i]`; `confidences[i]` the rater's probability for its own answer."""
    if len(rater) != len(gold):
        raise ValueError("rater and gold answers must pair up")
    labels = sorted(set(rater) | set(gold))
    index = {label: k for k, label in enumerate(labels)}
    confusion = [[0] * len(labels) for _ in labels]
    for answer, truth in zip(rater, gold, strict=True):
        confusion[index[truth]][index[answer]] += 1
    correct = [a == b for a, b in zip(rater, gold, strict=True)]
    known = [(c, ok) for c, ok in zip(confidences or [], correct, strict=False) if c is not None]
    return RaterAgreement(
        items=len(rater),
        accuracy=sum(correct) / len(rater) if rater else None,
        kappa=cohen_kappa(rater, gold),
        ac1=gwet_ac1(rating_table([[a, b] for a, b in zip(rater, gold, strict=True)], labels)) if rater else None,
        calibration_error=expected_calibration_error([c for c, _ in known], [ok for _, ok in known]) if known else None,
        labels=labels,
        confusion=confusion,
    )


@dataclass(frozen=True)
class SeatAgreement:
    """A model set beside a crowd of raters (bench/model_rater.py; docs/benchmarks/model-rater.md)."""

    majority_items: int  # items whose answers have a strict majority
    model_agreement: float | None  # the model against that majority, over those items
    model_kappa: float | None  # Cohen's kappa, the model against that majority
    worker_pairs: int  # (item, worker) pairs whose OTHER answers all agree
    worker_agreement: float | None  # the worker against the others' label, over those pairs
    worker_kappa: float | None
    paired_model_agreement: float | None  # the model in each such worker's seat, same pairs and labels


def seat_agreement(answers_by_item: Sequence[Sequence[str]], model: Sequence[str]) -> SeatAgreement:
    """`answers_by_item[i]`: the crowd's answers to item i (as given); `model[i]`: the model's label."""
    majority = [(i, r.label) for i, answers in enumerate(answers_by_item) if (r := majority_vote(answers)).label]
    pairs = [
        (i, j, others[0])
        for i, answers in enumerate(answers_by_item)
        for j in range(len(answers))
        if len(others := [*answers[:j], *answers[j + 1 :]]) >= 2 and len(set(others)) == 1
    ]

    def share(hits: list[bool]) -> float | None:
        return sum(hits) / len(hits) if hits else None

    return SeatAgreement(
        majority_items=len(majority),
        model_agreement=share([model[i] == label for i, label in majority]),
        model_kappa=cohen_kappa([model[i] for i, _ in majority], [label for _, label in majority]),
        worker_pairs=len(pairs),
        worker_agreement=share([answers_by_item[i][j] == label for i, j, label in pairs]),
        worker_kappa=cohen_kappa([answers_by_item[i][j] for i, j, _ in pairs], [label for *_, label in pairs]),
        paired_model_agreement=share([model[i] == label for i, _, label in pairs]),
    )
