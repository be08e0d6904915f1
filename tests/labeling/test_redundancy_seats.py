"""Redundancy policies end to end in the tables: the first seats a HIT gets, one follow-up seat
at a time for unsettled items only, the cap, the gold of an item settled by the model's agreement,
and never a worker answering an item twice."""

import pytest

from annotation.models import Label, ModelVersion, Prediction
from labeling.actions.claim import open_hits_for
from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, HITItem
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits
from labeling.work import seats
from labeling.work.hits import build_hits
from tests.labeling import hit_factory
from tests.labeling.crowd_factories import answer, make_answered_hit, make_dialogues, make_workers

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank


def _predict(dialogue, label: str, confidence: float, version: ModelVersion) -> None:
    turn = dialogue.turns.order_by("-position").first()
    Prediction.objects.create(
        turn=turn,
        model_version=version,
        label=Label.objects.get(name=label),
        confidence=confidence,
        top_k=[[label, confidence], ["Neutral", 0.01], ["Joyful", 0.01]],
    )


def _weak_model() -> ModelVersion:
    return ModelVersion.objects.create(kind=ModelVersion.WEAK, name="weak", base_model="x")


def _seats_of(dialogue) -> list[int]:
    return sorted(
        HIT.objects.filter(items__dialogue=dialogue, items__quiz_question__isnull=True).values_list(
            "required_workers", flat=True
        )
    )


# --- first seats --------------------------------------------------------------------------------


def test_fixed_gives_every_hit_workers_per_hit_seats():
    campaign = hit_factory.open_campaign(quiz_per_hit=1, dialogues_per_hit=2, workers_per_hit=3)
    hits = build_hits(campaign, hit_factory.make_dialogues(3), seed=1)
    assert [hit.required_workers for hit in hits] == [3, 3]


def test_until_agreement_gives_every_hit_two_seats_and_its_quiz_screen():
    campaign = hit_factory.open_campaign(quiz_per_hit=1, dialogues_per_hit=2, redundancy_policy="until_agreement")
    hits = build_hits(campaign, hit_factory.make_dialogues(3), seed=1)
    assert [hit.required_workers for hit in hits] == [2, 2]
    for hit in hits:
        assert HITItem.objects.filter(hit=hit, quiz_question__isnull=False).exists()


def test_model_informed_bundles_confident_items_into_one_seat_hits():
    campaign = hit_factory.open_campaign(
        quiz_per_hit=1, dialogues_per_hit=5, redundancy_policy="model_informed", model_threshold=0.9
    )
    sure, unsure, unknown = hit_factory.make_dialogues(3)
    model = _weak_model()
    _predict(sure, "Sad", 0.95, model)
    _predict(unsure, "Sad", 0.6, model)
    build_hits(campaign, [sure, unsure, unknown], seed=1)
    assert _seats_of(sure) == [1]
    assert _seats_of(unsure) == [2] and _seats_of(unknown) == [2]
    assert HIT.objects.filter(campaign=campaign).count() == 2


# --- follow-up seats ----------------------------------------------------------------------------


@pytest.fixture
def agreeing_and_split():
    campaign = Campaign.objects.create(
        name="Until", status=Campaign.OPEN, redundancy_policy="until_agreement", quiz_per_hit=0
    )
    workers = make_workers(5)
    d = make_dialogues(2)
    hit = make_answered_hit(campaign, workers[:2], {d[0]: ["Sad", "Sad"], d[1]: ["Sad", "Angry"]})
    return campaign, workers, d, hit


def test_it_opens_one_seat_only_for_the_item_without_a_majority(agreeing_and_split):
    campaign, _, d, _ = agreeing_and_split
    hits = create_follow_up_hits(campaign, seed=1)
    assert [(hit.kind, hit.required_workers) for hit in hits] == [(HIT.FOLLOW_UP, 1)]
    assert list(HITItem.objects.filter(hit=hits[0]).values_list("dialogue_id", flat=True)) == [d[1].pk]


def test_it_creates_nothing_more_while_the_follow_up_waits(agreeing_and_split):
    campaign, *_ = agreeing_and_split
    create_follow_up_hits(campaign, seed=1)
    assert create_follow_up_hits(campaign, seed=1) == []
    assert HIT.objects.filter(campaign=campaign, kind=HIT.FOLLOW_UP).count() == 1


