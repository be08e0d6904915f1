"""Redundancy policies (labeling.crowd.redundancy): pure, no database."""

import pytest

from labeling.crowd.agreement import fleiss_kappa, gwet_ac1, majority_confusion, rating_table
from labeling.crowd.redundancy import RedundancyPolicy, replay, settle

FIXED = RedundancyPolicy("fixed", workers=3)
UNTIL = RedundancyPolicy("until_agreement", cap=3)
MODEL = RedundancyPolicy("model_informed", cap=3, threshold=0.8)


def test_fixed_buys_every_answer_even_when_the_first_two_agree():
    outcome = replay(FIXED, ["Sad", "Sad", "Angry"])
    assert (outcome.answers_used, outcome.gold) == (3, "Sad")


def test_until_agreement_stops_after_two_agreeing_answers():
    outcome = replay(UNTIL, ["Sad", "Sad", "Angry"])
    assert (outcome.answers_used, outcome.gold, outcome.reason) == (2, "Sad", "majority")


def test_until_agreement_buys_a_third_answer_on_disagreement_and_takes_its_majority():
    outcome = replay(UNTIL, ["Sad", "Angry", "Angry"])
    assert (outcome.answers_used, outcome.gold) == (3, "Angry")


def test_until_agreement_gives_no_gold_at_the_cap_without_a_majority():
    outcome = replay(UNTIL, ["Sad", "Angry", "Joyful"])
    assert (outcome.answers_used, outcome.gold, outcome.reason) == (3, None, "cap")


def test_until_agreement_with_cap_five_wants_a_fourth_answer_after_three_different_ones():
    state = settle(RedundancyPolicy("until_agreement", cap=5), ["Sad", "Angry", "Joyful"])
    assert not state.done and state.seats_wanted == 4
    # 2 of 4 is no strict majority: a fifth answer is wanted
    state = settle(RedundancyPolicy("until_agreement", cap=5), ["Sad", "Angry", "Joyful", "Sad"])
    assert not state.done and state.seats_wanted == 5


def test_until_agreement_gives_the_three_answer_majority_whenever_there_is_one():
    # every order of every 3-answer sequence with a majority: same gold as the fixed policy
    labels = ["A", "B", "C"]
    for first in labels:
        for second in labels:
            for third in labels:
                answers = [first, second, third]
                fixed = replay(FIXED, answers).gold
                if fixed is not None:
                    assert replay(UNTIL, answers).gold == fixed


def test_model_informed_settles_on_one_answer_that_matches_a_confident_model():
    outcome = replay(MODEL, ["Sad", "Angry", "Angry"], model_top="Sad", model_confidence=0.8)
    assert (outcome.answers_used, outcome.gold, outcome.reason) == (1, "Sad", "model_agrees")


def test_model_informed_below_the_threshold_behaves_as_until_agreement():
    outcome = replay(MODEL, ["Sad", "Angry", "Angry"], model_top="Sad", model_confidence=0.79)
    assert (outcome.answers_used, outcome.gold) == (3, "Angry")


def test_model_informed_goes_on_when_the_first_answer_differs_from_the_model():
    outcome = replay(MODEL, ["Angry", "Angry", "Sad"], model_top="Sad", model_confidence=0.95)
    assert (outcome.answers_used, outcome.gold, outcome.reason) == (2, "Angry", "majority")


def test_it_refuses_an_unknown_policy_or_a_model_policy_without_threshold():
    with pytest.raises(ValueError, match="unknown redundancy policy"):
        RedundancyPolicy("cheapest")
    with pytest.raises(ValueError, match="threshold"):
        RedundancyPolicy("model_informed")


def test_gwet_ac1_matches_a_hand_computed_value():
    # items [3,0], [2,1], [0,3]: P-bar 7/9; pi = (5/9, 4/9); Pe = 2 * 20/81 / (2 - 1) = 40/81
    table = rating_table([["A", "A", "A"], ["A", "A", "B"], ["B", "B", "B"]])
    assert gwet_ac1(table) == pytest.approx(23 / 41)
    assert fleiss_kappa(table) == pytest.approx(22 / 40)


def test_gwet_ac1_stays_high_where_kappa_collapses_under_a_skewed_label():
    table = rating_table([["A", "A", "A"]] * 9 + [["A", "A", "B"]])
    assert fleiss_kappa(table) == pytest.approx((28 / 30 - 842 / 900) / (1 - 842 / 900))
    assert fleiss_kappa(table) < 0
    assert gwet_ac1(table) == pytest.approx((28 / 30 - 58 / 900) / (1 - 58 / 900))


def test_gwet_ac1_is_undefined_without_items_or_with_one_category():
    assert gwet_ac1(rating_table([])) is None
    assert gwet_ac1(rating_table([["A", "A"]])) is None


def test_majority_confusion_counts_every_answer_against_the_majority():
    matrix = majority_confusion([("A", ["A", "A", "B"]), ("B", ["B", "B", "C"]), (None, ["A", "B", "C"])])
    assert matrix.labels == ["A", "B", "C"]
    assert matrix.counts == [[2, 1, 0], [0, 2, 1], [0, 0, 0]]
