"""Submitting: an assignment whose every screen is answered, scored on its quiz screens by its
task type; and a crowd platform's confirmation of submitted work, from which on it counts."""

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, Exists, ExpressionWrapper, OuterRef
from django.utils import timezone
from django.utils.translation import gettext

from jobs.webhooks import events as webhook_events
from labeling import task_types
from labeling.actions import SubmissionRefused, lock_live
from labeling.fast_path import submit as fast_submit
from labeling.models import HIT, Assignment, Campaign, Publication, Worker
from labeling.services import campaigns, qualification, workers
from labeling.study_flow import config as study_config
from labeling.study_flow import progress as study_progress
from labeling.task_types import WrongQuizAnswer
from labeling.work import quiz_pool, seats


@dataclass(frozen=True)
class SubmissionResult:
    quiz_correct: int
    quiz_total: int
    wrong: list[WrongQuizAnswer] = field(default_factory=list)
    completion_code: str = ""


def submit_assignment(assignment: Assignment) -> SubmissionResult:
    """Submit a live assignment whose every screen is answered; score its quiz questions.

    The status moves accepted -> submitted in one conditional UPDATE, so two concurrent submissions
    of one assignment succeed once; the other gets SubmissionRefused and nothing changes.
    """
    with transaction.atomic():
        current = lock_live(assignment)
        if Assignment.hit.is_cached(assignment):
            current.hit = assignment.hit  # what the quiz needs of it (items, task type) never changes
        unanswered = fast_submit.unanswered(current)
        if unanswered:
            positions = ", ".join(str(p) for p in unanswered)
            message = gettext("Answer every item before submitting (still open: %(positions)s).")
            raise SubmissionRefused(message % {"positions": positions})
        result = quiz_result(current)
        code = secrets.token_hex(6).upper()
        now = timezone.now()
        changes = {
            "status": Assignment.SUBMITTED,
            "submitted_at": now,
            "quiz_correct": result.quiz_correct,
            "completion_code": code,
        }
        updated = Assignment.objects.filter(pk=current.pk, status=Assignment.ACCEPTED, expires_at__gt=now).update(
            **changes
        )
        if updated != 1:
            raise SubmissionRefused(gettext("This HIT was already submitted or has expired."))
        qualification.record_result(current, result.quiz_correct, result.quiz_total)
        if current.hit.campaign.study_flow:  # the study flow's funnel counts who submitted
            study_progress.record(current.worker_id, current.hit.campaign_id, study_config.SUBMITTED)
        # the feedback page shows these answers: each showing counts toward the item's retirement
        # (a platform worker's only once the platform confirms it: confirm_platform_submission)
        if current.worker.platform == Worker.SITE:
            quiz_pool.record_reveals(qualification.not_yet_revealed(current, (w.question_id for w in result.wrong)))
        _announce(current, now, result)
    # The caller's object now holds what the row holds (read under the lock, plus this update),
    # without reading it a third time.
    for model_field in Assignment._meta.concrete_fields:
        setattr(assignment, model_field.attname, getattr(current, model_field.attname))
    for name, value in changes.items():
        setattr(assignment, name, value)
    return SubmissionResult(result.quiz_correct, result.quiz_total, result.wrong, code)


def _announce(assignment: Assignment, submitted_at: datetime, result: SubmissionResult) -> None:
    """The assignment.submitted event, and the campaign's filled / completed ones when this was
    the work that made them true. Only rows are inserted here, after the commit and only when an
    endpoint wants the kind; a worker delivers them (jobs.webhooks.events)."""
    campaign_id = assignment.hit.campaign_id
    data = {"assignment": assignment.pk, "hit": assignment.hit_id, "campaign": campaign_id, "worker": assignment.worker_id,
            "submitted_at": submitted_at.isoformat(), "quiz_correct": result.quiz_correct, "quiz_total": result.quiz_total}  # fmt: skip
    webhook_events.emit("assignment.submitted", f"assignment.submitted:{assignment.pk}", data, send_now=False)
    campaigns.announce_progress(campaign_id)


def quiz_result(assignment: Assignment) -> SubmissionResult:
    """Score the quiz screens of an assignment from its saved answers, by its task type (no side
    effects)."""
    score = task_types.of(assignment.hit.campaign).score_quiz(assignment)
    return SubmissionResult(score.correct, score.total, score.wrong, assignment.completion_code)