def test_it_waits_for_a_hit_still_missing_answers(agreeing_and_split):
    campaign, _, _, hit = agreeing_and_split
    Assignment.objects.filter(pk=hit.assignments.order_by("pk").first().pk).update(status=Assignment.ACCEPTED)
    assert create_follow_up_hits(campaign) == []


def test_it_stops_at_the_cap_and_goes_on_below_it(agreeing_and_split):
    campaign, workers, d, _ = agreeing_and_split
    create_follow_up_hits(campaign, seed=1)
    _answer_follow_up(campaign, workers[2], d[1], "Joyful")  # Sad, Angry, Joyful: no majority, 3 = cap
    assert create_follow_up_hits(campaign, seed=1) == []
    Campaign.objects.filter(pk=campaign.pk).update(redundancy_cap=5)
    campaign.refresh_from_db()
    more = create_follow_up_hits(campaign, seed=1)
    assert len(more) == 1 and more[0].required_workers == 1
    _answer_follow_up(campaign, workers[3], d[1], "Angry")  # Angry 2 of 4: still no majority
    assert len(create_follow_up_hits(campaign, seed=1)) == 1
    _answer_follow_up(campaign, workers[4], d[1], "Angry")  # Angry 3 of 5
    assert create_follow_up_hits(campaign, seed=1) == []
    aggregate_campaign(campaign)
    assert AggregatedLabel.objects.get(campaign=campaign, dialogue=d[1]).label.name == "Angry"


def test_no_worker_who_answered_the_item_may_claim_its_follow_up(agreeing_and_split):
    campaign, workers, _, _ = agreeing_and_split
    follow_up = create_follow_up_hits(campaign, seed=1)[0]
    for answered in workers[:2]:
        assert follow_up not in open_hits_for(answered, campaign)
    assert follow_up in open_hits_for(workers[2], campaign)


def test_fixed_leaves_extra_seats_to_the_tie_break(agreeing_and_split):
    campaign, *_ = agreeing_and_split
    Campaign.objects.filter(pk=campaign.pk).update(redundancy_policy="fixed", tie_breaking=False)
    campaign.refresh_from_db()
    assert create_follow_up_hits(campaign) == []
    Campaign.objects.filter(pk=campaign.pk).update(tie_breaking=True)
    campaign.refresh_from_db()
    assert [hit.kind for hit in create_follow_up_hits(campaign)] == [HIT.TIE_BREAK]


def _answer_follow_up(campaign, worker, dialogue, text: str) -> None:
    """Answer the open follow-up HIT of `dialogue` as `worker` (through the claim's own filter)."""
    hit = open_hits_for(worker, campaign).filter(kind=HIT.FOLLOW_UP, items__dialogue=dialogue).get()
    assignment = Assignment.objects.create(
        hit=hit, worker=worker, status=Assignment.SUBMITTED, expires_at=hit.created_at
    )
    answer(assignment, hit.items.get(dialogue=dialogue), text)
    seats.recount(HIT.objects.filter(pk=hit.pk))  # these rows bypassed the claim


# --- model_informed: one answer that agrees with the model --------------------------------------


@pytest.fixture
def one_seat_answers():
    campaign = Campaign.objects.create(
        name="Model", status=Campaign.OPEN, redundancy_policy="model_informed", model_threshold=0.9, quiz_per_hit=0
    )
    d = make_dialogues(2)
    model = _weak_model()
    _predict(d[0], "Sad", 0.95, model)
    _predict(d[1], "Sad", 0.95, model)
    make_answered_hit(campaign, make_workers(1), {d[0]: ["Sad"], d[1]: ["Angry"]})
    return campaign, d


def test_an_answer_equal_to_the_confident_models_top_is_the_gold(one_seat_answers):
    campaign, d = one_seat_answers
    aggregate_campaign(campaign)
    agreed = AggregatedLabel.objects.get(campaign=campaign, dialogue=d[0])
    assert agreed.label.name == "Sad" and agreed.answer_count == 1
    assert AggregatedLabel.objects.get(campaign=campaign, dialogue=d[1]).label is None


def test_an_answer_against_the_model_goes_on_as_until_agreement(one_seat_answers):
    campaign, d = one_seat_answers
    hits = create_follow_up_hits(campaign, seed=1)
    assert len(hits) == 1
    assert list(HITItem.objects.filter(hit=hits[0]).values_list("dialogue_id", flat=True)) == [d[1].pk]
