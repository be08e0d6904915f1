"""The expansion calibration, Django side: the job from the command line stores its curve with a
ModelVersion of the encoder, the expansion and rounds jobs default to the calibrated threshold of
the encoder in use (two encoders, two thresholds) and say so, the Jobs page form shows the chosen
value's point on the curve, the rounds table shows it, and the paper's recipe keeps the paper's 0.92."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Dialogue, ModelVersion, TurnLabel
from jobs import registry
from jobs.forms import JobForm
from jobs.models import JobRun
from mlworkers.expansion.calibration import (
    CALIBRATED,
    CALIBRATION_KEY,
    PAPER,
    expansion_threshold,
    rounds_thresholds,
    save_calibration,
)
from mlworkers.ml.expansion import calibration as calib
from tests.mlworkers.pipeline_support import DIALOGUES, add_crowd_label, make_corpus, run
from tests.mlworkers.test_expansion_calibration import known_curve

pytestmark = pytest.mark.django_db


def store_toy_calibration(encoder: str, precision_margin: float) -> ModelVersion:
    """A calibration of the toy encoder's known pairs (0.86 at a 0.02 margin, 0.76 at 0.06)."""
    _, curve = known_curve()
    proposal = calib.propose_threshold(curve, precision_margin=precision_margin)
    return save_calibration(calib.Calibration(encoder, 12, 120, curve, proposal, 0.25, 13))


def gold_twins() -> list[Dialogue]:
    """Each hand-written dialogue twice with its label, all in the training split: 24 gold."""
    dialogues = make_corpus() + make_corpus(prefix="twin")
    for dialogue, (_, label) in zip(dialogues, DIALOGUES * 2, strict=True):
        add_crowd_label(dialogue, label, split=TurnLabel.TRAIN)
    return dialogues


def test_the_calibration_job_runs_from_the_command_line_and_the_expansion_follows_it(
    ml_settings, run_jobs_at_once, django_capture_on_commit_callbacks
):
    gold_twins()
    out = StringIO()
    call_command("calibrate_expansion", min_matches=1, stdout=out)
    version = ModelVersion.objects.get(kind=ModelVersion.ENCODER)
    stored = version.metrics[CALIBRATION_KEY]
    assert version.base_model == ml_settings.ENCODER_MODEL and (stored["seeds"], stored["held_out"]) == (12, 12)
    assert stored["paper_threshold_precision"] == 1.0  # a twin across the halves is the same text
    assert stored["rule"] == "within_margin_of_paper" and stored["precision"] >= 0.98
    assert f"threshold {stored['threshold']:g}" in out.getvalue()
    assert version.hyperparameters == {
        "split_seed": 13,
        "precision_margin": 0.02,
        "target_precision": None,
        "min_matches": 1,
    }

    unlabeled = make_corpus(prefix="unlabeled")  # the same texts again, unlabeled: an exact match each
    Dialogue.objects.filter(pk__in=[dialogue.pk for dialogue in unlabeled]).update(split=TurnLabel.TRAIN)
    job = run("sbert_expand", django_capture_on_commit_callbacks)
    assert job.status == JobRun.SUCCEEDED, job.error
    assert (job.result["threshold"], job.result["threshold_source"]) == (stored["threshold"], CALIBRATED)
    assert job.result["calibration_version"] == version.pk and job.result["labeled"] == 12
    assert f"calibrated for {ml_settings.ENCODER_MODEL}" in job.message


def test_it_refuses_to_calibrate_without_gold_with_its_reason(ml_settings, run_jobs_at_once):
    with pytest.raises(CommandError, match="needs crowd gold labels on at least two"):
        call_command("calibrate_expansion", stdout=StringIO())
    assert not ModelVersion.objects.filter(kind=ModelVersion.ENCODER).exists()


def test_the_default_threshold_follows_the_encoder_in_use(settings):
    first, second = store_toy_calibration("minilm", 0.02), store_toy_calibration("other-encoder", 0.06)
    settings.ENCODER_MODEL = "minilm"
    assert (expansion_threshold(None).value, expansion_threshold(None).calibration_version) == (0.86, first.pk)
    settings.ENCODER_MODEL = "other-encoder"
    assert (expansion_threshold(None).value, expansion_threshold(None).calibration_version) == (0.76, second.pk)
    settings.ENCODER_MODEL = "never-calibrated"
    assert (expansion_threshold(None).value, expansion_threshold(None).source) == (0.92, PAPER)
    assert expansion_threshold(0.8).value == 0.8  # a value given is a value used


def test_the_rounds_follow_the_calibration_but_the_papers_recipe_keeps_the_papers_thresholds(settings):
    settings.ENCODER_MODEL = "minilm"
    store_toy_calibration("minilm", 0.02)
    first, second = rounds_thresholds(None, None)
    assert (first.value, first.source, second.value, second.source) == (0.86, CALIBRATED, 0.86, CALIBRATED)
    assert (first.predicted_precision, round(first.predicted_coverage, 3)) == (1.0, 0.333)
    first, second = rounds_thresholds(None, None, paper=True)
    assert (first.value, first.source, second.value, second.source) == (0.92, PAPER, 0.9, PAPER)
    assert first.predicted_precision == 1.0  # the paper's 0.92 on this encoder's curve


def test_the_job_form_shows_the_chosen_values_point_on_the_curve(settings):
    settings.ENCODER_MODEL = "minilm"
    store_toy_calibration("minilm", 0.02)
    help_text = str(JobForm(registry.get("sbert_expand")).fields["threshold"].help_text)
    assert "Empty: threshold 0.86, calibrated for minilm" in help_text
    assert "predicted precision 1.00, coverage 33.3%" in help_text
    assert "0.85: 0.95 / 66.7%" in help_text and "0.92 (paper): 1.00 / 33.3%" in help_text
    rounds_form = JobForm(registry.get("self_label_rounds"))
    assert "threshold 0.86" in str(rounds_form.fields["second_threshold"].help_text)


def test_the_job_form_says_the_paper_value_applies_without_a_calibration(settings):
    settings.ENCODER_MODEL = "never-calibrated"
    help_text = str(JobForm(registry.get("sbert_expand")).fields["threshold"].help_text)
    assert "Empty: threshold 0.92, the paper's (never-calibrated has no calibration" in help_text


def test_the_rounds_table_shows_each_sbert_rounds_threshold_and_predicted_precision(client, researcher):
    row = {"round": 2, "name": "+SBERT", "training_size": 40, "expanded": 17, "threshold": 0.86,
           "threshold_source": CALIBRATED, "predicted_precision": 0.7012, "predicted_coverage": 0.126}  # fmt: skip
    job = JobRun.objects.create(kind="self_label_rounds", status=JobRun.SUCCEEDED, result={"table": [row]})
    client.force_login(researcher)
    page = client.get(reverse("jobs:job_detail", args=[job.pk])).content.decode()
    assert "0.86 (calibrated)" in page and "0.701 at 0.126 coverage" in page and ">17<" in page


def test_the_model_page_shows_the_encoders_curve(client, researcher):
    version = store_toy_calibration("minilm", 0.02)
    client.force_login(researcher)
    page = client.get(reverse("mlworkers:model_version_detail", args=[version.pk])).content.decode()
    assert "Proposed threshold <strong>0.86</strong>" in page and "0.667" in page
