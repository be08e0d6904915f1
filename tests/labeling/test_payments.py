"""Approve, reject, and a ledger that pays once per assignment and kind."""

from decimal import Decimal

import pytest

from labeling.models import Assignment, Campaign, PaymentEntry
from labeling.services.payments import (
    ReviewRefused,
    approve_assignment,
    approve_submitted,
    mark_paid,
    payments_due,
    record_payments,
    reject_assignment,
)
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted():
    campaign = Campaign.objects.create(name="Paid", reward=Decimal("0.40"), bonus=Decimal("0.10"), quiz_pass_mark=2)
    workers = make_workers(3)
    d = make_dialogues(1)
    # worker 1 gets both quiz questions right, worker 2 one, worker 3 none
    hit = make_answered_hit(campaign, workers, {d[0]: ["Sad", "Sad", "Sad"]}, quiz_answers=[["?"] * 3, ["?"] * 3])
    marks = {workers[0]: 2, workers[1]: 1, workers[2]: 0}
    for worker, mark in marks.items():
        Assignment.objects.filter(hit=hit, worker=worker).update(quiz_correct=mark)
    return campaign, {w: Assignment.objects.get(hit=hit, worker=w) for w in workers}, workers


def test_approved_assignments_earn_the_reward_and_the_bonus_when_the_mark_is_met(submitted):
    campaign, assignments, workers = submitted
    for assignment in assignments.values():
        approve_assignment(assignment)
    assert record_payments(campaign) == {"approved": 3, "new_entries": 4}
    kinds = set(PaymentEntry.objects.values_list("worker__external_id", "kind"))
    assert kinds == {("w1", "reward"), ("w1", "bonus"), ("w2", "reward"), ("w3", "reward")}


def test_recording_twice_pays_nothing_more(submitted):
    campaign, assignments, _ = submitted
    for assignment in assignments.values():
        approve_assignment(assignment)
    record_payments(campaign)
    assert record_payments(campaign)["new_entries"] == 0
    assert PaymentEntry.objects.count() == 4


def test_unapproved_and_rejected_assignments_earn_nothing(submitted):
    campaign, assignments, workers = submitted
    approve_assignment(assignments[workers[0]])
    reject_assignment(assignments[workers[1]])
    record_payments(campaign)
    assert set(PaymentEntry.objects.values_list("worker__external_id", flat=True)) == {"w1"}


def test_payments_due_sums_per_worker_until_marked_paid(submitted):
    campaign, assignments, _ = submitted
    for assignment in assignments.values():
        approve_assignment(assignment)
    record_payments(campaign)
    due = payments_due(campaign)
    assert [(d.worker, d.rewards, d.bonuses, d.total) for d in due] == [
        ("w1", Decimal("0.40"), Decimal("0.10"), Decimal("0.50")),
        ("w2", Decimal("0.40"), Decimal("0"), Decimal("0.40")),
        ("w3", Decimal("0.40"), Decimal("0"), Decimal("0.40")),
    ]
    assert mark_paid(campaign) == 4
    assert payments_due(campaign) == []
    assert mark_paid(campaign) == 0


def test_a_paid_assignment_cannot_be_rejected(submitted):
    campaign, assignments, workers = submitted
    approve_assignment(assignments[workers[0]])
    record_payments(campaign)
    mark_paid(campaign)
    with pytest.raises(ReviewRefused, match="already paid"):
        reject_assignment(assignments[workers[0]])


def test_rejecting_an_approved_unpaid_assignment_drops_its_due_entries(submitted):
    campaign, assignments, workers = submitted
    approve_assignment(assignments[workers[0]])
    record_payments(campaign)
    reject_assignment(assignments[workers[0]])
    assert not PaymentEntry.objects.exists()
    assert record_payments(campaign)["new_entries"] == 0


def test_an_accepted_assignment_cannot_be_approved(submitted):
    _, assignments, workers = submitted
    Assignment.objects.filter(pk=assignments[workers[2]].pk).update(status=Assignment.ACCEPTED)
    with pytest.raises(ReviewRefused, match="is accepted"):
        approve_assignment(assignments[workers[2]])


def test_the_record_payments_command(submitted, capsys):
    from django.core.management import call_command

    campaign, assignments, _ = submitted
    for assignment in assignments.values():
        approve_assignment(assignment)
    call_command("record_payments", str(campaign.pk))
    out = capsys.readouterr().out
    assert "4 new entries for 3 approved assignments" in out and "w1\t$0.50" in out  # money, in the campaign's currency


def test_approving_all_submitted_work_skips_blocked_workers(submitted):
    campaign, assignments, workers = submitted
    from labeling.models import Worker

    Worker.objects.filter(pk=workers[2].pk).update(status=Worker.BLOCKED)
    assert approve_submitted(campaign) == 2
    assert approve_submitted(campaign) == 0
    assignments[workers[2]].refresh_from_db()
    assert assignments[workers[2]].status == Assignment.SUBMITTED
