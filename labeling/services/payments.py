"""Approving work and paying for it through a ledger that cannot pay twice.

A reward is owed for every approved assignment, and a bonus when its quiz mark reaches the
campaign's pass mark. Each owed amount is one PaymentEntry, unique per (assignment, kind), so
`record_payments` can run any number of times (or twice at once) and pays nothing more.
Entries are "due" until `mark_paid` stamps them (after the money went out on the platform).
A platform worker's submission is paid only once the platform confirmed it
(labeling.actions.submit.confirm_platform_submission); until then it is "pending".

On a crowd platform the reward is paid by the platform when the work is approved
(`mark_rewards_paid`), and bonuses by labeling.platforms.sync through the adapter, which records
each step here first: an idempotency key before the call (`reserve_request_token`), Prolific's
bulk bonus id (`attach_platform_reference`), the start of its one pay call (`start_pay`) and the
payment (`mark_entries_paid`). A pay call that started but is not known to have finished is never
made again by sync; it waits for a researcher (`payment_unsure`, `resolve_unsure_payment`).
"""

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from labeling.models import Assignment, Campaign, PaymentEntry, Publication, Worker
from labeling.services.qualification import reward_and_bonus
from labeling.work import audit_trail, seats


class ReviewRefused(Exception):
    pass


def approve_assignment(assignment: Assignment) -> Assignment:
    """submitted -> approved, as one conditional update (a second approval is a no-op).
    A platform worker's submission waits for the platform's confirmation first."""
    if Assignment.objects.pending_confirmation().filter(pk=assignment.pk).exists():
        raise ReviewRefused(f"assignment {assignment.pk} is pending: the platform has not confirmed it yet")
    with audit_trail.watching_assignment(assignment):
        return _move(assignment, set(Assignment.DONE), Assignment.APPROVED)


def reject_assignment(assignment: Assignment) -> Assignment:
    """submitted -> rejected. An approved assignment that has been paid cannot be rejected."""
    if PaymentEntry.objects.filter(assignment=assignment, paid_at__isnull=False).exists():
        raise ReviewRefused(f"assignment {assignment.pk} was already paid")
    with transaction.atomic(), audit_trail.watching_assignment(assignment):
        # done work holds a seat; rejected work does not: its seat is free again
        rejected = Assignment.objects.filter(pk=assignment.pk, status__in=Assignment.DONE).update(
            status=Assignment.REJECTED
        )
        if rejected and not assignment.phantom:  # a phantom place held no seat (labeling.work.seats)
            seats.free([assignment.hit_id])
        moved = _move(assignment, set(Assignment.FINAL), Assignment.REJECTED)
        PaymentEntry.objects.filter(assignment=assignment, paid_at__isnull=True).delete()
    return moved


def approve_submitted(campaign: Campaign) -> int:
    """Approve every submitted assignment of the campaign whose worker is not blocked; returns how many.
    Work of blocked workers waits for a decision, one assignment at a time; pending platform work
    waits for the platform's confirmation; work a platform sync tracks is approved by the sync (on
    the platform first), never here, so the two never disagree."""
    chosen = (
        Assignment.objects.filter(hit__campaign=campaign, status=Assignment.SUBMITTED, platform_submission__isnull=True)
        .counted()
        .exclude(worker__status=Worker.BLOCKED)
    )
    with transaction.atomic():
        ids = audit_trail.lock_ids(chosen)
        approved = Assignment.objects.filter(pk__in=ids, status=Assignment.SUBMITTED).update(status=Assignment.APPROVED)
        audit_trail.assignments_moved(ids, before=Assignment.SUBMITTED, after=Assignment.APPROVED)
    return approved


def _move(assignment: Assignment, allowed: set[str], target: str) -> Assignment:
    updated = Assignment.objects.filter(pk=assignment.pk, status__in=allowed).update(status=target)
    assignment.refresh_from_db()
    if not updated:
        raise ReviewRefused(f"assignment {assignment.pk} is {assignment.status}; cannot make it {target}")
    return assignment


