"""Sync: reconcile a campaign's publication with its platform. The job `labeling.platform_sync`
runs it on a schedule (Celery beat) and on demand (the campaign page's "Sync now").

One run:
1. lists every piece of work the platform holds and records it (PlatformSubmission), matched to
   our Assignment by the platform's id of the work and the worker id;
2. confirms matched submitted work (from then on it counts), and decides each undecided piece:
   the quiz mark met -> approve on the platform, then here; below it -> reject on the platform
   or flag for review (campaign.below_mark); a researcher's decision from the page is carried
   out the same way; the platform's own approvals and rejections (auto-approval, a decision
   made on the platform's site) are mirrored here (a partial approval made there owes nothing
   until a researcher records the share they read on the platform); a Prolific participant who
   completed there but whose work here expired unfinished is asked to return it, once (never work
   still in progress); work submitted here is never asked back: past Prolific's time limit it waits
   (TIMED-OUT is not final), and completed there after it expired here it is reinstated and paid;
3. expires our pending work the platform never reported within PLATFORM_UNMATCHED_EXPIRE_HOURS;
4. records the ledger, stamps rewards paid by the platform and pays due bonuses (each step
   recorded before and after its call: labeling.services.payments);
5. asks the platform for a place more per rejected piece of work where it never offers that place
   again by itself (MTurk; Prolific reopens it), and adds a worker to the complete HITs the
   campaign's task type says are short of answers (a label campaign's: a turn short of a 2-of-3
   majority, up to workers_per_hit + tie_break_workers); a HIT the platform refuses more workers
   is noted (with why it cannot be completed there) and the rest go on;
6. keeps every Prolific study of an open campaign recruiting (a study Prolific paused by itself
   is started again; while the researcher paused the campaign, its studies are paused);
7. tells the platform who passed the campaign's qualification quiz, once their quiz submission
   was confirmed (MTurk: our qualification type, which the paid HIT type requires; Prolific: the
   participant group the paid study allowlists), and records it (labeling.services.qualification).

One failing item never blocks the rest: each submission, each bonus (or bulk bonus), each HIT
short of workers, the studies' restart, the grants and the blocks are tried on their own, and
their failures are noted (Publication.last_sync_error) for the next sync to try again. A closed
publication is settled and paid, never offered again (no places added, no study restarted).

Every step reads the state it changes, so running it again (after an interruption, or just again)
converges: nothing done twice or skipped. One run at a time per publication (a conditional UPDATE).
"""

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from annotation.record import audit
from config.scrub import scrub
from jobs.webhooks import events as webhook_events
from labeling import task_types
from labeling.actions import claim, release, submit
from labeling.models import Assignment, Campaign, PlatformSubmission, Publication, Worker, seat_items_q
from labeling.platforms import base, get_platform
from labeling.platforms.base import CrowdPlatform, ExternalResult, PlatformError
from labeling.services import payments, qualification
from labeling.work import audit_trail, hits

LEASE = timedelta(minutes=15)
# a researcher's decision on the page, carried out by the next sync
TO_APPROVE, TO_REJECT = "to-approve", "to-reject"
REJECTION_REASON = "Too few of the known-answer dialogues were answered as expected."
RETURN_REASON = "The task was left unfinished and its time limit passed."
# approved in part on the platform's site, the share not reported: no reward owed until a researcher
# records the share read on the platform (labeling.services.payments.record_reward_share), never 0 nor in full
SHARE_UNKNOWN = "approved in part on the platform: share unknown, check on the platform"


class SyncBusy(PlatformError):
    pass


@dataclass
class Decision:
    action: str  # "approve", "reject", "flag", "wait"
    note: str = ""


def sync_publication(publication: Publication, platform: CrowdPlatform | None = None) -> dict:
    platform = platform or get_platform(publication.platform)
    if not _take_lease(publication):
        raise SyncBusy(f"a sync of {publication} is already running")
    started = timezone.now()
    try:
        with audit.acting_as(audit.system(audit_trail.PLATFORM_SYNC)):  # its approvals and payments are the sync's
            counts = _sync(publication, platform, started)
    except PlatformError as error:
        Publication.objects.filter(pk=publication.pk).update(last_sync_error=scrub(error)[:2000])
        _announce_error(publication, started, scrub(error))
        raise
    finally:
        Publication.objects.filter(pk=publication.pk).update(sync_lease_until=None)
    changes = {"last_synced_at": timezone.now()}
    if not counts.get("errors"):
        changes["last_sync_error"] = ""
    Publication.objects.filter(pk=publication.pk).update(**changes)
    # work this sync (or an earlier one) found no platform submission for frees its seat here too,
    # not only at the next landing
    freed = submit.free_unconfirmed_seats(publication.campaign)
    if freed:
        counts["unconfirmed_freed"] = freed
    return counts


