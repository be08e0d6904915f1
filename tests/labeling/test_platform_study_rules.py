"""The calls that a study running for days showed wrong, each made right and checked on the
stand-ins (labeling.platforms.standin): Prolific's own pauses undone (the quiz study's too) but
never the researcher's, maximum_allowed_time at Prolific's minimum, publishing all or nothing,
stopping from any state, bulk bonuses split and isolated, a partial approval at its share, the
submission lookup; MTurk's expired HIT extended before it gets an assignment, bonuses isolated
when funds run out, auto-approval paid once."""

from decimal import Decimal

import pytest

from labeling.models import Assignment, Campaign, PaymentEntry, PlatformQualification, PlatformSubmission, Publication
from labeling.platforms import PlatformError, get_platform, publish_campaign, standin
from labeling.platforms.prolific_bonuses import BULK_BONUS_IDS
from labeling.platforms.prolific_studies import minimum_allowed_minutes
from labeling.platforms.standin.crowd import BASE_URL, CARELESS, GOOD, PARTIAL, StudyRun
from labeling.platforms.standin.faults import LOST, FaultPlan
from labeling.platforms.standin.prolific import Refused
from labeling.services.campaigns import set_campaign_status
from tests.labeling.platform_study import platforms, study_campaign

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db


def prolific_run(*, qualified: bool = False, **fields) -> StudyRun:
    platform = standin.ProlificStandIn()
    standin.install(platform)
    campaign = study_campaign("prolific", qualified=qualified)
    Campaign.objects.filter(pk=campaign.pk).update(**fields)
    campaign.refresh_from_db()
    return StudyRun(campaign, platform)


def mturk_run(**standin_fields) -> StudyRun:
    platform = standin.MTurkStandIn(**standin_fields)
    standin.install(platform)
    return StudyRun(study_campaign("mturk", qualified=False), platform)


# --- Prolific -----------------------------------------------------------------------------------


def test_the_minimum_maximum_time_is_prolifics_formula():
    assert [minimum_allowed_minutes(m) for m in (1, 20, 25)] == [6, 51, 62]


def test_a_time_limit_below_prolifics_minimum_is_refused_before_anything_is_made(platforms):
    run = prolific_run(estimated_minutes=25, time_limit_minutes=60)  # Prolific wants 62
    preview = run.adapter.cost_preview(run.campaign, BASE_URL)
    assert any("62 min" in refusal and "time limit" in refusal for refusal in preview.refusals)
    with pytest.raises(PlatformError, match="below Prolific's minimum maximum time of 62 min"):
        publish_campaign(run.campaign, run.adapter, BASE_URL)
    assert run.standin.requests == [] and not Publication.objects.exclude(external_id="").exists()


def test_the_cost_preview_counts_the_quiz_study_and_vat_on_the_fee(platforms, settings):
    run = prolific_run(qualified=True)  # 6 paid places x £2.70 and 8 quiz places x £2.70, bonus £0.10
    preview = run.adapter.cost_preview(run.campaign, BASE_URL)
    assert (preview.rewards, preview.quiz_rewards, preview.expected_bonuses) == (
        Decimal("16.20"), Decimal("21.60"), Decimal("0.60")
    )  # fmt: skip
    assert preview.fees == Decimal("12.79")  # 33.3 % of 38.40
    assert preview.vat == Decimal("2.56") and preview.total == Decimal("53.75")
    assert ("Qualification quiz: 8 × £2.70", "£21.60") in preview.lines()


def test_a_refused_paid_study_leaves_no_quiz_study_behind(platforms, monkeypatch):
    run = prolific_run(qualified=True)
    create = standin.ProlificStandIn.create_study

    def refuse_the_paid_study(platform, parts, body):
        if "qualification" not in body.get("internal_name", ""):
            raise Refused(400, "reward: this field is invalid")
        return create(platform, parts, body)

    monkeypatch.setitem(standin.prolific.ROUTES, ("POST", "studies"), refuse_the_paid_study)
    with pytest.raises(PlatformError, match="create study failed: 400"):
        publish_campaign(run.campaign, run.adapter, BASE_URL)
    assert run.standin.studies == {}  # the quiz draft was deleted; nothing was ever published
    assert PlatformQualification.objects.get().quiz_external_id == ""
    assert run.campaign.publications.get().status == Publication.DRAFT
    monkeypatch.setitem(standin.prolific.ROUTES, ("POST", "studies"), create)
    publish_campaign(run.campaign, run.adapter, BASE_URL)  # made right: a second try publishes both
    assert sorted(s.status for s in run.standin.studies.values()) == ["PUBLISHING", "PUBLISHING"]


