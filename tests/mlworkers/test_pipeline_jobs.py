"""The model-in-the-loop jobs on a small corpus: weak labeler, resumable application, ranking into
HITs with the weak top 3, the fixed gold split, SBERT expansion, the rounds and the chain."""

import csv
from io import StringIO
from unittest import mock

import pytest
from django.core.management import call_command

from annotation.models import Dialogue, ModelVersion, Prediction, Turn, TurnLabel
from annotation.splits import split_for
from annotation.taxonomy import LABEL_NAMES
from jobs import runtime as jobs
from jobs.models import JobRun
from jobs.registry import InvalidParameters
from labeling.models import AggregatedLabel, Campaign, HITItem
from labeling.services.campaigns import create_campaign
from mlworkers import gold
from mlworkers.chain import pipeline
from mlworkers.classifier import weak_labeler
from mlworkers.ml.classifier.sentence_classifier import read_labeled_sentences
from mlworkers.registry import artifact_path
from mlworkers.rounds import self_labeling as rounds
from tests.mlworkers.pipeline_support import DIALOGUES, add_crowd_label, last_turn, make_corpus, run

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")


@pytest.fixture
def weak_version(db, ml_settings, small_seed, django_capture_on_commit_callbacks):
    job = run("weak_train", django_capture_on_commit_callbacks, data_path=str(small_seed))
    assert job.status == JobRun.SUCCEEDED, job.error
    return ModelVersion.objects.get(pk=job.result["model_version"])


def test_weak_train_registers_a_weak_model_version_with_its_files(weak_version, small_seed):
    assert weak_version.kind == ModelVersion.WEAK
    assert len(weak_version.label_names) == 41
    held_out = weak_labeler.held_out_sentences(read_labeled_sentences(small_seed, LABEL_NAMES))
    assert weak_version.training_data == {
        "file": str(small_seed),
        "sentences": len(held_out["train"]),
        "evaluated_on": "held-out sentences of seed.csv (no crowd gold yet)",
    }
    # no gold yet: measured on sentences of the file it never trained on, 82 in all
    assert len(held_out["train"]) + len(held_out["validation"]) + len(held_out["test"]) == 82
    assert weak_version.metrics["test"]["n"] == len(held_out["test"]) > 0
    assert weak_version.metrics["validation_n"] == len(held_out["validation"]) > 0
    assert {"top1", "top3", "macro_f1", "per_label", "calibration"} <= set(weak_version.metrics["test"])
    assert weak_version.temperature == weak_version.metrics["temperature"] > 0
    assert (artifact_path(weak_version) / "head.pt").exists()


def test_weak_train_refuses_an_empty_test_split_with_a_one_line_reason(
    db, ml_settings, tmp_path, django_capture_on_commit_callbacks
):
    sentences = list(read_labeled_sentences(weak_labeler.WEAK_SEED, LABEL_NAMES))
    held_out = weak_labeler.held_out_sentences(sentences)
    path = tmp_path / "no_test.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows((s.text, s.label) for s in held_out["train"][:30] + held_out["validation"][:5])
    job = run("weak_train", django_capture_on_commit_callbacks, data_path=str(path))
    assert job.status == JobRun.FAILED
    assert job.error == "the weak labeler: the test split is empty"
    assert not ModelVersion.objects.exists()


def test_a_bad_training_file_fails_the_job_naming_the_line(
    db, ml_settings, tmp_path, django_capture_on_commit_callbacks
):
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nfine,Sad\nno such,Sleepy\n")
    with pytest.raises(ValueError):
        run("weak_train", django_capture_on_commit_callbacks, data_path=str(bad))
    job = JobRun.objects.get(kind="weak_train")
    assert job.status == JobRun.FAILED
    assert "bad.csv:3: unknown label 'Sleepy'" in job.error
    assert not ModelVersion.objects.exists()


def test_weak_apply_writes_one_prediction_per_turn_with_the_top_3_best_first(
    weak_version, django_capture_on_commit_callbacks
):
    make_corpus()
    job = run("weak_apply", django_capture_on_commit_callbacks, model_version_id=weak_version.pk, chunk_size=7)
    assert job.status == JobRun.SUCCEEDED
    assert job.result["predicted"] == Turn.objects.count() == 24
    assert (job.progress_done, job.progress_total) == (24, 24)
    for prediction in Prediction.objects.filter(model_version=weak_version):
        names, probabilities = zip(*prediction.top_k, strict=True)
        assert len(names) == 3 and list(probabilities) == sorted(probabilities, reverse=True)
        assert prediction.label.name == names[0] and prediction.confidence == probabilities[0]


