"""Generated names carry the time; a name already taken gets a number."""

from datetime import UTC, datetime

from mlworkers.naming import MAX_LENGTH, stamped, unique_name


def test_a_free_name_is_kept_and_a_taken_one_gets_the_next_free_number():
    taken = {"weak", "weak #2", "weak #4"}
    assert unique_name("fresh", taken.__contains__) == "fresh"
    assert unique_name("weak", taken.__contains__) == "weak #3"


def test_a_stamped_name_says_the_minute_in_utc_and_fits_the_column():
    when = datetime(2026, 11, 23, 12, 5, 41, tzinfo=UTC)
    assert stamped("fastText, round 4", when) == "fastText, round 4 (2026-11-23 12:05 UTC)"
    long = stamped("x" * 300, when)
    assert len(long) == MAX_LENGTH and long.endswith("(2026-11-23 12:05 UTC)")
    numbered = unique_name("y" * 300, lambda name: len(name) == MAX_LENGTH and not name.endswith("#2"))
    assert len(numbered) == MAX_LENGTH and numbered.endswith(" #2")
