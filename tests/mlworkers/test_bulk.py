"""Bulk annotation: every turn labeled with its history, resumable, idempotent, a job and a command."""

import html
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dialogue, ModelVersion, Prediction, Turn
from annotation.taxonomy import LABEL_NAMES
from jobs import runtime as jobs
from jobs.models import JobRun
from mlworkers.classifier.bulk import annotate_corpus
from mlworkers.ml.classifier.dialogue_classifier import build_classifier, predict_proba
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig
from mlworkers.registry import artifact_path, load_dialogue_classifier, register_model_version
from tests.mlworkers.tiny_models import one_torch_thread, tiny_encoder_path

single_thread = pytest.fixture(autouse=True)(one_torch_thread)


class Interrupted(Exception):
    pass


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ML_DEVICE = "cpu"
    return settings.MEDIA_ROOT


@pytest.fixture
def version(media_root, db):
    clf = build_classifier(list(LABEL_NAMES), TrainConfig(base_model=tiny_encoder_path(), device="cpu", seed=7))
    return register_model_version(
        ModelVersion.DIALOGUE, "tiny EB+", clf, training_data={"turn_labels": [1, 2, 3]}, metrics={"macro_f1": 0.1}
    )


@pytest.fixture
def job(db):
    return JobRun.objects.create(kind="bulk_annotate", status=JobRun.RUNNING)


def predictions_of(version):
    return Prediction.objects.filter(model_version=version)


def test_register_model_version_writes_files_under_media_root(version, media_root):
    version.refresh_from_db()
    assert version.artifact_dir == f"models/{version.pk}"
    assert (media_root / "models" / str(version.pk) / "model.safetensors").exists()
    assert version.label_names == list(LABEL_NAMES)
    assert version.base_model == tiny_encoder_path()
    assert version.hyperparameters["lr"] == 2e-5 and version.hyperparameters["betas"] == [0.9, 0.98]
    assert version.training_data == {"turn_labels": [1, 2, 3]}
    assert load_dialogue_classifier(version).label_names == list(LABEL_NAMES)


def test_a_failed_save_leaves_no_row_and_no_folder(media_root, db):
    class Broken:
        label_names = ["Sad"]

        def save(self, directory):
            directory.mkdir(parents=True)
            (directory / "half-written").write_text("x")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        register_model_version(ModelVersion.DIALOGUE, "broken", Broken())
    assert not ModelVersion.objects.exists()
    assert not (media_root / "models").exists() or not any((media_root / "models").iterdir())


def test_every_turn_is_labeled_with_its_dialogue_history(tiny_corpus, version, job):
    result = annotate_corpus(job, version.pk)
    turns = list(Turn.objects.order_by("dialogue_id", "position"))
    assert result["turns"] == result["labeled"] == result["written_now"] == len(turns) == 10
    clf = load_dialogue_classifier(version)
    expected = predict_proba(
        clf,
        [
            DialogueExample(
                [t.text for t in turns if t.dialogue_id == turn.dialogue_id and t.position <= turn.position]
            )
            for turn in turns
        ],
    )
    for turn, probabilities in zip(turns, expected, strict=True):
        prediction = Prediction.objects.get(turn=turn, model_version=version)
        best = int(np.argmax(probabilities))
        assert prediction.label.name == LABEL_NAMES[best]
        assert prediction.confidence == pytest.approx(float(probabilities[best]), abs=1e-5)
        assert len(prediction.top_k) == 5 and prediction.top_k[0] == [prediction.label.name, prediction.confidence]
    job.refresh_from_db()
    assert (job.progress_done, job.progress_total, job.percent) == (10, 10, 100)


def test_an_interrupted_run_resumes_with_nothing_missing_and_nothing_doubled(tiny_corpus, version, job):
    def stop_after_first_chunk(done, total):
        raise Interrupted(f"killed at {done}/{total}")

    with pytest.raises(Interrupted):
        annotate_corpus(job, version.pk, chunk_size=4, on_chunk=stop_after_first_chunk)
    first = predictions_of(version).count()
    assert 0 < first < 10  # the first chunk (whole dialogues, about 4 turns) was committed

    result = annotate_corpus(job, version.pk, chunk_size=4)
    assert result["written_now"] == 10 - first
    assert predictions_of(version).count() == 10
    assert set(predictions_of(version).values_list("turn_id", flat=True)) == set(
        Turn.objects.values_list("id", flat=True)
    )


