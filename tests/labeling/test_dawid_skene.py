"""Dawid-Skene on known cases: the reliable worker wins, a spammer and an always-wrong worker are
down-weighted."""

import pytest

from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.majority import majority_vote

LABELS = ["A", "B", "C"]
TRUTH = {item: LABELS[item % 3] for item in range(60)}


def _wrong(label: str) -> str:
    return LABELS[(LABELS.index(label) + 1) % 3]


def _spammer_case(with_spammer: bool) -> list[tuple[int, str, str]]:
    """Items 0-59: reliable, careless and (maybe) a spammer. Items 60-119: reliable, careless and a
    checker, which is where the careless worker's slips show against two agreeing workers."""
    triples = []
    for item in range(120):
        truth = LABELS[item % 3]
        triples.append((item, "reliable", truth))
        # the careless worker slips on every fifth item not labeled A, to the third label
        slip = item % 5 == 0 and truth != "A"
        triples.append((item, "careless", ({"B", "C"} - {truth}).pop() if slip else truth))
        if item >= 60:
            triples.append((item, "checker", truth))
        elif with_spammer:
            triples.append((item, "spammer", "A"))
    return triples


def test_dawid_skene_resolves_what_the_majority_leaves_open_and_ignores_a_spammer():
    triples = _spammer_case(with_spammer=True)
    truth = {item: LABELS[item % 3] for item in range(120)}
    unresolved = [item for item in truth if majority_vote([a for i, _, a in triples if i == item]).label is None]
    assert unresolved  # the plain majority has three different answers on the careless worker's slips
    result = dawid_skene(triples)
    assert result.labels == truth
    assert result.worker_accuracy["spammer"] < 0.5 < result.worker_accuracy["careless"]
    assert result.worker_accuracy["careless"] < result.worker_accuracy["reliable"]
    assert result.confusion["spammer"]["B"]["A"] > 0.9  # it says A whatever the truth
    assert dawid_skene(_spammer_case(with_spammer=False)).labels == result.labels


def test_a_worker_who_is_always_wrong_gets_a_low_accuracy():
    triples = []
    for item, truth in TRUTH.items():
        triples += [(item, "w1", truth), (item, "w2", truth), (item, "w3", truth if item % 4 else _wrong(truth))]
        triples.append((item, "always-wrong", _wrong(truth)))
    result = dawid_skene(triples)
    assert result.labels == TRUTH
    assert result.worker_accuracy["always-wrong"] < 0.05
    assert result.worker_accuracy["w1"] > 0.95
    assert result.worker_accuracy["w3"] == pytest.approx(0.75, abs=0.05)
    assert sum(result.priors.values()) == pytest.approx(1.0)


def test_unanimous_answers_are_kept_with_high_confidence():
    result = dawid_skene([(1, "a", "X"), (1, "b", "X"), (2, "a", "Y"), (2, "b", "Y")])
    assert result.labels == {1: "X", 2: "Y"}
    assert min(result.confidence.values()) > 0.9


def test_no_answers_give_an_empty_result():
    assert dawid_skene([]).labels == {}


def test_the_posterior_is_a_soft_label_that_sums_to_one_and_agrees_with_the_label():
    from labeling.crowd.dawid_skene import dawid_skene

    triples = [(1, "a", "Sad"), (1, "b", "Sad"), (1, "c", "Lonely"), (2, "a", "Joyful"), (2, "b", "Joyful")]
    triples += [(2, "c", "Joyful"), (3, "a", "Lonely"), (3, "b", "Lonely"), (3, "c", "Lonely")]
    result = dawid_skene(triples)
    for item, soft in result.posterior.items():
        assert sum(soft.values()) == pytest.approx(1.0, abs=0.005)
        assert next(iter(soft)) == result.labels[item]  # most probable first
        assert soft[result.labels[item]] == pytest.approx(result.confidence[item], abs=1e-4)
    assert set(result.posterior[1]) <= {"Sad", "Lonely", "Joyful"} and result.labels[1] == "Sad"
