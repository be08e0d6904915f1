"""SubTle pairs from a stored dialogue's turns (`annotation.ingest.pairs.turn_pairs`): the rules for cues,
applied to consecutive turns (pure, no database)."""

from annotation.ingest.pairs import turn_pairs


def test_it_pairs_consecutive_complete_turns_under_the_gap():
    turns = [("Where were you?", 0.0, 1.5), ("At the station.", 2.0, 3.0), ("You could have called.", 3.5, 4.5)]
    assert list(turn_pairs(turns)) == [
        ("Where were you?", "At the station."),
        ("At the station.", "You could have called."),
    ]


def test_it_refuses_a_gap_of_max_gap_or_more():
    turns = [("Where were you?", 0.0, 1.0), ("At the station.", 2.0, 3.0), ("Fine.", 3.2, 4.0)]
    assert list(turn_pairs(turns, max_gap=1.0)) == [("At the station.", "Fine.")]


def test_it_refuses_an_incomplete_turn_on_either_side():
    turns = [("I was going to...", 0.0, 1.0), ("and then I left.", 1.1, 2.0), ("Why?", 2.1, 3.0), ("Because.", 3.1, 4)]
    assert list(turn_pairs(turns)) == [("Why?", "Because.")]


def test_turns_without_times_count_as_adjacent():
    assert list(turn_pairs([("Hello there.", None, None), ("Hi.", None, None)])) == [("Hello there.", "Hi.")]