class DiesOnSecondChunk:
    """Wraps a labeler; the second predict call raises, as a worker killed midway would stop."""

    def __init__(self, labeler):
        self.labeler, self.calls = labeler, 0

    def predict_proba(self, texts, batch_size=128):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("worker lost")
        return self.labeler.predict_proba(texts, batch_size)


def test_weak_apply_killed_midway_and_started_again_misses_and_doubles_nothing(
    weak_version, django_capture_on_commit_callbacks
):
    make_corpus()
    real_loader = weak_labeler.load_weak_labeler_for
    dying = mock.patch.object(weak_labeler, "load_weak_labeler_for", lambda v: DiesOnSecondChunk(real_loader(v)))
    with dying, pytest.raises(RuntimeError, match="worker lost"):
        run("weak_apply", django_capture_on_commit_callbacks, model_version_id=weak_version.pk, chunk_size=5)
    job = JobRun.objects.get(kind="weak_apply")
    assert job.status == JobRun.FAILED
    assert Prediction.objects.filter(model_version=weak_version).count() == 5  # the first chunk was committed

    with django_capture_on_commit_callbacks(execute=True):
        jobs.retry_job(job)
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED
    assert job.result["predicted"] == 19  # only what was missing
    predicted = list(Prediction.objects.filter(model_version=weak_version).values_list("turn_id", flat=True))
    assert sorted(predicted) == sorted(Turn.objects.values_list("pk", flat=True))  # none missing, none twice


def _choices_by_dialogue(campaign_id):
    items = HITItem.objects.filter(hit__campaign_id=campaign_id, dialogue__isnull=False)
    return {item.dialogue_id: (item.target_turn_id, item.choices) for item in items}


def test_ranked_candidates_become_hit_items_offering_the_weak_top_3(weak_version, django_capture_on_commit_callbacks):
    dialogues = make_corpus()
    run("weak_apply", django_capture_on_commit_callbacks, model_version_id=weak_version.pk)
    job = run("rank_candidates", django_capture_on_commit_callbacks, min_confidence=0.0, campaign_name="Round one")
    assert job.status == JobRun.SUCCEEDED, job.error
    assert job.result["candidates"] == len(dialogues) and job.result["hits"] == 1
    by_dialogue = _choices_by_dialogue(job.result["campaign"])
    assert set(by_dialogue) == {d.pk for d in dialogues}
    for dialogue in dialogues:
        target, choices = by_dialogue[dialogue.pk]
        prediction = Prediction.objects.get(model_version=weak_version, turn=last_turn(dialogue))
        assert target == prediction.turn_id
        assert choices == [name for name, _ in prediction.top_k[:3]]


def test_ranking_takes_only_the_campaigns_language(weak_version, django_capture_on_commit_callbacks):
    dialogues = make_corpus()
    french = dialogues[:3]
    Dialogue.objects.filter(pk__in=[d.pk for d in french]).update(language="fr")
    run("weak_apply", django_capture_on_commit_callbacks, model_version_id=weak_version.pk)
    english = run("rank_candidates", django_capture_on_commit_callbacks, min_confidence=0.0, campaign_name="English")
    assert english.result["language"] == "en"
    assert set(english.result["dialogue_ids"]) == {d.pk for d in dialogues[3:]}
    assert set(_choices_by_dialogue(english.result["campaign"])) == {d.pk for d in dialogues[3:]}
    campaign = Campaign.objects.create(name="Français", language="fr")
    job = run("rank_candidates", django_capture_on_commit_callbacks, min_confidence=0.0, campaign_id=campaign.pk)
    assert job.result["language"] == "fr" and set(job.result["dialogue_ids"]) == {d.pk for d in french}


def test_ranking_takes_last_turns_only_keeps_n_per_label_and_skips_dialogues_already_in_hits(
    weak_version, django_capture_on_commit_callbacks
):
    make_corpus()
    run("weak_apply", django_capture_on_commit_callbacks, model_version_id=weak_version.pk)
    first = run("rank_candidates", django_capture_on_commit_callbacks, min_confidence=0.0, per_label=1,
                campaign_name="One per label")  # fmt: skip
    labels = [p.label.name for p in Prediction.objects.filter(model_version=weak_version, turn__position=1)]
    assert first.result["candidates"] == len(set(labels))  # one per predicted label
    assert all(count == 1 for count in first.result["per_label"].values())
    strict = run("rank_candidates", django_capture_on_commit_callbacks, min_confidence=1.0)
    assert strict.result["candidates"] == 0
    with pytest.raises(InvalidParameters, match="min_confidence"):
        jobs.start_job("rank_candidates", {"min_confidence": 1.01})
    again = run("rank_candidates", django_capture_on_commit_callbacks, min_confidence=0.0)
    assert again.result["candidates"] == len(DIALOGUES) - first.result["candidates"]


