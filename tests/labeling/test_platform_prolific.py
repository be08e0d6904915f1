"""Prolific end to end through `responses`: every HTTP call is answered with the shapes of
Prolific's documented API (https://docs.prolific.com/api-reference); an unexpected call fails."""

import json
import re
from decimal import Decimal

import pytest
import requests
import responses
from django.urls import reverse
from responses import matchers

from labeling.models import HIT, Assignment, Campaign, PaymentEntry, PlatformSubmission, Publication, Worker
from labeling.platforms import PlatformError, get_platform, publish_campaign
from labeling.platforms.prolific import API, MIN_REJECTION_MESSAGE
from labeling.platforms.sync import sync_publication
from labeling.services import payments
from labeling.services.entry_tokens import publication_token
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues
from tests.labeling.platform_helpers import (
    draft_campaign,
    prolific_landing,
    prolific_sessions,
    slept,
    work_through_pages,
)

__all__ = ["slept", "prolific_sessions"]
# HITs built with the built-in quiz bank; every Prolific landing is asked of Prolific (its stand-in)
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank", "prolific_sessions")]
TOKEN = "prolific-test-token"
STUDY = "60aaaaaaaaaaaaaaaaaaaaaa"
PROJECT, WORKSPACE = "61pppppppppppppppppppppp", "62wwwwwwwwwwwwwwwwwwwwww"
AUTH = matchers.header_matcher({"Authorization": f"Token {TOKEN}"})


@pytest.fixture
def api(monkeypatch, settings):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    settings.PROLIFIC_PROJECT_ID = PROJECT
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


def expect_workspace(api, currency: str = "GBP") -> None:
    """Prolific's answers to "get project" and "get the balance of a workspace" (trimmed)."""
    project = {"id": PROJECT, "title": "Dialogues", "workspace": WORKSPACE, "owner": "r1", "users": []}
    api.get(f"{API}/projects/{PROJECT}/", json=project, match=[AUTH])
    balance = {"currency_code": currency, "total_balance": 100000, "available_balance": 90000}
    api.get(f"{API}/workspaces/{WORKSPACE}/balance/", json=balance, match=[AUTH])


def answer_study_states(api, states: dict | None = None) -> dict:
    """Prolific's answer to "get a study" for any study, from `states` (study id -> status) or else
    what this test's own calls did to it: UNPUBLISHED until a PUBLISH was posted, ACTIVE after.
    The adapter reads a study's state before PUBLISH and at every sync (keep_recruiting)."""
    states = {} if states is None else states

    def answer(request):
        study = request.url.rstrip("/").split("/")[-1]
        moved = f"{API}/studies/{study}/transition/"
        published = any(c.request.url == moved and b"PUBLISH" in (c.request.body or b"") for c in api.calls)
        status = states.get(study) or ("ACTIVE" if published else "UNPUBLISHED")
        return 200, {}, json.dumps({"id": study, "status": status, "total_available_places": 6, "places_taken": 0})

    api.add_callback(responses.GET, re.compile(rf"{re.escape(API)}/studies/\w+/$"), callback=answer)
    return states


def expect_study(api, status: str, *, places: int, taken: int) -> None:
    """Prolific's answer to "get a study" (trimmed to the fields we read and a few more)."""
    study = {"id": STUDY, "status": status, "total_available_places": places, "places_taken": taken, "reward": 270}
    api.get(f"{API}/studies/{STUDY}/", json=study, match=[AUTH])


def study_created(campaign: Campaign, places: int) -> dict:
    """Prolific's answer to "create a study" (trimmed to the fields we read and a few more)."""
    return {
        "id": STUDY,
        "name": campaign.name,
        "internal_name": f"campaign {campaign.pk}",
        "status": "UNPUBLISHED",
        "total_available_places": places,
        "places_taken": 0,
        "reward": 270,
        "currency_code": "GBP",
        "prolific_id_option": "url_parameters",
    }


def submission(session: str, participant: str, status: str, code: str = "") -> dict:
    return {
        "id": session,
        "participant_id": participant,
        "status": status,
        "started_at": "2026-11-23T12:00:00.000000Z",
        "completed_at": "2026-11-23T12:10:00.000000Z" if status != "ACTIVE" else None,
        "study_code": code or None,
        "entered_code": code or None,
    }


def expect_submissions(api, *rows: dict) -> None:
    page = {"results": list(rows), "_links": {"next": {"href": None}}, "meta": {"count": len(rows)}}
    api.get(f"{API}/studies/{STUDY}/submissions/", json=page, match=[AUTH])


