"""Whole studies judged by what the researcher needs, not only by money: a crowd keeps arriving
while the platform offers places (as a real one does), some careless (rejected below the quiz mark),
some returning, some timing out, some finishing on Prolific after its time-out; then the study is
closed and settled. At the end every paid HIT holds all its counted answers, nothing recruits
after the close, and every reward and bonus was paid once (labeling.platforms.standin.crowd)."""

import itertools

import pytest

from labeling.models import Assignment, PaymentEntry, PlatformSubmission
from labeling.platforms import standin
from labeling.platforms.standin.crowd import (
    CARELESS,
    GOOD,
    RETURNS,
    SOFT_TIME_OUT,
    TIMES_OUT,
    StudyRun,
    hits_completed,
    open_places,
)
from tests.labeling.platform_study import platforms, study_campaign

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db

# the first arrivals, in order; everyone after them does the work well
MIX = (GOOD, CARELESS, CARELESS, RETURNS, TIMES_OUT, GOOD, CARELESS, SOFT_TIME_OUT, GOOD, SOFT_TIME_OUT)
ROUNDS = 12


def run_until_answered(platform: str, mix=MIX, *, hits: int = 3) -> StudyRun:
    """Publish, then rounds of: as many arrivals as the platform offers places, a sync, six hours;
    until every paid HIT is answered and nothing is offered; then close and settle."""
    platform_standin = standin.ProlificStandIn() if platform == "prolific" else standin.MTurkStandIn()
    standin.install(platform_standin)
    run = StudyRun(study_campaign(platform, qualified=False, hits=hits), platform_standin)
    run.publish()
    behaviours, people = iter(mix), itertools.count()
    for _ in range(ROUNDS):
        for _place in range(open_places(run)):
            run.arrive(f"o{next(people):03d}W", next(behaviours, GOOD))
        run.sync()
        run.pass_time(6)
        if hits_completed(run.campaign)[0] == 1.0 and open_places(run) == 0:
            break
    for _ in range(3):  # the last work reviewed (and, on MTurk, auto-approved)
        run.pass_time(30)
        run.sync()
    run.close()
    run.sync()
    run.settle()
    return run


def assert_researcher_outcome(run: StudyRun) -> None:
    report = run.finish()
    assert report.syncs_blocked == 0, report.blocked_errors
    assert report.hits_completed == 1.0, report
    assert report.studies_left_recruiting == 0, report
    assert report.rewards_paid_once == 1.0, report
    assert report.bonuses_paid_once == 1.0, report


def test_a_whole_mturk_study_with_rejections_ends_with_every_hit_answered(platforms):
    run = run_until_answered("mturk")
    assert_researcher_outcome(run)
    rejected = [a for a in run.standin.assignments.values() if a.status == "Rejected"]
    assert len(rejected) >= 2  # the careless ones: their places were asked for again
    extended = [h for h in run.standin.hits.values() if h.max_assignments > h.created_max]
    assert {run.standin.assignments[a.id].hit_id for a in rejected} <= {h.id for h in extended}


def test_a_whole_prolific_study_with_returns_and_soft_time_outs_ends_with_every_hit_answered(platforms):
    run = run_until_answered("prolific")
    assert_researcher_outcome(run)
    # those who finished on Prolific after its time-out were approved and paid, never asked to return
    finished_late = [s for s in run.standin.submissions.values() if s.timed_out_at and s.completed_at]
    assert finished_late and all(s.status == "APPROVED" and not s.return_requested for s in finished_late)
    assert not PlatformSubmission.objects.filter(decision=PlatformSubmission.RETURN_REQUESTED).exists()
    paid = PaymentEntry.objects.filter(kind=PaymentEntry.REWARD, paid_at__isnull=False)
    late_ids = {s.id for s in finished_late}
    assert paid.filter(assignment__platform_assignment_id__in=late_ids).count() == len(late_ids)
    assert not Assignment.objects.filter(platform_assignment_id__in=late_ids, status=Assignment.EXPIRED).exists()
