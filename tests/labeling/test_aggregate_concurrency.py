"""Aggregations, tie-breaks and payments racing for real: threads, each with its own PostgreSQL
connection. SQLite serialises writers and ignores row locks, so these only mean something there."""

from decimal import Decimal

import pytest
from django.db import connection

from annotation.models import TurnLabel
from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, PaymentEntry
from labeling.services.payments import record_payments
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits
from labeling.task_types.last_turn_label.tiebreak import create_tiebreak_hits
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers
from tests.threads import run_together

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def campaign():
    campaign = Campaign.objects.create(name="Race", tie_breaking=True, quiz_per_hit=0, reward=Decimal("0.40"))
    d = make_dialogues(6)
    answers = {
        dialogue: ["Sad", "Sad", "Angry"] if i % 2 else ["Sad", "Angry", "Joyful"] for i, dialogue in enumerate(d)
    }
    make_answered_hit(campaign, make_workers(3), answers, status=Assignment.APPROVED)
    return campaign


def test_concurrent_aggregations_write_each_row_once(campaign):
    results = run_together(4, lambda _index: aggregate_campaign(Campaign.objects.get(pk=campaign.pk)))
    assert [r for r in results if isinstance(r, Exception)] == []
    assert AggregatedLabel.objects.filter(campaign=campaign).count() == 6
    assert TurnLabel.objects.filter(source=TurnLabel.CROWD).count() == 3


def test_concurrent_tie_breaks_bundle_each_item_once(campaign):
    results = run_together(4, lambda _index: create_tiebreak_hits(Campaign.objects.get(pk=campaign.pk)))
    assert [r for r in results if isinstance(r, Exception)] == []
    assert HIT.objects.filter(campaign=campaign, kind=HIT.TIE_BREAK).count() == 1
    assert HIT.objects.get(kind=HIT.TIE_BREAK).items.count() == 3


def test_concurrent_follow_up_runs_open_one_seat_per_unsettled_item(campaign):
    Campaign.objects.filter(pk=campaign.pk).update(redundancy_policy="until_agreement", redundancy_cap=5)
    results = run_together(4, lambda _index: create_follow_up_hits(Campaign.objects.get(pk=campaign.pk)))
    assert [r for r in results if isinstance(r, Exception)] == []
    follow_ups = HIT.objects.filter(campaign=campaign, kind=HIT.FOLLOW_UP)
    assert follow_ups.count() == 1 and follow_ups.get().required_workers == 1
    assert follow_ups.get().items.count() == 3  # the three items without a majority, once each


def test_concurrent_payment_runs_pay_once(campaign):
    results = run_together(4, lambda _index: record_payments(Campaign.objects.get(pk=campaign.pk)))
    assert [r for r in results if isinstance(r, Exception)] == []
    assert PaymentEntry.objects.count() == 3
