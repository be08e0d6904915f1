"""Delivering events: a Celery task per delivery on the default queue (jobs.tasks), never a request.

    send(delivery_id)      claims a due delivery with a conditional UPDATE (pending -> sending,
                           with a lease), POSTs the signed body once, records the attempt (status
                           code, scrubbed error, duration), then marks it succeeded, or pending again
                           after a back-off, or failed once its attempts are used up
    send_due()             beat's sweep: queues every due pending delivery and every sending one
                           whose lease ran out (a worker killed mid-request)
    replay(delivery)       a researcher's button: one more attempt, queued at once

Back-off after the n-th failed attempt: WEBHOOK_RETRY_BASE_SECONDS * 2**(n-1), at most
WEBHOOK_RETRY_MAX_SECONDS. A failure is a non-2xx answer, a timeout or a connection error;
redirects are not followed (a 3xx is a failure), so a delivery goes only to the URL registered.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from config.celery import app as celery_app
from jobs.webhooks import signing
from jobs.webhooks.endpoints import blocked_address, secret_of
from jobs.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent

USER_AGENT = "dialogue-curation-webhooks/1"
# The name of the Celery task of one delivery (jobs.tasks.deliver_webhook_task), which messages carry.
DELIVER_WEBHOOK = "jobs.deliver_webhook"


def body_of(event: WebhookEvent) -> bytes:
    """The JSON body: the same bytes on every attempt of every delivery of the event."""
    document = {
        "id": str(event.event_id),
        "kind": event.kind,
        "created_at": event.created_at.isoformat(),
        "data": event.data,
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def backoff_seconds(failed_attempts: int) -> int:
    delay = settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** max(0, failed_attempts - 1)
    return int(min(delay, settings.WEBHOOK_RETRY_MAX_SECONDS))


def queue_deliveries(delivery_ids: list[int], *, countdown: float = 0) -> None:
    """One Celery task per delivery after the commit: jobs.tasks.deliver_webhook_task, found by its
    name (the task runs this module's `send`, so this module names it rather than importing it)."""
    for pk in delivery_ids:
        transaction.on_commit(
            lambda pk=pk: celery_app.tasks[DELIVER_WEBHOOK].apply_async(
                args=[pk], queue="default", countdown=countdown or None
            )
        )


def _lease_seconds() -> float:
    return settings.WEBHOOK_TIMEOUT_SECONDS * 2 + 30


def _claim(delivery_id: int) -> bool:
    now = timezone.now()
    due = Q(status=WebhookDelivery.PENDING, next_attempt_at__lte=now) | Q(
        status=WebhookDelivery.SENDING, lease_until__lt=now
    )
    # The conditions stay on the updated row itself (no join, which Django would turn into a
    # `pk IN (subquery)` that a concurrent claim does not re-check). A switched-off endpoint's
    # deliveries wait, and go out when it is switched on again.
    live_endpoints = WebhookEndpoint.objects.filter(active=True).values("pk")
    claimed = WebhookDelivery.objects.filter(
        due, pk=delivery_id, attempts__lt=F("attempt_limit"), endpoint_id__in=live_endpoints
    ).update(
        status=WebhookDelivery.SENDING,
        lease_until=now + timedelta(seconds=_lease_seconds()),
        attempts=F("attempts") + 1,
    )
    return bool(claimed)


def send(delivery_id: int) -> dict:
    """Make one attempt at a due delivery; {"skipped": ...} when it is not due or another worker has it."""
    if not _claim(delivery_id):
        return {"delivery": delivery_id, "skipped": "not due"}
    delivery = WebhookDelivery.objects.select_related("event", "endpoint").get(pk=delivery_id)
    attempt = _post(delivery)
    _settle(delivery, attempt)
    return {"delivery": delivery_id, "attempt": attempt.number, "status_code": attempt.status_code, "ok": attempt.ok}


def _post(delivery: WebhookDelivery) -> WebhookAttempt:
    endpoint, event = delivery.endpoint, delivery.event
    secret = secret_of(endpoint)
    body = body_of(event)
    stamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        signing.SIGNATURE_HEADER: signing.signature_header(secret, stamp, body),
        "X-Event-Id": str(event.event_id),
        "X-Event-Kind": event.kind,
    }
    attempt = WebhookAttempt(
        delivery=delivery, number=delivery.attempts, started_at=timezone.now(), by_hand=delivery.replay_asked
    )
    started = time.monotonic()
    try:
        response = _request(endpoint.url, body, headers)
        attempt.status_code = response.status_code
        if not attempt.ok:
            attempt.error = f"HTTP {response.status_code}"
    except requests.RequestException as error:
        attempt.error = scrub(f"{type(error).__name__}: {error}", endpoint.url, secret)
    except RefusedAddress as error:
        attempt.error = str(error)
    attempt.duration_ms = int((time.monotonic() - started) * 1000)
    attempt.save()
    return attempt


