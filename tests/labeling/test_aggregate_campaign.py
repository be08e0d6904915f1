"""aggregate_campaign writes AggregatedLabel and crowd TurnLabels, idempotently."""

import pytest

from annotation.models import Label, TurnLabel
from labeling.models import AggregatedLabel, Assignment, Campaign
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def answered():
    campaign = Campaign.objects.create(name="Round 1")
    workers = make_workers(3)
    d = make_dialogues(4)
    make_answered_hit(
        campaign,
        workers,
        {
            d[0]: ["Angry", "Angry", "Furious"],
            d[1]: ["Sad", "Lonely", "Joyful"],
            d[2]: ["Neutral", "neutral ", "Sad"],  # a typed "neutral" counts as Neutral
            d[3]: ["Greeting", "greeting", "Sad"],  # a typed label that is not in the taxonomy
        },
    )
    return campaign, workers, d


def test_it_writes_the_majority_and_unresolved_items(answered):
    campaign, _, d = answered
    counts = aggregate_campaign(campaign)
    assert counts == {"items": 4, "majority": 3, "unresolved": 1, "turn_labels": 2}
    angry = AggregatedLabel.objects.get(campaign=campaign, dialogue=d[0])
    assert angry.label.name == "Angry" and angry.status == AggregatedLabel.MAJORITY
    assert angry.votes == {"Angry": 2, "Furious": 1} and angry.answer_count == 3
    assert angry.agreement == pytest.approx(2 / 3)
    assert angry.dawid_skene_label == "Angry" and 0 < angry.dawid_skene_confidence <= 1
    assert AggregatedLabel.objects.get(dialogue=d[1]).status == AggregatedLabel.UNRESOLVED
    assert AggregatedLabel.objects.get(dialogue=d[2]).label.name == "Neutral"


def test_it_writes_crowd_turn_labels_with_provenance(answered):
    campaign, _, d = answered
    aggregate_campaign(campaign)
    crowd = TurnLabel.objects.get(turn=d[0].turns.get(position=1), source=TurnLabel.CROWD)
    assert crowd.label.name == "Angry"
    posterior = crowd.provenance.pop("posterior")
    assert crowd.provenance == {
        "campaign": campaign.pk,
        "votes": {"Angry": 2, "Furious": 1},
        "workers": 3,
        "agreement": pytest.approx(2 / 3),
        "answers": 3,
        "policy": "fixed",
    }
    # the gold carries its uncertainty: the Dawid-Skene posterior, most probable label first
    assert next(iter(posterior)) == "Angry" and sum(posterior.values()) == pytest.approx(1.0, abs=0.01)
    assert set(posterior) <= {"Angry", "Furious", "Sad", "Lonely", "Joyful", "Neutral", "Greeting"}
    assert not TurnLabel.objects.filter(turn__dialogue=d[1]).exists()


def test_running_it_twice_changes_nothing(answered):
    campaign, _, _ = answered
    aggregate_campaign(campaign)
    fields = ("pk", "label", "votes", "status", "dawid_skene_confidence", "updated_at")
    first = list(AggregatedLabel.objects.order_by("pk").values(*fields))
    aggregate_campaign(campaign)
    assert list(AggregatedLabel.objects.order_by("pk").values(*fields)) == first  # not even touched
    assert TurnLabel.objects.filter(source=TurnLabel.CROWD).count() == 2


def test_a_typed_majority_becomes_a_label_once_the_label_is_accepted(answered):
    campaign, _, d = answered
    aggregate_campaign(campaign)
    typed = AggregatedLabel.objects.get(dialogue=d[3])
    assert typed.status == AggregatedLabel.MAJORITY and typed.label is None and typed.label_text == "Greeting"
    Label.objects.create(name="Greeting", kind=Label.PROPOSED)
    aggregate_campaign(campaign)
    typed.refresh_from_db()
    assert typed.label.name == "Greeting"
    assert TurnLabel.objects.get(turn__dialogue=d[3], source=TurnLabel.CROWD).label.name == "Greeting"


def test_rejected_answers_do_not_count_and_a_lost_majority_removes_the_crowd_label(answered):
    campaign, workers, d = answered
    aggregate_campaign(campaign)
    Assignment.objects.filter(worker=workers[0]).update(status=Assignment.REJECTED)
    aggregate_campaign(campaign)
    angry = AggregatedLabel.objects.get(dialogue=d[0])
    assert angry.answer_count == 2 and angry.status == AggregatedLabel.UNRESOLVED  # Angry vs Furious
    assert not TurnLabel.objects.filter(turn__dialogue=d[0], source=TurnLabel.CROWD).exists()


def test_quiz_items_are_not_aggregated():
    campaign = Campaign.objects.create(name="Quiz only")
    workers = make_workers(3)
    make_answered_hit(campaign, workers, {}, quiz_answers=[["Sad", "Sad", "Sad"]])
    assert aggregate_campaign(campaign)["items"] == 0


def test_the_aggregate_command_prints_its_counts(answered, capsys):
    import json

    from django.core.management import call_command

    campaign, _, _ = answered
    call_command("aggregate_campaign", str(campaign.pk))
    assert json.loads(capsys.readouterr().out) == {
        "tiebreak_hits": 0,
        "follow_up_hits": 0,
        "items": 4,
        "majority": 3,
        "unresolved": 1,
        "turn_labels": 2,
    }


def test_a_worker_meeting_a_turn_twice_is_counted_once(answered):
    from labeling.models import HIT

    campaign, workers, d = answered
    # d[1] got Sad, Lonely, Joyful; worker 1 (Sad) lands in two tie-break HITs of it and says Sad
    # again: counted three times that would be 3 of 5
    make_answered_hit(campaign, [workers[0]], {d[1]: ["Sad"]}, kind=HIT.TIE_BREAK)
    make_answered_hit(campaign, [workers[0]], {d[1]: ["Sad"]}, kind=HIT.TIE_BREAK)
    aggregate_campaign(campaign)
    row = AggregatedLabel.objects.get(dialogue=d[1])
    assert row.answer_count == 3 and row.status == AggregatedLabel.UNRESOLVED
