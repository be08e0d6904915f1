"""The audit log under real concurrency (threads, each with its own PostgreSQL connection): a
decision or a payment raced from several places is made once and recorded once, and the database
itself refuses to change the log."""

from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction

from annotation.models import AuditEntry
from annotation.record import audit
from labeling.models import AggregatedLabel, Assignment, Campaign
from labeling.services import adjudication, payments
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers
from tests.threads import run_together

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def campaign():
    campaign = Campaign.objects.create(name="Race", quiz_per_hit=0, reward=Decimal("0.40"))
    d = make_dialogues(2)
    answers = {d[0]: ["Sad", "Lonely", "Joyful"], d[1]: ["Sad", "Sad", "Angry"]}
    make_answered_hit(campaign, make_workers(3), answers, status=Assignment.APPROVED)
    aggregate_campaign(campaign)
    return campaign


def test_reviewers_racing_on_one_item_settle_it_once(campaign, django_user_model):
    reviewers = [django_user_model.objects.create_user(f"rev{i}", is_staff=True) for i in range(4)]
    row = AggregatedLabel.objects.get(campaign=campaign, status=AggregatedLabel.UNRESOLVED)
    labels = ["Sad", "Lonely", "Joyful", "Sad"]

    def decide(index: int):
        return adjudication.settle(AggregatedLabel.objects.get(pk=row.pk), labels[index], reviewers[index], "race")

    results = run_together(4, decide)
    refused = [r for r in results if isinstance(r, adjudication.AdjudicationRefused)]
    assert len(refused) == 3 and len(results) == 4
    assert AuditEntry.objects.filter(kind=audit.ADJUDICATED).count() == 1
    settled = AggregatedLabel.objects.get(pk=row.pk)
    entry = AuditEntry.objects.get(kind=audit.ADJUDICATED)
    assert entry.actor == settled.adjudicated_by.username and entry.new["label"] == settled.label_text


def test_payment_stamps_raced_are_recorded_once(campaign):
    payments.record_payments(campaign)
    results = run_together(4, lambda _index: payments.mark_paid(Campaign.objects.get(pk=campaign.pk)))
    assert sorted(results) == [0, 0, 0, 3]
    assert AuditEntry.objects.filter(kind=audit.PAID).count() == 3


def test_the_database_refuses_to_change_or_remove_an_entry(campaign):
    entry = AuditEntry.objects.filter(kind=audit.GOLD_CHANGED).first()
    for statement in (
        "UPDATE annotation_auditentry SET reason = 'x' WHERE id = %s",
        "DELETE FROM annotation_auditentry WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="never updated or deleted"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [entry.pk])
    assert AuditEntry.objects.get(pk=entry.pk).reason == entry.reason
