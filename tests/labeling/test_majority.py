"""Majority vote and the folding of typed "Other" answers: pure, no database."""

from labeling.crowd.majority import (
    answer_normaliser,
    known_label_index,
    majority_by_item,
    majority_rate,
    majority_vote,
    majority_vote_normalised,
    normalise_answer,
)


def test_two_of_three_is_a_majority():
    result = majority_vote(["Angry", "Angry", "Furious"])
    assert result.label == "Angry"
    assert result.votes == {"Angry": 2, "Furious": 1}
    assert result.answer_count == 3
    assert result.agreement == 2 / 3


def test_three_different_answers_are_unresolved():
    result = majority_vote(["Angry", "Sad", "Furious"])
    assert result.label is None
    assert not result.is_majority
    assert result.agreement == 1 / 3


def test_three_of_five_after_a_tie_break_is_a_majority():
    assert majority_vote(["Angry", "Sad", "Furious", "Angry", "Angry"]).label == "Angry"


def test_two_of_four_is_not_a_majority():
    assert majority_vote(["Angry", "Sad", "Angry", "Sad"]).label is None


def test_a_single_answer_is_not_a_majority_until_a_second_agrees():
    assert majority_vote(["Angry"]).label is None
    assert majority_vote(["Angry", "Angry"]).label == "Angry"
    assert majority_vote(["Angry", "Sad"]).label is None


def test_no_answers_is_unresolved():
    result = majority_vote([])
    assert result.label is None and result.agreement is None


def test_a_typed_label_equal_to_a_taxonomy_label_counts_as_that_label():
    assert normalise_answer("  neutral ") == "Neutral"
    assert normalise_answer("ANNOYED") == "Annoyed"
    result = majority_vote_normalised(["Neutral", "neutral", "Sad"])
    assert result.label == "Neutral"
    assert result.votes == {"Neutral": 2, "Sad": 1}


def test_without_normalisation_typed_labels_stay_as_typed():
    assert majority_vote(["Neutral", "neutral", "Sad"]).label is None


def test_a_label_added_later_is_matched_when_its_name_is_passed_in():
    known = known_label_index(["Greeting"])
    assert normalise_answer("greeting", known) == "Greeting"
    assert normalise_answer("greeting") == "Greeting"
    assert majority_vote_normalised(["greeting", "Greeting ", "Sad"], known).label == "Greeting"


def test_unknown_typed_labels_that_differ_only_in_case_and_spaces_are_one_answer():
    assert normalise_answer("  very   FORGETFUL ") == "Very forgetful"
    assert majority_vote_normalised(["forgetful", "Forgetful", "Sad"]).label == "Forgetful"


def test_majority_rate_over_items():
    results = majority_by_item({1: ["A", "A", "B"], 2: ["A", "B", "C"], 3: ["C", "C", "C"], 4: ["x", "y", "z"]})
    assert results[1].label == "A" and results[2].label is None and results[4].label is None
    assert majority_rate(results.values()) == 0.5
    assert majority_rate([]) is None


def test_the_remembering_normaliser_gives_what_normalise_answer_gives():
    known = known_label_index(["Sad", "Quietly Proud"])
    normalise = answer_normaliser(known)
    texts = ["sad", " SAD ", "quietly   proud", "greeting", "Greeting ", "Ｓａｄ", "", "sad"]
    assert [normalise(text) for text in texts + texts] == [normalise_answer(text, known) for text in texts + texts]
    assert answer_normaliser()("greeting ") == normalise_answer("greeting ") == "Greeting"
