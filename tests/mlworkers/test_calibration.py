"""Metrics and calibration against hand-computed values; temperature scaling on a synthetic set.
Pure: no database."""

import numpy as np
import pytest

from mlworkers.ml.classifier.calibration import (
    PREFILTER_THRESHOLD,
    EmptySplitError,
    apply_temperature,
    calibrate_and_measure,
    calibration_report,
    expected_calibration_error,
    fit_temperature,
    measure,
    negative_log_likelihood,
    precision_at,
    reliability_bins,
    top_k_hit_rate,
)

LABELS = ["a", "b", "c", "d"]


def test_the_prefilter_threshold_is_the_papers_0_9():
    assert PREFILTER_THRESHOLD == 0.9


def test_ece_by_hand():
    # bins (0.9, 1]: 0.95 right -> |1 - 0.95| = 0.05; (0.8, 0.9]: 0.9 wrong and 0.85 right ->
    # |0.5 - 0.875| = 0.375 (twice the weight); (0.2, 0.3]: 0.25 wrong -> 0.25
    confidence = np.array([0.95, 0.9, 0.85, 0.25])
    correct = np.array([True, False, True, False])
    bins = reliability_bins(confidence, correct)
    assert len(bins) == 10
    filled = {
        (row["lower"], row["upper"]): (row["count"], row["confidence"], row["accuracy"]) for row in bins if row["count"]
    }
    assert filled == {
        (0.9, 1.0): (1, 0.95, 1.0),
        (0.8, 0.9): (2, pytest.approx(0.875), 0.5),
        (0.2, 0.3): (1, 0.25, 0.0),
    }
    assert expected_calibration_error(bins) == pytest.approx((0.05 + 2 * 0.375 + 0.25) / 4)
    assert all(row["confidence"] is None and row["accuracy"] is None for row in bins if not row["count"])


