"""How good a model's probabilities are, and temperature scaling to make them honest. Pure numpy.

Every model that makes a ModelVersion is measured here on a held-out gold split: top-1 accuracy,
top-3 hit rate, macro-F1 and per-label F1 (mlworkers.ml.metrics), and calibration: the precision
of the predictions the prefilter keeps (confidence >= PREFILTER_THRESHOLD, the value itself
included), the expected calibration error (ECE) and the reliability bins behind the diagram.

Temperature scaling (Guo et al. 2017) divides the logits by one number T fitted on the
validation split (the T with the lowest negative log-likelihood), so the prefilter's 0.9 means
about 90 %. A model that returns probabilities is tempered through their logarithms:
softmax(log p / T) equals softmax(logits / T), since log p differs from the logits by a constant.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from annotation.papers import PREFILTER_CONFIDENCE
from mlworkers.ml.metrics import classification_report

PREFILTER_THRESHOLD = PREFILTER_CONFIDENCE  # suggestions kept at confidence >= it, itself included
RELIABILITY_BINS = 10
TOP_K = 3
# the search range of the temperature: wide enough for any sane model, narrow enough to stay finite
TEMPERATURE_RANGE = (0.05, 20.0)


class EmptySplitError(ValueError):
    """A split needed to fit or measure a model holds no example: one line saying which."""


def require_examples(split_sizes: dict[str, int], model: str) -> None:
    """Refuse to train when the validation or test split is empty, instead of reporting 0.0."""
    empty = [name for name, size in split_sizes.items() if not size]
    if empty:
        raise EmptySplitError(f"{model}: the {' and '.join(empty)} split{'s are' if len(empty) > 1 else ' is'} empty")


def apply_temperature(probabilities: np.ndarray, temperature: float) -> np.ndarray:
    """Probabilities tempered by `temperature` (> 1 softens, < 1 sharpens, 1 changes nothing)."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if temperature == 1.0 or not probabilities.size:
        return probabilities
    logits = np.log(np.clip(probabilities, 1e-12, None)) / float(temperature)
    logits -= logits.max(axis=1, keepdims=True)
    exp = np.exp(logits)
    return exp / exp.sum(axis=1, keepdims=True)


def negative_log_likelihood(probabilities: np.ndarray, targets: Sequence[int]) -> float:
    targets = np.asarray(targets, dtype=np.int64)
    if not len(targets):
        return 0.0
    picked = np.asarray(probabilities, dtype=np.float64)[np.arange(len(targets)), targets]
    return float(-np.log(np.clip(picked, 1e-12, None)).mean())


def fit_temperature(probabilities: np.ndarray, targets: Sequence[int], iterations: int = 60) -> float:
    """The temperature with the lowest NLL on (probabilities, targets): golden-section search over
    log T (the NLL is convex in 1/T, so unimodal in log T)."""
    targets = np.asarray(targets, dtype=np.int64)
    if not len(targets):
        raise EmptySplitError("temperature scaling needs at least one validation example")
    nll = lambda log_t: negative_log_likelihood(apply_temperature(probabilities, np.exp(log_t)), targets)  # noqa: E731
    low, high = np.log(TEMPERATURE_RANGE[0]), np.log(TEMPERATURE_RANGE[1])
    ratio = (np.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    fa, fb = nll(a), nll(b)
    for _ in range(iterations):
        if fa < fb:
            high, b, fb = b, a, fa
            a = high - ratio * (high - low)
            fa = nll(a)
        else:
            low, a, fa = a, b, fb
            b = low + ratio * (high - low)
            fb = nll(b)
    return round(float(np.exp((low + high) / 2)), 6)


def top_k_hit_rate(probabilities: np.ndarray, targets: Sequence[int], k: int = TOP_K) -> float:
    """Share of rows whose target is among the k most probable labels."""
    hits = _in_top_k(probabilities, targets, k)
    return float(hits.mean()) if len(hits) else 0.0


def _in_top_k(probabilities: np.ndarray, targets: Sequence[int], k: int) -> np.ndarray:
    targets = np.asarray(targets, dtype=np.int64)
    if not len(targets):
        return np.zeros(0, dtype=bool)
    best = np.argsort(-np.asarray(probabilities), axis=1, kind="stable")[:, :k]
    return (best == targets[:, None]).any(axis=1)


def _at_least(confidence: np.ndarray, threshold: float) -> np.ndarray:
    # compare in the confidences' own precision: a float32 0.9 is 0.89999998 as a float64
    return confidence >= np.asarray(threshold, dtype=confidence.dtype)


def precision_at(
    confidence: np.ndarray,
    correct: np.ndarray,
    threshold: float = PREFILTER_THRESHOLD,
    in_top_k: np.ndarray | None = None,
) -> dict:
    """Precision of the predictions with confidence >= threshold (the threshold itself included);
    with `in_top_k` (per row: the target is among the k best), also the top-k hit rate of those
    rows: what the crowd meets, as the prefilter sends only them."""
    confidence, correct = np.asarray(confidence), np.asarray(correct, dtype=bool)
    kept = _at_least(confidence, threshold)
    count = int(kept.sum())
    report = {
        "threshold": threshold,
        "count": count,
        "share": float(kept.mean()) if len(kept) else 0.0,
        "precision": float(correct[kept].mean()) if count else None,
    }
    if in_top_k is not None:
        report["top3"] = float(np.asarray(in_top_k, dtype=bool)[kept].mean()) if count else None
    return report


def reliability_bins(confidence: np.ndarray, correct: np.ndarray, bins: int = RELIABILITY_BINS) -> list[dict]:
    """Equal-width bins over [0, 1]: (lower, upper], the first one [0, upper]; per bin the count,
    the mean confidence and the accuracy (None when empty)."""
    confidence, correct = np.asarray(confidence, dtype=np.float64), np.asarray(correct, dtype=bool)
    edges = np.linspace(0.0, 1.0, bins + 1)
    # a confidence on an edge belongs to the bin below it; 0 goes to the first
    index = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, bins - 1)
    rows = []
    for b in range(bins):
        mine = index == b
        count = int(mine.sum())
        rows.append(
            {
                "lower": round(float(edges[b]), 6),
                "upper": round(float(edges[b + 1]), 6),
                "count": count,
                "confidence": float(confidence[mine].mean()) if count else None,
                "accuracy": float(correct[mine].mean()) if count else None,
            }
        )
    return rows


