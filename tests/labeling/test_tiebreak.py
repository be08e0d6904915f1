"""Tie-breaking: unresolved items of complete HITs go to two more workers; 3 of 5 then decides."""

import pytest

from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, HITItem
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from labeling.task_types.last_turn_label.tiebreak import create_tiebreak_hits
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank


@pytest.fixture
def split_votes():
    campaign = Campaign.objects.create(name="Ties", tie_breaking=True, quiz_per_hit=2, dialogues_per_hit=15)
    workers = make_workers(5)
    d = make_dialogues(3)
    hit = make_answered_hit(
        campaign,
        workers[:3],
        {d[0]: ["Angry", "Sad", "Furious"], d[1]: ["Sad", "Sad", "Joyful"], d[2]: ["Joyful", "Content", "Proud"]},
    )
    return campaign, workers, d, hit


def test_it_is_off_by_default(split_votes):
    campaign, *_ = split_votes
    campaign.tie_breaking = False
    assert create_tiebreak_hits(campaign) == []
    assert Campaign._meta.get_field("tie_breaking").default is False


def test_unresolved_items_go_into_a_tiebreak_hit_with_quiz_items(split_votes):
    campaign, _, d, hit = split_votes
    hits = create_tiebreak_hits(campaign, seed=1)
    assert len(hits) == 1
    tiebreak = hits[0]
    assert tiebreak.kind == HIT.TIE_BREAK and tiebreak.required_workers == 2
    items = list(tiebreak.items.all())
    assert {i.dialogue_id for i in items if not i.is_quiz} == {d[0].pk, d[2].pk}
    assert sum(1 for i in items if i.is_quiz) == 2
    original = HITItem.objects.get(hit=hit, dialogue=d[0])
    copied = next(i for i in items if i.dialogue_id == d[0].pk)
    assert copied.target_turn_id == original.target_turn_id and copied.choices == original.choices


def test_running_it_again_creates_nothing_more(split_votes):
    campaign, *_ = split_votes
    create_tiebreak_hits(campaign)
    assert create_tiebreak_hits(campaign) == []
    assert HIT.objects.filter(kind=HIT.TIE_BREAK).count() == 1


def test_a_hit_still_waiting_for_answers_is_not_tie_broken(split_votes):
    campaign, _, _, hit = split_votes
    one = Assignment.objects.filter(hit=hit).order_by("pk").first()
    Assignment.objects.filter(pk=one.pk).update(status=Assignment.ACCEPTED)
    assert create_tiebreak_hits(campaign) == []


def test_the_majority_of_all_five_answers_decides(split_votes):
    campaign, workers, d, _ = split_votes
    tiebreak = create_tiebreak_hits(campaign)[0]
    tiebreak.delete()  # answer it with the factory instead, as two more workers would
    make_answered_hit(campaign, workers[3:], {d[0]: ["Angry", "Angry"], d[2]: ["Joyful", "Proud"]}, kind=HIT.TIE_BREAK)
    aggregate_campaign(campaign)
    first = AggregatedLabel.objects.get(dialogue=d[0])
    assert first.label.name == "Angry" and first.answer_count == 5 and first.votes["Angry"] == 3
    assert AggregatedLabel.objects.get(dialogue=d[2]).status == AggregatedLabel.UNRESOLVED  # 2 of 5 is not enough


def test_without_enough_quiz_questions_the_tiebreak_hit_has_none(split_votes):
    campaign, *_ = split_votes
    campaign.quiz_per_hit = 500
    hit = create_tiebreak_hits(campaign)[0]
    assert not any(item.is_quiz for item in hit.items.all())
