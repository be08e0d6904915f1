"""MTurk end to end: every request goes to a real boto3 `mturk` client under botocore's Stubber,
which checks each call's parameters against MTurk's service model; nothing leaves the machine."""

from datetime import UTC, datetime
from decimal import Decimal

import boto3
import pytest
from botocore.stub import ANY, Stubber
from django.urls import reverse

from labeling.models import HIT, Assignment, Campaign, PaymentEntry, PlatformSubmission, Publication, Worker
from labeling.platforms import PlatformError, get_platform, hit_url, mturk, publish_campaign
from labeling.platforms.sync import sync_publication
from labeling.services import payments
from labeling.task_types.last_turn_label.follow_up import hits_short_of_majority
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues
from tests.labeling.platform_helpers import SANDBOX, draft_campaign, mturk_landing, slept, work_through_pages

__all__ = ["slept"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
LOCALES = [{"Country": c} for c in ("US", "GB", "CA", "AU", "NZ")]


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=mturk.SANDBOX_ENDPOINT)
    monkeypatch.setattr(mturk, "make_client", lambda sandbox=True: client)
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def answer_xml(code: str) -> str:
    return (
        '<QuestionFormAnswers xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
        '2005-10-01/QuestionFormAnswers.xsd"><Answer><QuestionIdentifier>completion_code</QuestionIdentifier>'
        f"<FreeText>{code}</FreeText></Answer></QuestionFormAnswers>"
    )


def listed(hit_id: str, *assignments: Assignment, status: str = "Submitted", code: str | None = None) -> dict:
    rows = [
        {
            "AssignmentId": a.platform_assignment_id,
            "WorkerId": a.worker.external_id,
            "HITId": hit_id,
            "AssignmentStatus": status,
            "AcceptTime": NOW,
            "SubmitTime": NOW,
            "Answer": answer_xml(code if code is not None else a.completion_code),
        }
        for a in assignments
    ]
    return {"NumResults": len(rows), "Assignments": rows}


def expect_list(stub, hit_id: str, response: dict) -> None:
    params = {"HITId": hit_id, "AssignmentStatuses": ["Submitted", "Approved", "Rejected"], "MaxResults": 100}
    stub.add_response("list_assignments_for_hit", response, params)


def expect_publish(stub, campaign: Campaign, hit_type: str = "3HITTYPE") -> list[str]:
    stub.add_response(
        "create_hit_type",
        {"HITTypeId": hit_type},
        {
            "Title": f"Label the emotion of short movie dialogues ({campaign.name})",
            "Description": ANY,
            "Keywords": "emotion, dialogue, labeling, movies",
            "Reward": "2.70",
            "AssignmentDurationInSeconds": 3600,
            "AutoApprovalDelayInSeconds": 72 * 3600,
            "QualificationRequirements": [
                {
                    "QualificationTypeId": "00000000000000000071",
                    "Comparator": "In",
                    "LocaleValues": LOCALES,
                    "ActionsGuarded": "DiscoverPreviewAndAccept",
                },
                {
                    "QualificationTypeId": "000000000000000000L0",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [95],
                    "ActionsGuarded": "DiscoverPreviewAndAccept",
                },
            ],
        },
    )
    ids = []
    for hit in campaign.hits.order_by("position"):
        hit_id = f"3HIT{hit.position:026d}"
        ids.append(hit_id)
        stub.add_response(
            "create_hit_with_hit_type",
            {"HIT": {"HITId": hit_id, "HITTypeId": hit_type}},
            {
                "HITTypeId": hit_type,
                "MaxAssignments": 3,
                "LifetimeInSeconds": 7 * 24 * 3600,
                "Question": mturk.external_question(hit_url("https://site.example", hit)),
                "RequesterAnnotation": f"campaign {campaign.pk} hit {hit.pk}",
                "UniqueRequestToken": ANY,
            },
        )
    return ids


@pytest.fixture
def published(stub):
    campaign = draft_campaign(hits=2)
    ids = expect_publish(stub, campaign)
    assert publish_campaign(campaign, get_platform("mturk"), "https://site.example") == 2
    return campaign, ids