def test_a_publish_whose_answer_was_lost_is_read_back_not_refused(platforms):
    run = prolific_run()
    run.standin.faults = FaultPlan(at={5: LOST})  # project, balance, create, get study, PUBLISH
    publish_campaign(run.campaign, run.adapter, BASE_URL)  # the state read back: PUBLISHING, so done
    assert run.standin.faults.injected == [(5, f"POST /studies/{run.publication.external_id}/transition/", LOST)]
    assert run.publication.status == Publication.ACTIVE and run.campaign.status == Campaign.OPEN
    assert [r for r in run.standin.requests if r[2] == {"action": "PUBLISH"}] == [
        ("POST", f"/studies/{run.publication.external_id}/transition/", {"action": "PUBLISH"})
    ]


def test_a_study_whose_creation_answer_was_lost_is_found_not_made_twice(platforms):
    run = prolific_run(qualified=True)
    # project, balance, group, quiz (lost), list, get the quiz draft, paid (lost), list, get the paid draft
    run.standin.faults = FaultPlan(at={4: LOST, 7: LOST})
    publish_campaign(run.campaign, run.adapter, BASE_URL)
    assert [c for _, c, _ in run.standin.faults.injected] == ["POST /studies/", "POST /studies/"]
    assert len(run.standin.studies) == 2  # each found among the project's studies, none made twice
    assert sorted(s.status for s in run.standin.studies.values()) == ["PUBLISHING", "PUBLISHING"]
    listed = [path for method, path, _ in run.standin.requests if path.startswith("/projects/") and "studies" in path]
    assert len(listed) == 2  # found through the StudyShort listing, each draft then read in full


def test_the_project_listing_holds_no_study_url_so_drafts_are_read_in_full_and_a_duplicate_deleted(platforms):
    run = prolific_run()
    adapter = run.adapter
    body = adapter._study(run.campaign, "https://site.example/p?t=secret", "CODE", 6)
    first = adapter._create_study(body, "create study")
    adapter._create_study(body, "create study")  # a second draft, as after two lost answers
    other = adapter._create_study({**body, "external_study_url": "https://site.example/p?t=other"}, "create study")
    listing = run.standin.handle("GET", f"/projects/{body['project']}/studies/", None)[1]["results"]
    assert all("external_study_url" not in row for row in listing)  # StudyShort rows
    found = adapter._draft_like(body)
    assert found["id"] == first["id"]  # ours by its URL, read in full
    assert sorted(run.standin.studies) == sorted([first["id"], other["id"]])  # the duplicate draft deleted


def test_prolifics_own_pause_of_the_quiz_study_is_undone_but_not_the_researchers(platforms):
    run = prolific_run(qualified=True)
    run.publish()
    quiz = PlatformQualification.objects.get().quiz_external_id
    people = [f"q{i}W" for i in range(8)]
    for person in people:  # the 8 quiz places fill and await review
        run.arrive(person, CARELESS if person == "q0W" else GOOD)
    assert run.standin.studies[quiz].status == "AWAITING REVIEW"
    run.sync()  # the careless one is rejected: Prolific pauses the full quiz study; sync starts it again
    assert run.standin.studies[quiz].status == "ACTIVE" and run.standin.recruiting(quiz)
    set_campaign_status(run.campaign, Campaign.PAUSED)  # the researcher's own pause
    run.sync()
    assert {s.status for s in run.standin.studies.values()} <= {"PAUSED", "AWAITING REVIEW", "COMPLETED"}
    run.sync()  # and it stays paused
    assert not any(run.standin.recruiting(study) for study in run.standin.studies)
    set_campaign_status(run.campaign, Campaign.OPEN)
    run.sync()
    assert run.standin.recruiting(quiz)


