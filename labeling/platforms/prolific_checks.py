"""Asking Prolific about a landing's session, off the web request: the one writer of
ProlificSessionCheck rows.

A Prolific landing that is not proven yet (labeling.platforms.landing) calls `ask`: the session's check row
is made (one per SESSION_ID: a reload or a second tab waits on the same one) and ONE job is queued
for it (`labeling.check_prolific_session`, labeling.jobs), while the participant's page polls the
landing. The job (`run_check`, on the "landing" queue, which a worker process of its own serves) asks
Prolific's "Retrieve a submission" (labeling.platforms.prolific.landing_submission, one try each,
waiting PROLIFIC_LANDING_TIMEOUT_SECONDS) up to PLATFORM_RETRY_ATTEMPTS times with backoff on
timeouts, 429 and 5xx, and stores Prolific's answer, or that it could not be asked (failed: the
page keeps polling and the next poll, at least RECHECK_AFTER later, queues the job again). A 404 or
an undocumented status within RECHECK_WINDOW of the session's first landing is stored as failed
too (Prolific may not list a session that just started): asked again on the next reload. The rows are in the
database, not the cache: every web process and the worker read the same answer.

Made-up sessions cost a call to Prolific and a place in the queue each, so before a check is
queued the address must be under its share of the queue: the checks it holds, still waiting for
Prolific (PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR per address or IPv6 /PLATFORM_IPV6_PREFIX network,
_PER_IPV6_48_PER_HOUR per /48: `checks_in_flight`; the page polls and nothing is queued until some
are answered). What an address was refused never shuts it: a university's or a carrier's one
address carries honest participants behind the made-up sessions. An address whose sessions
Prolific refused up to those caps in the hour (`refusals_capped`) is asked about one session at a
time instead, each refusal holding that turn for REFUSED_TURN: a flood from it spends one lookup
per turn, and a participant behind it waits a turn, never the hour.
"""

import logging
import random
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext

from config.scrub import scrub
from config.web.client_ip import address_block
from jobs.runtime import start_job
from labeling.models import Campaign, PlatformQualification, ProlificSessionCheck, Publication, Worker
from labeling.platforms import calls, get_platform
from labeling.platforms.base import PlatformError
from labeling.platforms.prolific import SubmissionLookupFailed, landing_submission, landing_timeout
from labeling.services.workers import SITE_PREFIX

logger = logging.getLogger("labeling.platforms")

JOB = "labeling.check_prolific_session"
LIVE_SESSION = ("ACTIVE", "RESERVED")
# a check still waiting this long lost its job (a broker or worker restart): the next poll queues it
# again. The job's tries stop before it (`_lookup_with_retries`: a slow Prolific then fails the check,
# and the next poll asks again), so a live job is never queued twice.
STALE_AFTER = timedelta(seconds=60)
# an address past its refused sessions' caps: how long each refusal holds its one turn at the queue
REFUSED_TURN = timedelta(seconds=10)
# Prolific's listing of a new session may lag its start, and a submission may pass through a word
# its reference does not document (e.g. a brief PROCESSING): within the first RECHECK_WINDOW of a
# session's first landing, a 404 or an undocumented status is not final but asked again on the
# participant's next reload, at most once per RECHECK_AFTER (the address's cap counts it meanwhile).
# Statuses: https://docs.prolific.com/api-reference/submissions/submission-object
RECHECK_WINDOW = timedelta(minutes=3)
RECHECK_AFTER = timedelta(seconds=5)
NOT_LISTED_YET = "Prolific does not list the session yet; asked again on the next reload"


# --- the landing's side (web process) -------------------------------------------------------------


def check_of(session_id: str) -> ProlificSessionCheck | None:
    return ProlificSessionCheck.objects.filter(session_id=session_id).first()


def queued(check: ProlificSessionCheck | None) -> bool:
    """Whether the check waits for its job's answer, the job not lost (queued within STALE_AFTER):
    `ask` would queue nothing for it, and the address's caps were counted when it was queued."""
    return (
        check is not None
        and check.status == ProlificSessionCheck.PENDING
        and check.queued_at >= timezone.now() - STALE_AFTER
    )


def refusals_capped(ip: str) -> bool:
    """Whether the sessions Prolific refused from the address's blocks in the last hour reached a
    cap: the address is then asked about one session at a time (`checks_in_flight`)."""
    since = timezone.now() - timedelta(hours=1)
    refused = ProlificSessionCheck.objects.filter(created_at__gte=since).exclude(refusal="")
    return _over_caps(refused, ip)


