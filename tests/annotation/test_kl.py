"""KL divergence D_KL(ours || reference) with additive smoothing, and the reference CSV reader."""

import math

import pytest

from annotation.analysis.kl import (
    REFERENCE,
    ReferenceFileError,
    compare_distributions,
    kl_divergence,
    parse_label_counts,
)


def test_it_matches_a_hand_computed_divergence_without_smoothing():
    # p = (1/2, 1/2), q = (1/4, 3/4): 1/2 ln 2 + 1/2 ln(2/3)
    assert kl_divergence([1, 1], [1, 3], smoothing=0) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(2 / 3))


def test_it_is_zero_for_equal_distributions_and_not_symmetric():
    assert kl_divergence([2, 4], [1, 2], smoothing=0) == pytest.approx(0.0)
    assert kl_divergence([1, 3], [1, 1], smoothing=0) != pytest.approx(kl_divergence([1, 1], [1, 3], smoothing=0))


def test_smoothing_keeps_a_zero_reference_count_finite():
    # alpha 1: p = (3/4, 1/4) from (2, 0); q = (1/2, 1/2) from (1, 1)... with the zero on our side
    assert kl_divergence([2, 0], [1, 1], smoothing=1) == pytest.approx(0.75 * math.log(1.5) + 0.25 * math.log(0.5))
    # our label missing from the reference: infinite without smoothing, finite with it
    assert kl_divergence([1, 1], [2, 0], smoothing=0) == math.inf
    assert kl_divergence([1, 1], [2, 0], smoothing=1) == pytest.approx(
        0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25)
    )


def test_a_label_we_never_use_adds_nothing_without_smoothing():
    assert kl_divergence([2, 0], [1, 1], smoothing=0) == pytest.approx(math.log(2))


def test_compare_direction_is_ours_given_the_reference():
    comparison = compare_distributions({"Sad": 1, "Joyful": 1}, {"sad": 1, "joyful": 3}, smoothing=0)
    assert comparison.kl_divergence == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(2 / 3))
    rows = {row.label: row for row in comparison.rows}
    assert rows["Sad"].ours == 1 and rows["Sad"].reference == 1
    assert rows["Joyful"].reference_share == pytest.approx(0.75)


def test_compare_over_the_union_or_the_reference_labels_only():
    ours = {"Sad": 2, "Questioning": 2}
    union = compare_distributions(ours, {"Sad": 4}, smoothing=1)
    assert [row.label for row in union.rows] == ["Sad", "Questioning"]
    assert union.rows[1].reference == 0
    assert union.kl_divergence == pytest.approx(kl_divergence([2, 2], [4, 0], smoothing=1))
    only = compare_distributions(ours, {"Sad": 4}, smoothing=1, support=REFERENCE)
    assert [row.label for row in only.rows] == ["Sad"] and only.dropped_labels == ["Questioning"]
    assert only.kl_divergence == pytest.approx(0.0)


def test_it_reads_a_label_count_csv_with_or_without_header():
    assert parse_label_counts(["label,count\n", "afraid,10\n", "Joyful , 5\n", "\n"]) == {"Afraid": 10, "Joyful": 5}
    assert parse_label_counts(["proud,1\n", "Something new,2\n"]) == {"Proud": 1, "Something new": 2}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["label,count\n", "afraid,ten\n"], "ed.csv line 2: count 'ten' is not a whole number"),
        (["afraid,1\n", "sad,2,3\n"], "ed.csv line 2: expected 2 columns"),
        (["afraid,1\n", ",2\n"], "ed.csv line 2: the label is empty"),
        (["afraid,1\n", "sad,-2\n"], "ed.csv line 2: count -2 is negative"),
        (["afraid,1\n", "Afraid,2\n"], "ed.csv line 2: label 'Afraid' appears twice"),
        (["label,count\n"], "ed.csv: no label counts found"),
        (["afraid,0\n"], "ed.csv: every count is zero"),
        (["afraid,1\n", "s\0ad,2\n"], "ed.csv line 2: contains a NUL byte"),
        (["afraid,1\n", "sad," + "9" * 200_000 + "\n"], "ed.csv line 2: a field is longer than 131072 characters"),
        (["afraid,1\n", "sad," + "9" * 5000 + "\n"], "ed.csv line 2: count '99999999999999999999' is not a whole"),
    ],
)
def test_a_bad_reference_file_names_the_line(lines, message):
    with pytest.raises(ReferenceFileError) as error:
        parse_label_counts(lines, filename="ed.csv")
    assert message in str(error.value)