@pytest.fixture
def published(api):
    campaign = draft_campaign(hits=2, currency="GBP")
    expect_workspace(api, "GBP")
    answer_study_states(api)
    api.post(f"{API}/studies/", json=study_created(campaign, 6), status=201, match=[AUTH])
    api.post(
        f"{API}/studies/{STUDY}/transition/",
        json={"id": STUDY, "status": "ACTIVE"},
        match=[AUTH, matchers.json_params_matcher({"action": "PUBLISH"})],
    )
    assert publish_campaign(campaign, get_platform("prolific"), "https://site.example") == 6
    return campaign, Publication.objects.get(campaign=campaign)


def land_and_submit(client, campaign, participant: str, session: str, **kwargs) -> Assignment:
    return work_through_pages(
        client, prolific_landing(campaign, worker=participant, session=session, study=STUDY), **kwargs
    )


# --- publishing ---------------------------------------------------------------------------------


def test_the_study_points_at_our_signed_link_with_prolifics_placeholders(published, api):
    campaign, publication = published
    created = [c for c in api.calls if c.request.method == "POST" and c.request.url == f"{API}/studies/"]
    body = json.loads(created[0].request.body)
    url = body["external_study_url"]
    assert url.startswith(f"https://site.example/labeling/platform/prolific/?campaign={campaign.pk}&token=")
    # the Prolific publication's own token (it does not open the MTurk landing)
    assert f"token={publication_token(campaign, Worker.PROLIFIC)}&" in url and campaign.entry_token not in url
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}" in url
    assert body["prolific_id_option"] == "url_parameters"
    assert body["completion_codes"] == [
        {"code": publication.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}
    ]
    assert (body["total_available_places"], body["reward"], body["maximum_allowed_time"]) == (6, 270, 60)
    assert (body["estimated_completion_time"], body["project"]) == (20, PROJECT)
    assert (publication.external_id, publication.places, publication.status) == (STUDY, 6, Publication.ACTIVE)
    campaign.refresh_from_db()
    assert campaign.status == Campaign.OPEN


def test_without_a_token_in_the_environment_nothing_is_sent(monkeypatch, settings, db):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    settings.PROLIFIC_PROJECT_ID = PROJECT
    campaign = draft_campaign(hits=1, currency="GBP")
    with responses.RequestsMock() as mock, pytest.raises(PlatformError, match="PROLIFIC_API_TOKEN"):
        publish_campaign(campaign, get_platform("prolific"), "https://site.example")
    assert not mock.calls and not Publication.objects.exclude(external_id="").exists()


def test_the_cost_preview_is_in_pounds_with_prolifics_fee(client, researcher, db):
    campaign = draft_campaign(hits=2, currency="GBP")  # 6 places x £2.70, bonus £0.10, 33.3 %
    preview = get_platform("prolific").cost_preview(campaign)
    assert (preview.rewards, preview.expected_bonuses, preview.fees, preview.vat, preview.total) == (
        Decimal("16.20"), Decimal("0.60"), Decimal("5.59"), Decimal("1.12"), Decimal("23.51")
    )  # fmt: skip
    client.force_login(researcher)
    html = client.get(reverse("labeling:campaign_publish", args=[campaign.pk]) + "?platform=prolific").content.decode()
    assert "£16.20" in html and "£23.51" in html and "33.3 %" in html and "VAT" in html
    assert "£8.10/h" in html and "£6.00/h" in html and 'id="confirm-publish"' in html


def test_publishing_from_the_page_queues_the_job_that_creates_the_study(client, researcher, api, run_jobs_at_once):
    campaign = draft_campaign(hits=1, currency="GBP")
    expect_workspace(api, "GBP")
    answer_study_states(api)
    api.post(f"{API}/studies/", json=study_created(campaign, 3), status=201)
    api.post(f"{API}/studies/{STUDY}/transition/", json={"id": STUDY, "status": "ACTIVE"})
    client.force_login(researcher)
    url = reverse("labeling:campaign_publish", args=[campaign.pk])
    assert client.post(url, {"platform": "prolific"}).status_code == 302
    html = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="platform-prolific"' in html and STUDY in html and 'data-figure="published">3 places' in html
    assert client.post(url, {"platform": "nowhere"}).status_code == 400


# --- the worker's side and sync -----------------------------------------------------------------


def test_a_participant_lands_submits_and_gets_the_studys_completion_code(published, client):
    campaign, publication = published
    assignment = land_and_submit(client, campaign, "5f00000000000000000000a1", "64bbbbbbbbbbbbbbbbbbbbb1")
    html = client.get(reverse("labeling:platform_return", args=[assignment.pk])).content.decode()
    assert f"https://app.prolific.com/submissions/complete?cc={publication.completion_code}" in html
    assert Assignment.objects.pending_confirmation().filter(pk=assignment.pk).exists()