def checks_in_flight(ip: str) -> bool:
    """Whether the address's blocks hold their share of the queue: as many checks waiting for
    Prolific as their caps, or, past its refused sessions' caps, one check waiting or refused in
    the last REFUSED_TURN. A check queued longer than STALE_AFTER ago lost its job and is no
    longer in flight (its participant may have left: it must not hold the address's share for good)."""
    now = timezone.now()
    waiting = Q(status=ProlificSessionCheck.PENDING, queued_at__gte=now - STALE_AFTER)
    if not refusals_capped(ip):
        return _over_caps(ProlificSessionCheck.objects.filter(waiting), ip)
    turn = waiting | (Q(answered_at__gte=now - REFUSED_TURN) & ~Q(refusal=""))
    return _over_caps(ProlificSessionCheck.objects.filter(turn), ip, network_cap=1, site_cap=1)


def _over_caps(rows, ip: str, *, network_cap: int | None = None, site_cap: int | None = None) -> bool:
    network = address_block(ip, settings.PLATFORM_IPV6_PREFIX)
    per_network = network_cap or settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR
    if rows.filter(network=network).count() >= per_network:
        return True
    site = address_block(ip, SITE_PREFIX)
    per_site = site_cap or settings.PLATFORM_NEW_WORKERS_PER_IPV6_48_PER_HOUR
    return ":" in site and rows.filter(site_network=site).count() >= per_site


def ask(session_id: str, *, participant: str, campaign: Campaign, ip: str) -> ProlificSessionCheck:
    """The session's check, queued once: a new row queues its job; a failed check, or one whose job
    was lost (pending past STALE_AFTER), is queued again by exactly one poll (a conditional
    UPDATE). The caller checked the caps first. Returns the row as it stands after queueing (in
    tests the job runs at once)."""
    now = timezone.now()
    with transaction.atomic():
        check, created = ProlificSessionCheck.objects.get_or_create(
            session_id=session_id,
            defaults={
                "participant": participant,
                "campaign": campaign,
                "network": address_block(ip, settings.PLATFORM_IPV6_PREFIX),
                "site_network": address_block(ip, SITE_PREFIX),
                "queued_at": now,
            },
        )
        # a failed check is asked again at the next poll at least RECHECK_AFTER after its answer
        again = Q(status=ProlificSessionCheck.FAILED, answered_at__lte=now - RECHECK_AFTER) | Q(
            status=ProlificSessionCheck.PENDING, queued_at__lt=now - STALE_AFTER
        )
        queue = created or bool(
            ProlificSessionCheck.objects.filter(again, pk=check.pk).update(
                status=ProlificSessionCheck.PENDING, queued_at=now, error=""
            )
        )
        if queue:
            start_job(JOB, {"session_id": session_id})
    return ProlificSessionCheck.objects.get(pk=check.pk) if queue else check


# --- the job's side (Celery worker) ---------------------------------------------------------------


def run_check(session_id: str) -> dict:
    """Ask Prolific about the session and store its answer (or that it could not be asked). A check
    that is not waiting (answered already, a duplicate message) is left alone."""
    check = check_of(session_id)
    if check is None or check.status != ProlificSessionCheck.PENDING:
        return {"session": session_id, "skipped": check.status if check else "no check"}
    _release_pooled_connection()
    try:
        answer = _lookup_with_retries(session_id)
    except PlatformError as error:
        ProlificSessionCheck.objects.filter(pk=check.pk, status=ProlificSessionCheck.PENDING).update(
            status=ProlificSessionCheck.FAILED, error=scrub(error)[:300], answered_at=timezone.now()
        )
        return {"session": session_id, "status": ProlificSessionCheck.FAILED}
    with translation.override(None):  # the reason stored as written (English), whatever language is active
        refusal = session_refusal(answer, check.participant, prolific_studies(check.campaign))
    final = not _maybe_not_listed_yet(answer, check)
    ProlificSessionCheck.objects.filter(pk=check.pk, status=ProlificSessionCheck.PENDING).update(
        status=ProlificSessionCheck.ANSWERED if final else ProlificSessionCheck.FAILED,
        found=answer is not None,
        study_id=str((answer or {}).get("study_id") or "")[:64],
        submission_participant=str(_participant_of(answer or {}) or "")[:64],
        submission_status=str((answer or {}).get("status") or "")[:32],
        refusal=refusal[:120],
        error="" if final else NOT_LISTED_YET,
        answered_at=timezone.now(),
    )
    if not final:
        return {"session": session_id, "status": ProlificSessionCheck.FAILED, "recheck": refusal}
    return {"session": session_id, "status": ProlificSessionCheck.ANSWERED, "proven": not refusal}