def test_running_again_changes_nothing(tiny_corpus, version, job):
    annotate_corpus(job, version.pk, chunk_size=3)
    before = sorted(predictions_of(version).values_list("turn_id", "label_id", "confidence"))
    again = annotate_corpus(job, version.pk, chunk_size=3)
    assert again["written_now"] == 0
    assert sorted(predictions_of(version).values_list("turn_id", "label_id", "confidence")) == before


def test_it_labels_only_the_chosen_dialogues(tiny_corpus, version, job):
    chosen = [tiny_corpus[0].pk, tiny_corpus[3].pk]
    result = annotate_corpus(job, version.pk, dialogue_ids=chosen)
    assert result["turns"] == 5
    assert set(predictions_of(version).values_list("turn__dialogue_id", flat=True)) == set(chosen)


def test_it_refuses_a_model_whose_labels_are_not_in_the_taxonomy(tiny_corpus, media_root, job):
    clf = build_classifier(["Sad", "Bored-ish"], TrainConfig(base_model=tiny_encoder_path(), device="cpu"))
    odd = register_model_version(ModelVersion.DIALOGUE, "odd", clf)
    with pytest.raises(ValueError, match="Bored-ish"):
        annotate_corpus(job, odd.pk)
    assert not Prediction.objects.exists()


def test_a_failed_job_requeued_finishes_the_work(tiny_corpus, version, monkeypatch, django_capture_on_commit_callbacks):
    import mlworkers.classifier.bulk

    real_score = mlworkers.classifier.bulk._score_chunk
    calls = {"n": 0}

    def crash_on_the_second_chunk(*args, **kwargs):  # runs on the model thread; the job sees the error
        calls["n"] += 1
        if calls["n"] == 2:
            raise Interrupted("worker lost")
        return real_score(*args, **kwargs)

    monkeypatch.setattr(mlworkers.classifier.bulk, "_score_chunk", crash_on_the_second_chunk)
    job = JobRun.objects.create(kind="bulk_annotate", parameters={"model_version_id": version.pk, "chunk_size": 3})
    with pytest.raises(Interrupted):
        jobs.run_job(job.pk)
    job.refresh_from_db()
    assert job.status == JobRun.FAILED and "worker lost" in job.error
    with django_capture_on_commit_callbacks(execute=True):
        jobs.retry_job(job)
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED
    assert job.result["labeled"] == 10 and job.progress_done == job.progress_total == 10
    assert predictions_of(version).count() == Turn.objects.count()


def test_the_command_prints_progress_and_labels_the_corpus(tiny_corpus, version, run_jobs_at_once):
    out = StringIO()
    call_command("annotate_corpus", "--model-version", str(version.pk), "--chunk-size", "4", stdout=out)
    text = out.getvalue()
    assert "queued bulk_annotate as job" in text and "100% 10/10 succeeded" in text
    assert predictions_of(version).count() == 10


def test_the_command_names_a_missing_model_version(db):
    with pytest.raises(CommandError, match="no model version with id 999"):
        call_command("annotate_corpus", "--model-version", "999")


def test_deleting_a_dialogue_removes_its_predictions(tiny_corpus, version, job):
    annotate_corpus(job, version.pk)
    Dialogue.objects.filter(pk=tiny_corpus[0].pk).delete()
    assert predictions_of(version).count() == 7
    assert artifact_path(version).exists()