def test_the_gold_split_is_the_stored_dialogue_split_and_never_changes_once_set(db):
    dialogues = make_corpus(DIALOGUES * 1, prefix="a") + make_corpus(DIALOGUES, prefix="b")
    Dialogue.objects.filter(pk=dialogues[0].pk).update(split="")  # a row written without one
    for dialogue, (_, label) in zip(dialogues, DIALOGUES * 2, strict=True):
        add_crowd_label(dialogue, label)
    result = gold.gold_split()
    assert result["assigned"] == {split_for(dialogues[0].content_hash): 1}
    stored = dict(Dialogue.objects.values_list("pk", "split"))
    assert all(stored[d.pk] == split_for(d.content_hash) for d in dialogues)
    assert sum(result["gold_dialogues"].values()) == len(dialogues)
    Dialogue.objects.filter(pk=dialogues[1].pk).update(split="test")  # e.g. fixed by the migration
    gold.gold_split()
    assert Dialogue.objects.get(pk=dialogues[1].pk).split == "test"  # never recomputed
    test_gold = gold.gold_labels(["test"])
    assert last_turn(dialogues[1]).pk in test_gold


def _twin(dialogue_index: int, prefix: str):
    """A second dialogue with the same turns as DIALOGUES[dialogue_index] (another scene, same words)."""
    return make_corpus([DIALOGUES[dialogue_index]], prefix=prefix)[0]


def test_sbert_expansion_copies_the_most_similar_training_gold_label_never_a_test_one(
    db, ml_settings, django_capture_on_commit_callbacks
):
    dialogues = make_corpus()
    add_crowd_label(dialogues[0], "Excited", split=TurnLabel.TRAIN)
    add_crowd_label(dialogues[3], "Devastated", split=TurnLabel.TEST)
    twin_of_train, twin_of_test = _twin(0, "twin-a"), _twin(3, "twin-b")
    held_out_twin = _twin(0, "twin-c")  # as similar as can be, but a test dialogue: never labeled
    Dialogue.objects.filter(pk__in=[twin_of_train.pk, twin_of_test.pk]).update(split="train")
    Dialogue.objects.filter(pk=held_out_twin.pk).update(split="test")
    job = run("sbert_expand", django_capture_on_commit_callbacks)
    assert job.status == JobRun.SUCCEEDED, job.error
    expanded = TurnLabel.objects.filter(source=TurnLabel.SBERT)
    assert [(label.turn.dialogue_id, label.label.name) for label in expanded] == [(twin_of_train.pk, "Excited")]
    provenance = expanded.get().provenance
    assert provenance["source_dialogue"] == dialogues[0].pk and provenance["round"] == 1
    assert provenance["similarity"] == pytest.approx(1.0, abs=1e-4)
    assert not TurnLabel.objects.filter(turn__dialogue__in=[twin_of_test, held_out_twin]).exists()
    assert list((ml_settings.MEDIA_ROOT / "embeddings").glob("*/vectors.npy"))  # vectors live in files


