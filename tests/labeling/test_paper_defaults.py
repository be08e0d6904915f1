"""A campaign made with the defaults is the papers' crowd task: 15 dialogues and 5 quiz items a
HIT, 3 workers, and the bonus at 3 of the 5 quiz items right (annotation/papers.py)."""

import pytest

from labeling.models import Assignment, PaymentEntry
from labeling.services.campaigns import create_campaign
from labeling.services.payments import approve_assignment, record_payments
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db


def test_a_campaign_made_with_defaults_has_the_papers_hit_shape():
    campaign = create_campaign("Defaults")
    shape = (campaign.dialogues_per_hit, campaign.quiz_per_hit, campaign.workers_per_hit, campaign.quiz_pass_mark)
    assert shape == (15, 5, 3, 3)


def test_a_campaign_made_with_defaults_pays_the_bonus_at_3_of_5_quiz_items_and_not_at_2():
    campaign = create_campaign("Defaults")
    assert campaign.bonus > 0
    workers = make_workers(3)
    dialogue = make_dialogues(1)[0]
    hit = make_answered_hit(campaign, workers, {dialogue: ["Sad"] * 3}, quiz_answers=[["?"] * 3] * 5)
    marks = {"w1": 3, "w2": 2, "w3": 5}
    for worker in workers:
        assignment = Assignment.objects.get(hit=hit, worker=worker)
        Assignment.objects.filter(pk=assignment.pk).update(quiz_correct=marks[worker.external_id])
        approve_assignment(assignment)
    record_payments(campaign)
    bonus_to = set(PaymentEntry.objects.filter(kind=PaymentEntry.BONUS).values_list("worker__external_id", flat=True))
    assert bonus_to == {"w1", "w3"}