def test_cancel_stops_a_running_bulk_annotation_within_one_chunk(tiny_corpus, version, monkeypatch):
    import mlworkers.classifier.bulk

    real_write, calls = mlworkers.classifier.bulk.write_predictions, {"n": 0}
    job = JobRun.objects.create(kind="bulk_annotate", parameters={"model_version_id": version.pk, "chunk_size": 3})

    def cancel_during_the_first_chunk(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            jobs.cancel_job(job, by="researcher")  # as the Jobs page would, while the chunk runs
        return real_write(*args, **kwargs)

    monkeypatch.setattr(mlworkers.classifier.bulk, "write_predictions", cancel_during_the_first_chunk)
    assert jobs.run_job(job.pk, heartbeat=False) == {"job": job.pk, "stopped": True}
    job.refresh_from_db()
    # no second chunk is written (the ones scored ahead are dropped, a rerun scores them again)
    assert job.status == JobRun.CANCELLED and calls["n"] == 1
    assert 0 < predictions_of(version).count() < Turn.objects.count()  # the first chunk is kept, whole


def test_sharded_bulk_annotation_labels_every_turn_once_across_its_shards(
    tiny_corpus, version, django_capture_on_commit_callbacks
):
    from mlworkers.classifier.bulk import dialogue_id_ranges

    ids = sorted(d.pk for d in tiny_corpus)
    assert dialogue_id_ranges(None, 3) == [(ids[0], ids[0]), (ids[1], ids[2] - 1), (ids[2], ids[3])]
    assert dialogue_id_ranges(ids[1:], 8) == [(ids[1], ids[1]), (ids[2], ids[2]), (ids[3], ids[3])]
    with django_capture_on_commit_callbacks(execute=True):
        job = jobs.start_job("bulk_annotate", {"model_version_id": version.pk, "shards": 2, "chunk_size": 2})
    job.refresh_from_db()
    shards = list(job.shards.order_by("pk"))
    assert [shard.parameters["dialogue_id_range"] for shard in shards] == [[ids[0], ids[2] - 1], [ids[2], ids[3]]]
    assert all(shard.status == JobRun.SUCCEEDED for shard in shards)
    assert job.status == JobRun.SUCCEEDED and job.result["shards"] == 2
    assert job.result["labeled"] == job.result["written_now"] == Turn.objects.count() == 10
    assert (job.progress_done, job.progress_total) == (10, 10)
    assert predictions_of(version).count() == 10
    assert predictions_of(version).values("turn").distinct().count() == 10


def test_the_job_runs_int8_on_a_cpu_and_says_which_precision_it_used(tiny_corpus, version, job, settings, client,
                                                                     researcher):  # fmt: skip
    from mlworkers.ml.classifier import cpu_precision

    fp32 = annotate_corpus(job, version.pk, precision="fp32")
    labels = dict(predictions_of(version).values_list("turn_id", "label_id"))
    predictions_of(version).delete()
    int8 = annotate_corpus(job, version.pk, precision="int8")
    assert (fp32["precision"], int8["precision"]) == ("fp32", "int8")
    assert fp32["precision_choice"] is None and int8["precision_choice"] is None  # asked for: not measured
    assert int8["written_now"] == 10 and dict(predictions_of(version).values_list("turn_id", "label_id")) == labels
    predictions_of(version).delete()
    settings.ML_PRECISION = "auto"
    cpu_precision.forget()
    auto = annotate_corpus(job, version.pk)
    choice = auto["precision_choice"]
    assert auto["precision"] == choice["precision"] in ("fp32", "int8")
    assert choice["fp32_ms"] > 0 and choice["reason"].startswith("measured") and choice["cpu"]
    # the model's page shows what its bulk annotation ran in, and why
    job.parameters, job.result, job.status = {"model_version_id": version.pk}, auto, JobRun.SUCCEEDED
    job.save()
    client.force_login(researcher)
    page = client.get(f"/models/{version.pk}/").content.decode()
    assert "Inference precision" in page and html.escape(choice["reason"]) in page and choice["cpu"] in page


def test_progress_moves_within_a_selection_smaller_than_one_chunk(tiny_corpus, version, job, monkeypatch):
    """The demo's bulk annotation (6,000 turns, chunks of 10,000) sat on one progress line until it
    ended: a selection is cut into enough chunks for the progress to move."""
    from mlworkers.classifier import bulk

    monkeypatch.setattr(bulk, "MIN_CHUNK", 2)
    seen = []
    annotate_corpus(job, version.pk, precision="fp32", on_chunk=lambda done, total: seen.append(done))
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == Turn.objects.count()