# --- publishing ---------------------------------------------------------------------------------


def test_publishing_makes_a_hit_type_with_the_papers_locales_and_one_external_question_per_hit(published):
    campaign, ids = published
    campaign.refresh_from_db()
    publication = Publication.objects.get(campaign=campaign)
    assert (publication.platform, publication.external_id, publication.sandbox) == ("mturk", "3HITTYPE", True)
    assert publication.status == Publication.ACTIVE and campaign.status == Campaign.OPEN
    assert list(campaign.hits.order_by("position").values_list("external_id", flat=True)) == ids


def test_publishing_again_sends_nothing_and_a_non_dollar_campaign_is_refused(published, stub):
    campaign, _ = published
    assert publish_campaign(campaign, get_platform("mturk"), "https://site.example") == 0  # no stubbed call left
    pounds = draft_campaign(hits=1, currency="GBP", name="Pounds")
    with pytest.raises(PlatformError, match="US dollars"):
        publish_campaign(pounds, get_platform("mturk"), "https://site.example")


def test_a_hit_whose_creation_answer_was_lost_is_found_among_the_hit_types_hits(stub):
    """MTurk's refusal of a repeated token names no HIT (its form is not documented): the HIT type's
    HITs are listed and ours found by its annotation."""
    campaign = draft_campaign(hits=1)
    hit = campaign.hits.get()
    stub.add_response("create_hit_type", {"HITTypeId": "3HITTYPE"}, None)
    lost = "3AAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    stub.add_client_error("create_hit_with_hit_type", "RequestError", "The value of UniqueRequestToken was used")
    listed = [
        {
            "HITId": "3OTHERHIT",
            "HITTypeId": "3OTHERTYPE",
            "RequesterAnnotation": f"campaign {campaign.pk} hit {hit.pk}",
        },
        {"HITId": lost, "HITTypeId": "3HITTYPE", "RequesterAnnotation": f"campaign {campaign.pk} hit {hit.pk}"},
    ]
    stub.add_response("list_hits", {"HITs": listed, "NumResults": 2}, {"MaxResults": 100})
    publish_campaign(campaign, get_platform("mturk"), "https://site.example")
    assert campaign.hits.get().external_id == lost


def test_the_blocked_qualification_is_required_absent_when_configured(settings):
    settings.MTURK_BLOCK_QUALIFICATION_ID = "3BLOCKEDQUAL"
    requirements = mturk.qualification_requirements()
    assert requirements[-1] == {
        "QualificationTypeId": "3BLOCKEDQUAL",
        "Comparator": "DoesNotExist",
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    }
    assert requirements[0]["LocaleValues"] == LOCALES


def test_the_cost_preview_page_shows_rewards_fees_and_bonuses_in_dollars(client, researcher, db):
    campaign = draft_campaign(hits=2)  # 6 seats x $2.70, bonus $0.10, 20 % fee
    preview = get_platform("mturk").cost_preview(campaign)
    assert (preview.rewards, preview.expected_bonuses, preview.fees, preview.total) == (
        Decimal("16.20"), Decimal("0.60"), Decimal("3.36"), Decimal("20.16")
    )  # fmt: skip
    client.force_login(researcher)
    html = client.get(reverse("labeling:campaign_publish", args=[campaign.pk]) + "?platform=mturk").content.decode()
    assert "$16.20" in html and "$0.60" in html and "$20.16" in html and "$8.10/h" in html
    assert "20 % of rewards and bonuses, 40 % of the rewards of HITs of 10+ assignments" in html


