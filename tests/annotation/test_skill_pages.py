"""Skill labels in the corpus pages (sources, dialogue list, dialogue page) and Analysis → Skills."""

import pytest
from django.urls import reverse

from annotation.analysis.skills import summarise
from annotation.models import Dialogue, ModelVersion, SkillContext, Turn, TurnSkill


def test_summarise_means_top_shares_agreement_and_passes():
    rows = [
        ("", "classifier", "persona", {"persona": 0.8, "empathy": 0.2}, None),
        ("", "classifier", "empathy", {"persona": 0.4, "empathy": 0.6}, None),
        ("botstalk", "botstalk", "persona", {"persona": 0.9, "empathy": 0.1}, False),
        ("botstalk", "botstalk", "empathy", {"persona": 0.7, "empathy": 0.3}, True),
    ]
    skills, groups = summarise(rows)
    assert skills == ["persona", "empathy"]
    subtitles, agents = groups
    assert subtitles.name == "subtitles" and agents.name == "botstalk (agents)"
    assert subtitles.mean_distribution(skills) == pytest.approx({"persona": 0.6, "empathy": 0.4})
    assert subtitles.top_shares(skills) == {"persona": 0.5, "empathy": 0.5}
    assert agents.agreement == 0.5 and agents.passed_mic_share == 0.5  # the empathy agent's turn reads as persona


@pytest.fixture
def machine_dialogue(db, tiny_corpus):
    version = ModelVersion.objects.create(kind=ModelVersion.SKILL, name="skills v1", label_names=["persona", "empathy"])
    dialogue = Dialogue.objects.create(
        source=Dialogue.BOTSTALK, content_hash="bt-1", turn_count=2, external_id="bt1-0:x"
    )
    texts = [("I keep bees on my roof.", "persona", {"persona": 0.9, "empathy": 0.1}, False)]
    texts.append(("How lovely, that must be calming.", "empathy", {"persona": 0.2, "empathy": 0.8}, True))
    for position, (text, skill, distribution, passed) in enumerate(texts):
        turn = Turn.objects.create(dialogue=dialogue, position=position, text=text)
        TurnSkill.objects.create(
            turn=turn,
            source=TurnSkill.BOTSTALK,
            model_version=version,
            skill=skill,
            distribution=distribution,
            passed_mic=passed,
        )
    SkillContext.objects.create(dialogue=dialogue, kind="persona", position=0, text="I am a beekeeper.")
    labeled = tiny_corpus[0].turns.first()
    TurnSkill.objects.create(
        turn=labeled,
        source=TurnSkill.CLASSIFIER,
        model_version=version,
        skill="empathy",
        distribution={"persona": 0.25, "empathy": 0.75},
    )
    return dialogue, labeled


def test_the_corpus_page_counts_dialogues_per_source_and_lists_them(client, researcher, machine_dialogue):
    client.force_login(researcher)
    page = client.get(reverse("annotation:corpus")).content.decode()
    assert "BotsTalk (machine-made)" in page and "?source=botstalk" in page
    listing = client.get(reverse("annotation:dialogues"), {"source": "botstalk"}).content.decode()
    assert "I keep bees on my roof." in listing and "Where were you" not in listing
    assert "Where were you the whole night?" in client.get(reverse("annotation:dialogues")).content.decode()
    assert client.get(reverse("annotation:dialogues"), {"source": "nope"}).status_code == 404


def test_the_dialogue_page_shows_agents_mic_passes_distributions_and_contexts(client, researcher, machine_dialogue):
    dialogue, labeled = machine_dialogue
    client.force_login(researcher)
    page = client.get(reverse("annotation:dialogue", args=[dialogue.pk])).content.decode()
    assert "agent <strong>empathy</strong> (took the mic)" in page
    assert "agent <strong>persona</strong>" in page and "persona 0.90, empathy 0.10" in page
    assert "I am a beekeeper." in page
    other = client.get(reverse("annotation:dialogue", args=[labeled.dialogue_id])).content.decode()
    assert "top <strong>empathy</strong>" in other and "persona 0.25, empathy 0.75" in other
    assert "Skill contexts" not in other


def test_the_skills_analysis_page_shows_each_corpus(client, researcher, machine_dialogue):
    client.force_login(researcher)
    page = client.get(reverse("annotation:analysis_skills")).content.decode()
    assert "botstalk (agents)" in page and "subtitles" in page
    assert "0.550" in page  # botstalk agents' mean persona probability: (0.9 + 0.2) / 2
    assert 'id="chart-figure"' in page


def test_skill_pages_are_staff_only(client, annotators, machine_dialogue):
    client.force_login(annotators[0])
    for url in (reverse("annotation:analysis_skills"), reverse("annotation:dialogue", args=[machine_dialogue[0].pk])):
        assert client.get(url).status_code == 403


def test_the_skills_page_without_a_classifier_says_how_to_train_one(client, researcher, db):
    client.force_login(researcher)
    assert "train_skill_classifier" in client.get(reverse("annotation:analysis_skills")).content.decode()
