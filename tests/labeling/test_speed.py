"""Seconds on screen: the server's clamp, each worker's median and the too-fast flag."""

import math

import pytest

from labeling.crowd.speed import clamped_seconds, is_too_fast, median_seconds


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("3.5", 3.5),
        ("0", 0.0),
        ("-2", 0.0),
        ("nan", 0.0),
        ("inf", 0.0),
        ("-inf", 0.0),
        ("1e400", 0.0),
        ("9" * 4000, 0.0),  # cut at 32 characters: a big finite number, capped below
        ("abc", 0.0),
        ("", 0.0),
        ("3.5\x00", 0.0),
        ("601", 600.0),
        ("600", 600.0),
        (None, 0.0),
    ],
)
def test_posted_seconds_are_a_sane_number(raw, expected):
    value = clamped_seconds(raw, cap=600.0)
    assert math.isfinite(value)
    assert value == (600.0 if raw == "9" * 4000 else expected)


def test_the_median_is_per_worker():
    medians = median_seconds([(1, 2.0), (1, 9.0), (1, 3.0), (2, 10.0), (2, 12.0)])
    assert medians == {1: 3.0, 2: 11.0}


def test_the_fast_flag_needs_enough_answers_and_a_median_under_the_threshold():
    assert is_too_fast(2.9, 5, threshold=3.0, min_answers=5)
    assert not is_too_fast(3.0, 5, threshold=3.0, min_answers=5)  # the threshold itself is plausible
    assert not is_too_fast(0.5, 4, threshold=3.0, min_answers=5)  # too few answers to judge
    assert not is_too_fast(None, 10, threshold=3.0, min_answers=5)
