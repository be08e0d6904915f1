"""Suggestions learned from gold: the seed weak labeler suggests until crowd gold exists, then
`suggest_train` (light heads over frozen embeddings, or the dialogue classifier, chosen on
validation) takes over; campaigns record the model version; the model page shows its figures."""

import pytest
from django.urls import reverse

from annotation.models import ModelVersion, Prediction, TurnLabel
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from labeling.models import Campaign, HITItem
from mlworkers.chain import pipeline
from mlworkers.classifier import suggestions
from mlworkers.ml.classifier import dialogue_classifier as dc
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig
from mlworkers.registry import register_model_version
from tests.mlworkers.pipeline_support import DIALOGUES, add_crowd_label, last_turn, make_corpus, run

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")


@pytest.fixture
def corpus(db):
    """36 dialogues: gold on 12 train, 6 validation, 6 test; 12 without a label."""
    dialogues = make_corpus() + make_corpus(prefix="more") + make_corpus(prefix="fresh")
    for index, dialogue in enumerate(dialogues[:24]):
        split = "train" if index < 12 else "validation" if index < 18 else "test"
        add_crowd_label(dialogue, DIALOGUES[index % 12][1], split=split)
    return dialogues


@pytest.fixture
def weak(db, ml_settings, small_seed, django_capture_on_commit_callbacks):
    job = run("weak_train", django_capture_on_commit_callbacks, data_path=str(small_seed))
    assert job.status == JobRun.SUCCEEDED, job.error
    assert run("weak_apply", django_capture_on_commit_callbacks).status == JobRun.SUCCEEDED
    return ModelVersion.objects.get(pk=job.result["model_version"])


def test_without_gold_the_seed_weak_labeler_suggests_and_suggest_train_refuses(
    db, ml_settings, small_seed, django_capture_on_commit_callbacks
):
    make_corpus()
    assert ModelVersion.objects.suggester() is None
    job = run("weak_train", django_capture_on_commit_callbacks, data_path=str(small_seed))
    weak = ModelVersion.objects.get(pk=job.result["model_version"])
    assert ModelVersion.objects.suggester() == weak
    refused = run("suggest_train", django_capture_on_commit_callbacks)
    assert refused.status == JobRun.FAILED
    assert refused.error == "no crowd gold labels in the train split yet: the seed weak labeler stays the suggester"
    # the chain skips the step while there is no gold
    (weak_apply,) = pipeline.run_steps(["weak_apply", "suggest_train"])
    assert weak_apply.kind == "weak_apply"


def test_suggest_train_refuses_an_empty_validation_split(corpus, ml_settings, django_capture_on_commit_callbacks):
    TurnLabel.objects.filter(turn__dialogue__split="validation").delete()
    job = run("suggest_train", django_capture_on_commit_callbacks)
    assert job.status == JobRun.FAILED
    assert job.error == "suggest_train: the validation gold split is empty (no figure to choose by)"
    assert not ModelVersion.objects.filter(kind=ModelVersion.SUGGESTER).exists()


