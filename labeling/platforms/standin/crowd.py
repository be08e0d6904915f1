"""Whole studies through a stand-in: a campaign published on it, simulated participants arriving
(the quiz, then the paid work; some careless, some returning, some timing out), syncs between
them, the study closed, and the ledger compared with what the stand-in paid.

The participants act on both sides as real ones do: on the platform (the stand-in's `reserve` /
`accept`, `complete` / `submit`, `return_submission`, `time_out`) and on our site through the same
services as its pages (labeling.platforms.landing.land, save_response, submit_assignment). Every platform
call goes through the adapters' one transport point, which `labeling.platforms.standin.install`
points at the stand-in. Used by tests/labeling/test_platform_study_*.py and bench/platform_soak.py.
"""

import contextlib
import itertools
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from labeling.models import HIT, Assignment, Campaign, PaymentEntry, PlatformQualification, Publication
from labeling.platforms import PlatformError, get_platform, publish_campaign
from labeling.platforms.standin.mturk import MTurkStandIn
from labeling.platforms.standin.prolific import ProlificStandIn

BASE_URL = "https://site.example"
GOOD, CARELESS, RETURNS, TIMES_OUT, RETURNS_AFTER = "good", "careless", "returns", "times_out", "returns_after"
PARTIAL = "partial"  # Prolific: the researcher approves part of the reward on Prolific's site
# Prolific: submits here, is timed out on Prolific (past its maximum time), and completes there after
# the next sync (allowed while not replaced); on MTurk, where a late worker cannot submit, as GOOD
SOFT_TIME_OUT = "soft_time_out"
PUBLISH_TRIES = 8


class SimulatedTime:
    """Our clock and the stand-in's moving together: `timezone.now()` (read by every module as
    `timezone.now()`) runs `offset` ahead of the real clock while `running()` is entered, so that
    time limits, token ages and auto-approvals agree on both sides of the platform."""

    def __init__(self) -> None:
        self.offset = timedelta(0)
        self._real = timezone.now

    def now(self):
        return self._real() + self.offset

    @contextlib.contextmanager
    def running(self):
        """Simulated time from now on (the offset starts at zero), the real clock back afterwards."""
        self.offset = timedelta(0)
        timezone.now = self.now
        try:
            yield self
        finally:
            timezone.now = self._real


CLOCK = SimulatedTime()
_addresses = itertools.count(1)


# the "checking your Prolific session" page reloads itself until the landing's check has Prolific's
# answer (labeling.platforms.prolific_checks); a participant gives up after this many tries
LANDING_RELOADS = 5


def _address() -> str:
    """A private address of its own per participant (the landing caps count per address)."""
    n = next(_addresses)
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"


@dataclass
class StudyReport:
    platform: str
    participants: int = 0
    faults: int = 0
    syncs: int = 0
    syncs_blocked: int = 0
    publish_tries: int = 0
    close_tries: int = 0
    blocked_errors: list[str] = field(default_factory=list)
    rewards_paid_once: float = 0.0
    bonuses_paid_once: float = 0.0
    studies_left_recruiting: int = 0
    rewards: int = 0  # rewards and bonuses compared (held by the platform, the ledger or both)
    bonuses: int = 0
    hits_completed: float = 0.0  # share of the paid HITs holding all their counted answers
    hits: int = 0

    def line(self) -> str:
        return (
            f"platform={self.platform} participants={self.participants} faults={self.faults} "
            f"rewards_paid_once={self.rewards_paid_once:.3f} bonuses_paid_once={self.bonuses_paid_once:.3f} "
            f"studies_left_recruiting={self.studies_left_recruiting} syncs_blocked={self.syncs_blocked} "
            f"rewards={self.rewards} bonuses={self.bonuses} hits={self.hits} "
            f"hits_completed={self.hits_completed:.3f}"
        )