def _take_lease(publication: Publication) -> bool:
    now = timezone.now()
    free = Publication.objects.filter(pk=publication.pk, sync_lease_until__isnull=True) | Publication.objects.filter(
        pk=publication.pk, sync_lease_until__lt=now
    )
    return bool(free.update(sync_lease_until=now + LEASE))


def _sync(publication: Publication, platform: CrowdPlatform, started) -> dict:
    campaign = publication.campaign
    counts: Counter = Counter()
    claim.expire_stale_assignments()
    results = platform.fetch_results(publication)
    failures: list[str] = []
    for result in results:
        counts[_settle_one(platform, publication, result, failures)] += 1
    counts["expired_unreported"] = _expire_unreported(publication)
    payments.record_payments(campaign, withheld=_shares_unknown(publication))
    approved = PlatformSubmission.objects.filter(publication=publication, decision=PlatformSubmission.APPROVED)
    payments.mark_rewards_paid(list(approved.exclude(assignment=None).values_list("assignment_id", flat=True)))
    counts["bonuses_paid"] = _isolated(
        "bonuses", failures, platform.pay_bonuses, publication, payments.bonuses_due(publication)
    )
    if publication.status != Publication.CLOSED:  # a closed campaign is offered to no one again
        counts["places_added"] = _add_places(platform, publication, failures)
        counts["places_replaced"] = _replace_rejected(platform, publication, failures)
        counts["restarted"] = _keep_recruiting(platform, publication, failures)
    counts["qualified"] = _grant_qualifications(platform, publication, failures)
    _isolated("blocks", failures, _block, platform, publication)
    counts["errors"] = len(failures)
    counts["fetched"] = len(results)
    if failures:
        Publication.objects.filter(pk=publication.pk).update(last_sync_error=scrub("; ".join(failures))[:2000])
        _announce_error(publication, started, scrub("; ".join(failures)))
    return dict(counts)


def _settle_one(platform, publication: Publication, result: ExternalResult, failures: list[str]) -> str:
    """Record and settle one piece of work; a refusal is noted on it and in `failures`."""
    submission, _before_status = _record(publication, result)
    try:
        return _settle(platform, publication, submission, result)
    except (PlatformError, payments.ReviewRefused) as error:
        # one piece of work the platform refused (e.g. its state changed since the list):
        # noted on it, the rest goes on; the next sync reads its new state and settles it
        PlatformSubmission.objects.filter(pk=submission.pk).update(note=scrub(error)[:255])
        failures.append(f"{result.assignment_id}: {error}")
        return "errors"


def apply_event(publication: Publication, platform: CrowdPlatform, result: ExternalResult | None) -> str:
    """What a platform's event asks (labeling.platforms.prolific_events), by the sync's own code under
    its lease (SyncBusy while a sync holds it): one piece of work as the platform reports it now,
    settled (`result`), or, with None, the studies kept recruiting (one paused by the platform restarted)."""
    if not _take_lease(publication):
        raise SyncBusy(f"a sync of {publication} is running")
    failures: list[str] = []
    try:
        with audit.acting_as(audit.system(audit_trail.PLATFORM_EVENT)):
            if result is not None:
                outcome = _settle_one(platform, publication, result, failures)
            else:  # a closed campaign is offered to no one again
                closed = publication.status == Publication.CLOSED
                outcome = "closed" if closed else f"restarted {_keep_recruiting(platform, publication, failures)}"
    finally:
        Publication.objects.filter(pk=publication.pk).update(sync_lease_until=None)
    return "; ".join([outcome, *failures])


def _shares_unknown(publication: Publication) -> list[int]:
    """Assignments approved in part on the platform whose share nobody recorded yet."""
    return payments.shares_unknown(publication.campaign, SHARE_UNKNOWN)


def _announce_error(publication: Publication, started, error: str) -> None:
    """The platform.sync_error event of this sync run (one per publication and run)."""
    data = {"campaign": publication.campaign_id, "publication": publication.pk, "platform": publication.platform,
            "error": error[:1000], "sync_started_at": started.isoformat()}  # fmt: skip
    webhook_events.emit("platform.sync_error", f"platform.sync_error:{publication.pk}:{started.isoformat()}", data)


