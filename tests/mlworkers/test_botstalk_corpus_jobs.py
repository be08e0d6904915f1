"""The botstalk job speaking from the corpus: the SubTle pairs of the stored subtitle dialogues, an
`extract_pairs` file, the pool only for an empty corpus or on request. The models are hand-made
stand-ins (the loop's own tests and test_botstalk_jobs cover the trained ones)."""

import json

import numpy as np
import pytest

from annotation.models import Dialogue, ModelVersion, Turn
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, start_job
from mlworkers.botstalk import runs as botstalk_jobs
from mlworkers.ml import loading
from mlworkers.ml.botstalk.files import ResponsePair
from tests.mlworkers.test_botstalk_loop import SetNLI, WordHashEncoder

pytestmark = pytest.mark.django_db

POOL = {"persona": ["I walk my two dogs every morning.", "I play the piano."], "empathy": ["That sounds lovely."]}
CONTEXTS = [
    {"id": "night", "contexts": {"persona": ["I waited at the station all night."]}, "start_skill": "persona"},
    {"id": "cup", "contexts": {"empathy": ["I was happy when we won the cup."]}, "start_skill": "empathy"},
]
TINY_PAIRS = [
    ("Where were you the whole night?", "I was at the station, waiting for you."),
    ("I was at the station, waiting for you.", "You could have called."),
    ("We won the cup!", "I knew you could do it."),
    ("The bridge is out.", "Then we take the ferry."),
    ("Then we take the ferry.", "Fine, let's go."),
    ("I miss the old house.", "So do I, every single day."),
]


class FlatSkills:
    skill_names = ["empathy", "persona"]

    def distributions(self, texts):
        return np.full((len(texts), 2), 0.5, dtype=np.float32)


@pytest.fixture(autouse=True)
def _stand_ins(settings, tmp_path, run_jobs_at_once, monkeypatch):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    ModelVersion.objects.create(kind=ModelVersion.SKILL, name="skills", label_names=FlatSkills.skill_names)
    monkeypatch.setattr(botstalk_jobs, "load_skill_classifier", lambda version: FlatSkills())
    monkeypatch.setattr(botstalk_jobs, "load_moderator_nli", lambda name, pk: (SetNLI([]), "set"))
    monkeypatch.setattr(loading, "load_sentence_transformer", lambda name: WordHashEncoder())


@pytest.fixture
def files(tmp_path):
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"text": t, "skill": s}) + "\n" for s, ts in POOL.items() for t in ts))
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text("".join(json.dumps(c) + "\n" for c in CONTEXTS))
    return {"pools": str(pool), "contexts": str(contexts)}


def run_botstalk(files, **parameters) -> JobRun:
    job = start_job("botstalk", {**files, "alpha": 1000.0, "turns": 3, **parameters})
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED, job.error
    return job


def spoken() -> set[str]:
    return set(Turn.objects.filter(dialogue__source=Dialogue.BOTSTALK).values_list("text", flat=True))


def test_corpus_pairs_are_the_subtle_pairs_of_the_subtitle_dialogues_only(tiny_corpus):
    machine = Dialogue.objects.create(source=Dialogue.BOTSTALK, content_hash="bt-1", turn_count=2)
    Turn.objects.create(dialogue=machine, position=0, text="Are you a bot?")
    Turn.objects.create(dialogue=machine, position=1, text="I am not.")
    assert botstalk_jobs.corpus_pairs() == [ResponsePair(*pair) for pair in TINY_PAIRS]
    assert botstalk_jobs.corpus_pairs(limit=2) == [ResponsePair(*pair) for pair in TINY_PAIRS[:2]]


def test_corpus_pairs_keep_to_the_language_of_the_contexts(tiny_corpus):
    Dialogue.objects.filter(pk=tiny_corpus[0].pk).update(language="fr")
    Dialogue.objects.filter(pk=tiny_corpus[1].pk).update(language="en")
    english = botstalk_jobs.corpus_pairs(language="en")
    assert ResponsePair(*TINY_PAIRS[0]) not in english and ResponsePair(*TINY_PAIRS[2]) in english
    assert len(english) == len(TINY_PAIRS) - 2  # the unknown-language dialogues stay
    assert len(botstalk_jobs.corpus_pairs(language="und")) == len(TINY_PAIRS)


