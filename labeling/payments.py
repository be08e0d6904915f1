"""Approving work and paying for it through a ledger that cannot pay twice.

A reward is owed for every approved assignment, and a bonus when its quiz mark reaches the
campaign's pass mark. Each owed amount is one PaymentEntry, unique per (assignment, kind), so
`record_payments` can run any number of times (or twice at once) and pays nothing more.
Entries are "due" until `mark_paid` stamps them (after the money went out on the platform).
A platform worker's submission is paid only once the platform confirmed it
(labeling.services.confirm_platform_submission); until then it is "pending".
"""

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from labeling.models import Assignment, Campaign, PaymentEntry, Worker


class ReviewRefused(Exception):
    pass


def approve_assignment(assignment: Assignment) -> Assignment:
    """submitted -> approved, as one conditional update (a second approval is a no-op).
    A platform worker's submission waits for the platform's confirmation first."""
    if Assignment.objects.pending_confirmation().filter(pk=assignment.pk).exists():
        raise ReviewRefused(f"assignment {assignment.pk} is pending: the platform has not confirmed it yet")
    return _move(assignment, set(Assignment.DONE), Assignment.APPROVED)


def reject_assignment(assignment: Assignment) -> Assignment:
    """submitted -> rejected. An approved assignment that has been paid cannot be rejected."""
    if PaymentEntry.objects.filter(assignment=assignment, paid_at__isnull=False).exists():
        raise ReviewRefused(f"assignment {assignment.pk} was already paid")
    with transaction.atomic():
        moved = _move(assignment, set(Assignment.FINAL), Assignment.REJECTED)
        PaymentEntry.objects.filter(assignment=assignment, paid_at__isnull=True).delete()
    return moved


def approve_submitted(campaign: Campaign) -> int:
    """Approve every submitted assignment of the campaign whose worker is not blocked; returns how many.
    Work of blocked workers waits for a decision, one assignment at a time; pending platform work
    waits for the platform's confirmation."""
    return (
        Assignment.objects.filter(hit__campaign=campaign, status=Assignment.SUBMITTED)
        .counted()
        .exclude(worker__status=Worker.BLOCKED)
        .update(status=Assignment.APPROVED)
    )


def _move(assignment: Assignment, allowed: set[str], target: str) -> Assignment:
    updated = Assignment.objects.filter(pk=assignment.pk, status__in=allowed).update(status=target)
    assignment.refresh_from_db()
    if not updated:
        raise ReviewRefused(f"assignment {assignment.pk} is {assignment.status}; cannot make it {target}")
    return assignment


def record_payments(campaign: Campaign) -> dict[str, int]:
    """Add the ledger entries owed for the campaign's approved assignments; returns how many were new."""
    approved = Assignment.objects.filter(hit__campaign=campaign, status=Assignment.APPROVED).counted()
    owed = []
    for assignment in approved.only("pk", "worker_id", "quiz_correct"):
        if campaign.reward > 0:
            owed.append(_entry(assignment, PaymentEntry.REWARD, campaign.reward))
        if campaign.bonus > 0 and (assignment.quiz_correct or 0) >= campaign.quiz_pass_mark:
            owed.append(_entry(assignment, PaymentEntry.BONUS, campaign.bonus))
    before = PaymentEntry.objects.filter(assignment__hit__campaign=campaign).count()
    # the unique (assignment, kind) constraint turns a repeat, or a concurrent run, into a no-op
    PaymentEntry.objects.bulk_create(owed, ignore_conflicts=True, batch_size=1000)
    after = PaymentEntry.objects.filter(assignment__hit__campaign=campaign).count()
    return {"approved": approved.count(), "new_entries": after - before}


def _entry(assignment: Assignment, kind: str, amount: Decimal) -> PaymentEntry:
    return PaymentEntry(worker_id=assignment.worker_id, assignment_id=assignment.pk, kind=kind, amount=amount)


@dataclass(frozen=True)
class WorkerDue:
    worker_id: int
    worker: str
    rewards: Decimal
    bonuses: Decimal
    entries: int

    @property
    def total(self) -> Decimal:
        return self.rewards + self.bonuses


def payments_due(campaign: Campaign) -> list[WorkerDue]:
    """What each worker is owed and not yet paid, largest first."""
    rows = (
        PaymentEntry.objects.filter(assignment__hit__campaign=campaign, paid_at__isnull=True)
        .values("worker_id", "worker__external_id", "kind")
        .annotate(amount=Sum("amount"), entries=Count("pk"))
    )
    by_worker: dict[int, dict] = {}
    for row in rows:
        due = by_worker.setdefault(
            row["worker_id"],
            {"worker": row["worker__external_id"], "rewards": Decimal(0), "bonuses": Decimal(0), "entries": 0},
        )
        due["rewards" if row["kind"] == PaymentEntry.REWARD else "bonuses"] += row["amount"]
        due["entries"] += row["entries"]
    summaries = [WorkerDue(worker_id=pk, **values) for pk, values in by_worker.items()]
    return sorted(summaries, key=lambda due: (-due.total, due.worker))


def mark_paid(campaign: Campaign) -> int:
    """Stamp every due entry of the campaign as paid now; returns how many."""
    return PaymentEntry.objects.filter(assignment__hit__campaign=campaign, paid_at__isnull=True).update(
        paid_at=timezone.now()
    )
