"""Fleiss' kappa (checked against statsmodels), per-label kappa, agreement with the majority."""

import random

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from labeling.crowd.agreement import (
    agreement_with_majority,
    fleiss_kappa,
    observed_agreement,
    per_label_kappa,
    quiz_accuracy,
    rating_table,
    top_confusions,
    unanimous_share,
)

ANSWERS = [
    ["Angry", "Angry", "Furious"],
    ["Sad", "Sad", "Sad"],
    ["Joyful", "Excited", "Content"],
    ["Angry", "Annoyed", "Angry"],
    ["Sad", "Lonely", "Sad"],
    ["Joyful", "Joyful", "Joyful"],
]


def test_kappa_equals_statsmodels_on_a_small_table():
    table = rating_table(ANSWERS)
    assert fleiss_kappa(table) == pytest.approx(statsmodels_fleiss_kappa(np.array(table.rows)), abs=1e-12)


def test_kappa_equals_statsmodels_on_a_random_table():
    rng = random.Random(7)
    labels = ["A", "B", "C", "D", "E"]
    answers = [[rng.choice(labels[: rng.randint(1, 5)]) for _ in range(3)] for _ in range(300)]
    table = rating_table(answers)
    assert fleiss_kappa(table) == pytest.approx(statsmodels_fleiss_kappa(np.array(table.rows)), abs=1e-12)


def test_perfect_agreement_gives_kappa_one_and_undefined_when_one_category():
    assert fleiss_kappa(rating_table([["A", "A"], ["B", "B"]])) == pytest.approx(1.0)
    assert fleiss_kappa(rating_table([["A", "A"], ["A", "A"]])) is None
    assert fleiss_kappa(rating_table([])) is None


def test_per_label_kappa_follows_fleiss_1971():
    table = rating_table(ANSWERS)
    rows = np.array(table.rows, dtype=float)
    n_items, raters = rows.shape[0], 3
    shares = rows.sum(axis=0) / (n_items * raters)
    kappas = per_label_kappa(table)
    for j, category in enumerate(table.categories):
        expected = 1 - (rows[:, j] * (raters - rows[:, j])).sum() / (
            n_items * raters * (raters - 1) * shares[j] * (1 - shares[j])
        )
        assert kappas[category] == pytest.approx(expected)
    assert kappas["Sad"] > kappas["Angry"]


def test_per_label_kappas_average_to_the_overall_kappa_weighted_by_pq():
    # Fleiss (1971): the overall kappa is the p_j q_j weighted mean of the category kappas.
    table = rating_table(ANSWERS)
    rows = np.array(table.rows, dtype=float)
    shares = rows.sum(axis=0) / rows.sum()
    weights = shares * (1 - shares)
    kappas = per_label_kappa(table)
    weighted = sum(weights[j] * kappas[c] for j, c in enumerate(table.categories)) / weights.sum()
    assert weighted == pytest.approx(fleiss_kappa(table))


def test_items_with_one_answer_are_left_out():
    table = rating_table([["A"], ["A", "B"], ["B", "B"]])
    assert len(table.rows) == 2


def test_items_with_five_answers_mix_with_items_of_three():
    table = rating_table([["A", "A", "B"], ["A", "B", "C", "A", "A"]])
    assert observed_agreement(table) == pytest.approx((1 / 3 + (3 * 2) / (5 * 4)) / 2)
    assert fleiss_kappa(table) is not None


def test_percent_agreement():
    assert unanimous_share(ANSWERS) == pytest.approx(2 / 6)
    assert observed_agreement(rating_table([["A", "A", "B"]])) == pytest.approx(1 / 3)


def test_each_workers_agreement_with_the_majority():
    answers = [(1, "w1", "A"), (1, "w2", "A"), (1, "w3", "B"), (2, "w1", "C"), (2, "w3", "C"), (3, "w1", "X")]
    rates = agreement_with_majority(answers, {1: "A", 2: "C", 3: None})
    assert (rates["w1"].hits, rates["w1"].total) == (2, 2)
    assert rates["w3"].rate == 0.5
    assert rates["w2"].rate == 1.0


def test_quiz_accuracy_per_worker():
    rates = quiz_accuracy([("w1", "Sad", "Sad"), ("w1", "Angry", "Sad"), ("w2", "Sad", "Sad")])
    assert rates["w1"].rate == 0.5 and rates["w2"].rate == 1.0


def test_top_confusions_count_the_other_answers_next_to_a_majority():
    confusions = top_confusions([("Angry", "Furious"), ("Angry", "Furious"), ("Angry", "Annoyed"), ("Sad", "Sad")])
    assert confusions["Angry"] == [("Furious", 2), ("Annoyed", 1)]
    assert "Sad" not in confusions