def test_a_turn_after_a_long_pause_is_no_response(tiny_corpus):
    Turn.objects.filter(text="I knew you could do it.").update(start=30.0, end=31.0)
    assert ResponsePair(*TINY_PAIRS[2]) not in botstalk_jobs.corpus_pairs()


def test_the_job_speaks_from_the_corpus_and_says_so(files, tiny_corpus):
    job = run_botstalk(files)
    assert job.result["candidates"] == "corpus" and job.result["pairs"] == len(TINY_PAIRS)
    assert job.result["dialogues_stored"] == 2 and job.result["emotion_labeler"] == ""
    assert job.result["pairs_language"] == "en"
    assert spoken() <= {response for _interaction, response in TINY_PAIRS}


def test_the_pool_speaks_for_an_empty_corpus(files):
    job = run_botstalk(files)
    assert job.result["candidates"] == "pool" and job.result["pairs"] == 0
    assert spoken() <= {text for texts in POOL.values() for text in texts}


def test_the_pool_speaks_on_request_even_with_a_corpus(files, tiny_corpus):
    job = run_botstalk(files, candidates="pool")
    assert job.result["candidates"] == "pool"
    assert spoken() <= {text for texts in POOL.values() for text in texts}


def test_an_extract_pairs_file_replaces_the_corpus_and_a_bad_one_fails_naming_the_line(files, tiny_corpus, tmp_path):
    path = tmp_path / "pairs.jsonl"
    rows = [{"interaction": "Any news?", "response": "The train is late.", "file": "x.srt"}]
    rows.append({"interaction": "Late again?", "response": "The train is always late."})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    job = run_botstalk(files, pairs_file=str(path), turns=2)
    assert job.result["candidates"] == "corpus" and job.result["pairs"] == 2
    assert spoken() <= {"The train is late.", "The train is always late."}
    path.write_text('{"interaction": "Any news?"}\n')
    bad = start_job("botstalk", {**files, "pairs_file": str(path)})
    bad.refresh_from_db()
    assert bad.status == JobRun.FAILED and bad.error == f"{path}:1: missing 'response'"


def test_the_emotion_agent_ranks_without_labels_until_a_dialogue_classifier_is_trained():
    assert botstalk_jobs.load_emotion_labeler(None) == (None, "")
    with pytest.raises(JobCannotRun, match="no dialogue model version 99"):
        botstalk_jobs.load_emotion_labeler(99)


def test_the_command_chooses_the_candidates_and_says_where_they_came_from(files, tiny_corpus, capsys):
    from django.core.management import call_command

    call_command("botstalk", "--pools", files["pools"], "--contexts", files["contexts"], "--turns", "2")
    assert "agents spoke from the corpus (6 pairs)" in capsys.readouterr().out
    call_command("botstalk", "--pools", files["pools"], "--contexts", files["contexts"], "--candidates", "pool")
    assert "agents spoke from the pool (0 pairs)" in capsys.readouterr().out


def test_the_emotion_agent_ranks_by_the_newest_dialogue_classifier(files, tiny_corpus):
    from mlworkers.ml.classifier.dialogue_classifier import build_classifier
    from mlworkers.ml.classifier.model import TrainConfig
    from mlworkers.registry import register_model_version
    from tests.mlworkers.tiny_models import tiny_encoder_path

    classifier = build_classifier(["Joyful", "Sad"], TrainConfig(base_model=tiny_encoder_path(), device="cpu", seed=7))
    version = register_model_version(ModelVersion.DIALOGUE, "tiny dialogue classifier", classifier, base_model="tiny")
    job = run_botstalk(files)
    assert job.result["emotion_labeler"] == f"model version {version.pk} (tiny dialogue classifier)"
    assert job.result["candidates"] == "corpus" and job.result["dialogues_stored"] == 2
    assert spoken() <= {response for _interaction, response in TINY_PAIRS}
