"""The platforms as their documents say they behave, second pass (issue 46), one rule at a time on
the stand-ins: a rejected MTurk place asked for again within MTurk's 10-assignment rule and a HIT
ending soon given a fresh lifetime first; Prolific's TIMED-OUT not final; publishing after "Stop on
the platform" refused; the stand-ins' reservations, soft time-out, 21-day auto-approval and a
places increase that reopens a stopped study."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from labeling.models import HIT, Assignment, PaymentEntry, PlatformSubmission, Publication
from labeling.platforms import PlatformError, publish_campaign, standin
from labeling.platforms.standin.crowd import BASE_URL, CARELESS, GOOD, SOFT_TIME_OUT, StudyRun
from labeling.platforms.sync import close_publication
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues
from tests.labeling.platform_study import platforms, study_campaign

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db


def started(platform: str) -> StudyRun:
    platform_standin = standin.ProlificStandIn() if platform == "prolific" else standin.MTurkStandIn()
    standin.install(platform_standin)
    run = StudyRun(study_campaign(platform, qualified=False, hits=1), platform_standin)
    run.publish()
    return run


# --- MTurk: a rejected place -------------------------------------------------------------------


def test_a_rejected_mturk_assignment_gets_its_place_back_once(platforms):
    run = started("mturk")
    (hit,) = run.standin.hits.values()
    assert hit.max_assignments == 3
    for index, behaviour in enumerate((GOOD, CARELESS, GOOD)):
        run.arrive(f"r{index}W", behaviour)
    assert run.standin.recruiting_hits() == []  # full: MTurk offers no place
    counts = run.sync()
    assert (counts["rejected"], counts["places_replaced"]) == (1, 1)
    assert hit.max_assignments == 4 and run.standin.recruiting_hits() == [hit.id]
    assert run.sync().get("places_replaced", 0) == 0  # asked once
    run.arrive("r3W", GOOD)
    run.sync()
    ours = HIT.objects.get(external_id=hit.id)
    assert ours.assignments.filter(status=Assignment.APPROVED).count() == 3 == ours.required_workers


def test_a_hit_that_would_need_ten_assignments_is_named_as_one_mturk_cannot_complete(platforms):
    run = started("mturk")
    (hit,) = run.standin.hits.values()
    hit.max_assignments = 9  # six rejections already replaced
    run.standin.hits[hit.id] = hit
    adapter = run.adapter
    adapter._rejected[hit.id] = {f"R{n}" for n in range(7)}
    with pytest.raises(PlatformError, match="cannot be completed on MTurk.*fewer than 10"):
        adapter.replace_rejected(run.publication, HIT.objects.get(external_id=hit.id))
    assert hit.max_assignments == 9 and not any(
        op == "create_additional_assignments_for_hit" for op, _ in run.standin.calls
    )


def test_a_place_added_to_a_hit_ending_soon_gets_a_fresh_lifetime_first(platforms, settings):
    run = started("mturk")
    (hit,) = run.standin.hits.values()
    hit.expires_at = run.standin.now + timedelta(hours=2)  # a worker could hardly find the new place
    adapter = run.adapter
    adapter._rejected[hit.id] = {"R1"}
    assert adapter.replace_rejected(run.publication, HIT.objects.get(external_id=hit.id)) == 1
    operations = [op for op, _ in run.standin.calls if op != "get_hit"]
    assert operations[-2:] == ["update_expiration_for_hit", "create_additional_assignments_for_hit"]
    assert hit.expires_at >= timezone.now() + timedelta(hours=settings.MTURK_LIFETIME_HOURS - 1)


# --- Prolific: TIMED-OUT is not final ------------------------------------------------------------


def test_a_participant_timed_out_after_submitting_here_who_completes_anyway_is_paid_not_asked_back(platforms):
    run = started("prolific")
    run.arrive("t0W", SOFT_TIME_OUT)  # submitted here, then past Prolific's maximum time
    (session,) = run.standin.submissions.values()
    assert session.status == "TIMED-OUT"
    counts = run.sync()  # sees TIMED-OUT: waits (the participant may still complete); then they do
    assert counts["timed_out_waiting"] == 1
    assert Assignment.objects.get().status == Assignment.SUBMITTED
    assert session.status == "AWAITING REVIEW"
    assert run.sync()["approved"] == 1
    run.sync()
    assert session.status == "APPROVED" and not session.return_requested
    assert PaymentEntry.objects.get(kind=PaymentEntry.REWARD).paid_at is not None
    assert not PlatformSubmission.objects.filter(decision=PlatformSubmission.RETURN_REQUESTED).exists()


def test_work_timed_out_for_long_frees_its_seat_and_is_reinstated_if_completed_later(platforms, settings):
    run = started("prolific")
    run.arrive("t1W", GOOD)
    run.arrive("t2W", SOFT_TIME_OUT)
    late = run._late.pop()  # they have not completed on Prolific yet
    run.pass_time(settings.PLATFORM_UNCONFIRMED_SEAT_HOURS + 1)
    assert run.sync()["timed_out_expired"] == 1  # the place Prolific reopened can be filled here
    timed_out = Assignment.objects.get(worker__external_id="t2W")
    assert timed_out.status == Assignment.EXPIRED and HIT.objects.get(kind=HIT.REGULAR).seats_free == 2
    assert run.standin.complete(*late)  # not replaced: Prolific takes the completion
    run.sync()
    timed_out.refresh_from_db()
    assert timed_out.status == Assignment.APPROVED and timed_out.platform_confirmed_at is not None
    assert not PlatformSubmission.objects.filter(decision=PlatformSubmission.RETURN_REQUESTED).exists()


# --- publishing after Stop on the platform ---------------------------------------------------------


@pytest.mark.parametrize("platform", ["prolific", "mturk"])
def test_publishing_after_stop_on_the_platform_is_refused_and_nothing_recruits(platforms, platform):
    run = started(platform)
    close_publication(run.publication, run.adapter)
    build_hits(run.campaign, make_dialogues(1, prefix="later-"), seed=4)  # more work, after the stop
    calls_before = len(run.standin.requests if platform == "prolific" else run.standin.calls)
    with pytest.raises(PlatformError, match="stopped on"):
        publish_campaign(run.campaign, run.adapter, BASE_URL)
    assert len(run.standin.requests if platform == "prolific" else run.standin.calls) == calls_before
    run.finish()
    assert run.report.studies_left_recruiting == 0
    assert Publication.objects.get().status == Publication.CLOSED


def test_more_places_on_a_stopped_study_make_it_recruit_again_as_the_document_says(platforms):
    run = started("prolific")
    study = run.standin.studies[run.publication.external_id]
    run.standin.handle("POST", f"/studies/{study.id}/transition/", {"action": "STOP"})
    assert not run.standin.recruiting(study.id)
    status, _ = run.standin.handle("PATCH", f"/studies/{study.id}/", {"total_available_places": study.places + 1})
    assert status == 200 and run.standin.recruiting(study.id)  # "will become active again"
    with pytest.raises(PlatformError, match="stopped"):  # so the adapter never sends it for a stopped one
        Publication.objects.filter(pk=run.publication.pk).update(status=Publication.CLOSED)
        run.adapter._set_places(run.publication, study.places + 2)


# --- the Prolific stand-in's clock ---------------------------------------------------------------


def test_a_reservation_never_started_lapses_after_ten_minutes(platforms):
    run = started("prolific")
    study = run.publication.external_id
    session = run.standin.reserve(study, "z0W")
    assert run.standin.submissions[session].status == "RESERVED"
    run.standin.advance(timedelta(minutes=9))
    assert session in run.standin.submissions
    run.standin.advance(timedelta(minutes=2))
    assert session not in run.standin.submissions and run.standin.recruiting(study)


def test_active_work_times_out_at_the_maximum_time_and_cannot_complete_once_replaced(platforms):
    run = started("prolific")
    study = run.standin.studies[run.publication.external_id]
    sessions = [run.standin.reserve(study.id, f"y{n}W") for n in range(study.places)]
    for session in sessions:
        run.standin.start(session)
    run.standin.advance(timedelta(minutes=study.body["maximum_allowed_time"] + 1))
    assert {run.standin.submissions[s].status for s in sessions} == {"TIMED-OUT"}
    replacement = run.standin.reserve(study.id, "yRW")  # the places reopened
    assert replacement is not None
    for session in sessions[1:]:
        assert run.standin.reserve(study.id, f"x{session[-3:]}W") is not None
    assert not run.standin.complete(sessions[0], "CODE")  # replaced: refused


def test_work_awaiting_review_for_21_days_is_approved_by_prolific(platforms):
    run = started("prolific")
    run.arrive("w0W", GOOD)
    (session,) = run.standin.submissions.values()
    run.standin.advance(timedelta(days=20))
    assert session.status == "AWAITING REVIEW"
    run.standin.advance(timedelta(days=1))
    assert session.status == "APPROVED" and session.paid == Decimal(
        run.standin.studies[session.study_id].body["reward"]
    )


def test_the_stand_in_refuses_fewer_places_after_publishing(platforms):
    run = started("prolific")
    study = run.standin.studies[run.publication.external_id]
    status, answer = run.standin.handle("PATCH", f"/studies/{study.id}/", {"total_available_places": 1})
    assert status == 400 and "increased" in answer["error"]["detail"]


# --- the pay check, timed as Prolific times it ----------------------------------------------------


def test_prolifics_own_times_from_start_to_completion_drive_the_measured_pay_check(platforms, settings):
    settings.PLATFORM_MEASURED_MIN_HITS = 1
    run = started("prolific")
    run.arrive("m0W", GOOD)
    (session,) = run.standin.submissions.values()
    session.started_at = session.completed_at - timedelta(minutes=45)  # a slow landing check and return
    run.sync()
    assert PlatformSubmission.objects.get().time_taken_seconds == 45 * 60
    preview = run.adapter.cost_preview(run.campaign, BASE_URL)
    assert preview.pay.measured_minutes == Decimal("45.0")
    assert any("measured median" in refusal for refusal in preview.refusals)  # below Prolific's minimum


def test_until_prolific_reports_a_time_the_session_is_timed_from_its_first_landing(platforms, settings):
    from labeling.models import ProlificSessionCheck
    from labeling.platforms.checks import measured_minutes

    settings.PLATFORM_MEASURED_MIN_HITS = 1
    run = started("prolific")
    run.arrive("m1W", GOOD)
    assignment = Assignment.objects.get()
    confirmed = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(platform_confirmed_at=confirmed)
    ProlificSessionCheck.objects.update(created_at=assignment.submitted_at - timedelta(minutes=20))
    assert measured_minutes(run.campaign) < 1  # accepting -> submitting, here: at once
    assert measured_minutes(run.campaign, platform_timed=True) == Decimal("20.0")


# --- a partial approval's share, read on Prolific by the researcher -------------------------------


def test_the_campaign_page_asks_for_a_partial_approvals_share_and_records_only_a_partial_one(
    platforms, client, researcher
):
    from django.urls import reverse

    from labeling.platforms.standin.crowd import PARTIAL

    run = started("prolific")
    run.arrive("p0W", PARTIAL)
    run.sync()
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[run.campaign.pk])).content.decode()
    assert 'id="partial-shares"' in page and "p0W" in page
    assignment = Assignment.objects.get()
    url = reverse("labeling:campaign_partial_share", args=[run.campaign.pk])
    for percent in ("0", "100", "abc", "NaN", "-5"):
        refused = client.post(url, {"assignment": assignment.pk, "percent": percent})
        assert refused.status_code == 400 and b"percent" in refused.content
    assert client.post(url, {"assignment": "999999", "percent": "50"}).status_code == 400
    rewards = PaymentEntry.objects.filter(kind=PaymentEntry.REWARD)
    assert not rewards.exists()
    assert client.post(url, {"assignment": assignment.pk, "percent": "40"}).status_code == 302
    assert rewards.get().amount == (run.campaign.reward * Decimal("0.4")).quantize(Decimal("0.01"))
    assert client.post(url, {"assignment": assignment.pk, "percent": "60"}).status_code == 400  # recorded once
    run.sync()
    assert rewards.get().paid_at is not None
