"""Kappa, Krippendorff's alpha and AC1 with bootstrap intervals (labeling.crowd.intervals), each
checked against a hand-computed example; pure, no database."""

import krippendorff
import numpy as np
import pytest

from labeling.crowd.agreement import fleiss_kappa, gwet_ac1, per_label_kappa, rating_table
from labeling.crowd.intervals import (
    agreement_intervals,
    counts_of,
    krippendorff_alpha,
    point_figures,
    point_figures_per_label,
    resample_weights,
    weighted_fleiss_kappa,
    weighted_gwet_ac1,
    weighted_krippendorff_alpha,
    weighted_label_ac1s,
    weighted_label_alphas,
    weighted_label_kappas,
)

# Four items, three answers each: counts (A, B) = (3,0), (3,0), (2,1), (1,2).
# By hand: per-item agreement 1, 1, 1/3, 1/3 -> P-bar 2/3; shares A 9/12, B 3/12.
#  kappa: Pe = (3/4)^2 + (1/4)^2 = 5/8, (2/3 - 5/8) / (3/8) = 1/9
#  AC1:   pi_A = mean(1, 1, 2/3, 1/3) = 3/4, Pe = 2 * 3/4 * 1/4 = 3/8, (2/3 - 3/8) / (5/8) = 7/15
#  alpha: n = 12 pairable values; disagreement sum_u sum_c n_uc (m_u - n_uc) / (m_u - 1) = 0+0+2+2 = 4;
#         n^2 - sum n_c^2 = 144 - 81 - 9 = 54; 1 - 11 * 4 / 54 = 5/27
HAND = [["A", "A", "A"], ["A", "A", "A"], ["A", "A", "B"], ["B", "B", "A"]]


def test_the_hand_example_gives_the_hand_computed_figures():
    figures = point_figures(rating_table(HAND))
    assert figures["fleiss_kappa"] == pytest.approx(1 / 9)
    assert figures["gwet_ac1"] == pytest.approx(7 / 15)
    assert figures["krippendorff_alpha"] == pytest.approx(5 / 27)


def test_per_label_figures_are_the_two_category_tables():
    table = rating_table([["A", "A", "B"], ["A", "C", "C"], ["B", "B", "B"], ["C", "A", "B"]])
    # label C against the rest: counts (0,3), (2,1), (0,3), (1,2); P-bar (1 + 1/3 + 1 + 1/3)/4 = 2/3,
    # share of C 3/12 -> kappa (2/3 - 5/8)/(3/8) = 1/9 (equal answer counts: the category-specific kappa)
    figures = point_figures_per_label(table, [table.categories.index("C")])[table.categories.index("C")]
    assert figures["fleiss_kappa"] == pytest.approx(1 / 9)
    assert figures["gwet_ac1"] == pytest.approx(7 / 15)
    assert figures["krippendorff_alpha"] == pytest.approx(5 / 27)


def _random_table(seed: int, items: int = 60, categories: int = 4):
    rng = np.random.default_rng(seed)
    names = [f"c{k}" for k in range(categories)]
    answers = [
        [names[min(categories - 1, int(rng.exponential(1.2)))] for _ in range(rng.choice([2, 3, 5]))]
        for _ in range(items)
    ]
    return rating_table(answers)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_weighted_forms_at_weight_one_are_the_point_functions(seed):
    table = _random_table(seed)
    counts, ones = counts_of(table), np.ones((1, len(table.rows)))
    assert weighted_fleiss_kappa(ones, counts)[0] == pytest.approx(fleiss_kappa(table))
    assert weighted_gwet_ac1(ones, counts)[0] == pytest.approx(gwet_ac1(table))
    package = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert weighted_krippendorff_alpha(ones, counts)[0] == pytest.approx(package)
    assert krippendorff_alpha(table) == pytest.approx(package)
    expected_kappas = per_label_kappa(table)
    for k, label in enumerate(table.categories):
        labels = point_figures_per_label(table, [k])[k]
        assert weighted_label_kappas(ones, counts)[0, k] == pytest.approx(expected_kappas[label])
        assert weighted_label_alphas(ones, counts)[0, k] == pytest.approx(labels["krippendorff_alpha"])
        assert weighted_label_ac1s(ones, counts)[0, k] == pytest.approx(labels["gwet_ac1"])


def test_a_weighted_resample_is_the_table_of_the_items_drawn():
    table = _random_table(5, items=30)
    counts = counts_of(table)
    weights = next(resample_weights(len(counts), 3, seed=11))
    for row in weights:
        drawn = [r for r, times in zip(table.rows, row, strict=True) for _ in range(int(times))]
        expanded = type(table)(categories=table.categories, rows=drawn)
        assert weighted_fleiss_kappa(row[None], counts)[0] == pytest.approx(fleiss_kappa(expanded))
        assert weighted_gwet_ac1(row[None], counts)[0] == pytest.approx(gwet_ac1(expanded))
        assert weighted_krippendorff_alpha(row[None], counts)[0] == pytest.approx(krippendorff_alpha(expanded))


def test_identical_items_give_an_interval_of_one_point():
    # every item (A, A, B): P-bar 1/3, shares 2/3 and 1/3, Pe 5/9 -> kappa (1/3 - 5/9)/(4/9) = -1/2
    result = agreement_intervals(rating_table([["A", "A", "B"]] * 20), resamples=50, seed=3)
    kappa = result.overall["fleiss_kappa"]
    assert (kappa.value, kappa.low, kappa.high) == pytest.approx((-0.5, -0.5, -0.5))


def test_the_interval_is_seeded_and_holds_the_point():
    table = _random_table(9, items=200)
    first = agreement_intervals(table, resamples=300, seed=1)
    again = agreement_intervals(table, resamples=300, seed=1)
    other = agreement_intervals(table, resamples=300, seed=2)
    assert first == again and first.overall != other.overall
    for estimate in first.overall.values():
        assert estimate.low < estimate.value < estimate.high
    assert set(first.per_label) == set(table.categories)
    narrow = agreement_intervals(rating_table([r for _ in range(10) for r in HAND]), resamples=300, seed=1)
    wide = agreement_intervals(rating_table(HAND * 2), resamples=300, seed=1)
    span = lambda result: result.overall["fleiss_kappa"].high - result.overall["fleiss_kappa"].low  # noqa: E731
    assert span(narrow) < span(wide)  # more items, a narrower interval


def test_undefined_figures_and_bad_parameters():
    one_category = agreement_intervals(rating_table([["A", "A"]] * 3), resamples=10)
    assert one_category.overall["fleiss_kappa"].value is None
    assert agreement_intervals(rating_table([]), resamples=10).items == 0
    with pytest.raises(ValueError, match="resamples"):
        agreement_intervals(rating_table(HAND), resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        agreement_intervals(rating_table(HAND), confidence=1.5)


def test_ten_thousand_items_resample_fast_enough():
    import time

    table = _random_table(4, items=10_000, categories=30)
    started = time.perf_counter()
    agreement_intervals(table, resamples=200, seed=0)
    assert time.perf_counter() - started < 20  # about 1 s alone on one core; the machine is shared