def _isolated(step: str, failures: list[str], action, *args) -> int:
    """Run one step whose failure must not stop the sync: noted, and the next sync tries again."""
    try:
        return int(action(*args) or 0)
    except PlatformError as error:
        failures.append(f"{step}: {error}")
        return 0


# --- recording and matching ---------------------------------------------------------------------


def _record(publication: Publication, result: ExternalResult) -> tuple[PlatformSubmission, str]:
    """The submission, recorded or brought up to date, and the platform's word for it before."""
    submission, _ = PlatformSubmission.objects.get_or_create(
        publication=publication,
        external_id=result.assignment_id,
        defaults={"worker_external_id": result.worker_id, "platform_status": result.platform_status},
    )
    changes, before = {}, submission.platform_status
    if submission.platform_status != result.platform_status:
        changes["platform_status"] = result.platform_status
    if result.time_taken is not None and submission.time_taken_seconds != result.time_taken:
        changes["time_taken_seconds"] = result.time_taken
    if submission.assignment_id is None:
        match = _match(publication, result)
        if match is not None:
            changes["assignment"] = match
    if changes:
        PlatformSubmission.objects.filter(pk=submission.pk).update(**changes)
        for name, value in changes.items():
            setattr(submission, name, value)
    return submission, before


def _match(publication: Publication, result: ExternalResult) -> Assignment | None:
    """Our assignment bound at landing to this platform id of the work, by this worker."""
    return (
        Assignment.objects.filter(
            hit__campaign_id=publication.campaign_id,
            platform_assignment_id=result.assignment_id,
            worker__platform=publication.platform,
            worker__external_id=result.worker_id,
            platform_submission__isnull=True,
        )
        .select_related("worker", "hit")
        .first()
    )


def _decide(submission: PlatformSubmission, submission_status: str, **changes) -> None:
    PlatformSubmission.objects.filter(pk=submission.pk).update(decision=submission_status, **changes)
    submission.decision = submission_status
    for name, value in changes.items():
        setattr(submission, name, value)


# --- settling one piece of work -----------------------------------------------------------------


def _settle(platform, publication, submission: PlatformSubmission, result: ExternalResult) -> str:
    assignment = _fresh(submission.assignment)
    if result.status == base.APPROVED:
        if result.paid_share is not None and assignment is not None:
            payments.record_reward_share(assignment, result.paid_share)  # before the full reward is owed
        _mirror_approval(assignment)
        if result.share_unknown and not submission.note.startswith(SHARE_UNKNOWN):
            _decide(submission, PlatformSubmission.APPROVED, note=SHARE_UNKNOWN)
            return "approved_share_unknown"
        _decide(submission, PlatformSubmission.APPROVED)
        return "approved"
    if result.status == base.REJECTED:
        if assignment is not None and assignment.status in Assignment.DONE:
            payments.reject_assignment(assignment)
        _decide(submission, PlatformSubmission.REJECTED)
        return "rejected"
    if result.status == base.RETURNED:
        _withdraw(assignment)
        return result.status
    if result.status == base.TIMED_OUT:
        return _timed_out(assignment)
    if result.status != base.SUBMITTED:
        return result.status  # in progress or unknown: nothing to do yet
    if assignment is not None and not submission.decision:
        submit.reinstate_completed(assignment)  # submitted here, expired unconfirmed, completed after all
    if _wants_return(platform, submission, assignment):
        return _request_return(platform, publication, submission, result)
    decision = _decision(publication.campaign, submission, result, assignment)
    if decision.action == "approve":
        submit.confirm_platform_submission(assignment)
        platform.approve(publication, result)
        _mirror_approval(assignment)
        _decide(submission, PlatformSubmission.APPROVED, note="")
        return "approved"
    if decision.action == "reject":
        platform.reject(publication, result, decision.note or REJECTION_REASON)
        if assignment is not None and assignment.status in Assignment.DONE:
            payments.reject_assignment(assignment)
        _decide(submission, PlatformSubmission.REJECTED)
        return "rejected"
    if decision.action == "flag":
        if assignment is not None and assignment.is_done:
            submit.confirm_platform_submission(assignment)
        flagged = PlatformSubmission.UNMATCHED if assignment is None else PlatformSubmission.FLAGGED
        _decide(submission, flagged, note=decision.note[:255])
        return "flagged"
    return "waiting"


