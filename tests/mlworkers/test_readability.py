"""Readability (Appendix A) on hand-computed cases, and the per-label candidate ranking."""

import pytest

from annotation.readability import Candidate, build_vocabulary, rank_candidates, readability, tokenize

CORPUS = ["The cat sat.", "the dog sat", "The, the CAT!"]  # the x4, cat x2, sat x2, dog x1: 9 tokens


def test_it_tokenizes_lower_case_words_and_keeps_apostrophes():
    assert tokenize("Don't STOP, it's 9 o'clock!") == ["don't", "stop", "it's", "9", "o'clock"]


def test_it_counts_relative_frequencies_over_the_corpus():
    vocabulary = build_vocabulary(CORPUS)
    assert vocabulary.total == 9
    assert vocabulary.frequency("the") == pytest.approx(4 / 9)
    assert vocabulary.frequency("unseen") == 0.0


def test_the_score_of_a_turn_of_distinct_tokens_matches_the_hand_computation():
    # f_sum = (4 + 2 + 2) / 9; f = f_sum / (87 + 3); d = 100 % distinct
    expected = (8 / 9) / 90 + 0.04 * 100
    assert readability("the cat sat", build_vocabulary(CORPUS)) == pytest.approx(expected)


def test_repeated_tokens_lower_the_diversity_term():
    # f_sum = (4 + 4 + 2) / 9; f = f_sum / 90; d = 100 * 2 / 3
    expected = (10 / 9) / 90 + 0.04 * (200 / 3)
    assert readability("the the cat", build_vocabulary(CORPUS)) == pytest.approx(expected)


def test_a_turn_without_tokens_scores_zero():
    assert readability("...", build_vocabulary(CORPUS)) == 0.0


def test_common_words_outrank_rare_ones_at_equal_diversity():
    vocabulary = build_vocabulary(CORPUS)
    assert readability("the cat", vocabulary) > readability("dog zebra", vocabulary)


def _candidate(turn_id, text, label, confidence=0.95):
    return Candidate(turn_id=turn_id, dialogue_id=100 + turn_id, text=text, label=label, confidence=confidence)


def test_ranking_keeps_the_most_readable_per_label_above_the_confidence_floor():
    vocabulary = build_vocabulary(CORPUS)
    candidates = [
        _candidate(1, "the the the", "Sad"),  # low diversity
        _candidate(2, "the cat sat", "Sad"),  # best
        _candidate(3, "dog sat", "Sad"),
        _candidate(4, "the cat sat", "Sad", confidence=0.5),  # below the floor
        _candidate(5, "the cat", "Joyful"),
    ]
    ranked = rank_candidates(candidates, vocabulary, min_confidence=0.9, per_label=2)
    by_label = {}
    for r in ranked:
        by_label.setdefault(r.candidate.label, []).append((r.rank, r.candidate.turn_id))
    assert by_label == {"Sad": [(1, 2), (2, 3)], "Joyful": [(1, 5)]}


def test_ties_break_by_confidence_then_turn_id():
    vocabulary = build_vocabulary(CORPUS)
    candidates = [_candidate(7, "the cat", "Sad", 0.91), _candidate(3, "the cat", "Sad", 0.91),
                  _candidate(9, "the cat", "Sad", 0.99)]  # fmt: skip
    ranked = rank_candidates(candidates, vocabulary, min_confidence=0.9, per_label=3)
    assert [r.candidate.turn_id for r in ranked] == [9, 3, 7]
