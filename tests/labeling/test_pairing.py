"""Building pairwise items, pure: CSV of pairs (errors by line), seeded sides, degenerate dialogues."""

import random

import pytest

from labeling.crowd.pairing import (
    Pair,
    PairsRefused,
    degenerate,
    nonsense,
    parse_pairs_csv,
    place,
    repeated_turns,
    zip_sources,
)


def test_a_csv_of_pairs_is_read_with_its_line_numbers_and_header_skipped():
    text = "dialogue_a,dialogue_b\n4,7\n\n 5 , 9 \n"
    assert parse_pairs_csv(text) == [(2, Pair(4, 7)), (4, Pair(5, 9))]


def test_every_bad_line_of_a_csv_is_named_at_once():
    text = "1,2\n3\nx,4\n5,5\n6,7,8\n0,3\n"
    with pytest.raises(PairsRefused) as refused:
        parse_pairs_csv(text, "mine.csv")
    assert refused.value.errors == [
        "mine.csv line 2: expected two dialogue ids (a,b), got 1 cells",
        "mine.csv line 3: 'x' is not a dialogue id",
        "mine.csv line 4: dialogue 5 on both sides",
        "mine.csv line 5: expected two dialogue ids (a,b), got 3 cells",
        "mine.csv line 6: '0' is not a dialogue id",
    ]


def test_an_empty_csv_is_refused():
    with pytest.raises(PairsRefused, match="no pairs"):
        parse_pairs_csv("dialogue_a,dialogue_b\n\n")


def test_sides_are_drawn_per_pair_seeded_and_both_occur():
    pairs = [Pair(i, 100 + i) for i in range(1, 41)]
    first, again, other = place(pairs, 7), place(pairs, 7), place(pairs, 8)
    assert first == again
    assert first != other
    assert {p.left_is for p in first} == {"a", "b"}
    assert [p.pair for p in first] == pairs


def test_two_sources_are_paired_without_reuse_and_shared_dialogues_are_left_out():
    pairs = zip_sources([1, 2, 3, 4, 9], [5, 6, 7, 9], 10, seed=1)
    assert len(pairs) == 3  # source b has 3 dialogues of its own
    assert {p.a for p in pairs} <= {1, 2, 3, 4} and {p.b for p in pairs} == {5, 6, 7}
    assert zip_sources([1, 2, 3], [4, 5, 6], 2, seed=1) == zip_sources([1, 2, 3], [4, 5, 6], 2, seed=1)


def test_degenerate_dialogues_repeat_a_turn_or_scramble_the_words():
    turns = ["Where were you last night?", "At the station, waiting.", "You could have called."]
    assert repeated_turns(turns) == ["Where were you last night?"] * 4
    salad = nonsense(turns, random.Random(3))
    assert len(salad) == 4 and salad != [t.lower() for t in turns]
    assert set(" ".join(salad).split()) <= {w.lower() for t in turns for w in t.split()}
    forms = {tuple(degenerate(turns, random.Random(seed))) == tuple(repeated_turns(turns)) for seed in range(20)}
    assert forms == {True, False}  # both forms are drawn
