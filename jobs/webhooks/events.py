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
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from jobs.webhooks.endpoints import forget_wanted_kinds, live_endpoints
from jobs.webhooks.models import EVENT_KINDS, WebhookDelivery, WebhookEvent

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
    endpoint_ids = [pk for pk, kinds in live_endpoints() if kind in kinds]
    if not endpoint_ids:
        return None
    payload = data() if callable(data) else data
    if payload is None:
        return None
    try:
        event = _insert_once(kind, key[:200], payload, endpoint_ids)
    except IntegrityError:  # an endpoint deleted since the cache was filled: read them afresh
        forget_wanted_kinds()
        endpoint_ids = [pk for pk, kinds in live_endpoints() if kind in kinds]
        event = _insert_once(kind, key[:200], payload, endpoint_ids) if endpoint_ids else None
    if event is not None and send_now:
        from jobs.webhooks.delivery import queue_deliveries

        queue_deliveries(list(event.deliveries.values_list("pk", flat=True)))
    return event


def _insert_once(kind: str, key: str, payload: dict[str, Any], endpoint_ids: list[int]) -> WebhookEvent | None:
    """The event and one pending delivery per endpoint, in one transaction (two inserts); None
    when the key was recorded already (by a retry, or another process since our read). It runs
    after the writer's commit, so the deferred foreign keys are checked here, at this commit."""
    outermost = not connection.in_atomic_block
    try:
        with transaction.atomic():
            _commit_without_waiting_for_disk(outermost)
            event = WebhookEvent.objects.create(key=key, kind=kind, data=payload)
            now, limit = timezone.now(), settings.WEBHOOK_MAX_ATTEMPTS
            WebhookDelivery.objects.bulk_create(
                [
                    WebhookDelivery(event=event, endpoint_id=pk, attempt_limit=limit, next_attempt_at=now)
                    for pk in endpoint_ids
                ]
            )
    except IntegrityError:
        if WebhookEvent.objects.filter(key=key).exists():
            return None
        raise
    return event


def _commit_without_waiting_for_disk(outermost: bool) -> None:
    """On PostgreSQL, this transaction's commit does not wait for its WAL to reach the disk: the
    change it announces is committed (and flushed) already, and a participant's request would
    otherwise wait for a second flush (bench/labeling_load.py --compare-webhooks). A crash of
    PostgreSQL within a moment of it may lose the event, never the change or consistency. Only
    in the outermost transaction (after the writer's commit): SET LOCAL lasts to its end."""
    if outermost and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