def test_closing_stops_each_study_from_the_state_it_is_in(platforms):
    run = prolific_run(qualified=True)
    run.publish()
    paid, quiz = run.publication.external_id, PlatformQualification.objects.get().quiz_external_id
    run.standin.studies[paid].status = "AWAITING REVIEW"  # the paid study full at the end of a campaign
    run.standin.studies[quiz].status = "PAUSED"
    run.close()
    assert run.standin.studies[quiz].stopped and run.standin.studies[quiz].status == "COMPLETED"
    assert run.standin.studies[paid].status == "AWAITING REVIEW" and not run.standin.recruiting(paid)
    assert not [r for r in run.standin.requests if r[1] == f"/studies/{paid}/transition/" and r[2]["action"] == "STOP"]


def test_bulk_bonuses_are_split_at_prolifics_recommended_size(platforms, monkeypatch):
    monkeypatch.setattr("labeling.platforms.prolific_bonuses.BULK_BONUS_IDS", 2)
    run = prolific_run()
    run.publish()
    for index in range(5):
        run.arrive(f"b{index}W", GOOD)
    assert run.sync()["bonuses_paid"] == 5
    set_ups = [r for r in run.standin.requests if r[1] == "/submissions/bonus-payments/"]
    assert [len(r[2]["csv_bonuses"].splitlines()) for r in set_ups] == [2, 2, 1]
    assert sorted(p for _, p, _ in run.standin.payments) == [f"b{i}W" for i in range(5)]
    assert BULK_BONUS_IDS == 200  # the module's own figure: Prolific's recommendation


def test_a_refused_bonus_set_up_blocks_nothing_else(platforms, monkeypatch):
    run = prolific_run()
    run.publish()
    run.arrive("r0W", GOOD)

    def refuse(platform, parts, body):
        raise Refused(400, "insufficient balance")

    monkeypatch.setitem(standin.prolific.ROUTES, ("POST", "submissions", "bonus-payments"), refuse)
    counts = run.sync()
    assert counts["approved"] == 1 and counts["errors"] == 1 and run.report.syncs_blocked == 0
    assert PaymentEntry.objects.get(kind=PaymentEntry.REWARD).paid_at is not None
    assert "insufficient balance" in Publication.objects.get().last_sync_error


def test_a_partial_approval_made_on_prolific_is_owed_nothing_until_its_share_is_read_there(platforms):
    from labeling.platforms.sync import SHARE_UNKNOWN
    from labeling.services.payments import record_reward_share, shares_unknown

    run = prolific_run()
    run.publish()
    run.arrive("h0W", PARTIAL)  # the researcher approved half the reward on Prolific's site
    listed = run.standin.handle("GET", f"/studies/{run.publication.external_id}/submissions/", {"?": ""})[1]
    assert set(listed["results"][0]) >= {"status"} and "percentage_of_reward" not in listed["results"][0]
    assert run.sync()["approved_share_unknown"] == 1
    assert run.sync().get("approved_share_unknown", 0) == 0  # noted once
    # neither 0 nor the full reward: no reward is owed, and the work is listed to check on Prolific
    assert not PaymentEntry.objects.filter(kind=PaymentEntry.REWARD).exists()
    (unknown,) = shares_unknown(run.campaign, SHARE_UNKNOWN)
    assert PlatformSubmission.objects.get(assignment_id=unknown).note == SHARE_UNKNOWN
    record_reward_share(Assignment.objects.get(pk=unknown), Decimal("0.5"))  # read on Prolific
    run.sync()
    entry = PaymentEntry.objects.get(kind=PaymentEntry.REWARD)
    assert entry.amount == run.campaign.reward / 2 and entry.paid_at is not None
    assert shares_unknown(run.campaign, SHARE_UNKNOWN) == []