def record_payments(campaign: Campaign, *, withheld: list[int] = ()) -> dict[str, int]:
    """Add the ledger entries owed for the campaign's approved assignments; returns how many were new.
    `withheld`: assignments whose reward is not known yet (approved in part on a platform, the share
    unknown: see `shares_unknown`); nothing is owed for them until their share is recorded."""
    approved = (
        Assignment.objects.filter(hit__campaign=campaign, status=Assignment.APPROVED).counted().exclude(pk__in=withheld)
    )
    owed = []
    for assignment in approved.select_related("hit").only("pk", "worker_id", "quiz_correct", "hit__kind"):
        # a qualification quiz pays its own reward and no bonus (labeling.services.qualification)
        reward, bonus = reward_and_bonus(campaign, assignment.hit.kind)
        if reward > 0:
            owed.append(_entry(assignment, PaymentEntry.REWARD, reward))
        if bonus > 0 and (assignment.quiz_correct or 0) >= campaign.quiz_pass_mark:
            owed.append(_entry(assignment, PaymentEntry.BONUS, bonus))
    before = PaymentEntry.objects.filter(assignment__hit__campaign=campaign).count()
    # the unique (assignment, kind) constraint turns a repeat, or a concurrent run, into a no-op
    PaymentEntry.objects.bulk_create(owed, ignore_conflicts=True, batch_size=1000)
    after = PaymentEntry.objects.filter(assignment__hit__campaign=campaign).count()
    return {"approved": approved.count(), "new_entries": after - before}


def record_reward_share(assignment: Assignment, share: Decimal) -> PaymentEntry | None:
    """The platform approved the work with part of its reward (Prolific's PARTIALLY APPROVED): the
    share we asked for, or the one a researcher read on the platform. The reward entry is owed at it, written before `record_payments` would owe the full reward
    (unique per assignment and kind, so a repeat changes nothing; an entry already paid is left)."""
    reward, _bonus = reward_and_bonus(assignment.hit.campaign, assignment.hit.kind)
    amount = (reward * share).quantize(Decimal("0.01"))
    entry, created = PaymentEntry.objects.get_or_create(
        assignment=assignment, kind=PaymentEntry.REWARD, defaults={"worker_id": assignment.worker_id, "amount": amount}
    )
    if not created and entry.paid_at is None and entry.amount != amount:
        PaymentEntry.objects.filter(pk=entry.pk, paid_at__isnull=True).update(amount=amount)
    return entry


def shares_unknown(campaign: Campaign, note: str) -> list[int]:
    """Assignments a platform approved in part whose share is unknown here (their submission carries
    `note`, labeling.platforms.sync.SHARE_UNKNOWN) and for which no reward entry was recorded: the
    campaign page lists them for a researcher to check on the platform (`record_reward_share`)."""
    return list(
        Assignment.objects.filter(hit__campaign=campaign, platform_submission__note=note, status=Assignment.APPROVED)
        .exclude(payments__kind=PaymentEntry.REWARD)
        .values_list("pk", flat=True)
    )


def record_share_read(campaign: Campaign, assignment: str, percent: str, note: str) -> PaymentEntry:
    """A researcher read on the platform the share of the reward it paid for work approved in part
    (listed by `shares_unknown`): the reward entry is owed at it, and the next sync stamps it paid.
    ValueError naming the field for a share that is not a partial one, or work not waiting for it."""
    try:
        share = Decimal(str(percent).strip()) / 100
    except ArithmeticError:
        raise ValueError("percent: a number above 0 and below 100") from None
    if not (share.is_finite() and Decimal(0) < share < Decimal(1)):
        raise ValueError("percent: a partial approval's share is above 0 and below 100")
    waiting = {str(pk): pk for pk in shares_unknown(campaign, note)}
    if str(assignment).strip() not in waiting:
        raise ValueError("assignment: no work of this campaign waits for its share")
    chosen = Assignment.objects.select_related("hit__campaign").get(pk=waiting[str(assignment).strip()])
    return record_reward_share(chosen, share)


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
    with audit_trail.paying(
        PaymentEntry.objects.filter(assignment__hit__campaign=campaign, paid_at__isnull=True)
    ) as ids:
        return PaymentEntry.objects.filter(pk__in=ids).update(paid_at=timezone.now())


# --- Platform payments: each step recorded before and after the call -----------------------------


def mark_rewards_paid(assignment_ids: list[int]) -> int:
    """The platform paid these assignments' rewards when it approved them."""
    due = PaymentEntry.objects.filter(assignment_id__in=assignment_ids, kind=PaymentEntry.REWARD, paid_at__isnull=True)
    with audit_trail.paying(due, "paid by the platform with its approval") as ids:
        return PaymentEntry.objects.filter(pk__in=ids).update(paid_at=timezone.now())


