"""The model-in-the-loop jobs started with default parameters apply the papers' rules: SBERT
expansion at 0.92, the prefilter at 0.9 (0.9 itself kept by the candidate query), the rounds'
thresholds, and the classifier's turn weights halving going back (annotation/papers.py)."""

import inspect

import pytest

from annotation.models import Label, ModelVersion, Prediction
from jobs import runtime as jobs
from mlworkers.chain import candidates
from mlworkers.expansion import sbert as expansion
from mlworkers.expansion.calibration import expansion_threshold, rounds_thresholds
from mlworkers.ml.classifier.inputs import turn_weights
from mlworkers.ml.classifier.model import TrainConfig
from mlworkers.ml.expansion.embeddings import decay_weights
from mlworkers.ml.rounds.self_labeling import RoundsConfig
from mlworkers.rounds import self_labeling as rounds
from tests.mlworkers.pipeline_support import last_turn, make_corpus


def test_the_expansion_job_started_with_default_parameters_uses_0_92_for_an_uncalibrated_encoder(db):
    # an empty threshold follows the encoder's calibration (issue 29); without one it is the paper's 0.92
    job = jobs.start_job("sbert_expand", {})
    assert job.parameters["threshold"] is None
    assert inspect.signature(expansion.sbert_expand).parameters["threshold"].default is None
    chosen = expansion_threshold(job.parameters["threshold"])
    assert (chosen.value, chosen.source) == (0.92, "paper")


def test_the_rounds_job_started_with_default_parameters_uses_the_papers_thresholds(db):
    parameters = jobs.start_job("self_label_rounds", {}).parameters
    assert (parameters["first_threshold"], parameters["second_threshold"]) == (None, None)
    assert (parameters["self_min_confidence"], parameters["self_per_label"]) == (0.9, 100)
    first, second = rounds_thresholds(parameters["first_threshold"], parameters["second_threshold"])
    assert (first.value, second.value) == (0.92, 0.9)
    paper_first, paper_second = rounds_thresholds(None, None, paper=True)
    assert (paper_first.value, paper_second.value) == (0.92, 0.9)
    defaults = inspect.signature(rounds.self_label_rounds).parameters
    assert [defaults[key].default for key in ("self_min_confidence", "self_per_label")] == [0.9, 100]
    config = RoundsConfig(label_names=["Joyful"])
    assert (config.first_threshold, config.second_threshold, config.self_per_label) == (0.92, 0.9, 100)


def test_the_ranking_job_started_with_default_parameters_prefilters_at_0_9(db):
    parameters = jobs.start_job("rank_candidates", {}).parameters
    assert (parameters["min_confidence"], parameters["per_label"]) == (0.9, 250)


def test_a_candidate_at_exactly_0_9_is_kept_by_the_candidate_query_and_one_under_is_not(db):
    version = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="w", base_model="m")
    at, under = make_corpus()[:2]
    label = Label.objects.get(name="Joyful")
    for dialogue, confidence in ((at, 0.9), (under, 0.8999)):
        Prediction.objects.create(turn=last_turn(dialogue), model_version=version, label=label, confidence=confidence)
    dialogue_ids, _ = candidates.ranked_candidate_dialogues(version)
    assert dialogue_ids == [at.pk]


def test_turn_weights_of_three_turns_halve_going_back():
    # turn index 0 is the target, 1 the turn before it, 2 the one before that
    assert turn_weights([0, 1, 2]) == [1.0, 0.5, 0.25]
    assert TrainConfig().turn_weight_decay == 0.5
    assert decay_weights(3).tolist() == pytest.approx([1 / 7, 2 / 7, 4 / 7], abs=1e-15)


def test_the_classifier_learns_at_the_papers_rate_by_default():
    assert TrainConfig().lr == 2e-5