def test_the_landing_check_looks_a_submission_up_by_its_session_id_on_the_stand_in(platforms):
    from labeling.platforms.prolific import landing_submission

    run = prolific_run()
    run.publish()
    run.arrive("s0W", GOOD)
    session = next(iter(run.standin.submissions))
    found = landing_submission(get_platform("prolific"), session)
    assert found["id"] == session and found["study_id"] == run.publication.external_id
    assert (found.get("participant") or found.get("participant_id")) == "s0W"
    assert found["status"] == "AWAITING REVIEW"
    assert landing_submission(get_platform("prolific"), "0000unknown") is None  # Prolific's 404


def test_platform_standin_points_every_adapter_at_one_in_process_stand_in(settings, monkeypatch):
    from labeling.platforms.standin.mturk import StandInClient
    from labeling.platforms.standin.prolific import StandInSession

    settings.PLATFORM_STANDIN = True
    standin.uninstall()
    prolific, mturk = get_platform("prolific"), get_platform("mturk")
    assert isinstance(prolific.session, StandInSession) and isinstance(mturk.client, StandInClient)
    assert prolific.session.platform is get_platform("prolific").session.platform  # one per process
    settings.PLATFORM_STANDIN = False
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    with pytest.raises(PlatformError, match="PROLIFIC_API_TOKEN"):
        get_platform("prolific").session  # noqa: B018 (the property makes the session)


# --- MTurk --------------------------------------------------------------------------------------


def test_an_expired_hit_is_extended_before_it_gets_one_more_assignment(platforms):
    run = mturk_run()
    run.publish()
    hit = run.campaign.hits.order_by("position").first()
    run.standin.hits[hit.external_id].expires_at = run.standin.now  # its lifetime is over
    assert not run.standin.searchable(hit.external_id)
    run.adapter.add_places(run.publication, hit, hit.required_workers + 1)
    assert run.standin.searchable(hit.external_id)  # a tie-break worker can find it
    assert run.standin.hits[hit.external_id].max_assignments == hit.required_workers + 1


def test_an_account_short_of_funds_blocks_no_other_bonus_or_step(platforms):
    run = mturk_run()
    run.publish()
    for index in range(2):
        run.arrive(f"m{index}W", GOOD)
    # enough for the two rewards and MTurk's fee on them (charged on approval), not for the bonuses
    run.standin.balance = 2 * run.campaign.reward * Decimal("1.2") + Decimal("0.05")
    counts = run.sync()
    assert counts["approved"] == 2 and counts["errors"] == 1 and run.report.syncs_blocked == 0
    error = Publication.objects.get().last_sync_error
    assert "bonuses: 2 failed" in error and "insufficient funds" in error
    run.standin.balance = Decimal(100)  # topped up: the next sync pays each bonus once
    assert run.sync()["bonuses_paid"] == 2
    assert len(run.standin.bonuses) == 2


def test_an_approval_the_balance_cannot_cover_is_refused_then_made_once_when_topped_up(platforms):
    run = mturk_run()
    run.publish()
    run.arrive("f0W", GOOD)
    run.standin.balance = Decimal("0.05")  # ApproveAssignment pays the reward and fee: refused
    counts = run.sync()
    assert counts.get("approved", 0) == 0 and counts["errors"] >= 1
    assert "insufficient funds" in Publication.objects.get().last_sync_error
    assert [a.status for a in run.standin.assignments.values()] == ["Submitted"]
    run.standin.balance = Decimal(100)
    assert run.sync()["approved"] == 1
    run.sync()
    assert [a.status for a in run.standin.assignments.values()] == ["Approved"]
    assert PaymentEntry.objects.filter(kind=PaymentEntry.REWARD, paid_at__isnull=False).count() == 1


def test_auto_approved_work_is_mirrored_and_its_reward_recorded_once(platforms):
    run = mturk_run()
    run.publish()
    run.arrive("a0W", GOOD)
    run.pass_time(73)  # past the HIT type's AutoApprovalDelayInSeconds (72 h)
    assert [a.auto_approved for a in run.standin.assignments.values()] == [True]
    run.sync()
    run.sync()
    entry = PaymentEntry.objects.get(kind=PaymentEntry.REWARD)
    assert entry.paid_at is not None and entry.amount == run.campaign.reward
