"""The one writer of the audit log (annotation.record.audit_log.AuditEntry): who changed what, when, from
what to what, and why.

Every writer of a recorded kind calls `record` (or `record_many` for a bulk change) in the same
transaction as its change, so a change and its entry commit or roll back together. The log lives
in `annotation` because a gold label (TurnLabel) is this app's row and `annotation` imports no
other app; `labeling` records its own kinds here through the same function.

Who: `actor` is a person (a Django user), a system job (`system("platform-sync")`), or None for
whoever `acting_as` names for the current request or job (ActorMiddleware sets the signed-in
person for every request); a system job started from a page records that person as
`on_behalf_of`. With nobody named, the entry says "system".
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db import models

from annotation.record.audit_log import AuditEntry

# the recorded kinds
GOLD_CHANGED, GOLD_REMOVED = "gold.changed", "gold.removed"
ADJUDICATED, SENT_BACK = "adjudication.settled", "adjudication.sent_back"
PROPOSAL_ACCEPTED, PROPOSAL_REFUSED = "proposal.accepted", "proposal.refused"
WORKER_BLOCKED, WORKER_UNBLOCKED = "worker.blocked", "worker.unblocked"
APPROVED, REJECTED, PAID = "assignment.approved", "assignment.rejected", "payment.paid"
CAMPAIGN_CREATED, CAMPAIGN_SETTING = "campaign.created", "campaign.setting_changed"
QUIZ_GOLD_CHANGED = "quiz.gold_changed"  # a quiz item's known answer, imported again differently
# a participant's answer to a campaign's consent (labeling.study_flow.progress), with its version
CONSENT_GIVEN, CONSENT_DECLINED = "consent.given", "consent.declined"
KINDS = (
    GOLD_CHANGED,
    GOLD_REMOVED,
    ADJUDICATED,
    SENT_BACK,
    PROPOSAL_ACCEPTED,
    PROPOSAL_REFUSED,
    WORKER_BLOCKED,
    WORKER_UNBLOCKED,
    APPROVED,
    REJECTED,
    PAID,
    CAMPAIGN_CREATED,
    CAMPAIGN_SETTING,
    QUIZ_GOLD_CHANGED,
    CONSENT_GIVEN,
    CONSENT_DECLINED,
)
# what a published dataset may carry: decisions about labels, never a worker's id or pay
DATASET_KINDS = (GOLD_CHANGED, GOLD_REMOVED, ADJUDICATED, SENT_BACK, PROPOSAL_ACCEPTED, PROPOSAL_REFUSED)
SECRET = "(secret, not recorded)"


@dataclass(frozen=True)
class Actor:
    kind: str  # AuditEntry.USER or AuditEntry.SYSTEM
    name: str
    user_id: int | None = None
    on_behalf_of: str = ""


NOBODY = Actor(AuditEntry.SYSTEM, "system")
# an Actor, or a request whose user is read when an entry is written (DRF authenticates inside
# the view, after the middleware ran, and sets the user on the Django request)
_current: ContextVar[Any] = ContextVar("audit_actor", default=None)


def person(user) -> Actor:
    return Actor(AuditEntry.USER, user.get_username(), user.pk)


def system(name: str) -> Actor:
    """A system job; the person acting now (if any) is who it runs for."""
    current = current_actor()
    behalf = current.name if current.kind == AuditEntry.USER else current.on_behalf_of
    return Actor(AuditEntry.SYSTEM, name, on_behalf_of=behalf)


def current_actor() -> Actor:
    current = _current.get()
    if isinstance(current, Actor):
        return current
    user = getattr(current, "user", None)
    if user is not None and user.is_authenticated:
        return person(user)
    return NOBODY


@contextmanager
def acting_as(actor) -> Iterator[Any]:
    """Name who acts (an Actor, or a request) for every entry written inside the block."""
    token = _current.set(actor)
    try:
        yield actor
    finally:
        _current.reset(token)


def _as_actor(actor) -> Actor:
    if actor is None:
        return current_actor()
    if isinstance(actor, Actor):
        return actor
    return person(actor)


def entry(kind: str, actor, target, old: Any = None, new: Any = None, reason: str = "", **where) -> AuditEntry:
    """An unsaved entry (for record_many). `target`: a model instance or (type, id). `where`:
    campaign_id, worker_id, turn_id when the target does not carry them itself."""
    if kind not in KINDS:
        raise ValueError(f"unknown audit kind {kind!r}")
    who = _as_actor(actor)
    target_type, target_id = _target(target)
    found = {name: _carried(target, name) for name in ("campaign_id", "worker_id", "turn_id")}
    found.update({name: value for name, value in where.items() if value is not None})
    return AuditEntry(
        kind=kind,
        actor_kind=who.kind,
        actor=who.name,
        actor_user_id=who.user_id,
        on_behalf_of=who.on_behalf_of,
        target_type=target_type,
        target_id=str(target_id),
        old=old,
        new=new,
        reason=reason or "",
        **found,
    )


def record(kind: str, actor, target, old: Any = None, new: Any = None, reason: str = "", **where) -> AuditEntry:
    """Write one entry now (inside the caller's transaction)."""
    written = entry(kind, actor, target, old, new, reason, **where)
    written.save()
    return written


def record_many(entries: list[AuditEntry]) -> int:
    AuditEntry.objects.bulk_create(entries, batch_size=1000)
    return len(entries)


def _target(target) -> tuple[str, Any]:
    if isinstance(target, tuple):
        return target
    return target._meta.model_name, target.pk


def _carried(target, name: str) -> int | None:
    if isinstance(target, tuple) or not isinstance(target, models.Model):
        return None
    own = {"campaign_id": "campaign", "worker_id": "worker", "turn_id": "turn"}[name]
    if target._meta.model_name == own:
        return target.pk
    return getattr(target, name, None)


class ActorMiddleware:
    """Names the signed-in person as the actor of everything a request changes."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with acting_as(request):
            return self.get_response(request)