class StudyRun:
    """One campaign on one stand-in, driven from publish to close."""

    def __init__(self, campaign: Campaign, standin: ProlificStandIn | MTurkStandIn) -> None:
        self.campaign, self.standin = campaign, standin
        self.name = "prolific" if isinstance(standin, ProlificStandIn) else "mturk"
        self.report = StudyReport(self.name)
        self._people: set[str] = set()
        self._late: list[tuple[str, str]] = []  # (session, code) to complete after the next sync
        standin.now = timezone.now()

    @property
    def adapter(self):
        return get_platform(self.name)  # a fresh adapter per step, as a job gets one

    @property
    def publication(self) -> Publication:
        return Publication.objects.get(campaign=self.campaign, platform=self.name)

    # --- the researcher ----------------------------------------------------------------------------

    def publish(self) -> None:
        """Publish; a failure is what the researcher sees, and they press Publish again."""
        last = None
        for _ in range(PUBLISH_TRIES):
            self.report.publish_tries += 1
            try:
                publish_campaign(self.campaign, self.adapter, BASE_URL)
                return
            except PlatformError as error:
                last = error
        raise AssertionError(f"{self.name}: not published after {PUBLISH_TRIES} tries: {last}")

    def sync(self) -> dict | None:
        from labeling.platforms.sync import sync_publication

        self.report.syncs += 1
        try:
            return sync_publication(self.publication, self.adapter)
        except PlatformError as error:
            self.report.syncs_blocked += 1
            self.report.blocked_errors.append(str(error)[:300])
            return None
        finally:
            late, self._late = self._late, []
            for session, code in late:  # timed out on Prolific, they complete there anyway
                self.standin.complete(session, code)

    def close(self) -> None:
        from labeling.platforms.sync import close_publication

        last = None
        for _ in range(PUBLISH_TRIES):
            self.report.close_tries += 1
            try:
                close_publication(self.publication, self.adapter)
                return
            except PlatformError as error:
                last = error
        raise AssertionError(f"{self.name}: not closed after {PUBLISH_TRIES} tries: {last}")

    def resolve_unsure_payments(self) -> None:
        """What the campaign page asks of a researcher: check on Prolific whether a bulk bonus whose
        pay call lost its answer was paid, and say so (labeling.services.payments.resolve_unsure_payment);
        read the share of each submission approved in part on Prolific's site, and record it
        (labeling.services.payments.record_reward_share)."""
        from labeling.platforms.sync import SHARE_UNKNOWN
        from labeling.services.payments import (
            payment_unsure,
            record_reward_share,
            resolve_unsure_payment,
            shares_unknown,
        )

        if self.name != "prolific":
            return
        for reference in set(payment_unsure(self.campaign).values_list("platform_reference", flat=True)):
            paid = self.standin.bonuses.get(reference, {}).get("paid", 0) > 0
            resolve_unsure_payment(self.campaign, reference, paid=paid)
        for assignment in Assignment.objects.filter(pk__in=shares_unknown(self.campaign, SHARE_UNKNOWN)):
            submission = self.standin.submissions[assignment.platform_assignment_id]
            reward = Decimal(self.standin.studies[submission.study_id].body["reward"])
            record_reward_share(assignment, submission.paid / reward)

    def settle(self, rounds: int = 8) -> None:
        """After the close: sync until the ledger owes nothing, a researcher answering for each
        payment whose outcome is unsure before each sync (at most `rounds` syncs)."""
        for _ in range(rounds):
            self.resolve_unsure_payments()
            owed = PaymentEntry.objects.filter(assignment__hit__campaign=self.campaign, paid_at__isnull=True)
            if not owed.exists():
                return
            self.sync()

    # --- participants ------------------------------------------------------------------------------

    def arrive(self, participant: str, behaviour: str = GOOD) -> str:
        """One participant takes what the platform offers them (the paid work when they may, else
        the quiz) and acts as `behaviour` says; returns what they did ("none" when nothing was offered)."""
        self._people.add(participant)
        self.report.participants = len(self._people)
        taken = self._take(participant)
        if taken is None:
            return "none"
        work_id, landing = taken
        if behaviour == RETURNS:
            self._return(work_id)
            return "returned"
        assignment = self._land(landing)
        if assignment is None:
            self._return(work_id)
            return "no-hit-here"
        if behaviour == TIMES_OUT:
            self._time_out(work_id, assignment)
            return "timed out"
        self._answer(assignment, wrong=behaviour == CARELESS)
        if behaviour == SOFT_TIME_OUT and self.name == "prolific":
            self._submit_then_time_out(work_id, assignment)
            return "submitted"
        self._hand_back(work_id, assignment)
        if behaviour == RETURNS_AFTER and self.name == "prolific":
            self.standin.return_submission(work_id)
        if behaviour == PARTIAL and self.name == "prolific":
            self.standin.partially_approve(work_id, Decimal("0.5"))
        return "submitted"

    def _take(self, participant: str):
        from labeling.models import Worker
        from labeling.platforms.landing import Landing

        if self.name == "prolific":
            for study, code in self._prolific_studies():
                session = self.standin.reserve(study, participant)
                if session is not None:
                    self.standin.start(session)  # they open the study's link
                    info = {"kind": Worker.PROLIFIC, "study": study, "session": session, "code": code}
                    landing = Landing(Worker.PROLIFIC, participant, self.campaign, False, info, session)
                    return session, landing
            return None
        for hit_id in self.standin.recruiting_hits():
            assignment_id = self.standin.accept(hit_id, participant)
            if assignment_id is not None:
                offered = HIT.objects.filter(campaign=self.campaign, external_id=hit_id).values_list("pk", flat=True)
                info = {"kind": Worker.MTURK, "external_assignment": assignment_id}
                landing = Landing(Worker.MTURK, participant, self.campaign, False, info, assignment_id, offered.first())
                return assignment_id, landing
        return None

    def _prolific_studies(self) -> list[tuple[str, str]]:
        """(study id, completion code): the paid study first (only the quiz's passers get in), then the quiz."""
        publication = self.publication
        studies = [(publication.external_id, publication.completion_code)]
        setup = PlatformQualification.objects.filter(campaign=self.campaign, platform=self.name).first()
        if setup is not None and setup.quiz_external_id:
            studies.append((setup.quiz_external_id, setup.completion_code))
        return studies

    def _land(self, landing) -> Assignment | None:
        from labeling.platforms.landing import LandingPending, LandingRefused, land
        from labeling.platforms.prolific_checks import RECHECK_AFTER, run_check

        address = _address()
        for _reload in range(LANDING_RELOADS):
            try:
                _worker, assignment = land(landing, ip=address)
            except LandingPending:  # the check's job runs (as a worker would take it), the page reloads
                run_check(landing.external_assignment)
                CLOCK.offset += RECHECK_AFTER  # the page's reloads until a failed check may be asked again
                continue
            except LandingRefused:
                return None
            return assignment
        return None

    @staticmethod
    def _answer(assignment: Assignment, *, wrong: bool) -> None:
        from labeling.actions.answer import save_response
        from labeling.models import Response, seat_items_q

        items = assignment.hit.items.filter(seat_items_q(assignment.seat)).select_related("quiz_question__gold_label")
        for item in items:
            name = item.choices[0]
            if item.is_quiz:
                gold = item.quiz_question.gold_label.name
                name = next(c for c in item.choices if c != gold) if wrong else gold
            method = Response.TOP3 if name in item.choices else Response.OTHER_LIST
            save_response(assignment, item, label_name=name, method=method)

    def _hand_back(self, work_id: str, assignment: Assignment) -> None:
        from labeling.actions.submit import submit_assignment

        result = submit_assignment(assignment)
        if self.name == "prolific":
            code = next(code for study, code in self._prolific_studies() if study == self._study_of(work_id))
            self.standin.complete(work_id, code)
        else:
            self.standin.submit(work_id, {"assignmentId": work_id, "completion_code": result.completion_code})

    def _submit_then_time_out(self, session: str, assignment: Assignment) -> None:
        """Submitted here, then past Prolific's maximum time before completing there: timed out,
        and completing on Prolific after the next sync (labeling.platforms.sync._timed_out)."""
        from labeling.actions.submit import submit_assignment

        submit_assignment(assignment)
        self.standin.time_out(session)
        code = next(code for study, code in self._prolific_studies() if study == self._study_of(session))
        self._late.append((session, code))

    def _study_of(self, session: str) -> str:
        return self.standin.submissions[session].study_id

    def _return(self, work_id: str) -> None:
        if self.name == "prolific":
            self.standin.return_submission(work_id)
        else:
            self.standin.return_assignment(work_id)

    def _time_out(self, work_id: str, assignment: Assignment) -> None:
        """Never finished: the platform times the work out, and our seat expires at its limit."""
        from labeling.actions.claim import expire_stale_assignments

        if self.name == "prolific":
            self.standin.time_out(work_id)
        else:
            self.standin.return_assignment(work_id)  # abandoned past its duration: the seat is free again
        expire_stale_assignments(now=assignment.expires_at + timedelta(seconds=1))

    def pass_time(self, hours: float) -> None:
        """Time passes, here (inside CLOCK.running()) and on the platform (MTurk: abandoned work
        frees seats, submitted work auto-approves, request tokens are forgotten after 24 hours;
        Prolific: reservations lapse, active work times out, work awaiting review for 21 days is
        approved)."""
        CLOCK.offset += timedelta(hours=hours)
        self.standin.advance(timedelta(hours=hours))

    # --- afterwards --------------------------------------------------------------------------------

    def finish(self) -> StudyReport:
        self.report.faults = len(self.standin.faults.injected)
        self.report.rewards_paid_once, self.report.rewards = rewards_paid_once(self)
        self.report.bonuses_paid_once, self.report.bonuses = bonuses_paid_once(self)
        self.report.studies_left_recruiting = studies_left_recruiting(self)
        self.report.hits_completed, self.report.hits = hits_completed(self.campaign)
        return self.report


