"""Recording an event: called by the one writer of each state change, once its change commits.

    emit(kind, key, data)   in the writer's transaction: on commit, when some active endpoint
                            wants `kind`, records the event (once per `key`) and one pending
                            delivery per endpoint that wants it. `data` may be a callable that
                            returns the data, or None when there is nothing to announce after all
                            (it runs only when the kind is wanted, so an unwanted kind costs
                            nothing but a cache read).

`key` names the occurrence (e.g. "assignment.submitted:42"): the event row is unique on it, so a
retried job, a second worker or a repeated call makes no second event and no second delivery.
With `send_now` the deliveries are queued at once; a participant's request passes False and only
inserts rows, which the periodic send (jobs.webhooks.delivery.send_due, every
WEBHOOK_SWEEP_SECONDS) picks up, so nothing of a delivery ever runs in the request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from jobs.webhooks.endpoints import wanted_kinds
from jobs.webhooks.models import EVENT_KINDS, WebhookDelivery, WebhookEndpoint, WebhookEvent

logger = logging.getLogger(__name__)

EventData = dict[str, Any] | Callable[[], dict[str, Any] | None]


def emit(kind: str, key: str, data: EventData, *, send_now: bool = True) -> None:
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    transaction.on_commit(lambda: _record_quietly(kind, key, data, send_now))


def _record_quietly(kind: str, key: str, data: EventData, send_now: bool) -> None:
    # The change it announces is committed already: a failure here must not fail the request
    # or job that made it (the event is lost then, and the log says so).
    try:
        record(kind, key, data, send_now=send_now)
    except Exception:
        logger.exception("webhook event %s (%s) not recorded", kind, key)


def record(kind: str, key: str, data: EventData, *, send_now: bool = True) -> WebhookEvent | None:
    """Record the event of `key` and its deliveries; None when no endpoint wants `kind`, there is
    nothing to announce, or the event was recorded before."""
    if kind not in wanted_kinds():
        return None
    key = key[:200]
    endpoints = WebhookEndpoint.objects.wanting(kind)
    if not endpoints:
        return None
    payload = data() if callable(data) else data
    if payload is None:
        return None
    event = _insert_once(kind, key, payload)
    if event is None:
        return None
    now = timezone.now()
    WebhookDelivery.objects.bulk_create(
        [WebhookDelivery(event=event, endpoint=endpoint, attempt_limit=settings.WEBHOOK_MAX_ATTEMPTS, next_attempt_at=now)
         for endpoint in endpoints],
        ignore_conflicts=True,
    )  # fmt: skip
    if send_now:
        from jobs.webhooks.delivery import queue_deliveries

        queue_deliveries(list(event.deliveries.values_list("pk", flat=True)))
    return event


def _insert_once(kind: str, key: str, payload: dict[str, Any]) -> WebhookEvent | None:
    if WebhookEvent.objects.filter(key=key).exists():
        return None
    try:
        with transaction.atomic():
            return WebhookEvent.objects.create(key=key, kind=kind, data=payload)
    except IntegrityError:  # another process recorded it between the check and the insert
        return None