def _withdraw(assignment: Assignment | None) -> None:
    """Work the participant returned on the platform: never paid, so it does not count and its seat
    is free for the place the platform offers again; work still open here (they returned before
    submitting) is given back at once, not at its time limit (a return is final on Prolific)."""
    if assignment is not None and assignment.status == Assignment.ACCEPTED:
        release.release_returned(assignment)
        return
    if assignment is None or assignment.status != Assignment.SUBMITTED:
        return
    if assignment.platform_confirmed_at is None:
        submit.expire_unconfirmed([assignment.pk])
    else:
        payments.reject_assignment(assignment)


def _timed_out(assignment: Assignment | None) -> str:
    """Past the platform's time limit, which is not final: a participant who submitted here may
    still complete on the platform (then the work is decided and paid like any other, never asked
    back). Their work keeps its seat meanwhile; once it has waited PLATFORM_UNCONFIRMED_SEAT_HOURS
    since it was submitted here it expires unconfirmed, so the place the platform reopened can be
    filled here too (a later completion reinstates it: submit.reinstate_completed). Work never
    submitted here expires at its own time limit."""
    if assignment is None or assignment.status != Assignment.SUBMITTED or assignment.platform_confirmed_at:
        return "timed_out"
    waited = timezone.now() - assignment.submitted_at
    if waited < timedelta(hours=settings.PLATFORM_UNCONFIRMED_SEAT_HOURS):
        return "timed_out_waiting"
    submit.expire_unconfirmed([assignment.pk])
    return "timed_out_expired"


def _fresh(assignment: Assignment | None) -> Assignment | None:
    if assignment is not None:
        assignment.refresh_from_db(
            fields=["status", "platform_confirmed_at", "quiz_correct", "completion_code", "submitted_at"]
        )
    return assignment


def _decision(campaign: Campaign, submission, result: ExternalResult, assignment: Assignment | None) -> Decision:
    """What to do with work the platform holds as submitted and nobody decided about yet."""
    if submission.decision == TO_APPROVE and assignment is not None and assignment.is_done:
        return Decision("approve")
    if submission.decision == TO_REJECT:
        return Decision("reject")
    if submission.decision:
        return Decision("wait")  # flagged: waits for a researcher (or the platform's auto-approval)
    if assignment is None:
        return Decision("flag", "no work of ours has this platform id and worker")
    if assignment.status == Assignment.ACCEPTED:
        return Decision("wait")  # still open here: the worker submitted on the platform first
    if not assignment.is_done:
        return Decision("flag", f"our assignment is {assignment.status}, not submitted")
    posted = result.answers.get("completion_code")
    if posted is not None and posted != assignment.completion_code:
        return Decision("flag", "the completion code posted to the platform is not this assignment's")
    if assignment.worker.status == Worker.BLOCKED:
        return Decision("flag", "the worker is blocked")
    if (assignment.quiz_correct or 0) >= _approval_mark(campaign, assignment):
        return Decision("approve")
    if campaign.below_mark == Campaign.REJECT:
        return Decision("reject", REJECTION_REASON)
    return Decision("flag", f"quiz mark {assignment.quiz_correct or 0} below {_approval_mark(campaign, assignment)}")


def _approval_mark(campaign: Campaign, assignment: Assignment) -> int:
    quiz_screens = assignment.hit.items.filter(seat_items_q(assignment.seat), quiz_question__isnull=False).count()
    return min(campaign.approval_quiz_mark, quiz_screens)


def _mirror_approval(assignment: Assignment | None) -> None:
    """The platform approved (and paid) the work: it counts, and is approved here too."""
    if assignment is None or not assignment.is_done:
        return
    submit.confirm_platform_submission(assignment)
    if assignment.status == Assignment.SUBMITTED:
        payments.approve_assignment(assignment)


def _wants_return(platform, submission, assignment: Assignment | None) -> bool:
    """Completed on the platform while the work here expired unfinished (they quit, or ran out of
    time before submitting here): a platform that documents return requests for completed work is
    asked, once. Work submitted here was reinstated before this (submit.reinstate_completed)."""
    return (
        getattr(platform, "requests_returns", False)
        and not submission.decision
        and assignment is not None
        and assignment.status == Assignment.EXPIRED
    )


def _request_return(platform, publication, submission, result) -> str:
    """Asked once: a refusal is noted and the work flagged for a researcher, never asked again."""
    try:
        platform.request_return(publication, result, RETURN_REASON)
    except PlatformError as error:
        _decide(submission, PlatformSubmission.FLAGGED, note=scrub(f"return request refused: {error}")[:255])
        return "flagged"
    _decide(submission, PlatformSubmission.RETURN_REQUESTED)
    return "return_requested"