def test_sync_approves_and_pays_the_bulk_bonus_once_across_a_throttled_retry(published, client, api, slept):
    campaign, publication = published
    good = land_and_submit(client, campaign, "5f00000000000000000000a1", "64bbbbbbbbbbbbbbbbbbbbb1")
    expect_submissions(api, submission("64bbbbbbbbbbbbbbbbbbbbb1", "5f00000000000000000000a1", "AWAITING REVIEW"))
    api.post(
        f"{API}/submissions/64bbbbbbbbbbbbbbbbbbbbb1/transition/",
        json={"id": "64bbbbbbbbbbbbbbbbbbbbb1", "status": "APPROVED"},
        match=[AUTH, matchers.json_params_matcher({"action": "APPROVE"})],
    )
    bonus_body = {"study_id": STUDY, "csv_bonuses": "5f00000000000000000000a1,0.10"}
    api.post(f"{API}/submissions/bonus-payments/", status=429, json={"error": "throttled"})
    api.post(
        f"{API}/submissions/bonus-payments/",
        status=201,
        json={"id": "BULK1", "study": STUDY, "amount": 10, "fees": 3, "total_amount": 13},
        match=[AUTH, matchers.json_params_matcher(bonus_body)],
    )
    api.post(f"{API}/bulk-bonus-payments/BULK1/pay/", status=202, json={})
    counts = sync_publication(publication)
    assert counts["approved"] == 1 and counts["bonuses_paid"] == 1 and len(slept) == 1
    good.refresh_from_db()
    assert good.status == Assignment.APPROVED and good.platform_confirmed_at is not None
    assert not PaymentEntry.objects.filter(paid_at__isnull=True).exists()
    # again: Prolific says approved; no approval, no bonus, no pay call
    expect_submissions(api, submission("64bbbbbbbbbbbbbbbbbbbbb1", "5f00000000000000000000a1", "APPROVED"))
    again = sync_publication(publication)
    assert again["bonuses_paid"] == 0 and PaymentEntry.objects.count() == 2
    pay_calls = [c for c in api.calls if c.request.url.endswith("/pay/")]
    assert len(pay_calls) == 1


def test_rejection_carries_the_reason_prolific_requires(published, client, api):
    campaign, publication = published
    Campaign.objects.filter(pk=campaign.pk).update(below_mark=Campaign.REJECT)
    land_and_submit(client, campaign, "5f00000000000000000000b1", "64ccccccccccccccccccccc1", wrong_quiz=1)
    expect_submissions(api, submission("64ccccccccccccccccccccc1", "5f00000000000000000000b1", "AWAITING REVIEW"))
    api.post(f"{API}/submissions/64ccccccccccccccccccccc1/transition/", json={"status": "REJECTED"})
    expect_study(api, "ACTIVE", places=6, taken=0)  # not paused: nothing to resume
    assert sync_publication(publication)["rejected"] == 1
    body = json.loads(api.calls[-2].request.body)
    assert body["action"] == "REJECT" and body["rejection_category"] == "LOW_EFFORT"
    assert len(body["message"]) >= MIN_REJECTION_MESSAGE
    assert Assignment.objects.get().status == Assignment.REJECTED


def test_a_participant_who_completed_there_but_not_here_is_asked_to_return_once(published, client, api):
    campaign, publication = published
    client.get(prolific_landing(campaign, worker="5f00000000000000000000c1", session="64ddd1", study=STUDY))
    Assignment.objects.update(status=Assignment.EXPIRED)  # time limit passed here
    expect_submissions(api, submission("64ddd1", "5f00000000000000000000c1", "AWAITING REVIEW"))
    api.post(
        f"{API}/submissions/64ddd1/request-return/",
        json={"id": "64ddd1", "status": "AWAITING REVIEW"},
        match=[AUTH],
    )
    assert sync_publication(publication)["return_requested"] == 1
    asked = [c for c in api.calls if c.request.url.endswith("/request-return/")]
    assert len(asked) == 1 and json.loads(asked[0].request.body)["request_return_reasons"]
    expect_submissions(api, submission("64ddd1", "5f00000000000000000000c1", "AWAITING REVIEW"))
    assert sync_publication(publication).get("return_requested", 0) == 0  # asked once
    assert PlatformSubmission.objects.get().decision == PlatformSubmission.RETURN_REQUESTED


