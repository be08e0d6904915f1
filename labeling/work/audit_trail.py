"""The audit entries of labeling's writers, each a call the writer makes beside its change
(annotation.record.audit is the one writer of the log; this module only knows labeling's rows).

Approvals and rejections (labeling.services.payments), payments stamped paid (labeling.services.payments, also as
platform sync calls it), campaign settings (labeling.services.campaigns, labeling.services.entry_tokens), gold labels
written by aggregation, adjudications (labeling.services.adjudication) and label proposals (labeling.reports.campaign).
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from annotation.record import audit
from labeling.models import Assignment, Campaign, PaymentEntry

AGGREGATION = "aggregation"
PLATFORM_SYNC = "platform-sync"
PLATFORM_EVENT = "platform-event"  # what a platform's event had done (labeling.platforms.prolific_events)


def job_actor(job, name: str) -> audit.Actor:
    """A system job, run for the person who queued it (JobRun.created_by), if one did."""
    actor = audit.system(name)
    creator = getattr(job, "created_by", None)
    if creator is not None and not actor.on_behalf_of:
        return audit.Actor(actor.kind, actor.name, on_behalf_of=creator.get_username())
    return actor


# --- approvals and rejections -------------------------------------------------------------------


@contextmanager
def watching_assignment(assignment: Assignment, reason: str = "") -> Iterator[None]:
    """Lock the assignment, let the block move it, record the move if its status changed."""
    with transaction.atomic():
        before = Assignment.objects.select_for_update().values_list("status", flat=True).get(pk=assignment.pk)
        yield
        after = Assignment.objects.values_list("status", flat=True).get(pk=assignment.pk)
        if after != before and after in _MOVE_KINDS:
            audit.record(_MOVE_KINDS[after], None, assignment, before, after, reason, **_assignment_where(assignment))


_MOVE_KINDS = {Assignment.APPROVED: audit.APPROVED, Assignment.REJECTED: audit.REJECTED}


def _assignment_where(assignment: Assignment) -> dict[str, int]:
    campaign_id = Assignment.objects.values_list("hit__campaign_id", flat=True).get(pk=assignment.pk)
    return {"campaign_id": campaign_id, "worker_id": assignment.worker_id}


def lock_ids(rows: QuerySet) -> list[int]:
    """The ids of `rows`, locked until the caller's transaction ends (a concurrent writer waits,
    then finds them changed), so the entries name exactly the rows moved."""
    return list(rows.select_for_update(of=("self",)).values_list("pk", flat=True))


def assignments_moved(ids: list[int], before: str, after: str, reason: str = "") -> int:
    moved = Assignment.objects.filter(pk__in=ids, status=after).values_list("pk", "worker_id", "hit__campaign_id")
    entries = [
        audit.entry(
            _MOVE_KINDS[after], None, ("assignment", pk), before, after, reason, campaign_id=campaign, worker_id=worker
        )
        for pk, worker, campaign in moved
    ]
    return audit.record_many(entries)


# --- payments -----------------------------------------------------------------------------------


@contextmanager
def paying(due: QuerySet, reason: str = "") -> Iterator[list[int]]:
    """Lock the due ledger entries and hand their ids to the block, which stamps them paid;
    every entry stamped gets an audit entry (amount, kind, when), in the same transaction."""
    with transaction.atomic():
        ids = lock_ids(due)
        yield ids
        paid = PaymentEntry.objects.filter(pk__in=ids, paid_at__isnull=False).values_list(
            "pk", "worker_id", "assignment__hit__campaign_id", "kind", "amount", "paid_at", "platform_reference"
        )
        audit.record_many([_paid_entry(row, reason) for row in paid])


def _paid_entry(row: tuple, reason: str):
    pk, worker, campaign, kind, amount, paid_at, reference = row
    new = {"kind": kind, "amount": _money(amount), "paid_at": paid_at.isoformat(), "reference": reference}
    return audit.entry(
        audit.PAID, None, ("paymententry", pk), {"paid_at": None}, new, reason, campaign_id=campaign, worker_id=worker
    )


def _money(amount: Decimal | None) -> str | None:
    return None if amount is None else str(amount)


# --- campaign settings --------------------------------------------------------------------------

SECRET_SETTINGS = {"entry_token"}


def campaign_created(campaign: Campaign, settings: Mapping[str, Any]) -> None:
    shown = {name: _plain(value) for name, value in settings.items() if name not in SECRET_SETTINGS}
    audit.record(audit.CAMPAIGN_CREATED, None, campaign, None, {"name": campaign.name, **shown})


def setting_changed(campaign: Campaign, name: str, old: Any, new: Any, reason: str = "") -> None:
    if name in SECRET_SETTINGS:
        old, new = audit.SECRET, audit.SECRET
    audit.record(audit.CAMPAIGN_SETTING, None, campaign, {name: _plain(old)}, {name: _plain(new)}, reason)


def _plain(value: Any) -> Any:
    """A value as JSON can hold it (decimals as text, rows by id, querysets as lists of ids)."""
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "pk"):
        return value.pk
    if isinstance(value, list | tuple | set | QuerySet):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value