def rewards_paid_once(run: StudyRun) -> tuple[float, int]:
    """Of the work the platform paid a reward for and the ledger's paid rewards: the share held
    once by both, at the amount the platform paid (a partial approval at its share)."""
    ours = {
        entry.assignment.platform_assignment_id: entry
        for entry in PaymentEntry.objects.filter(
            assignment__hit__campaign=run.campaign, kind=PaymentEntry.REWARD, paid_at__isnull=False
        ).select_related("assignment", "assignment__hit")
    }
    theirs = _platform_rewards(run)
    keys = set(ours) | set(theirs)
    right = sum(key in ours and key in theirs and ours[key].amount == theirs[key] for key in keys)
    return (right / len(keys) if keys else 1.0), len(keys)


def _platform_rewards(run: StudyRun) -> dict[str, Decimal]:
    standin = run.standin
    if run.name == "prolific":
        paid = ("APPROVED", "PARTIALLY APPROVED")
        return {s.id: s.paid / 100 for s in standin.submissions.values() if s.status in paid}
    rewards = {}
    for assignment in standin.assignments.values():
        if assignment.status == "Approved":
            hit_type = standin.hit_types[standin.hits[assignment.hit_id].hit_type]
            rewards[assignment.id] = Decimal(hit_type["Reward"])
    return rewards