class RefusedAddress(Exception):
    pass


def _request(url: str, body: bytes, headers: dict[str, str]) -> requests.Response:
    # checked again at delivery: the name may resolve elsewhere now than when it was registered
    parts = urlsplit(url)
    blocked = blocked_address(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
    if blocked:
        raise RefusedAddress(f"refused: {parts.hostname} resolves to {blocked}, a blocked address")
    return requests.post(
        url, data=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS, allow_redirects=False
    )


def scrub(message: str, url: str, secret: str) -> str:
    """An error line fit to show and store: without the secret, the URL's query or credentials."""
    parts = urlsplit(url)
    shown = f"{parts.scheme}://{parts.hostname}{':' + str(parts.port) if parts.port else ''}{parts.path}"
    cleaned = message.replace(secret, "[secret]").replace(url, shown)
    if parts.query:
        cleaned = cleaned.replace(parts.query, "[query]")
    return cleaned[:500]


def _settle(delivery: WebhookDelivery, attempt: WebhookAttempt) -> None:
    holding = WebhookDelivery.objects.filter(pk=delivery.pk, status=WebhookDelivery.SENDING, attempts=delivery.attempts)
    holding.update(replay_asked=False)
    if attempt.ok:
        holding.update(status=WebhookDelivery.SUCCEEDED, lease_until=None)
        return
    if delivery.attempts >= delivery.attempt_limit:
        holding.update(status=WebhookDelivery.FAILED, lease_until=None)
        return
    delay = backoff_seconds(delivery.attempts)
    if holding.update(
        status=WebhookDelivery.PENDING, lease_until=None, next_attempt_at=timezone.now() + timedelta(seconds=delay)
    ):
        queue_deliveries([delivery.pk], countdown=delay)


def send_due() -> dict:
    """Queue every delivery that is due: a pending one past its time, a sending one past its lease."""
    now = timezone.now()
    due = WebhookDelivery.objects.filter(
        Q(status=WebhookDelivery.PENDING, next_attempt_at__lte=now)
        | Q(status=WebhookDelivery.SENDING, lease_until__lt=now),
        attempts__lt=F("attempt_limit"),
        endpoint__active=True,
    )
    ids = list(due.values_list("pk", flat=True)[:1000])
    queue_deliveries(ids)
    stuck = WebhookDelivery.objects.filter(
        status=WebhookDelivery.SENDING, lease_until__lt=now, attempts__gte=F("attempt_limit")
    )
    stuck.update(status=WebhookDelivery.FAILED, lease_until=None)
    return {"queued": len(ids)}


def replay(delivery: WebhookDelivery) -> bool:
    """One more attempt of a finished delivery, queued now (a researcher's button). False while
    it is still pending or sending (its own retries are not over)."""
    replayed = WebhookDelivery.objects.filter(
        pk=delivery.pk, status__in=(WebhookDelivery.SUCCEEDED, WebhookDelivery.FAILED)
    ).update(
        status=WebhookDelivery.PENDING,
        next_attempt_at=timezone.now(),
        attempt_limit=F("attempts") + 1,
        replay_asked=True,
    )
    if replayed:
        queue_deliveries([delivery.pk])
    return bool(replayed)