def _keep_recruiting(platform, publication: Publication, failures: list[str]) -> int:
    """Prolific pauses a full study by itself when a submission of it is rejected or returned: every
    study of the campaign (the quiz study too) is started again while the campaign is open, and
    paused while the researcher paused the campaign (their pause is the campaign's status)."""
    keep = getattr(platform, "keep_recruiting", None)
    return 0 if keep is None else _isolated("studies", failures, keep, publication)


# --- after the submissions ----------------------------------------------------------------------


def _expire_unreported(publication: Publication) -> int:
    """Our done work from this platform that the platform never reported, past the window."""
    window = timedelta(hours=settings.PLATFORM_UNMATCHED_EXPIRE_HOURS)
    stale = (
        Assignment.objects.pending_confirmation()
        .filter(
            hit__campaign_id=publication.campaign_id,
            worker__platform=publication.platform,
            platform_submission__isnull=True,
            submitted_at__lt=timezone.now() - window,
        )
        .values_list("pk", flat=True)
    )
    return submit.expire_unconfirmed(list(stale))


def _add_places(platform: CrowdPlatform, publication: Publication, failures: list[str]) -> int:
    """Platform first (with an idempotency token / an absolute number), then our seat count, so
    an interruption in between repeats the same request instead of skipping it. A HIT the platform
    refuses (MTurk: past 9 assignments for a HIT made with fewer than 10) keeps its seats; the rest go on."""
    added = 0
    campaign = publication.campaign
    for hit in task_types.of(campaign).hits_short_of_answers(campaign):
        try:
            platform.add_places(publication, hit, hit.required_workers + 1)
        except PlatformError as error:
            failures.append(f"HIT {hit.external_id or hit.pk}: {error}")
            continue
        added += hits.add_seat(hit, hit.required_workers)
    return added


def _replace_rejected(platform: CrowdPlatform, publication: Publication, failures: list[str]) -> int:
    """A platform that never offers a rejected piece of work's place again (MTurk) is asked for
    one more place per rejection, so every HIT can still gather its answers; a HIT it cannot
    extend is named in the sync's errors with the reason (the campaign page shows them)."""
    rejected = getattr(platform, "rejected_places", None)
    if rejected is None:
        return 0
    replaced = 0
    for hit in publication.campaign.hits.filter(external_id__in=rejected()).order_by("position"):
        try:
            replaced += platform.replace_rejected(publication, hit)
        except PlatformError as error:
            failures.append(f"HIT {hit.external_id}: {error}")
    return replaced


def _grant_qualifications(platform: CrowdPlatform, publication: Publication, failures: list[str]) -> int:
    """The platform's mark for every confirmed pass not granted yet; a refusal is noted and the
    next sync tries again (granting again is harmless on both platforms)."""
    grant = getattr(platform, "grant_qualifications", None)
    due = qualification.grants_due(publication) if grant is not None else []
    if not due:
        return 0
    try:
        grant(publication, due)
    except PlatformError as error:
        failures.append(f"qualification: {error}")
        return 0
    return qualification.mark_granted(due)


def _block(platform: CrowdPlatform, publication: Publication) -> None:
    block = getattr(platform, "block", None)
    if block is None:
        return
    blocked = (
        PlatformSubmission.objects.filter(publication=publication, assignment__worker__status=Worker.BLOCKED)
        .values_list("worker_external_id", flat=True)
        .distinct()
    )
    for worker_id in blocked:
        block(worker_id)


# --- researcher actions (carried out by the next sync) ------------------------------------------


def request_decision(submission: PlatformSubmission, action: str) -> None:
    """Record a researcher's approve/reject for flagged or unmatched work; sync carries it out."""
    wanted = {"approve": TO_APPROVE, "reject": TO_REJECT}.get(action)
    if wanted is None:
        raise ValueError(f"action must be approve or reject; got {action!r}")
    if wanted == TO_APPROVE and submission.assignment_id is None:
        raise ValueError("work with no matching assignment here can only be rejected")
    open_decisions = [PlatformSubmission.FLAGGED, PlatformSubmission.UNMATCHED, TO_APPROVE, TO_REJECT]
    updated = PlatformSubmission.objects.filter(pk=submission.pk, decision__in=open_decisions).update(decision=wanted)
    if not updated:
        raise ValueError(f"submission {submission.external_id} was already {submission.decision or 'decided'}")


def close_publication(publication: Publication, platform: CrowdPlatform | None = None) -> None:
    (platform or get_platform(publication.platform)).close(publication)
    Publication.objects.filter(pk=publication.pk).update(status=Publication.CLOSED)