@pytest.mark.slow
def test_self_label_rounds_report_four_rounds_for_both_models_and_register_them(
    db, ml_settings, django_capture_on_commit_callbacks
):
    dialogues = make_corpus() + make_corpus(prefix="more")
    for index, dialogue in enumerate(dialogues[:12]):
        add_crowd_label(dialogue, DIALOGUES[index][1], split=TurnLabel.TRAIN)
    for index, dialogue in enumerate(dialogues[12:18]):
        add_crowd_label(dialogue, DIALOGUES[index][1], split=TurnLabel.TEST)
    job = run("self_label_rounds", django_capture_on_commit_callbacks, epochs=1)
    assert job.status == JobRun.FAILED  # no validation gold: no epoch could be chosen
    assert job.error == "the rounds need crowd gold labels in the train, validation and test splits"
    for index, dialogue in enumerate(dialogues[18:21]):
        add_crowd_label(dialogue, DIALOGUES[index][1], split=TurnLabel.VALIDATION)
    twin = _twin(7, "twin")  # the same words as a training dialogue: the SBERT round labels it
    Dialogue.objects.filter(pk=twin.pk).update(split="train")
    # the crowd answered one more training dialogue without a majority: it trains on its votes
    no_majority = dialogues[21]
    Dialogue.objects.filter(pk=no_majority.pk).update(split="train")
    AggregatedLabel.objects.create(
        campaign=create_campaign("votes"), dialogue=no_majority, turn=last_turn(no_majority),
        votes={"Joyful": 1, "Content": 1, "Proud": 1}, answer_count=3,
    )  # fmt: skip
    reads, pooled = [], []
    original_read = rounds.DialoguePool.read

    def spying_read(pool, keys):
        reads.append(len(keys))
        pooled.extend(keys)
        return original_read(pool, keys)

    with mock.patch.object(rounds.DialoguePool, "read", spying_read):
        job = run("self_label_rounds", django_capture_on_commit_callbacks, epochs=1, chunk_size=2)
    assert job.status == JobRun.SUCCEEDED, job.error
    assert reads and max(reads) <= 2  # the unlabeled dialogues' texts are read two at a time
    assert (job.result["recipe"], job.result["no_majority"]) == ("measured", 1)
    assert last_turn(no_majority).pk not in pooled  # never a candidate for an SBERT or self label
    assert not TurnLabel.objects.filter(turn__dialogue=no_majority).exists()
    assert job.result["peak_rss_mb"] > 0 and job.result["peak_rss_method"] in ("kernel", "sampled")
    assert job.result["fasttext_bytes"] < 1_000_000  # the default 2M buckets wrote 382 MB
    table = job.result["table"]
    assert [row["round"] for row in table] == [1, 2, 3, 4]
    assert table[0]["training_size"] == 12 and table[1]["training_size"] >= 13
    assert all(
        {"dialogue_macro_f1", "dialogue_accuracy", "fasttext_macro_f1", "fasttext_accuracy"} <= set(r) for r in table
    )
    # no calibration of the encoder: the paper's thresholds, said in the SBERT rounds' rows
    assert [(r.get("threshold"), r.get("threshold_source")) for r in table] == [
        (None, None), (0.92, "paper"), (None, None), (0.9, "paper")
    ]  # fmt: skip
    assert table[1]["expanded"] == table[1]["training_size"] - table[0]["training_size"]
    label = TurnLabel.objects.get(turn__dialogue=twin)
    assert (label.source, label.label.name, label.provenance["round"]) == (TurnLabel.SBERT, "Annoyed", 2)
    dialogue_version = ModelVersion.objects.get(pk=job.result["model_version"])
    assert dialogue_version.kind == ModelVersion.DIALOGUE
    assert dialogue_version.metrics["test"]["n"] == 6 and len(dialogue_version.metrics["rounds"]) == 4
    fasttext_version = ModelVersion.objects.get(pk=job.result["fasttext_version"])
    assert fasttext_version.kind == ModelVersion.FASTTEXT
    # both measured on the test gold with a temperature fitted on the validation gold
    for version in (dialogue_version, fasttext_version):
        assert version.metrics["validation_n"] == 3 and version.metrics["temperature"] > 0
        assert {"top1", "top3", "macro_f1", "per_label", "calibration"} <= set(version.metrics["test"])
        assert len(version.metrics["test"]["calibration"]["bins"]) == 10
    assert fasttext_version.hyperparameters["bucket"] == 1024  # sized to the data, not fastText's 2,000,000

    # the chain's last step annotates the corpus with the newest dialogue classifier
    (bulk,) = pipeline.run_steps(["bulk_annotate"])
    assert bulk.status == JobRun.SUCCEEDED and bulk.parameters["model_version_id"] == dialogue_version.pk
    assert Prediction.objects.filter(model_version=dialogue_version).count() == Turn.objects.count()


