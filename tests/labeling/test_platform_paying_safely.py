"""Paying safely on the platforms (docs/crowd/paying-safely.md): currency, minimum hourly pay,
pause and resume, return requests, the status map, token expiry, the 10-assignment limit, https.
Prolific through `responses` with its documented shapes, MTurk through botocore's Stubber."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from botocore.stub import ANY
from django.urls import reverse
from django.utils import timezone

from jobs.models import JobRun
from labeling.models import HIT, Assignment, Campaign, PaymentEntry, Publication
from labeling.platforms import PlatformError, base, get_platform, mturk, publish_campaign
from labeling.platforms.costs import HourlyPay, hourly_rate
from labeling.platforms.prolific import API, ProlificPlatform
from labeling.platforms.sync import sync_publication
from labeling.services import payments
from tests.labeling.platform_helpers import draft_campaign, mturk_landing, prolific_sessions, slept, work_through_pages
from tests.labeling.test_platform_mturk import expect_get_hit, expect_list, expect_publish, listed, short_hit, stub
from tests.labeling.test_platform_prolific import (
    STUDY,
    answer_study_states,
    api,
    expect_workspace,
    study_created,
)

__all__ = ["api", "slept", "stub", "prolific_sessions"]
# HITs built with the built-in quiz bank; every Prolific landing is asked of Prolific (its stand-in)
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank", "prolific_sessions")]
SITE = "https://site.example"


# --- the rules, pure ------------------------------------------------------------------------------


def test_the_hourly_rate_is_the_reward_over_the_minutes_per_hit():
    assert hourly_rate(Decimal("2.70"), 20) == Decimal("8.10")
    assert hourly_rate(Decimal("0.40"), 20) == Decimal("1.20")
    with pytest.raises(ValueError):
        hourly_rate(Decimal("1"), 0)


def test_it_refuses_a_rate_below_the_minimum_naming_the_rate_and_the_setting():
    pay = HourlyPay("GBP", Decimal("0.40"), 20, Decimal("6.00"), measured_minutes=Decimal("30.0"))
    refusals = pay.refusals("Prolific", "PROLIFIC_MIN_HOURLY_RATE_GBP")
    assert len(refusals) == 2  # at the estimate and at the measured median
    assert "£1.20/h" in refusals[0] and "£0.80/h" in refusals[1] and "£6.00/h" in refusals[0]
    assert all("PROLIFIC_MIN_HOURLY_RATE_GBP" in refusal for refusal in refusals)
    assert HourlyPay("GBP", Decimal("2.70"), 20, Decimal("6.00")).refusals("Prolific", "X") == []


def test_a_request_token_knows_its_age_and_an_old_style_token_has_none():
    made = timezone.now() - timedelta(hours=25)
    token = payments.new_request_token(made)
    assert len(token) <= mturk.TOKEN_LENGTH
    assert payments.request_token_age(token) > mturk.TOKEN_TRUSTED_FOR
    assert payments.request_token_age("0123456789abcdef0123456789abcdef") is None


@pytest.mark.parametrize(
    ("status", "normalised"),
    [
        ("RESERVED", base.ACTIVE),
        ("ACTIVE", base.ACTIVE),
        ("AWAITING REVIEW", base.SUBMITTED),
        ("APPROVED", base.APPROVED),
        ("PARTIALLY APPROVED", base.APPROVED),
        ("REJECTED", base.REJECTED),
        ("RETURNED", base.RETURNED),
        ("TIMED-OUT", base.TIMED_OUT),  # not final: a participant may still complete
        ("SCREENED OUT", base.RETURNED),
        ("PROCESSING", base.UNKNOWN),
    ],
)
def test_every_documented_prolific_status_maps(status, normalised):
    result = ProlificPlatform._result({"id": "64s", "participant_id": "5fp", "status": status})
    assert (result.status, result.platform_status) == (normalised, status)


# --- Prolific: currency, minimum pay ----------------------------------------------------------------


def test_it_refuses_a_campaign_whose_currency_is_not_the_workspaces(api):
    campaign = draft_campaign(hits=1, currency="USD")
    expect_workspace(api, "GBP")
    with pytest.raises(PlatformError, match="is in USD but Prolific workspace .* pays in GBP"):
        publish_campaign(campaign, get_platform("prolific"), SITE)
    assert not [c for c in api.calls if c.request.method == "POST"]  # no study made
    campaign.refresh_from_db()
    assert campaign.status == Campaign.DRAFT


def test_it_refuses_to_publish_below_prolifics_minimum_hourly_rate_with_the_rate_shown(api, client, researcher):
    campaign = draft_campaign(hits=1, currency="GBP", reward=Decimal("0.40"))  # 20 min: £1.20/h
    client.force_login(researcher)
    url = reverse("labeling:campaign_publish", args=[campaign.pk])
    html = client.get(url + "?platform=prolific").content.decode()
    assert 'id="publish-refused"' in html and "£1.20/h" in html and "PROLIFIC_MIN_HOURLY_RATE_GBP" in html
    assert 'id="confirm-publish"' not in html
    refused = client.post(url, {"platform": "prolific"})
    assert refused.status_code == 400 and "£1.20/h" in refused.content.decode()
    assert not JobRun.objects.exists()
    with pytest.raises(PlatformError, match="below Prolific's minimum of £6.00/h"):
        publish_campaign(campaign, get_platform("prolific"), SITE)
    assert not api.calls  # refused before any call


def test_the_measured_median_time_per_hit_is_checked_once_hits_were_done(db, settings):
    settings.PLATFORM_MEASURED_MIN_HITS = 1
    campaign = draft_campaign(hits=1, currency="GBP")  # £2.70 for an estimated 20 min: £8.10/h
    assert get_platform("prolific").cost_preview(campaign).refusals == ()
    from labeling.models import Worker

    worker = Worker.objects.create(platform=Worker.PROLIFIC, external_id="5fslow")
    hit = campaign.hits.get()
    done = Assignment.objects.create(
        hit=hit, worker=worker, status=Assignment.SUBMITTED, expires_at=timezone.now() + timedelta(hours=1)
    )
    # measured on confirmed work only: the platform confirmed this submission
    Assignment.objects.filter(pk=done.pk).update(
        submitted_at=done.accepted_at + timedelta(minutes=60), platform_confirmed_at=timezone.now()
    )
    preview = get_platform("prolific").cost_preview(campaign)
    assert preview.pay.measured_minutes == Decimal("60.0")
    assert len(preview.refusals) == 1 and "£2.70/h at the measured median 60.0 min" in preview.refusals[0]


# --- Prolific: pause and resume ---------------------------------------------------------------------


@pytest.fixture
def study(api):
    campaign = draft_campaign(hits=2, currency="GBP", below_mark=Campaign.REJECT)
    expect_workspace(api, "GBP")
    answer_study_states(api)
    api.post(f"{API}/studies/", json=study_created(campaign, 6), status=201)
    api.post(f"{API}/studies/{STUDY}/transition/", json={"id": STUDY, "status": "ACTIVE"})
    publish_campaign(campaign, get_platform("prolific"), SITE)
    return campaign, Publication.objects.get(campaign=campaign)


def test_it_refuses_an_http_site_address_for_mturk_naming_the_setting(stub):
    campaign = draft_campaign(hits=1)
    with pytest.raises(PlatformError, match="https.*SITE_URL"):
        publish_campaign(campaign, get_platform("mturk"), "http://site.example")
    assert not Publication.objects.exists()  # refused before any call (the Stubber has none queued)


def test_it_refuses_to_publish_on_mturk_below_the_minimum_hourly_rate(stub, client, researcher, settings):
    settings.SITE_URL = SITE
    campaign = draft_campaign(hits=1, reward=Decimal("0.40"))
    with pytest.raises(PlatformError, match=r"\$1.20/h .*below MTurk's minimum of \$8.00/h \(MTURK_MIN_HOURLY_RATE\)"):
        publish_campaign(campaign, get_platform("mturk"), SITE)
    client.force_login(researcher)
    url = reverse("labeling:campaign_publish", args=[campaign.pk])
    assert client.post(url, {"platform": "mturk"}).status_code == 400


@pytest.fixture
def lost_bonus(stub, client, settings, slept):
    """An approved MTurk assignment whose bonus call failed with an unknown outcome, its token then
    made older than MTurk honours (as if the answer was lost a day ago)."""
    settings.PLATFORM_RETRY_ATTEMPTS = 1
    campaign = draft_campaign(hits=2)
    ids = expect_publish(stub, campaign)
    publish_campaign(campaign, get_platform("mturk"), SITE)
    good = work_through_pages(client, mturk_landing(campaign, worker="A1GOOD", assignment="3AGOOD", hit_id=ids[0]))
    publication = Publication.objects.get(campaign=campaign)
    expect_list(stub, ids[0], listed(ids[0], good))
    expect_list(stub, ids[1], listed(ids[1]))
    stub.add_response("approve_assignment", {}, None)
    stub.add_client_error("send_bonus", "ServiceUnavailable", "try later")
    assert sync_publication(publication)["errors"] == 1  # noted; the sync went on
    publication.refresh_from_db()
    assert "send_bonus" in publication.last_sync_error
    old = payments.new_request_token(timezone.now() - timedelta(hours=25))
    PaymentEntry.objects.filter(kind=PaymentEntry.BONUS).update(request_token=old)
    expect_list(stub, ids[0], listed(ids[0], good, status="Approved"))
    expect_list(stub, ids[1], listed(ids[1]))
    return publication, old


def test_a_bonus_whose_token_expired_and_was_paid_is_reconciled_and_never_paid_twice(lost_bonus, stub):
    publication, _ = lost_bonus
    paid = {"WorkerId": "A1GOOD", "BonusAmount": "0.10", "AssignmentId": "3AGOOD", "Reason": "Quiz bonus"}
    stub.add_response(
        "list_bonus_payments",
        {"NumResults": 1, "BonusPayments": [{**paid, "GrantTime": timezone.now()}]},
        {"AssignmentId": "3AGOOD", "MaxResults": 100},
    )
    assert sync_publication(publication)["bonuses_paid"] == 1  # recorded; no send_bonus queued
    assert PaymentEntry.objects.get(kind=PaymentEntry.BONUS).paid_at is not None


def test_a_bonus_whose_token_expired_unpaid_is_sent_once_with_a_fresh_token(lost_bonus, stub):
    publication, old = lost_bonus
    stub.add_response(
        "list_bonus_payments", {"NumResults": 0, "BonusPayments": []}, {"AssignmentId": "3AGOOD", "MaxResults": 100}
    )
    bonus = {
        "WorkerId": "A1GOOD",
        "AssignmentId": "3AGOOD",
        "BonusAmount": "0.10",
        "Reason": ANY,
        "UniqueRequestToken": ANY,
    }
    stub.add_response("send_bonus", {}, bonus)
    assert sync_publication(publication)["bonuses_paid"] == 1
    entry = PaymentEntry.objects.get(kind=PaymentEntry.BONUS)
    assert entry.paid_at is not None and entry.request_token != old
    assert payments.request_token_age(entry.request_token) < timedelta(minutes=5)


def test_hits_made_by_a_publish_whose_token_expired_are_found_not_made_again(stub):
    campaign = draft_campaign(hits=2)
    first, second = campaign.hits.order_by("position")
    publication = Publication.objects.create(campaign=campaign, platform="mturk", external_id="3HITTYPE", sandbox=True)
    Publication.objects.filter(pk=publication.pk).update(created_at=timezone.now() - timedelta(days=2))
    made = {"HITId": "3LOSTHIT000000000000000000000A", "HITTypeId": "3HITTYPE"}
    others = {"HITId": "3OTHERHIT00000000000000000000B", "HITTypeId": "3SOMEOTHERTYPE"}
    stub.add_response(
        "list_hits",
        {
            "NumResults": 2,
            "HITs": [
                {**made, "RequesterAnnotation": f"campaign {campaign.pk} hit {first.pk}"},
                {**others, "RequesterAnnotation": f"campaign {campaign.pk} hit {second.pk}"},
            ],
        },
        {"MaxResults": 100},
    )
    stub.add_response(
        "create_hit_with_hit_type", {"HIT": {"HITId": "3NEWHIT0000000000000000000000", "HITTypeId": "3HITTYPE"}}, None
    )
    assert publish_campaign(campaign, get_platform("mturk"), SITE) == 1  # only the second is made
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.external_id, second.external_id) == (made["HITId"], "3NEWHIT0000000000000000000000")


def test_a_hit_at_nine_assignments_is_not_extended_past_nine_and_the_sync_carries_on(stub, monkeypatch):
    from labeling.task_types.last_turn_label import follow_up

    campaign = draft_campaign(hits=0, status=Campaign.OPEN)
    publication = Publication.objects.create(campaign=campaign, platform="mturk", status=Publication.ACTIVE)
    three = short_hit(campaign)
    nine = HIT.objects.create(campaign=campaign, position=9, required_workers=9, external_id="3NINEHIT" + "0" * 22)
    monkeypatch.setattr(follow_up, "hits_short_of_majority", lambda campaign: [nine, three])
    monkeypatch.setattr(mturk, "_unsettled_hit_ids", lambda publication: [])
    for hit, assignments in ((nine, 9), (three, 3)):  # none rejected; MaxAssignments read first
        rejected = {"HITId": hit.external_id, "AssignmentStatuses": ["Rejected"], "MaxResults": 100}
        stub.add_response("list_assignments_for_hit", {"Assignments": []}, rejected)
        expect_get_hit(stub, hit.external_id, assignments)
    stub.add_response(
        "create_additional_assignments_for_hit",
        {},
        {"HITId": three.external_id, "NumberOfAdditionalAssignments": 1, "UniqueRequestToken": ANY},
    )
    counts = sync_publication(publication)
    assert counts["places_added"] == 1 and counts["errors"] == 1
    nine.refresh_from_db()
    three.refresh_from_db()
    assert (nine.required_workers, three.required_workers) == (9, 4)
    publication.refresh_from_db()
    assert "fewer than 10 assignments" in publication.last_sync_error


def test_the_study_body_names_its_project_and_estimate(api):
    # Prolific's minimum maximum time for 25 minutes: 2 + 2 x 25 + 2 x 5 = 62
    campaign = draft_campaign(
        hits=1, currency="GBP", estimated_minutes=25, reward=Decimal("3.40"), time_limit_minutes=62
    )
    expect_workspace(api, "GBP")
    answer_study_states(api)
    api.post(f"{API}/studies/", json=study_created(campaign, 3), status=201)
    api.post(f"{API}/studies/{STUDY}/transition/", json={"id": STUDY, "status": "ACTIVE"})
    publish_campaign(campaign, get_platform("prolific"), SITE)
    body = json.loads(api.calls[2].request.body)
    assert (body["estimated_completion_time"], body["reward"], body["maximum_allowed_time"]) == (25, 340, 62)