def test_it_refuses_to_request_a_return_for_work_still_in_progress(published, client, api):
    campaign, publication = published
    client.get(prolific_landing(campaign, worker="5f00000000000000000000c1", session="64ddd1", study=STUDY))
    Assignment.objects.update(status=Assignment.EXPIRED)
    for status in ("RESERVED", "ACTIVE"):
        expect_submissions(api, submission("64ddd1", "5f00000000000000000000c1", status))
        assert sync_publication(publication).get("return_requested", 0) == 0
    assert not [c for c in api.calls if "request-return" in c.request.url]
    assert PlatformSubmission.objects.get().decision == ""


def test_a_refused_return_request_is_flagged_and_never_sent_again(published, client, api):
    campaign, publication = published
    client.get(prolific_landing(campaign, worker="5f00000000000000000000c1", session="64ddd1", study=STUDY))
    Assignment.objects.update(status=Assignment.EXPIRED)
    expect_submissions(api, submission("64ddd1", "5f00000000000000000000c1", "AWAITING REVIEW"))
    refusal = {"error": {"detail": "Return requests can only be sent for completed submissions."}}
    api.post(f"{API}/submissions/64ddd1/request-return/", status=400, json=refusal)
    assert sync_publication(publication)["flagged"] == 1
    for _ in range(2):
        expect_submissions(api, submission("64ddd1", "5f00000000000000000000c1", "AWAITING REVIEW"))
        sync_publication(publication)
    assert len([c for c in api.calls if "request-return" in c.request.url]) == 1
    flagged = PlatformSubmission.objects.get()
    assert flagged.decision == PlatformSubmission.FLAGGED and "return request refused" in flagged.note


def test_a_pay_call_with_a_lost_answer_is_never_sent_again_by_sync(published, client, api, researcher):
    campaign, publication = published
    land_and_submit(client, campaign, "5f00000000000000000000a1", "64bbbbbbbbbbbbbbbbbbbbb1")
    expect_submissions(api, submission("64bbbbbbbbbbbbbbbbbbbbb1", "5f00000000000000000000a1", "AWAITING REVIEW"))
    api.post(f"{API}/submissions/64bbbbbbbbbbbbbbbbbbbbb1/transition/", json={})
    api.post(f"{API}/submissions/bonus-payments/", status=201, json={"id": "BULK1", "study": STUDY})
    api.post(f"{API}/bulk-bonus-payments/BULK1/pay/", body=requests.exceptions.ReadTimeout("lost"))
    assert sync_publication(publication)["errors"] == 1  # noted on the publication; the sync went on
    publication.refresh_from_db()
    assert "pay bonuses" in publication.last_sync_error
    # the next syncs do not pay it again: the researcher is asked to check
    expect_submissions(api, submission("64bbbbbbbbbbbbbbbbbbbbb1", "5f00000000000000000000a1", "APPROVED"))
    assert sync_publication(publication)["bonuses_paid"] == 0
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="unsure-payments"' in page and "BULK1" in page
    # they found it unpaid on Prolific: the next sync pays it through a new bulk bonus, once
    url = reverse("labeling:campaign_unsure_payment", args=[campaign.pk])
    assert client.post(url, {"reference": "BULK1", "outcome": "unpaid"}).status_code == 302
    expect_submissions(api, submission("64bbbbbbbbbbbbbbbbbbbbb1", "5f00000000000000000000a1", "APPROVED"))
    api.post(f"{API}/submissions/bonus-payments/", status=201, json={"id": "BULK2", "study": STUDY})
    api.post(f"{API}/bulk-bonus-payments/BULK2/pay/", status=202, json={})
    assert sync_publication(publication)["bonuses_paid"] == 1
    assert PaymentEntry.objects.get(kind=PaymentEntry.BONUS).platform_reference == "BULK2"


def test_a_hit_short_of_a_majority_gets_one_more_place(api):
    campaign = draft_campaign(hits=0, currency="GBP", status=Campaign.OPEN, tie_breaking=True)
    publication = Publication.objects.create(
        campaign=campaign, platform="prolific", external_id=STUDY, status=Publication.ACTIVE, places=3
    )
    workers = [Worker.objects.create(platform=Worker.PROLIFIC, external_id=f"P{i}") for i in range(3)]
    hit = make_answered_hit(campaign, workers, {make_dialogues(1, prefix="pl")[0]: ["Sad", "Angry", "Joyful"]})
    HIT.objects.filter(pk=hit.pk).update(external_id="study")
    Assignment.objects.filter(hit=hit).update(platform_confirmed_at="2026-11-23T12:00:00Z")
    expect_submissions(api)
    api.patch(
        f"{API}/studies/{STUDY}/",
        json={"id": STUDY, "total_available_places": 4},
        match=[AUTH, matchers.json_params_matcher({"total_available_places": 4})],
    )
    assert sync_publication(publication)["places_added"] == 1
    publication.refresh_from_db()
    hit.refresh_from_db()
    assert (publication.places, hit.required_workers) == (4, 4)