def _release_pooled_connection() -> None:
    """In a process with a connection pool (DB_POOL_MAX_SIZE: the landing worker, whose threads each
    wait seconds on Prolific), give the connection back while this thread waits: the next query
    takes one from the pool again. Without a pool the thread keeps its own (nothing to share)."""
    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


def _maybe_not_listed_yet(answer: dict | None, check: ProlificSessionCheck) -> bool:
    """A 404, or a status word Prolific's reference does not document, within RECHECK_WINDOW of the
    session's first landing: Prolific may not have caught up yet, so the answer is not final."""
    from labeling.platforms.base import UNKNOWN
    from labeling.platforms.prolific import ProlificPlatform

    if timezone.now() - check.created_at > RECHECK_WINDOW:
        return False
    return answer is None or ProlificPlatform.status_of(str(answer.get("status") or "")) == UNKNOWN


def waiting_for_listing(check: ProlificSessionCheck | None) -> bool:
    """Whether the check waits for Prolific to list a new session (not a failure to reach it)."""
    return check is not None and check.status == ProlificSessionCheck.FAILED and check.error == NOT_LISTED_YET


def _lookup_with_retries(session_id: str) -> dict | None:
    """landing_submission, tried again after a failure worth another try (SubmissionLookupFailed:
    a timeout, 429, 5xx) with exponential backoff and full jitter (at least a 429's Retry-After, as
    Prolific asks: "retry with exponential back-off",
    https://docs.prolific.com/documentation/core-concepts/managing-high-loads), at most
    PLATFORM_RETRY_ATTEMPTS tries and never past the time a waiting check is taken as lost
    (STALE_AFTER, less one try); the last failure is raised."""
    attempts = max(1, int(settings.PLATFORM_RETRY_ATTEMPTS))
    base = float(settings.PLATFORM_RETRY_BASE_SECONDS)
    deadline = time.monotonic() + STALE_AFTER.total_seconds() - sum(landing_timeout()) - 5
    for attempt in range(1, attempts + 1):
        try:
            return landing_submission(get_platform(Worker.PROLIFIC), session_id)
        except SubmissionLookupFailed as error:
            delay = max(random.uniform(0, min(calls.MAX_DELAY_SECONDS, base * 2 ** (attempt - 1))), _wait(error))
            if attempt == attempts or time.monotonic() + delay > deadline:
                logger.warning("prolific landing check failed: %s (attempt %d of %d)", error, attempt, attempts)
                raise
            calls.sleep(delay)
    raise AssertionError("unreachable")


def _wait(error: SubmissionLookupFailed) -> float:
    try:
        return min(calls.MAX_DELAY_SECONDS, max(0.0, float(error.retry_after or 0)))
    except ValueError:  # an HTTP date: the backoff's own delay then
        return 0.0


# --- the verdict (pure but for the studies' read) -------------------------------------------------


def prolific_studies(campaign: Campaign) -> set[str]:
    """The Prolific study ids whose sessions open this campaign: its study and its quiz study."""
    studies = Publication.objects.filter(campaign=campaign, platform=Worker.PROLIFIC).values_list("external_id")
    quiz = PlatformQualification.objects.filter(campaign=campaign, platform=Worker.PROLIFIC).values_list(
        "quiz_external_id"
    )
    return {study for (study,) in studies.union(quiz) if study}  # one statement


def session_refusal(submission: dict | None, participant: str, studies: set[str]) -> str:
    """Why Prolific's answer does not stand behind this landing; "" when it does."""
    if submission is None:
        return gettext("no such session")
    if submission.get("study_id") not in studies:
        return gettext("a session of another study")
    if _participant_of(submission) != participant:
        return gettext("another participant's session")
    # RESERVED: the place is held for this participant; ACTIVE: they started (submission-object)
    if submission.get("status") not in LIVE_SESSION:
        state = str(submission.get("status", "")).lower()
        return (
            gettext("the session is %(state)s") % {"state": state} if state else gettext("the session is in no state")
        )
    return ""


def _participant_of(submission: dict) -> str | None:
    # "participant" in the reference of "Retrieve a submission", "participant_id" in its listings
    return submission.get("participant") or submission.get("participant_id")
