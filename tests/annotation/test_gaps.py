"""The cue-gap histogram summed over subtitle files."""

import pytest

from annotation.analysis.gaps import gap_histogram_figure, sum_gap_histograms

A = {"bin_seconds": 1.0, "max_seconds": 4, "counts": [5, 3, 1, 0], "over_max": 1}
B = {"bin_seconds": 1.0, "max_seconds": 4, "counts": [2, 1, 0, 1], "over_max": 0}
OTHER = {"bin_seconds": 0.5, "max_seconds": 4, "counts": [1] * 8, "over_max": 0}


def test_it_sums_histograms_bin_by_bin():
    total = sum_gap_histograms([A, {}, B, OTHER])
    assert total.counts == [7, 4, 1, 1] and total.over_max == 1 and total.total == 14
    assert (total.files, total.files_without_histogram, total.files_with_other_bins) == (2, 1, 1)
    assert total.bin_starts() == [0.0, 1.0, 2.0, 3.0]


def test_the_share_below_the_split():
    total = sum_gap_histograms([A, B])
    assert total.share_below(2.0) == pytest.approx(11 / 14)
    assert total.share_below(0.5) == 0.0
    assert sum_gap_histograms([]).share_below(5) == 0.0


def test_the_figure_marks_the_split():
    figure = gap_histogram_figure(sum_gap_histograms([A]), split_seconds=2.5)
    assert figure["data"][0]["y"] == [5, 3, 1, 0]
    assert figure["data"][0]["x"] == [0.5, 1.5, 2.5, 3.5]
    assert figure["layout"]["shapes"][0]["x0"] == 2.5
