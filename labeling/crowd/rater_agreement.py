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