def bonuses_due(publication: Publication) -> list[PaymentEntry]:
    """Bonus entries of the publication's matched work not paid and no pay call started."""
    return list(
        PaymentEntry.objects.filter(
            kind=PaymentEntry.BONUS,
            paid_at__isnull=True,
            pay_started_at__isnull=True,
            assignment__platform_submission__publication=publication,
        )
        .select_related("assignment__platform_submission", "worker")
        .order_by("pk")
    )


_STAMPED_TOKEN = re.compile(r"^t(\d{10,})-[0-9a-f]{32}$")


def new_request_token(now: datetime | None = None) -> str:
    """An idempotency key that carries the moment it was made ("t<unix seconds>-<uuid>"), so its
    age is known: platforms honour such keys for a limited time (MTurk: 24 hours)."""
    return f"t{int((now or timezone.now()).timestamp())}-{uuid.uuid4().hex}"


def request_token_age(token: str, now: datetime | None = None) -> timedelta | None:
    """How old a key from `new_request_token` is; None for a key of unknown age."""
    stamped = _STAMPED_TOKEN.match(token)
    if stamped is None:
        return None
    return (now or timezone.now()) - datetime.fromtimestamp(int(stamped.group(1)), tz=UTC)


def reserve_request_token(entry: PaymentEntry) -> str:
    """The entry's idempotency key, made once (a conditional UPDATE) and read back, so a retry or
    a concurrent run sends the same key."""
    PaymentEntry.objects.filter(pk=entry.pk, request_token="").update(request_token=new_request_token())
    entry.request_token = PaymentEntry.objects.values_list("request_token", flat=True).get(pk=entry.pk)
    return entry.request_token


def renew_request_token(entry: PaymentEntry, expired: str) -> str:
    """A fresh key in place of one the platform no longer honours, written before the call (a
    conditional UPDATE: a concurrent renewal wins once) and read back."""
    PaymentEntry.objects.filter(pk=entry.pk, request_token=expired, paid_at__isnull=True).update(
        request_token=new_request_token()
    )
    entry.request_token = PaymentEntry.objects.values_list("request_token", flat=True).get(pk=entry.pk)
    return entry.request_token


def attach_platform_reference(entry_ids: list[int], reference: str) -> list[int]:
    """Tie not-yet-tied entries to a platform's payment object (Prolific's bulk bonus id); returns
    the ids tied to it now (an entry already tied to another keeps that one)."""
    PaymentEntry.objects.filter(pk__in=entry_ids, platform_reference="", pay_started_at__isnull=True).update(
        platform_reference=reference
    )
    return list(
        PaymentEntry.objects.filter(pk__in=entry_ids, platform_reference=reference).values_list("pk", flat=True)
    )


def start_pay(reference: str) -> bool:
    """Claim the one pay call of a platform payment object: True for the caller that may send it.
    Written before the call, so a crash after it never leads to a second call."""
    return bool(
        PaymentEntry.objects.filter(
            platform_reference=reference, pay_started_at__isnull=True, paid_at__isnull=True
        ).update(pay_started_at=timezone.now())
    )


def mark_entries_paid(*, ids: list[int] | None = None, reference: str = "") -> int:
    entries = PaymentEntry.objects.filter(paid_at__isnull=True)
    entries = entries.filter(pk__in=ids) if ids is not None else entries.filter(platform_reference=reference)
    with audit_trail.paying(entries) as locked:
        return PaymentEntry.objects.filter(pk__in=locked).update(paid_at=timezone.now())


def abandon_reference(reference: str) -> int:
    """A payment object whose pay call was refused before anything was paid: its entries are free
    to be paid through a new one."""
    return PaymentEntry.objects.filter(platform_reference=reference, paid_at__isnull=True).update(
        platform_reference="", pay_started_at=None
    )


def payment_unsure(campaign: Campaign):
    """Entries whose pay call started but is not known to have finished: check on the platform."""
    return PaymentEntry.objects.filter(
        assignment__hit__campaign=campaign, pay_started_at__isnull=False, paid_at__isnull=True
    ).select_related("worker")


def resolve_unsure_payment(campaign: Campaign, reference: str, *, paid: bool) -> int:
    """A researcher checked the platform: the payment went out (stamp it paid) or not (free the
    entries, so the next sync pays them through a new payment object)."""
    unsure = payment_unsure(campaign).filter(platform_reference=reference)
    if paid:
        with audit_trail.paying(unsure, "a researcher checked the platform: it was paid") as ids:
            return PaymentEntry.objects.filter(pk__in=ids).update(paid_at=timezone.now())
    return unsure.update(platform_reference="", pay_started_at=None)
