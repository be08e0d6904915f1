"""The paper's tables from the pure crowd package (labeling/crowd/paper_tables.py): figures worked
out by hand and Cohen's kappa checked against scikit-learn; no database."""

import pytest
from sklearn.metrics import cohen_kappa_score

from labeling.crowd.agreement import rating_table
from labeling.crowd.paper_tables import (
    label_distribution,
    pairwise_kappas,
    specific_agreement,
    worker_confusion,
    worker_kappas,
)

# items 1-4; workers a, b, c; c skipped item 4
ANSWERS = [
    (1, "a", "Angry"), (1, "b", "Angry"), (1, "c", "Sad"),
    (2, "a", "Sad"), (2, "b", "Sad"), (2, "c", "Sad"),
    (3, "a", "Joyful"), (3, "b", "Angry"), (3, "c", "Sad"),
    (4, "a", "Angry"), (4, "b", "Angry"),
]  # fmt: skip
MAJORITY = {1: "Angry", 2: "Sad", 3: None, 4: "Angry"}


def test_each_worker_against_the_majority_counts_only_items_with_one():
    rows = {row.worker: row for row in worker_kappas(ANSWERS, MAJORITY)}
    assert (rows["a"].items, rows["b"].items, rows["c"].items) == (3, 3, 2)
    assert rows["a"].agreement == 1.0 and rows["c"].agreement == 0.5
    # c said Sad, Sad against Angry, Sad
    assert rows["c"].kappa == pytest.approx(cohen_kappa_score(["Sad", "Sad"], ["Angry", "Sad"]))
    assert rows["a"].kappa == pytest.approx(1.0)


def test_pairs_are_scored_on_the_items_both_answered():
    pairs = {(p.first, p.second): p for p in pairwise_kappas(ANSWERS)}
    assert set(pairs) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert pairs[("a", "b")].items == 4 and pairs[("a", "c")].items == 3
    a, b = ["Angry", "Sad", "Joyful", "Angry"], ["Angry", "Sad", "Angry", "Angry"]
    assert pairs[("a", "b")].kappa == pytest.approx(cohen_kappa_score(a, b))
    assert pairs[("a", "b")].agreement == 0.75
    assert pairwise_kappas(ANSWERS, min_items=4) == [pairs[("a", "b")]]


def test_a_second_answer_of_the_same_worker_is_not_counted():
    twice = [*ANSWERS, (1, "c", "Angry")]
    assert worker_kappas(twice, MAJORITY) == worker_kappas(ANSWERS, MAJORITY)


def test_the_label_distribution_counts_answers_and_majority_wins():
    rows = {row.label: row for row in label_distribution(ANSWERS, MAJORITY)}
    assert (rows["Angry"].answers, rows["Angry"].majority_items) == (5, 2)
    assert (rows["Sad"].answers, rows["Sad"].majority_items) == (5, 1)
    assert (rows["Joyful"].answers, rows["Joyful"].majority_items, rows["Joyful"].majority_share) == (1, 0, 0)
    assert rows["Angry"].majority_share == pytest.approx(2 / 3)
    assert rows["Angry"].answer_share == pytest.approx(5 / 11)
    assert [row.label for row in label_distribution(ANSWERS, MAJORITY)][:2] == ["Angry", "Sad"]


def test_the_confusion_of_the_majority_against_one_worker():
    matrix = worker_confusion(ANSWERS, MAJORITY, "c")
    assert matrix.labels == ["Angry", "Sad"]
    assert matrix.counts == [[0, 1], [0, 1]]  # majority Angry: c said Sad; majority Sad: c said Sad


def test_specific_agreement_counts_only_pairs_that_hold_the_label():
    table = rating_table(answers for answers in [["Angry", "Angry", "Sad"], ["Sad"] * 3, ["Joyful", "Angry", "Sad"]])
    found = specific_agreement(table)
    # Angry: item 1 n=2 of 3 -> 2*1 agreeing of 2*2 possible; item 3 n=1 -> 0 of 1*2 -> 2/6
    assert found["Angry"].value == pytest.approx(2 / 6) and found["Angry"].items == 2
    # Sad: 0 of 1*2, 3*2 of 3*2, 0 of 1*2 -> 6/10
    assert found["Sad"].value == pytest.approx(6 / 10) and found["Sad"].items == 3
    assert found["Joyful"].value == 0.0


def test_specific_agreement_is_not_near_one_for_every_label_as_one_vs_rest_figures_are():
    # forty labels each chosen rarely and half the time alone: one-vs-rest agreement would be ~0.97
    items = [[f"L{k}", f"L{k}", f"L{k + 1}"] for k in range(0, 40, 2)] + [[f"L{k}", "X", "Y"] for k in range(40)]
    found = specific_agreement(rating_table(items))
    assert found["L0"].value == pytest.approx(2 / 6)  # 2*1 agreeing of (2*2 + 1*2) possible