def test_the_run_pipeline_command_runs_each_step_as_a_job_and_skips_gold_steps_without_gold(
    weak_version, run_jobs_at_once
):
    make_corpus()
    out = StringIO()
    call_command("run_pipeline", steps="weak_apply,rank_candidates,sbert_expand", campaign_name="From the command",
                 min_confidence=0.0, stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "sbert_expand: skipped, no crowd gold labels yet" in text
    kinds = dict(JobRun.objects.exclude(kind="weak_train").values_list("kind", "status"))
    assert kinds == {
        "run_pipeline": JobRun.SUCCEEDED,
        "weak_apply": JobRun.SUCCEEDED,
        "rank_candidates": JobRun.SUCCEEDED,
    }
    assert HITItem.objects.filter(hit__campaign__name="From the command", dialogue__isnull=False).count() == 12


def test_the_pipeline_job_trains_applies_ranks_and_builds_a_campaign(
    db, ml_settings, django_capture_on_commit_callbacks
):
    make_corpus()
    steps = ["weak_train", "weak_apply", "rank_candidates"]
    chain = run("run_pipeline", django_capture_on_commit_callbacks, steps=steps, campaign_name="Demo campaign",
                min_confidence=0.0)  # fmt: skip
    assert chain.status == JobRun.SUCCEEDED, chain.error
    assert [job.kind for job in JobRun.objects.exclude(pk=chain.pk).order_by("pk")] == steps
    assert all(job.status == JobRun.SUCCEEDED for job in JobRun.objects.all())
    assert chain.result["jobs"] == list(JobRun.objects.exclude(pk=chain.pk).order_by("pk").values_list("pk", flat=True))
    assert HITItem.objects.filter(hit__campaign__name="Demo campaign", dialogue__isnull=False).count() == 12


def test_running_the_pipeline_again_makes_no_empty_campaign_and_repeats_no_name(
    db, ml_settings, small_seed, django_capture_on_commit_callbacks
):
    make_corpus()
    steps = ["weak_train", "weak_apply", "rank_candidates"]

    def chain():
        job = run("run_pipeline", django_capture_on_commit_callbacks, steps=steps, data_path=str(small_seed),
                  min_confidence=0.0)  # fmt: skip
        assert job.status == JobRun.SUCCEEDED, job.error
        return job

    chain()
    second = chain()  # every dialogue is in a HIT of the first campaign: nothing to rank
    (campaign,) = Campaign.objects.all()
    assert campaign.name.startswith("Weak-labeled candidates (") and campaign.name.endswith(" UTC)")
    ranking = JobRun.objects.filter(kind="rank_candidates").order_by("-pk").first()
    assert (ranking.result["candidates"], ranking.result["campaign"], ranking.result["hits"]) == (0, None, 0)
    assert "no campaign created" in ranking.message
    assert any("no campaign created" in line for line in second.result["log"])

    make_corpus(prefix="more")  # new dialogues: the third run has candidates again
    chain()
    campaigns = list(Campaign.objects.order_by("pk"))
    assert len(campaigns) == 2 and all(c.hits.exists() for c in campaigns)  # no empty campaign
    assert len({c.name for c in campaigns}) == 2
    names = list(ModelVersion.objects.values_list("name", flat=True))
    assert len(names) == 3 and len(set(names)) == 3
    assert all(name.startswith("weak labeler (seed.csv) (") and "UTC)" in name for name in names)


def test_a_campaign_name_already_taken_gets_the_time_and_a_weak_model_name_a_number(
    weak_version, small_seed, django_capture_on_commit_callbacks
):
    make_corpus()
    assert run("weak_apply", django_capture_on_commit_callbacks).status == JobRun.SUCCEEDED
    first = run("rank_candidates", django_capture_on_commit_callbacks, campaign_name="Round", min_confidence=0.0,
                per_label=1)  # fmt: skip
    second = run("rank_candidates", django_capture_on_commit_callbacks, campaign_name="Round", min_confidence=0.0)
    assert first.result["campaign_name"] == "Round"
    assert second.result["campaign_name"].startswith("Round (") and second.result["hits"] >= 1
    for _ in range(2):
        again = run("weak_train", django_capture_on_commit_callbacks, data_path=str(small_seed), name="mine")
        assert again.status == JobRun.SUCCEEDED, again.error
    assert sorted(ModelVersion.objects.filter(name__startswith="mine").values_list("name", flat=True)) == [
        "mine",
        "mine #2",
    ]


def test_an_expansion_that_finds_nothing_says_so_and_saves_nothing(db, ml_settings, django_capture_on_commit_callbacks):
    dialogues = make_corpus()
    add_crowd_label(dialogues[0], "Excited", split=TurnLabel.TRAIN)
    job = run("sbert_expand", django_capture_on_commit_callbacks, threshold=1.0)  # nothing is that similar
    assert job.status == JobRun.SUCCEEDED, job.error
    assert job.result["labeled"] == 0 and "nothing saved" in job.message
    assert not TurnLabel.objects.exclude(source=TurnLabel.CROWD).exists()