def test_the_extra_fee_is_on_the_rewards_of_hits_of_ten_or_more_assignments_only(db):
    """https://www.mturk.com/pricing: 20 % on rewards and bonuses; 20 % more on the rewards of HITs
    of 10 or more assignments, never on bonuses."""
    campaign = draft_campaign(hits=2)  # 3 seats each
    campaign.hits.filter(pk=campaign.hits.first().pk).update(required_workers=10)
    preview = get_platform("mturk").cost_preview(campaign)
    # rewards: 10 x 2.70 x 40 % + 3 x 2.70 x 20 % = 10.80 + 1.62; bonuses: 13 x 0.10 x 20 % = 0.26
    assert (preview.rewards, preview.expected_bonuses, preview.fees) == (
        Decimal("35.10"), Decimal("1.30"), Decimal("12.68")
    )  # fmt: skip
    assert not HIT.objects.exclude(external_id="").exists()  # a preview publishes nothing


# --- the worker's side --------------------------------------------------------------------------


def test_preview_mode_shows_a_sample_and_creates_nothing(published, client):
    campaign, ids = published
    response = client.get(mturk_landing(campaign, worker="", assignment="", hit_id=ids[0], preview=True))
    html = response.content.decode()
    assert response.status_code == 200 and 'id="preview-sample"' in html and "$2.70" in html
    assert not Worker.objects.exists() and not Assignment.objects.exists()


def test_accept_work_submit_and_hand_back_to_turk_submit_to(published, client):
    campaign, ids = published
    url = mturk_landing(campaign, worker="A1WORKER", assignment="3ASSIGN1", hit_id=ids[1])
    assignment = work_through_pages(client, url)
    assert assignment.hit.external_id == ids[1]  # the HIT MTurk offered is the one claimed
    assert assignment.platform_assignment_id == "3ASSIGN1"
    html = client.get(reverse("labeling:platform_return", args=[assignment.pk])).content.decode()
    assert f'action="{SANDBOX}/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="3ASSIGN1"' in html and assignment.completion_code in html
    assert Assignment.objects.pending_confirmation().filter(pk=assignment.pk).exists()


# --- sync ---------------------------------------------------------------------------------------


def test_sync_confirms_approves_and_pays_the_bonus_once_across_a_throttled_retry(published, client, stub, slept):
    campaign, ids = published
    good = work_through_pages(client, mturk_landing(campaign, worker="A1GOOD", assignment="3AGOOD", hit_id=ids[0]))
    publication = Publication.objects.get(campaign=campaign)
    expect_list(stub, ids[0], listed(ids[0], good))
    expect_list(stub, ids[1], listed(ids[1]))
    stub.add_response("approve_assignment", {}, {"AssignmentId": "3AGOOD", "RequesterFeedback": ANY})
    bonus = {
        "WorkerId": "A1GOOD",
        "AssignmentId": "3AGOOD",
        "BonusAmount": "0.10",
        "Reason": ANY,
        "UniqueRequestToken": ANY,
    }
    stub.add_client_error("send_bonus", "Throttling", "Rate exceeded", expected_params=bonus)
    stub.add_response("send_bonus", {}, bonus)
    counts = sync_publication(publication)
    assert counts["approved"] == 1 and counts["bonuses_paid"] == 1 and len(slept) == 1
    good.refresh_from_db()
    assert good.status == Assignment.APPROVED and good.platform_confirmed_at is not None
    entries = PaymentEntry.objects.filter(assignment=good)
    assert {(e.kind, e.paid_at is not None) for e in entries} == {("reward", True), ("bonus", True)}
    # a second sync: MTurk reports it approved; nothing is approved or paid again
    expect_list(stub, ids[0], listed(ids[0], good, status="Approved"))
    expect_list(stub, ids[1], listed(ids[1]))
    again = sync_publication(publication)
    assert again["approved"] == 1 and again["bonuses_paid"] == 0
    assert PaymentEntry.objects.filter(assignment=good).count() == 2