def bonuses_paid_once(run: StudyRun) -> tuple[float, int]:
    """Of the bonuses the ledger owes and the bonuses the platform paid: the share paid exactly once
    on the platform and stamped paid in the ledger."""
    owed = PaymentEntry.objects.filter(assignment__hit__campaign=run.campaign, kind=PaymentEntry.BONUS)
    counts: dict[tuple, int] = {}
    if run.name == "prolific":
        for study, participant, _amount in run.standin.payments:
            counts[(study, participant)] = counts.get((study, participant), 0) + 1
        key_of = {
            e.pk: (run.standin.submissions[e.assignment.platform_assignment_id].study_id, e.worker.external_id)
            for e in owed.select_related("assignment", "worker")
        }
    else:
        for bonus in run.standin.bonuses:
            counts[(bonus["AssignmentId"],)] = counts.get((bonus["AssignmentId"],), 0) + 1
        key_of = {e.pk: (e.assignment.platform_assignment_id,) for e in owed.select_related("assignment")}
    paid = dict(owed.values_list("pk", "paid_at"))
    keys = set(key_of.values()) | set(counts)
    right = sum(
        counts.get(key) == 1 and any(key_of[pk] == key and paid[pk] is not None for pk in key_of) for key in keys
    )
    return (right / len(keys) if keys else 1.0), len(keys)


def hits_completed(campaign: Campaign) -> tuple[float, int]:
    """(share, count) of the campaign's paid HITs whose counted answers (confirmed by the platform)
    fill their required workers: the researcher's outcome. The qualification quiz's HITs are not
    counted: their seats bound how many may try the quiz, not answers anyone needs."""
    from django.db.models import Count

    from labeling.models import counted_assignment_q

    hits = list(
        campaign.hits.exclude(kind=HIT.QUALIFICATION)
        .annotate(answers=Count("assignments", filter=counted_assignment_q("assignments__")))
        .values_list("answers", "required_workers")
    )
    full = sum(answers >= required for answers, required in hits)
    return (full / len(hits) if hits else 1.0), len(hits)


def open_places(run: StudyRun) -> int:
    """Places the platform offers now (Prolific: its recruiting studies' free places; MTurk: the
    free assignments of its searchable HITs)."""
    standin = run.standin
    if run.name == "prolific":
        return sum(
            study.places - standin._taken(study) for study in standin.studies.values() if standin.recruiting(study.id)
        )
    return sum(standin._open_seats(standin.hits[hit_id]) for hit_id in standin.recruiting_hits())


def studies_left_recruiting(run: StudyRun) -> int:
    if run.name == "prolific":
        return sum(run.standin.recruiting(study) for study in run.standin.studies)
    return len(run.standin.recruiting_hits())
