"""Metrics checked against hand-computed values."""

import pytest

from mlworkers.ml.metrics import classification_report

LABELS = ["A", "B", "C", "D"]


def test_it_matches_a_hand_computed_case():
    # A: 1 right of 2 true, 2 predicted -> P .5 R .5 F1 .5
    # B: 1 right of 1 true, 2 predicted -> P .5 R 1 F1 2/3
    # C: 0 of 1 -> 0; D: never true -> left out of the macro averages
    report = classification_report(["A", "A", "B", "C"], ["A", "B", "B", "A"], LABELS)
    assert report["accuracy"] == pytest.approx(0.5)
    assert report["macro_precision"] == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert report["macro_recall"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert report["macro_f1"] == pytest.approx((0.5 + 2 / 3 + 0) / 3)
    assert report["labels_scored"] == 3
    by_label = {row["label"]: row for row in report["per_label"]}
    assert by_label["B"] == {
        "label": "B",
        "precision": 0.5,
        "recall": 1.0,
        "f1": pytest.approx(2 / 3),
        "support": 1,
        "predicted": 2,
    }
    assert by_label["D"]["support"] == 0
    assert report["confusion"] == [[1, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]


def test_indices_and_names_give_the_same_report():
    by_name = classification_report(["A", "C", "C"], ["A", "C", "D"], LABELS)
    by_index = classification_report([0, 2, 2], [0, 2, 3], LABELS)
    assert by_name == by_index


def test_a_label_only_predicted_costs_precision_but_is_not_averaged():
    report = classification_report(["A", "A"], ["A", "D"], LABELS)
    assert report["labels_scored"] == 1
    assert report["macro_f1"] == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_perfect_predictions_score_one():
    report = classification_report(["A", "B", "C"], ["A", "B", "C"], LABELS)
    assert report["macro_f1"] == report["accuracy"] == 1.0


def test_it_names_an_unknown_label_and_its_position():
    with pytest.raises(ValueError, match=r"y_pred\[1\]: label 'Z'"):
        classification_report(["A", "B"], ["A", "Z"], LABELS)


def test_it_refuses_lists_of_different_lengths():
    with pytest.raises(ValueError, match="3 items"):
        classification_report(["A", "B", "C"], ["A"], LABELS)
