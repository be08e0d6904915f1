"""The flows page on data shaped like the demo's (`manage.py demo_setup`): its generated corpus
ingested, the crowd's gold on the last turn of the campaign's dialogues, and a dialogue classifier's
silver label on every turn (bulk annotation). Opened from the menu, without a choice of labels,
the page draws a flow; the gold alone cannot make one (one labeled turn per dialogue)."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.demo_corpus.generator import TRUTH_FILE, generate, normalised, write_corpus
from annotation.models import Dialogue, Label, ModelVersion, Prediction, Turn, TurnLabel
from annotation.taxonomy import LABEL_NAMES

pytestmark = pytest.mark.django_db

DEMO_SIZE = 600  # a quarter of the demo's 2,400 dialogues: the same films, fewer of them
CAMPAIGN_PER_LABEL = 9  # demo_build's candidates per label


@pytest.fixture
def demo_corpus(tmp_path, staff_client):
    write_corpus(generate(DEMO_SIZE), tmp_path)
    call_command("ingest", str(tmp_path), "--genre", "Drama", stdout=io.StringIO())
    truth = [json.loads(line) for line in (tmp_path / TRUTH_FILE).read_text().splitlines()]
    return {normalised(r["last_turn"]): r["label"] for r in truth if r["label"]}


@pytest.fixture
def staff_client(client, researcher):
    client.force_login(researcher)
    return client


def last_turns() -> list[Turn]:
    dialogues = Dialogue.objects.filter(language="en").prefetch_related("turns")
    return [max(d.turns.all(), key=lambda t: t.position) for d in dialogues]


def add_gold(truth: dict[str, str]) -> int:
    """The crowd's majority on the last turn of up to CAMPAIGN_PER_LABEL dialogues per label."""
    labels, taken, gold = {label.name: label for label in Label.objects.all()}, {}, []
    for turn in last_turns():
        name = truth.get(normalised(turn.text))
        if name and taken.get(name, 0) < CAMPAIGN_PER_LABEL:
            taken[name] = taken.get(name, 0) + 1
            gold.append(TurnLabel(turn=turn, label=labels[name], source=TurnLabel.CROWD))
    TurnLabel.objects.bulk_create(gold)
    return len(gold)


def add_silver() -> ModelVersion:
    """Bulk annotation's top label for every turn (a stand-in classifier: a label per position)."""
    version = ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="EB+ round 2", base_model="minilm")
    labels = list(Label.objects.order_by("position"))
    Prediction.objects.bulk_create(
        Prediction(
            turn=turn, model_version=version, label=labels[(turn.dialogue_id + turn.position) % 5], confidence=0.8
        )
        for turn in Turn.objects.all()
    )
    return version


def test_the_demos_flows_page_draws_a_flow(demo_corpus, staff_client):
    assert add_gold(demo_corpus) > 2 * len(LABEL_NAMES)
    add_silver()
    response = staff_client.get(reverse("annotation:analysis_flows"))
    flows = response.context["flows"]
    assert response.context["kind"] == "silver"
    assert flows.links and flows.dialogues == Dialogue.objects.count()
    assert response.context["chart"]["data"][0]["type"] == "sankey"
    html = response.content.decode()
    assert '<option value="silver" selected>' in html and "kind=silver" in html  # the form and the download say so


def test_the_demos_gold_alone_makes_no_flow_and_the_page_says_why(demo_corpus, staff_client):
    add_gold(demo_corpus)
    add_silver()
    response = staff_client.get(reverse("annotation:analysis_flows"), {"kind": "gold"})
    assert response.context["flows"].dialogues and not response.context["flows"].links
    assert "silver labels, written for every turn by bulk annotation, make a flow" in response.content.decode()


def test_a_round_trained_after_the_bulk_annotation_does_not_hide_its_flow(demo_corpus, staff_client):
    labeled = add_silver()
    ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="EB+ round 3", base_model="minilm")
    response = staff_client.get(reverse("annotation:analysis_flows"))
    assert response.context["flows"].links
    assert f'<option value="{labeled.pk}" selected>' in response.content.decode()


def test_before_bulk_annotation_the_page_shows_the_gold(demo_corpus, staff_client):
    add_gold(demo_corpus)
    ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="not run yet", base_model="minilm")
    response = staff_client.get(reverse("annotation:analysis_flows"))
    assert response.context["kind"] == "gold" and response.context["single_turn"] is not None
