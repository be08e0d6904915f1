"""Prolific's webhooks, the receiving half: verify a delivery, record its event once, and act on it
through the sync's own code (labeling.platforms.sync.apply_event). The sync stays the fallback and
the check that nothing was missed: an event lost on the way changes nothing the next sync does not.

What a delivery is (https://docs.prolific.com/api-reference/webhooks/...):
- verifying: headers X-Prolific-Request-Signature and X-Prolific-Request-Timestamp ("a UNIX timestamp
  of when the request was sent"); the signature is base64(HMAC-SHA256(secret, timestamp + body))
  (verifying). We sign-check the raw body as it arrived and compare with hmac.compare_digest.
- the body (receiving): submission.status.change {"resource_id" (the submission), "event_type",
  "participant_id", "status"}; study.status.change {"resource_id" (the study), "event_type",
  "metadata", "status"}.
- X-Event-ID: "globally unique for each event", the same across retries; "Events are delivered at
  least once ... If you encounter the same X-Event-ID again, simply skip and acknowledge the duplicate
  event" (idempotency-and-the-x-event-id-header).
- X-Timestamp: when the event was sent; "we do not guarantee the order of events"
  (handling-event-order-with-x-timestamp). Recorded; order does not matter here because an event is
  only a cue: the submission (GET /submissions/{id}/) or the studies are read again from Prolific and
  their state now is applied, so an older event arriving late cannot undo a newer state.
- retries: a connection issue or a non-2xx answer is retried "up to 11 additional times over a
  24-hour period" (event-delivery-and-retry-logic).

Our answers, and why:
- 400 naming what is wrong: a missing header, a body that is not JSON, a field missing or not a string.
- 403: a signature that does not match, or a request timestamp more than WINDOW_SECONDS (5 minutes)
  from our clock either way. The documents name no window; 5 minutes is the common choice (the
  project's own outgoing webhooks use it, jobs.webhooks.signing) and bounds how long a captured
  request could be replayed. Nothing is recorded or changed.
- an X-Event-ID already recorded: nothing is done again. A byte-for-byte copy of the request that
  first carried it (same timestamp, same signature: a replay, not Prolific's retry, which is a new
  request) gets 409; a new, validly signed request for it (Prolific's redelivery after our answer was
  lost) gets 200, as the documents ask, so Prolific stops retrying. Either way nothing changes twice.
- an event for a study or submission of no campaign of ours (the subscription covers the whole
  workspace): 200, recorded as ignored, nothing changed.
- 503 with Retry-After when it cannot be acted on now (a sync holds the publication's lease, Prolific
  did not answer the read): not recorded, so Prolific's retry acts on it.
"""

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import UTC, datetime

from django.db import IntegrityError, transaction

from config.scrub import scrub
from labeling.models import Assignment, PlatformEvent, PlatformQualification, PlatformSubmission, Publication, Worker
from labeling.platforms import sync
from labeling.platforms.base import PlatformError
from labeling.platforms.prolific_hooks import secrets_in_use

WINDOW_SECONDS = 300
SUBMISSION_EVENT, STUDY_EVENT = "submission.status.change", "study.status.change"
RETRY_AFTER_SECONDS = "60"


class Answer(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def signature_of(secret: str, timestamp: str, body: bytes) -> bytes:
    """base64(HMAC-SHA256(secret, timestamp + body)), as Prolific's verifying page computes it."""
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest())


def receive(headers: Mapping[str, str], body: bytes, now: float) -> tuple[int, str]:
    """(HTTP status, what it says) for one delivery; never raises."""
    try:
        return 200, _receive(headers, body, now)
    except Answer as answer:
        return answer.status, answer.detail


def _receive(headers: Mapping[str, str], body: bytes, now: float) -> str:
    signature = _verified(headers, body, now)
    event_id = _header(headers, "X-Event-ID")
    if len(event_id) > 128:
        raise Answer(400, "header X-Event-ID is longer than 128 characters")
    payload = _payload(body)
    earlier = PlatformEvent.objects.filter(event_id=event_id).first()
    if earlier is not None:
        if hmac.compare_digest(earlier.signature, signature):
            raise Answer(409, f"event {event_id} was already received in this very request: a replay, ignored")
        return f"event {event_id} already recorded ({earlier.outcome}): acknowledged, nothing done again"
    publication, outcome, note = _act(payload)
    event = PlatformEvent(
        event_id=event_id, event_type=payload["event_type"], resource_id=payload["resource_id"],
        status=str(payload.get("status") or "")[:32], sent_at=_sent_at(headers), signature=signature,
        publication=publication, outcome=outcome, note=scrub(note)[:255],
    )  # fmt: skip
    try:
        with transaction.atomic():
            event.save()
    except IntegrityError:  # the same event in two requests at once: the other recorded it
        return f"event {event_id} already recorded"
    return f"{outcome}: {note}"


