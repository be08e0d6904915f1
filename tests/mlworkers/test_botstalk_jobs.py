"""BotsTalk through the job runtime, with a tiny skill classifier and NLI trained here on pools
and pairs written here (packaged MiniLM, frozen): dialogues of source botstalk, their contexts
and per-turn skills, the moderator's refusals, pass-the-mic at alpha 0 and a large alpha, the
diagnostics, retries, file errors; skill labels for any corpus; the commands."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Dialogue, ModelVersion, SkillContext, Turn, TurnSkill
from jobs.models import JobRun
from jobs.runtime import start_job
from mlworkers.botstalk import runs as botstalk_jobs
from mlworkers.ml.botstalk.files import NLIPair
from mlworkers.ml.botstalk.nli import PairClassifierConfig, train_pair_classifier
from mlworkers.ml.classifier.sentence_classifier import LabeledSentence, WeakLabelerConfig, train_weak_labeler
from mlworkers.registry import register_model_version
from tests.mlworkers.tiny_models import one_torch_thread

pytestmark = pytest.mark.django_db

PERSONA = [
    "I walk my two dogs every morning.",
    "My dogs sleep on my bed at night.",
    "I have never had a pet, fur makes me sneeze.",
    "I play the piano in a jazz band.",
    "I cook soup for my neighbours on Fridays.",
]
EMPATHY = [
    "That sounds lovely, you must be proud.",
    "I am so sorry, that must hurt.",
    "Oh no, I hope you feel better soon.",
    "What a wonderful thing to hear!",
    "That must have been frightening for you.",
]
KNOWLEDGE = [
    "Dogs were tamed from wolves long ago.",
    "The piano has eighty-eight keys.",
    "Soup is one of the oldest cooked foods.",
    "Jazz began in New Orleans.",
    "Wolves live and hunt in packs.",
]
CONTRADICTING = "I have never had a pet, fur makes me sneeze."
PAIRS = [
    ("I have two dogs.", CONTRADICTING, "contradiction"),
    ("I have two dogs.", "I walk my two dogs every morning.", "entailment"),
    ("I have two dogs.", "My dogs sleep on my bed at night.", "entailment"),
    ("I have two dogs.", "I play the piano in a jazz band.", "neutral"),
    ("I have two dogs.", "That sounds lovely, you must be proud.", "neutral"),
    ("I have two dogs.", "The piano has eighty-eight keys.", "neutral"),
    ("I have two dogs.", "I cook soup for my neighbours on Fridays.", "neutral"),
    ("I play the piano.", "I have never touched an instrument.", "contradiction"),
    ("I play the piano.", "I play the piano in a jazz band.", "entailment"),
    ("I play the piano.", CONTRADICTING, "neutral"),
    ("Dogs descend from wolves.", "Dogs have nothing to do with wolves.", "contradiction"),
    ("Dogs descend from wolves.", "Dogs were tamed from wolves long ago.", "entailment"),
    ("Dogs descend from wolves.", CONTRADICTING, "neutral"),
    ("I was happy at my concert.", "I was miserable at my concert.", "contradiction"),
    ("I was happy at my concert.", "What a wonderful thing to hear!", "entailment"),
    ("I was happy at my concert.", CONTRADICTING, "neutral"),
]
CONTEXTS = [
    {
        "id": "dogs",
        "contexts": {
            "persona": ["I have two dogs.", "I play the piano."],
            "knowledge": "Dogs descend from wolves.",
            "empathy": "I was happy at my concert.",
        },
        "start_skill": "persona",
    },
    {
        "id": "piano",
        "contexts": {"persona": "I play the piano.", "knowledge": "Dogs descend from wolves."},
        "start_skill": "empathy",
    },
]


@pytest.fixture(autouse=True)
def _one_thread():
    yield from one_torch_thread()


@pytest.fixture(autouse=True)
def _media(settings, tmp_path, run_jobs_at_once):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.ML_DEVICE = "cpu"


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.fixture
def files(tmp_path):
    pool = [
        {"text": t, "skill": s}
        for s, texts in (("persona", PERSONA), ("empathy", EMPATHY), ("knowledge", KNOWLEDGE))
        for t in texts
    ]
    return {
        "pool": _jsonl(tmp_path / "pool.jsonl", pool),
        "pairs": _jsonl(
            tmp_path / "pairs.jsonl", [{"premise": p, "hypothesis": h, "label": label} for p, h, label in PAIRS]
        ),
        "contexts": _jsonl(tmp_path / "contexts.jsonl", CONTEXTS),
    }


@pytest.fixture(scope="module")
def small_models():
    """Both small models trained once for the module, in plain code (the jobs are tested below)."""
    skills = sorted({"persona", "empathy", "knowledge"})
    utterances = (
        [(t, "persona") for t in PERSONA] + [(t, "empathy") for t in EMPATHY] + [(t, "knowledge") for t in KNOWLEDGE]
    )
    labeler = train_weak_labeler(
        [LabeledSentence(t, s) for t, s in utterances], skills, WeakLabelerConfig(model_name="minilm", device="cpu")
    )
    pairs = [NLIPair(p, h, label) for p, h, label in PAIRS]
    return labeler, train_pair_classifier(pairs, PairClassifierConfig())


@pytest.fixture
def trained(small_models):
    labeler, nli = small_models
    skill = register_model_version(ModelVersion.SKILL, "skills", labeler, base_model="minilm", hyperparameters={})
    return skill, register_model_version(ModelVersion.NLI, "nli", nli, base_model="minilm", hyperparameters={})


def run_botstalk(files, **parameters) -> JobRun:
    job = start_job("botstalk", {"pools": files["pool"], "contexts": files["contexts"], "top_k": 5, **parameters})
    job.refresh_from_db()
    return job


def test_the_training_jobs_record_a_skill_classifier_and_an_nli(files):
    skill_job = start_job("skill_train", {"data_path": files["pool"]})
    nli_job = start_job("nli_train", {"data_path": files["pairs"]})
    skill_job.refresh_from_db(), nli_job.refresh_from_db()
    assert skill_job.status == nli_job.status == JobRun.SUCCEEDED, (skill_job.error, nli_job.error)
    assert ModelVersion.objects.get(kind=ModelVersion.SKILL).label_names == ["empathy", "knowledge", "persona"]
    assert ModelVersion.objects.get(kind=ModelVersion.NLI).label_names == ["contradiction", "entailment", "neutral"]
    assert nli_job.result["training_accuracy"] == 1.0
    bad = start_job("nli_train", {"data_path": files["pool"]})
    bad.refresh_from_db()
    assert bad.status == JobRun.FAILED and bad.error.startswith(f"{files['pool']}:1: unknown field")


def test_botstalk_stores_dialogues_with_contexts_and_skills_and_the_moderator_refuses(files, trained):
    skill_version = trained[0]
    job = run_botstalk(files, alpha=0.0, turns=6, seed=3)
    assert job.status == JobRun.SUCCEEDED, job.error
    result = job.result
    dialogues = Dialogue.objects.from_source(Dialogue.BOTSTALK).order_by("position")
    assert result["dialogues_stored"] == dialogues.count() == 2
    assert result["ranker"] == "faiss" and result["skills"] == ["empathy", "knowledge", "persona"]
    first = dialogues[0]
    texts = list(first.turns.values_list("text", flat=True))
    assert CONTRADICTING not in texts  # "I have two dogs." is one of its contexts
    assert result["diagnostics"]["refused_by_context"]["persona"] >= 1
    assert set(result["diagnostics"]["refused_share_by_context"]) == {"persona", "knowledge", "empathy"}
    # the other dialogue has no dog in its contexts: nothing stops the sentence there
    assert [c.kind for c in SkillContext.objects.filter(dialogue=first)] == [
        "empathy",
        "knowledge",
        "persona",
        "persona",
    ]
    skills = TurnSkill.objects.filter(turn__dialogue__in=dialogues)
    assert skills.count() == Turn.objects.filter(dialogue__in=dialogues).count()
    for row in skills:
        assert row.source == TurnSkill.BOTSTALK and row.model_version == skill_version
        assert sorted(row.distribution) == ["empathy", "knowledge", "persona"]
        assert sum(row.distribution.values()) == pytest.approx(1.0, abs=1e-9)
        assert row.passed_mic is False  # alpha 0 never passes
    assert {row.skill for row in skills.filter(turn__dialogue=first)} == {"persona"}
    assert result["diagnostics"]["mic_passes"] == 0
    assert result["diagnostics"]["kl_consecutive"]["count"] == result["diagnostics"]["turns"] - 2


def test_a_large_alpha_passes_the_mic_every_turn(files, trained):
    job = run_botstalk(files, alpha=1000.0, turns=4)
    assert job.status == JobRun.SUCCEEDED, job.error
    for dialogue in Dialogue.objects.from_source(Dialogue.BOTSTALK):
        rows = TurnSkill.objects.filter(turn__dialogue=dialogue).order_by("turn__position")
        assert [r.passed_mic for r in rows] == [False, True, True, True]
        assert all(a.skill != b.skill for a, b in zip(rows, rows[1:], strict=False))
        assert rows[1].provenance["kl_from_previous"] > 0
    assert job.result["diagnostics"]["mic_pass_share"] == 1.0


def test_a_retried_run_finds_its_dialogues_and_a_new_identical_run_drops_duplicates(files, trained):
    job = run_botstalk(files, alpha=0.0, turns=3)
    JobRun.objects.filter(pk=job.pk).update(status=JobRun.RUNNING)  # as a worker retrying it would
    again = botstalk_jobs.botstalk(job, **job.parameters)
    assert again["dialogue_ids"] == job.result["dialogue_ids"]
    second = run_botstalk(files, alpha=0.0, turns=3)
    assert second.result["dialogues_stored"] == 0 and second.result["duplicates_dropped"] == 2
    assert Dialogue.objects.from_source(Dialogue.BOTSTALK).count() == 2


def test_a_bad_file_fails_the_job_naming_the_line(files, trained, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "Fine.", "skill": "persona"}) + "\n{oops\n")
    job = run_botstalk({**files, "pool": str(bad)})
    assert job.status == JobRun.FAILED
    assert job.error.startswith(f"{bad}:2: not valid JSON")
    assert not Dialogue.objects.from_source(Dialogue.BOTSTALK).exists()


def test_without_a_skill_classifier_the_job_says_how_to_train_one(files):
    job = run_botstalk(files)
    assert job.status == JobRun.FAILED and "train_skill_classifier" in job.error


def test_skill_labels_for_any_corpus_are_resumable(tiny_corpus, files, trained, small_models):
    job = start_job("skill_label", {"source": "subtitles"})
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED, job.error
    turns = Turn.objects.filter(dialogue__in=tiny_corpus)
    rows = TurnSkill.objects.classified()
    assert rows.count() == turns.count() == job.result["labeled_now"] == 10
    for row in rows:
        assert sum(row.distribution.values()) == pytest.approx(1.0, abs=1e-9)
        assert row.skill == max(row.distribution, key=row.distribution.get)
        assert row.passed_mic is None
    again = start_job("skill_label", {"source": "all"})
    again.refresh_from_db()
    assert again.result["labeled_now"] == 0 and again.result["turns"] == 10
    # another classifier's labels, and this one's BotsTalk rows, do not count as done for it
    other = register_model_version(
        ModelVersion.SKILL, "other", small_models[0], base_model="minilm", hyperparameters={}
    )
    turn = turns.first()
    TurnSkill.objects.create(turn=turn, source=TurnSkill.BOTSTALK, model_version=other, skill="persona")
    third = start_job("skill_label", {"skill_model_version_id": other.pk, "dialogue_ids": [turn.dialogue_id]})
    third.refresh_from_db()
    assert third.result["labeled_now"] == turn.dialogue.turns.count()


def test_the_commands_train_generate_and_label(files, capsys):
    call_command("train_skill_classifier", files["pool"])
    call_command("train_nli", files["pairs"])
    call_command(
        "botstalk", "--pools", files["pool"], "--contexts", files["contexts"], "--alpha", "1000", "--turns", "3"
    )
    out = capsys.readouterr().out
    assert "2 dialogues stored (source botstalk)" in out and '"refused_share_by_context"' in out
    call_command("label_skills", "--source", "botstalk")
    assert TurnSkill.objects.classified().count() == Turn.objects.filter(dialogue__source="botstalk").count() == 6
    with pytest.raises(CommandError, match="alpha"):
        call_command("botstalk", "--alpha", "-1")


def test_a_hub_style_nli_model_moderates_by_name_and_a_missing_one_fails_the_job(files, trained, tmp_path):
    from tests.mlworkers.test_botstalk_nli import write_tiny_nli

    path = write_tiny_nli(tmp_path / "mnli", ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"])
    job = run_botstalk(files, nli_model=path, turns=2)
    assert job.status == JobRun.SUCCEEDED, job.error
    assert job.result["nli"] == path and job.result["diagnostics"]["candidates_judged"] > 0
    missing = run_botstalk(files, nli_model="no-such-org/no-such-nli")
    assert missing.status == JobRun.FAILED and missing.error.startswith("NLI model 'no-such-org/no-such-nli': ")


def test_a_generated_corpus_goes_to_a_pairwise_campaign_against_the_subtitles(
    files, trained, tiny_corpus, client, researcher
):
    """The issue's (b): generate with the botstalk job, then compare it with the subtitle corpus in
    a pairwise campaign created from the page; the screens show neither source."""
    from labeling.models import Campaign, HITItem
    from labeling.task_types.pairwise import DEFAULT_QUESTIONS, dialogue_of

    job = run_botstalk(files, alpha=1000.0, turns=4)
    assert job.status == JobRun.SUCCEEDED, job.error
    generated = set(Dialogue.objects.from_source(Dialogue.BOTSTALK).values_list("pk", flat=True))
    subtitles = {d.pk for d in tiny_corpus}
    client.force_login(researcher)
    response = client.post(
        "/labeling/campaigns/new/pairwise/",
        {"name": "BotsTalk vs subtitles", "source_a": "source:botstalk", "source_b": "subtitles", "count": "2",
         "seed": "1", "dialogues_per_hit": "2", "quiz_per_hit": "1", "workers_per_hit": "3", "reward": "1.00",
         "bonus": "0.10", "quiz_pass_mark": "1", "time_limit_minutes": "30", "language": "en",
         **{f"wording_{q['key']}": q["wording"] for q in DEFAULT_QUESTIONS}},
    )  # fmt: skip
    assert response.status_code == 302, getattr(response.context.get("form"), "errors", None) or response.context.get(
        "error"
    )
    campaign = Campaign.objects.get(name="BotsTalk vs subtitles")
    assert campaign.task_type == "pairwise"
    items = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True)
    assert items.count() == 2
    for item in items:
        assert dialogue_of(item.payload, "a") in generated and dialogue_of(item.payload, "b") in subtitles
    page = client.get(f"/labeling/campaigns/{campaign.pk}/")
    assert page.status_code == 200 and "botstalk" in page.content.decode().lower()  # the researcher sees sources