# --- an interrupted sync ------------------------------------------------------------------------


def test_a_sync_interrupted_midway_and_run_again_pays_no_one_twice_and_misses_no_one(
    published, client, api, monkeypatch
):
    from labeling.platforms import sync

    campaign, publication = published
    people = [(f"5f0000000000000000000{i}a1", f"64eeeeeeeeeeeeeeeeeeeee{i}") for i in range(3)]
    for participant, session in people:
        land_and_submit(client, campaign, participant, session)
    waiting = [submission(session, participant, "AWAITING REVIEW") for participant, session in people]
    expect_submissions(api, *waiting)
    for _, session in people[:2]:
        api.post(f"{API}/submissions/{session}/transition/", json={})
    # the worker dies right after Prolific approved the second participant
    real_mirror, approvals = sync._mirror_approval, []

    def dying_mirror(assignment):
        approvals.append(assignment.pk)
        if len(approvals) == 2:
            raise KeyboardInterrupt("worker killed")
        real_mirror(assignment)

    monkeypatch.setattr(sync, "_mirror_approval", dying_mirror)
    with pytest.raises(KeyboardInterrupt):
        sync_publication(publication)
    monkeypatch.setattr(sync, "_mirror_approval", real_mirror)
    assert not PaymentEntry.objects.filter(paid_at__isnull=False).exists()
    # run again: Prolific reports the first two approved; only the third is approved now, and
    # the three bonuses go out in one bulk payment, paid once
    expect_submissions(
        api,
        submission(people[0][1], people[0][0], "APPROVED"),
        submission(people[1][1], people[1][0], "APPROVED"),
        waiting[2],
    )
    api.post(f"{API}/submissions/{people[2][1]}/transition/", json={})
    api.post(f"{API}/submissions/bonus-payments/", status=201, json={"id": "BULK9", "study": STUDY})
    api.post(f"{API}/bulk-bonus-payments/BULK9/pay/", status=202, json={})
    counts = sync_publication(publication)
    assert counts["approved"] == 3 and counts["bonuses_paid"] == 3
    approvals_sent = [
        c for c in api.calls if c.request.url.endswith("/transition/") and "APPROVE" in c.request.body.decode()
    ]
    assert len(approvals_sent) == 3  # one per participant, none twice
    bonus_csv = json.loads([c for c in api.calls if c.request.url.endswith("bonus-payments/")][-1].request.body)
    assert sorted(bonus_csv["csv_bonuses"].splitlines()) == sorted(f"{p},0.10" for p, _ in people)
    assert Assignment.objects.filter(status=Assignment.APPROVED).count() == 3
    assert PaymentEntry.objects.filter(paid_at__isnull=False).count() == 6  # 3 rewards + 3 bonuses
    assert payments.payments_due(campaign) == []


def test_under_until_agreement_a_split_two_seat_hit_gets_one_more_place_and_an_agreeing_one_none(api):
    from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits

    campaign = draft_campaign(hits=0, currency="GBP", status=Campaign.OPEN, redundancy_policy="until_agreement")
    publication = Publication.objects.create(
        campaign=campaign, platform="prolific", external_id=STUDY, status=Publication.ACTIVE, places=4
    )
    workers = [Worker.objects.create(platform=Worker.PROLIFIC, external_id=f"P{i}") for i in range(4)]
    split = make_answered_hit(campaign, workers[:2], {make_dialogues(1, prefix="split")[0]: ["Sad", "Angry"]})
    agreed = make_answered_hit(campaign, workers[2:], {make_dialogues(1, prefix="agree")[0]: ["Sad", "Sad"]})
    HIT.objects.filter(pk__in=[split.pk, agreed.pk]).update(external_id="study")
    Assignment.objects.filter(hit__campaign=campaign).update(platform_confirmed_at="2026-11-23T12:00:00Z")
    assert create_follow_up_hits(campaign) == []  # published: the extra seat is a platform place
    expect_submissions(api)
    api.patch(
        f"{API}/studies/{STUDY}/",
        json={"id": STUDY, "total_available_places": 5},
        match=[AUTH, matchers.json_params_matcher({"total_available_places": 5})],
    )
    assert sync_publication(publication)["places_added"] == 1
    split.refresh_from_db()
    agreed.refresh_from_db()
    assert (split.required_workers, agreed.required_workers) == (3, 2)