def _header(headers: Mapping[str, str], name: str) -> str:
    value = (headers.get(name) or "").strip()
    if not value:
        raise Answer(400, f"header {name} is missing")
    return value


def _verified(headers: Mapping[str, str], body: bytes, now: float) -> str:
    """The request's signature when it signs `body` under a secret we hold, within the window."""
    signature = _header(headers, "X-Prolific-Request-Signature")
    timestamp = _header(headers, "X-Prolific-Request-Timestamp")
    try:
        sent = int(timestamp)
    except ValueError:
        raise Answer(400, "header X-Prolific-Request-Timestamp is not a UNIX timestamp") from None
    if abs(now - sent) > WINDOW_SECONDS:
        raise Answer(403, f"X-Prolific-Request-Timestamp is more than {WINDOW_SECONDS} s from now: refused")
    given = signature.encode()
    if not any(hmac.compare_digest(signature_of(secret, timestamp, body), given) for secret in secrets_in_use()):
        raise Answer(403, "X-Prolific-Request-Signature does not match: refused")
    return signature[:128]


def _payload(body: bytes) -> dict:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise Answer(400, "the body is not JSON") from None
    if not isinstance(payload, dict):
        raise Answer(400, "the body is not a JSON object")
    for name, longest in (("resource_id", 128), ("event_type", 64)):
        if not isinstance(payload.get(name), str) or not payload[name].strip():
            raise Answer(400, f"field {name} is missing or not a string")
        if len(payload[name]) > longest:
            raise Answer(400, f"field {name} is longer than {longest} characters")
    if payload.get("status") is not None and not isinstance(payload["status"], str):
        raise Answer(400, "field status is not a string")
    return payload


def _sent_at(headers: Mapping[str, str]) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(headers.get("X-Timestamp") or ""), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None  # optional for us: the state is read again, not taken from the event


# --- acting on one event ------------------------------------------------------------------------


def _act(payload: dict) -> tuple[Publication | None, str, str]:
    """(publication, outcome, note); Answer(503) when it must be tried again later."""
    from labeling.platforms.prolific import ProlificPlatform

    kind, resource = payload["event_type"], payload["resource_id"]
    if kind not in (SUBMISSION_EVENT, STUDY_EVENT):
        return None, PlatformEvent.IGNORED, f"event type {kind} is not one we act on"
    publication = _submission_publication(resource) if kind == SUBMISSION_EVENT else _study_publication(resource)
    if publication is None:
        return None, PlatformEvent.IGNORED, f"no campaign of ours has {resource}"
    platform = ProlificPlatform()
    try:
        result = _submission_now(platform, publication, resource) if kind == SUBMISSION_EVENT else None
        if kind == SUBMISSION_EVENT and result is None:
            return publication, PlatformEvent.IGNORED, f"submission {resource} is not of this campaign's studies"
        note = sync.apply_event(publication, platform, result)
    except sync.SyncBusy:
        raise Answer(503, "a sync of this campaign is running: try again") from None
    except PlatformError as error:
        raise Answer(503, scrub(f"Prolific could not be read just now: {error}")[:300]) from None
    return publication, PlatformEvent.APPLIED, note


def _submission_publication(submission_id: str) -> Publication | None:
    """The publication of the campaign whose work this submission is: recorded by a sync, or bound
    to our assignment when the participant landed (the submission id is Prolific's SESSION_ID)."""
    known = PlatformSubmission.objects.filter(external_id=submission_id, publication__platform=Publication.PROLIFIC)
    row = known.select_related("publication").first()
    if row is not None:
        return row.publication
    campaign = (
        Assignment.objects.filter(platform_assignment_id=submission_id, worker__platform=Worker.PROLIFIC)
        .values_list("hit__campaign_id", flat=True)
        .first()
    )
    return Publication.objects.filter(campaign_id=campaign, platform=Publication.PROLIFIC).first() if campaign else None


def _study_publication(study_id: str) -> Publication | None:
    publication = Publication.objects.filter(platform=Publication.PROLIFIC, external_id=study_id).first()
    if publication is not None:
        return publication
    quiz = PlatformQualification.objects.filter(platform=Publication.PROLIFIC, quiz_external_id=study_id).first()
    return (
        Publication.objects.filter(campaign_id=quiz.campaign_id, platform=Publication.PROLIFIC).first()
        if quiz
        else None
    )


def _submission_now(platform, publication: Publication, submission_id: str):
    """The submission as Prolific reports it now (one short read, the landing check's), or None when
    Prolific knows none or it belongs to a study not of this campaign."""
    from labeling.platforms.prolific import landing_submission

    row = landing_submission(platform, submission_id)
    if row is None or row.get("study_id") not in platform.campaign_studies(publication):
        return None
    # the single submission calls the participant `participant`, the study's list `participant_id`
    # (https://docs.prolific.com/api-reference/submissions/get-submission)
    row = {**row, "participant_id": row.get("participant_id") or row.get("participant") or ""}
    return platform.result_of(row)