def expected_calibration_error(bins: list[dict]) -> float:
    """Sum over bins of (bin share) x |accuracy - mean confidence|."""
    total = sum(row["count"] for row in bins)
    if not total:
        return 0.0
    return float(sum(row["count"] / total * abs(row["accuracy"] - row["confidence"]) for row in bins if row["count"]))


def calibration_report(
    probabilities: np.ndarray, targets: Sequence[int], threshold: float = PREFILTER_THRESHOLD
) -> dict[str, Any]:
    probabilities = np.asarray(probabilities)
    targets = np.asarray(targets, dtype=np.int64)
    confidence = probabilities.max(axis=1) if len(targets) else np.zeros(0)
    correct = probabilities.argmax(axis=1) == targets if len(targets) else np.zeros(0, dtype=bool)
    in_top_k = _in_top_k(probabilities, targets, TOP_K)
    bins = reliability_bins(confidence, correct)
    return {
        "at_threshold": precision_at(confidence, correct, threshold, in_top_k),
        "ece": expected_calibration_error(bins),
        "nll": negative_log_likelihood(probabilities, targets),
        "bins": bins,
    }


def measure(
    probabilities: np.ndarray,
    targets: Sequence[int],
    label_names: Sequence[str],
    threshold: float = PREFILTER_THRESHOLD,
) -> dict[str, Any]:
    """The full report of one model on one split: top-1, top-3, macro-F1, per label, calibration."""
    probabilities = np.asarray(probabilities)
    targets = np.asarray(targets, dtype=np.int64)
    report = classification_report(targets, probabilities.argmax(axis=1) if len(targets) else [], label_names)
    report["top1"] = report["accuracy"]
    report["top3"] = top_k_hit_rate(probabilities, targets, TOP_K)
    report["calibration"] = calibration_report(probabilities, targets, threshold)
    return report


def calibrate_and_measure(
    validation: tuple[np.ndarray, Sequence[int]],
    test: tuple[np.ndarray, Sequence[int]],
    label_names: Sequence[str],
    model: str,
    threshold: float = PREFILTER_THRESHOLD,
) -> dict[str, Any]:
    """Fit the temperature on `validation`, measure on `test` with it applied (and, to show what
    scaling did, the test calibration before it). Refuses an empty split (EmptySplitError)."""
    require_examples({"validation": len(validation[1]), "test": len(test[1])}, model)
    temperature = fit_temperature(*validation)
    report = measure(apply_temperature(test[0], temperature), test[1], label_names, threshold)
    before = calibration_report(test[0], test[1], threshold)
    return {
        "temperature": temperature,
        "test": report,
        "uncalibrated": {key: before[key] for key in ("at_threshold", "ece", "nll")},
        "validation_n": len(validation[1]),
    }