def confirm_platform_submission(assignment: Assignment, *, confirmed_at: datetime | None = None) -> bool:
    """The crowd platform confirmed this submitted assignment: from now on its answers count toward
    aggregation, agreement and payments. The one writer of `platform_confirmed_at`.

    Returns True when this call confirmed it, False when it was confirmed already (a repeat is a
    no-op: one conditional UPDATE). Refuses, with SubmissionRefused, a site worker's assignment
    (it counts at once) and one that is not submitted or approved.
    """
    if assignment.worker.platform == Worker.SITE:
        raise SubmissionRefused(f"Assignment {assignment.pk} is a site worker's; it needs no platform confirmation.")
    stamp = confirmed_at or timezone.now()
    updated = (
        Assignment.objects.done()
        .filter(pk=assignment.pk, platform_confirmed_at__isnull=True)
        .update(platform_confirmed_at=stamp)
    )
    assignment.refresh_from_db(fields=["status", "platform_confirmed_at"])
    if updated:
        workers.merge_proven_identity(assignment.worker)
        # the quiz feedback shows from now on (see feedback_shown): its answers count as revealed
        wrong = (answer.question_id for answer in quiz_result(assignment).wrong)
        quiz_pool.record_reveals(qualification.not_yet_revealed(assignment, wrong))
        return True
    if assignment.platform_confirmed_at is None:
        raise SubmissionRefused(f"Assignment {assignment.pk} is {assignment.status}; only submitted work is confirmed.")
    return False


def feedback_shown(assignment: Assignment) -> bool:
    """Whether the worker may see this submitted assignment's quiz score and answers: a site
    worker's at once, a platform worker's only once the platform confirmed the submission (a
    made-up worker id is never confirmed, so what it learns cannot pass to another seat)."""
    if assignment.status not in Assignment.FINAL:
        return False
    return assignment.worker.platform == Worker.SITE or assignment.platform_confirmed_at is not None


def free_unconfirmed_seats(campaign: Campaign, *, now: datetime | None = None) -> int:
    """Expire submitted platform work of `campaign` that the platform does not know: submitted
    more than PLATFORM_UNCONFIRMED_SEAT_HOURS ago, and a sync run at least that long after its
    submission found no submission of the platform for it (real work is listed by the platform
    from the moment it is accepted, so it is matched long before). Frees its seats well before
    PLATFORM_UNMATCHED_EXPIRE_HOURS; a campaign never synced (a study made by hand) is left to
    the researcher. Returns how many were expired."""
    window = timedelta(hours=settings.PLATFORM_UNCONFIRMED_SEAT_HOURS)
    now = now or timezone.now()
    synced_later = Publication.objects.filter(
        campaign_id=OuterRef("hit__campaign_id"),
        platform=OuterRef("worker__platform"),
        last_synced_at__gt=ExpressionWrapper(OuterRef("submitted_at") + window, output_field=DateTimeField()),
    )
    stale = Assignment.objects.pending_confirmation().filter(
        Exists(synced_later), hit__campaign=campaign, platform_submission__isnull=True, submitted_at__lt=now - window
    )
    ids = list(stale.values_list("pk", flat=True))
    return expire_unconfirmed(ids) if ids else 0


def expire_unconfirmed(assignment_ids: list[int]) -> int:
    """Done platform work that its platform never reported (sync found no submission for it in
    the review window): it expires, freeing its seat, and never counts. Confirmed work is kept."""
    with transaction.atomic():
        locked = list(
            Assignment.objects.pending_confirmation()
            .filter(pk__in=assignment_ids)
            .select_for_update(of=("self",))
            .order_by("pk")
            .values_list("pk", "hit_id", "phantom")
        )
        Assignment.objects.filter(pk__in=[pk for pk, _, _ in locked]).update(status=Assignment.EXPIRED)
        # done work held a seat (a phantom place none); expired work does not
        seats.free(hit_id for _, hit_id, phantom in locked if not phantom)
    return len(locked)


def reinstate_completed(assignment: Assignment) -> bool:
    """Work submitted here that expired unconfirmed (its platform had timed it out, or had not
    reported it yet) and that the platform now reports completed: submitted again, so it is
    confirmed, approved and paid like any other (Prolific lets a participant past the maximum time
    still complete, https://researcher-help.prolific.co/hc/en-gb/articles/360009094694). Its HIT's
    free seats are counted again (the seat may have gone to another worker meanwhile: the HIT then
    holds an answer more). True when it moved; work never submitted here is left expired."""
    with transaction.atomic():
        moved = Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.EXPIRED, submitted_at__isnull=False, platform_confirmed_at__isnull=True
        ).update(status=Assignment.SUBMITTED)
        if moved:
            seats.recount(HIT.objects.filter(pk=assignment.hit_id))
    assignment.refresh_from_db(fields=["status"])
    return bool(moved)