def test_a_bonus_sent_but_not_recorded_is_sent_again_with_the_same_token_and_paid_once(
    published, client, stub, monkeypatch
):
    campaign, ids = published
    good = work_through_pages(client, mturk_landing(campaign, worker="A1GOOD", assignment="3AGOOD", hit_id=ids[0]))
    publication = Publication.objects.get(campaign=campaign)
    expect_list(stub, ids[0], listed(ids[0], good))
    expect_list(stub, ids[1], listed(ids[1]))
    stub.add_response("approve_assignment", {}, None)
    stub.add_response("send_bonus", {}, None)
    real_mark = payments.mark_entries_paid
    monkeypatch.setattr(payments, "mark_entries_paid", lambda **kw: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        sync_publication(publication)
    entry = PaymentEntry.objects.get(assignment=good, kind=PaymentEntry.BONUS)
    assert entry.paid_at is None and entry.request_token
    monkeypatch.setattr(payments, "mark_entries_paid", real_mark)
    expect_list(stub, ids[0], listed(ids[0], good, status="Approved"))
    expect_list(stub, ids[1], listed(ids[1]))
    same_token = {
        "WorkerId": "A1GOOD",
        "AssignmentId": "3AGOOD",
        "BonusAmount": "0.10",
        "Reason": ANY,
        "UniqueRequestToken": entry.request_token,
    }
    stub.add_client_error(
        "send_bonus", "RequestError", "The UniqueRequestToken has already been used.", expected_params=same_token
    )
    assert sync_publication(publication)["bonuses_paid"] == 1
    entry.refresh_from_db()
    assert entry.paid_at is not None


def test_work_below_the_mark_is_rejected_with_a_reason_when_the_campaign_says_so(stub, client, slept):
    campaign = draft_campaign(hits=1, below_mark=Campaign.REJECT)
    (hit_id,) = expect_publish(stub, campaign)
    publish_campaign(campaign, get_platform("mturk"), "https://site.example")
    careless = work_through_pages(
        client, mturk_landing(campaign, worker="A1LAZY", assignment="3ALAZY", hit_id=hit_id), wrong_quiz=1
    )
    expect_list(stub, hit_id, listed(hit_id, careless))
    stub.add_response("reject_assignment", {}, {"AssignmentId": "3ALAZY", "RequesterFeedback": ANY})
    # MTurk never offers a rejected assignment's place again: one more is asked for
    expect_get_hit(stub, hit_id, campaign.workers_per_hit)
    extra = {"HITId": hit_id, "NumberOfAdditionalAssignments": 1, "UniqueRequestToken": ANY}
    stub.add_response("create_additional_assignments_for_hit", {}, extra)
    counts = sync_publication(Publication.objects.get(campaign=campaign))
    assert (counts["rejected"], counts["places_replaced"]) == (1, 1)
    careless.refresh_from_db()
    assert careless.status == Assignment.REJECTED and not PaymentEntry.objects.exists()


def test_flagged_work_waits_for_the_researcher_whose_decision_the_next_sync_carries_out(
    published, client, stub, researcher, run_jobs_at_once
):
    campaign, ids = published
    careless = work_through_pages(
        client, mturk_landing(campaign, worker="A1LAZY", assignment="3ALAZY", hit_id=ids[0]), wrong_quiz=1
    )
    publication = Publication.objects.get(campaign=campaign)
    expect_list(stub, ids[0], listed(ids[0], careless))
    expect_list(stub, ids[1], listed(ids[1]))
    assert sync_publication(publication)["flagged"] == 1
    submission = PlatformSubmission.objects.get()
    assert submission.decision == PlatformSubmission.FLAGGED and "quiz mark 0" in submission.note
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="platform-review"' in page and "3ALAZY" in page and 'id="sync-now"' in page
    # the button queues a sync (run at once in tests) that approves it on MTurk, then here
    expect_list(stub, ids[0], listed(ids[0], careless))
    expect_list(stub, ids[1], listed(ids[1]))
    stub.add_response("approve_assignment", {}, {"AssignmentId": "3ALAZY", "RequesterFeedback": ANY})
    url = reverse("labeling:platform_submission_decide", args=[campaign.pk, submission.pk])
    assert client.post(url, {"action": "approve"}).status_code == 302
    careless.refresh_from_db()
    assert careless.status == Assignment.APPROVED


def test_a_wrong_completion_code_and_unknown_work_are_flagged_not_approved(published, client, stub):
    campaign, ids = published
    real = work_through_pages(client, mturk_landing(campaign, worker="A1REAL", assignment="3AREAL", hit_id=ids[0]))
    forged = {
        "AssignmentId": "3AFORGED",
        "WorkerId": "A1FORGER",
        "HITId": ids[1],
        "AssignmentStatus": "Submitted",
        "Answer": answer_xml("NOPE"),
    }
    expect_list(stub, ids[0], listed(ids[0], real, code="WRONG1"))
    expect_list(stub, ids[1], {"Assignments": [forged]})
    counts = sync_publication(Publication.objects.get(campaign=campaign))
    assert counts["flagged"] == 2
    decisions = dict(PlatformSubmission.objects.values_list("external_id", "decision"))
    assert decisions == {"3AREAL": "flagged", "3AFORGED": "unmatched"}
    real.refresh_from_db()
    assert real.status == Assignment.SUBMITTED


def test_pending_work_the_platform_never_reports_expires_after_the_window(published, client, stub, settings):
    campaign, ids = published
    ghost = work_through_pages(client, mturk_landing(campaign, worker="A1GHOST", assignment="3AGHOST", hit_id=ids[0]))
    publication = Publication.objects.get(campaign=campaign)
    for _ in range(2):
        expect_list(stub, ids[0], listed(ids[0]))
        expect_list(stub, ids[1], listed(ids[1]))
    assert sync_publication(publication)["expired_unreported"] == 0  # still within the window
    settings.PLATFORM_UNMATCHED_EXPIRE_HOURS = 0
    assert sync_publication(publication)["expired_unreported"] == 1
    ghost.refresh_from_db()
    assert ghost.status == Assignment.EXPIRED and not Assignment.objects.counted().exists()


# --- more workers for HITs without a majority ---------------------------------------------------


def expect_get_hit(stub, hit_id: str, assignments: int) -> None:
    """MTurk's answer to GetHIT (trimmed to the fields we read and a few more)."""
    hit = {"HITId": hit_id, "HITTypeId": "3HITTYPE", "MaxAssignments": assignments, "HITStatus": "Assignable"}
    stub.add_response("get_hit", {"HIT": hit}, {"HITId": hit_id})


def short_hit(campaign: Campaign) -> HIT:
    """A published HIT of three confirmed MTurk answers that disagree."""
    workers = [Worker.objects.create(platform=Worker.MTURK, external_id=f"A{i}") for i in range(3)]
    hit = make_answered_hit(campaign, workers, {make_dialogues(1, prefix="short")[0]: ["Sad", "Angry", "Joyful"]})
    HIT.objects.filter(pk=hit.pk).update(external_id="3SHORTHIT0000000000000000000000"[:30])
    Assignment.objects.filter(hit=hit).update(platform_confirmed_at=NOW)
    hit.refresh_from_db()
    return hit


def test_under_fixed_without_tie_breaking_a_split_hit_gets_no_more_assignments(stub):
    campaign = draft_campaign(hits=0, status=Campaign.OPEN)
    assert (campaign.redundancy_policy, campaign.tie_breaking) == ("fixed", False)
    short_hit(campaign)
    assert hits_short_of_majority(campaign) == []  # fixed buys the first seats only, as its cost preview counts


def test_a_hit_short_of_a_majority_gets_one_more_assignment_once(stub, monkeypatch):
    from labeling.work import hits as hit_writer

    campaign = draft_campaign(hits=0, status=Campaign.OPEN, tie_breaking=True)
    publication = Publication.objects.create(campaign=campaign, platform="mturk", status=Publication.ACTIVE)
    hit = short_hit(campaign)
    assert hits_short_of_majority(campaign) == [hit]
    extra = {"HITId": hit.external_id, "NumberOfAdditionalAssignments": 1, "UniqueRequestToken": ANY}
    expect_list(stub, hit.external_id, listed(hit.external_id))
    expect_get_hit(stub, hit.external_id, 3)
    stub.add_response("create_additional_assignments_for_hit", {}, extra)
    # interrupted after MTurk added the assignment, before our seat count moved
    real_add_seat = hit_writer.add_seat
    monkeypatch.setattr(hit_writer, "add_seat", lambda *a: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError):
        sync_publication(publication)
    monkeypatch.setattr(hit_writer, "add_seat", real_add_seat)
    # the rerun asks MTurk first: the HIT has its fourth assignment; nothing is sent, our count catches up
    expect_list(stub, hit.external_id, listed(hit.external_id))
    expect_get_hit(stub, hit.external_id, 4)
    assert sync_publication(publication)["places_added"] == 1
    hit.refresh_from_db()
    assert hit.required_workers == 4
    expect_list(stub, hit.external_id, listed(hit.external_id))
    assert sync_publication(publication)["places_added"] == 0  # the fourth seat is not filled yet


def test_a_settled_hit_is_not_listed_again_and_the_dashboard_button_leaves_tracked_work_to_sync(stub):
    from labeling.services.payments import approve_submitted

    campaign = draft_campaign(hits=0, status=Campaign.OPEN)
    publication = Publication.objects.create(campaign=campaign, platform="mturk", status=Publication.ACTIVE)
    hit = short_hit(campaign)
    for number, assignment in enumerate(Assignment.objects.filter(hit=hit)):
        PlatformSubmission.objects.create(
            publication=publication,
            external_id=f"3A{number}",
            worker_external_id=assignment.worker.external_id,
            assignment=assignment,
            platform_status="Submitted",
            decision=PlatformSubmission.FLAGGED,
        )
    assert approve_submitted(campaign) == 0  # sync decides tracked work, on MTurk first
    assert mturk._unsettled_hit_ids(publication) == [hit.external_id]
    PlatformSubmission.objects.update(decision=PlatformSubmission.REJECTED)
    # a rejected place is asked for again on MTurk (sync.replace_rejected): its HIT is still listed
    assert mturk._unsettled_hit_ids(publication) == [hit.external_id]
    PlatformSubmission.objects.update(decision=PlatformSubmission.APPROVED)
    assert mturk._unsettled_hit_ids(publication) == []  # every seat approved: no list call
    HIT.objects.filter(pk=hit.pk).update(required_workers=4)
    assert mturk._unsettled_hit_ids(publication) == [hit.external_id]  # a seat added: listed again


def test_under_until_agreement_a_split_hit_gets_one_assignment_and_none_at_the_cap(stub):
    campaign = draft_campaign(hits=0, status=Campaign.OPEN, redundancy_policy="until_agreement", redundancy_cap=3)
    publication = Publication.objects.create(campaign=campaign, platform="mturk", status=Publication.ACTIVE)
    workers = [Worker.objects.create(platform=Worker.MTURK, external_id=f"A{i}") for i in range(2)]
    hit = make_answered_hit(campaign, workers, {make_dialogues(1, prefix="split")[0]: ["Sad", "Angry"]})
    HIT.objects.filter(pk=hit.pk).update(external_id="3SPLITHIT000000000000000000000")
    Assignment.objects.filter(hit=hit).update(platform_confirmed_at=NOW)
    hit.refresh_from_db()
    assert hits_short_of_majority(campaign) == [hit]
    expect_list(stub, hit.external_id, listed(hit.external_id))
    expect_get_hit(stub, hit.external_id, 2)
    extra = {"HITId": hit.external_id, "NumberOfAdditionalAssignments": 1, "UniqueRequestToken": ANY}
    stub.add_response("create_additional_assignments_for_hit", {}, extra)
    assert sync_publication(publication)["places_added"] == 1
    hit.refresh_from_db()
    assert hit.required_workers == 3
    # a third split answer: the cap (3) is reached, no fourth assignment is asked for
    third = Worker.objects.create(platform=Worker.MTURK, external_id="A9")
    Assignment.objects.create(
        hit=hit, worker=third, status=Assignment.SUBMITTED, expires_at=NOW, platform_confirmed_at=NOW
    )
    assert hits_short_of_majority(campaign) == []