def test_once_gold_exists_the_gold_trained_model_suggests_and_the_campaign_records_it(
    corpus, weak, ml_settings, small_seed, django_capture_on_commit_callbacks
):
    assert ModelVersion.objects.suggester() == weak
    job = run("suggest_train", django_capture_on_commit_callbacks)
    assert job.status == JobRun.SUCCEEDED, job.error
    version = ModelVersion.objects.get(pk=job.result["model_version"])
    assert version.kind == ModelVersion.SUGGESTER and version.suggests_since is not None
    assert ModelVersion.objects.suggester() == version
    assert job.result["chosen"] in {"light (logreg)", "light (mlp512)"}
    assert {"light (logreg)", "light (mlp512)"} <= set(version.metrics["candidates"])
    assert version.metrics["test"]["n"] == 6 and version.metrics["validation_n"] == 6
    assert version.training_data["gold"] == {"train": 12, "validation": 6, "test": 6}
    assert version.temperature > 0
    # a calibrated top 3 for every dialogue's last turn, nothing else
    predictions = Prediction.objects.filter(model_version=version)
    assert predictions.count() == len(corpus)
    assert set(predictions.values_list("turn_id", flat=True)) == {last_turn(d).pk for d in corpus}
    assert all(len(p.top_k) == 3 and p.confidence == p.top_k[0][1] for p in predictions)

    # a weak labeler trained later does not take the suggestions back
    run("weak_train", django_capture_on_commit_callbacks, data_path=str(small_seed))
    assert ModelVersion.objects.suggester() == version

    ranked = run("rank_candidates", django_capture_on_commit_callbacks, campaign_name="From gold", min_confidence=0.0)
    assert ranked.status == JobRun.SUCCEEDED, ranked.error
    assert ranked.result["model_version"] == version.pk
    campaign = Campaign.objects.get(name="From gold")
    assert campaign.suggestion_model == version
    item = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True).first()
    shown = Prediction.objects.get(model_version=version, turn=item.target_turn).top_k
    assert item.choices == [name for name, _ in shown]  # stored best first


def test_the_dialogue_classifier_is_a_candidate_and_every_candidate_is_measured_on_validation(
    corpus, ml_settings, django_capture_on_commit_callbacks
):
    examples = [DialogueExample(list(turns), label) for turns, label in DIALOGUES]
    config = TrainConfig(base_model=str(ml_settings.CLASSIFIER_MODEL), epochs=1, device="cpu", batch_size=4)
    clf = dc.train(examples, examples[:3], list(LABEL_NAMES), config)
    dialogue = register_model_version(ModelVersion.DIALOGUE, "tiny dialogue classifier", clf)
    job = run("suggest_train", django_capture_on_commit_callbacks)
    assert job.status == JobRun.SUCCEEDED, job.error
    name = f"dialogue classifier #{dialogue.pk}"
    assert set(job.result["candidates"]) == {"light (logreg)", "light (mlp512)", name}
    figures = job.result["candidates"]
    best = max(figures, key=lambda n: (figures[n]["top3"], figures[n]["macro_f1"]))
    chosen = job.result["chosen"]
    assert (figures[chosen]["top3"], figures[chosen]["macro_f1"]) == (figures[best]["top3"], figures[best]["macro_f1"])
    # the chosen model's full figures as a suggester, whichever it is
    assert job.result["metrics"]["chosen"] == chosen and job.result["metrics"]["test"]["top3"] == pytest.approx(
        job.result["top3"], abs=1e-4
    )
    if chosen == name:  # the dialogue classifier keeps its own row and now suggests
        assert job.result["model_version"] == dialogue.pk
        assert ModelVersion.objects.suggester() == dialogue


def test_the_model_page_shows_the_figures_and_the_reliability_diagram(
    client, researcher, corpus, weak, ml_settings, django_capture_on_commit_callbacks
):
    job = run("suggest_train", django_capture_on_commit_callbacks)
    version = ModelVersion.objects.get(pk=job.result["model_version"])
    client.force_login(researcher)
    page = client.get(reverse("mlworkers:model_version_detail", args=[version.pk])).content.decode()
    assert 'id="reliability-diagram"' in page and "<svg" in page
    filled = [row for row in version.metrics["test"]["calibration"]["bins"] if row["count"]]
    assert page.count('<g class="bin">') == len(filled) > 0
    assert "Top-3 hit rate" in page and "Expected calibration error" in page
    assert "Precision at confidence ≥ 0.9" in page and "Temperature" in page
    confident = version.metrics["test"]["calibration"]["at_threshold"]
    assert ('id="top3-at-threshold"' in page) == (confident["top3"] is not None)
    assert 'id="candidates"' in page and "(chosen)" in page
    # the weak labeler's page too: measured on the gold once there is gold
    weak_page = client.get(reverse("mlworkers:model_version_detail", args=[weak.pk])).content.decode()
    assert 'id="reliability-diagram"' in weak_page
    assert suggestions.last_turn_ids()  # sanity: the corpus has last turns