def test_a_perfectly_calibrated_set_has_zero_ece():
    confidence = np.array([0.75] * 4)
    correct = np.array([True, True, True, False])
    assert expected_calibration_error(reliability_bins(confidence, correct)) == pytest.approx(0.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_precision_at_the_prefilter_counts_a_confidence_of_exactly_0_9(dtype):
    confidence = np.array([0.95, 0.9, 0.89999, 0.5], dtype=dtype)
    correct = np.array([True, False, True, True])
    result = precision_at(confidence, correct, 0.9)
    assert result["count"] == 2  # 0.95 and 0.9 itself; 0.89999 stays out
    assert result["precision"] == 0.5
    assert result["share"] == 0.5


def test_precision_at_is_none_when_nothing_is_that_confident():
    assert precision_at(np.array([0.3, 0.4]), np.array([True, True]))["precision"] is None


def test_top_3_hit_rate_by_hand():
    probabilities = np.array(
        [
            [0.4, 0.3, 0.2, 0.1],  # target 2: third best -> hit
            [0.4, 0.3, 0.2, 0.1],  # target 3: fourth -> miss
            [0.1, 0.2, 0.3, 0.4],  # target 3: best -> hit
            [0.25, 0.25, 0.25, 0.25],  # target 1: ties keep the label order -> hit (0, 1, 2)
        ]
    )
    targets = [2, 3, 3, 1]
    assert top_k_hit_rate(probabilities, targets, 3) == 0.75
    assert top_k_hit_rate(probabilities, targets, 1) == 0.25


def test_measure_reports_top1_top3_macro_f1_per_label_and_calibration():
    probabilities = np.array([[0.9, 0.05, 0.03, 0.02], [0.1, 0.6, 0.2, 0.1], [0.5, 0.3, 0.1, 0.1]])
    report = measure(probabilities, [0, 1, 1], LABELS)
    assert report["top1"] == report["accuracy"] == pytest.approx(2 / 3)
    assert report["top3"] == 1.0
    # a: precision 1/2, recall 1 -> F1 2/3; b: precision 1, recall 1/2 -> 2/3
    assert report["macro_f1"] == pytest.approx(2 / 3)
    assert [row["f1"] for row in report["per_label"][:2]] == [pytest.approx(2 / 3)] * 2
    assert report["calibration"]["at_threshold"] == {
        "threshold": 0.9,
        "count": 1,
        "share": pytest.approx(1 / 3),
        "precision": 1.0,
        "top3": 1.0,
    }


def test_the_top_3_hit_rate_among_the_confident_rows_is_what_the_prefilter_sends_the_crowd():
    probabilities = np.array(
        [
            [0.92, 0.04, 0.02, 0.02],  # confident, target third best: a hit
            [0.90, 0.05, 0.03, 0.02],  # exactly 0.9 counts; target fourth: a miss
            [0.40, 0.30, 0.20, 0.10],  # not confident: left out whatever its target
            [0.95, 0.03, 0.01, 0.01],  # confident and right
        ]
    )
    at = measure(probabilities, [2, 3, 3, 0], LABELS)["calibration"]["at_threshold"]
    assert (at["count"], at["precision"], at["top3"]) == (3, pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert precision_at(np.array([0.3]), np.array([True]), 0.9, np.array([True]))["top3"] is None


def _overconfident_set(seed: int, n: int = 3000, labels: int = 8, sharpen: float = 3.0):
    """Labels drawn from softmax(z); the model reports softmax(sharpen * z): overconfident."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1.2, size=(n, labels))
    honest = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    targets = np.array([rng.choice(labels, p=row) for row in honest])
    sharp = np.exp(sharpen * logits)
    return sharp / sharp.sum(axis=1, keepdims=True), targets


def test_temperature_scaling_lowers_the_nll_of_an_overconfident_model():
    probabilities, targets = _overconfident_set(seed=1)
    temperature = fit_temperature(probabilities, targets)
    assert 2.5 < temperature < 3.5  # it recovers the sharpening
    before = negative_log_likelihood(probabilities, targets)
    after = negative_log_likelihood(apply_temperature(probabilities, temperature), targets)
    assert after < before - 0.1
    ece_before = calibration_report(probabilities, targets)["ece"]
    assert calibration_report(apply_temperature(probabilities, temperature), targets)["ece"] < ece_before / 2


def test_temperature_keeps_the_ranking_and_one_changes_nothing():
    probabilities, _ = _overconfident_set(seed=2, n=50)
    tempered = apply_temperature(probabilities, 2.0)
    assert (np.argsort(-tempered, axis=1) == np.argsort(-probabilities, axis=1)).all()
    assert np.allclose(tempered.sum(axis=1), 1.0)
    assert np.allclose(apply_temperature(probabilities, 1.0), probabilities)


def test_calibrate_and_measure_fits_on_validation_and_measures_test():
    validation, test = _overconfident_set(seed=3), _overconfident_set(seed=4)
    result = calibrate_and_measure(validation, test, [str(i) for i in range(8)], "toy")
    assert result["temperature"] == fit_temperature(*validation)
    assert result["test"]["n"] == 3000 and result["validation_n"] == 3000
    assert result["test"]["calibration"]["ece"] < result["uncalibrated"]["ece"]


@pytest.mark.parametrize(
    ("validation_n", "test_n", "message"),
    [
        (0, 5, "toy: the validation split is empty"),
        (5, 0, "toy: the test split is empty"),
        (0, 0, "toy: the validation and test splits are empty"),
    ],
)
def test_an_empty_split_is_refused_with_a_one_line_reason(validation_n, test_n, message):
    split = lambda n: (np.full((n, 4), 0.25), np.zeros(n, dtype=np.int64))  # noqa: E731
    with pytest.raises(EmptySplitError) as refused:
        calibrate_and_measure(split(validation_n), split(test_n), LABELS, "toy")
    assert str(refused.value) == message
