"""Pairwise aggregation (labeling.crowd.win_rates), pure: win rates, Wilson intervals, agreement, bias."""

import pytest

from labeling.crowd.win_rates import (
    Judgment,
    pairwise_agreement,
    pairwise_results,
    position_bias,
    unshuffle,
    wilson_interval,
    worker_agreement,
)


@pytest.mark.parametrize(
    ("successes", "total", "low", "high"),
    [
        # by hand: centre (p + z²/2n) / (1 + z²/n), half-width z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)
        (57, 100, 0.4721, 0.6627),  # BotsTalk's 57 % on 100 judgments
        (43, 100, 0.3373, 0.5279),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 2, 0.0945, 0.9055),
    ],
)
def test_the_wilson_interval_matches_hand_computed_bounds(successes, total, low, high):
    interval = wilson_interval(successes, total)
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)


def test_no_trials_have_no_interval_and_impossible_counts_are_refused():
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="0..3"):
        wilson_interval(4, 3)


def test_a_pick_is_unshuffled_to_its_source():
    assert unshuffle("left", "a") == "a"
    assert unshuffle("right", "a") == "b"
    assert unshuffle("left", "b") == "b"
    assert unshuffle("right", "b") == "a"
    with pytest.raises(ValueError):
        unshuffle("middle", "a")


def _judgments():
    # 4 pairs, 3 judges, one question; source a was shown left on pairs 1 and 3
    left = {1: "a", 2: "b", 3: "a", 4: "b"}
    winners = {
        1: ["a", "a", "b"],
        2: ["a", "a", "a"],
        3: ["b", "b", "a"],
        4: ["a", "b", "a"],
    }
    return [
        Judgment(item, worker, "engagingness", winner, left[item])
        for item, picks in winners.items()
        for worker, winner in enumerate(picks, start=1)
    ]


def test_win_rates_per_question_count_each_judgment_and_each_pairs_majority():
    results = pairwise_results(_judgments(), ["engagingness", "humanness"])
    engaging, human = results.axes
    # a won 2 + 3 + 1 + 2 = 8 of 12 judgments
    assert (engaging.wins_a, engaging.wins_b, engaging.total) == (8, 4, 12)
    assert engaging.win_rate_a == pytest.approx(8 / 12)
    assert engaging.interval_a.low == pytest.approx(0.3906, abs=1e-4)
    assert engaging.interval_a.high == pytest.approx(0.8619, abs=1e-4)
    assert (engaging.items, engaging.item_majority_a, engaging.item_majority_b) == (4, 3, 1)
    assert (human.total, human.win_rate_a, human.interval_a) == (0, None, None)


def test_position_bias_is_the_share_of_judgments_won_by_the_left_side():
    # left won: pair 1 (a left) 2, pair 2 (b left) 0, pair 3 (a left) 1, pair 4 (b left) 1 -> 4 of 12
    bias = position_bias(_judgments())
    assert (bias.left_wins, bias.total) == (4, 12)
    assert bias.rate == pytest.approx(1 / 3)
    assert bias.interval == wilson_interval(4, 12)


def test_position_bias_is_zero_when_every_judge_picks_the_right_side_whatever_the_source():
    judgments = [Judgment(i, 1, "q", "b" if i % 2 else "a", "a" if i % 2 else "b") for i in range(10)]
    assert position_bias(judgments).rate == 0.0
    assert pairwise_results(judgments, ["q"]).axes[0].win_rate_a == 0.5


def test_each_worker_is_compared_with_the_other_judges_majority():
    agreement = {w.worker_id: w for w in worker_agreement(_judgments())}
    # worker 1: a,a,b,a vs others' majority: pair1 (a,b) tie .5, pair2 a 1, pair3 (b,a) tie .5, pair4 (b,a) tie .5
    assert agreement[1].judgments == 4
    assert agreement[1].agreeing == pytest.approx(2.5)
    # worker 3: b,a,a,a vs pair1 (a,a) 0, pair2 (a,a) 1, pair3 (b,b) 0, pair4 (a,b) tie .5
    assert agreement[3].rate == pytest.approx(1.5 / 4)


def test_pairwise_agreement_counts_agreeing_judge_pairs():
    # per pair of 3 judges, 3 judge pairs: 2-1 splits agree on 1, unanimous on 3 -> (1 + 3 + 1 + 1) / 12
    assert pairwise_agreement(_judgments()) == pytest.approx(6 / 12)
    assert pairwise_agreement([]) is None
