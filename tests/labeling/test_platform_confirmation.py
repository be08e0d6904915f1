"""A crowd-platform worker's answers count only once the platform confirmed the submission."""

from decimal import Decimal

import pytest
from django.urls import reverse

from labeling.actions import SubmissionRefused
from labeling.actions.submit import confirm_platform_submission
from labeling.models import AggregatedLabel, Assignment, Campaign, PaymentEntry, Worker
from labeling.reports.campaign import campaign_report
from labeling.services.payments import ReviewRefused, approve_assignment, approve_submitted, record_payments
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def mixed():
    """One HIT: two site workers say Sad, two MTurk workers say Joyful (not confirmed yet)."""
    campaign = Campaign.objects.create(name="Mixed", reward=Decimal("0.40"), bonus=Decimal("0"))
    site = make_workers(2)
    mturk = [Worker.objects.create(platform=Worker.MTURK, external_id=f"A{i}") for i in (1, 2)]
    dialogue = make_dialogues(1)[0]
    make_answered_hit(campaign, site + mturk, {dialogue: ["Sad", "Sad", "Joyful", "Joyful"]})
    platform = list(Assignment.objects.filter(worker__in=mturk).order_by("worker__external_id"))
    return campaign, platform


def votes(campaign: Campaign) -> dict:
    aggregate_campaign(campaign)
    return AggregatedLabel.objects.get(campaign=campaign).votes


def test_pending_platform_answers_are_left_out_of_the_majority(mixed):
    campaign, _ = mixed
    assert votes(campaign) == {"Sad": 2}


def test_confirmed_platform_answers_count(mixed):
    campaign, platform = mixed
    assert confirm_platform_submission(platform[0]) is True
    assert votes(campaign) == {"Sad": 2, "Joyful": 1}
    confirm_platform_submission(platform[1])
    row = AggregatedLabel.objects.get(campaign=campaign)
    aggregate_campaign(campaign)
    row.refresh_from_db()
    assert row.votes == {"Sad": 2, "Joyful": 2} and row.status == AggregatedLabel.UNRESOLVED


def test_the_dashboard_shows_the_pending_count_and_leaves_them_out(mixed, client, researcher):
    campaign, platform = mixed
    report = campaign_report(campaign)
    assert report["progress"]["assignments_pending"] == 2
    assert report["progress"]["assignments_submitted"] == 2
    assert {row["worker"] for row in report["workers"]} == {"w1", "w2"}
    assert report["agreement"]["items"] == 1 and report["agreement"]["majority"] == 1
    client.force_login(researcher)
    html = client.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    assert "2 pending" in html
    confirm_platform_submission(platform[0])
    assert campaign_report(campaign)["progress"]["assignments_pending"] == 1


def test_pending_work_is_neither_approved_nor_paid(mixed):
    campaign, platform = mixed
    assert approve_submitted(campaign) == 2  # the two site workers
    with pytest.raises(ReviewRefused, match="pending"):
        approve_assignment(platform[0])
    assert record_payments(campaign) == {"approved": 2, "new_entries": 2}
    confirm_platform_submission(platform[0])
    assert approve_submitted(campaign) == 1
    assert record_payments(campaign)["new_entries"] == 1
    paid = set(PaymentEntry.objects.values_list("worker__external_id", flat=True))
    assert paid == {"w1", "w2", "A1"}


def test_confirming_twice_is_a_no_op(mixed):
    _, platform = mixed
    assert confirm_platform_submission(platform[0]) is True
    first = Assignment.objects.get(pk=platform[0].pk).platform_confirmed_at
    assert confirm_platform_submission(platform[0]) is False
    assert Assignment.objects.get(pk=platform[0].pk).platform_confirmed_at == first


def test_only_submitted_platform_work_is_confirmed(mixed):
    campaign, platform = mixed
    Assignment.objects.filter(pk=platform[0].pk).update(status=Assignment.ACCEPTED)
    with pytest.raises(SubmissionRefused, match="accepted"):
        confirm_platform_submission(platform[0])
    assert Assignment.objects.get(pk=platform[0].pk).platform_confirmed_at is None
    site = Assignment.objects.filter(hit__campaign=campaign, worker__platform=Worker.SITE).first()
    with pytest.raises(SubmissionRefused, match="site worker"):
        confirm_platform_submission(site)


def test_site_workers_count_at_once(db):
    campaign = Campaign.objects.create(name="Local")
    dialogue = make_dialogues(1)[0]
    make_answered_hit(campaign, make_workers(3), {dialogue: ["Sad", "Sad", "Joyful"]})
    assert votes(campaign) == {"Sad": 2, "Joyful": 1}
    assert not Assignment.objects.pending_confirmation().exists()


def test_the_command_confirms_by_the_platforms_ids_all_or_nothing(mixed):
    from django.core.management import CommandError, call_command

    campaign, platform = mixed
    for assignment, external in zip(platform, ["3ASONE", "3ASTWO"], strict=True):
        Assignment.objects.filter(pk=assignment.pk).update(platform_assignment_id=external)
    with pytest.raises(CommandError, match="3ASNONE: no assignment"):
        call_command("confirm_platform_submissions", str(campaign.pk), "3ASONE", "3ASNONE")
    assert Assignment.objects.pending_confirmation().count() == 2  # nothing half-saved
    call_command("confirm_platform_submissions", str(campaign.pk), "3ASONE", "3ASTWO")
    assert not Assignment.objects.pending_confirmation().exists()
    assert votes(campaign) == {"Sad": 2, "Joyful": 2}
