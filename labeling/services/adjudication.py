"""The adjudication queue: items the crowd left unsettled wait for a reviewer.

An aggregated item waits when it has no majority, or when its Dawid-Skene posterior maximum is
below the campaign's `adjudicate_posterior_below` (settings.ADJUDICATE_POSTERIOR_BELOW when the
campaign sets none). A reviewer (staff, or a user with the `labeling.adjudicate` permission:
`manage.py grant_reviewer`) sees its answers, the suggestions shown and the workers' figures,
then either settles it (`settle`: a label of the campaign's set and a reason, both required) or
sends it back for one more answer (`send_back`: a follow-up HIT through the task type's seats).

A settled item's AggregatedLabel says adjudicated, by whom, when and why; its crowd TurnLabel
carries the same under provenance["adjudicated"]; aggregation keeps both. Every decision is an
audit entry (annotation.record.audit) in the same transaction.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Label, TurnLabel
from annotation.record import audit
from jobs.webhooks import events as webhook_events
from labeling.crowd.agreement import quiz_accuracy
from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.majority import normalise_answer
from labeling.models import AggregatedLabel, Assignment, Campaign, HITItem, Response, Worker, counted_assignment_q
from labeling.task_types.last_turn_label.aggregation import known_labels, load_answers, votes_by_turn, voting_labels
from labeling.task_types.last_turn_label.follow_up import follow_up_for_turns

REVIEW_PERMISSION = "labeling.adjudicate"


class AdjudicationRefused(ValueError):
    """A decision that cannot be taken; `field` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def may_review(user) -> bool:
    return bool(user.is_authenticated and user.is_active and (user.is_staff or user.has_perm(REVIEW_PERMISSION)))


def posterior_threshold(campaign: Campaign) -> float:
    own = campaign.adjudicate_posterior_below
    return settings.ADJUDICATE_POSTERIOR_BELOW if own is None else own


def waiting_q(campaign: Campaign) -> Q:
    """The rule, as one condition: unresolved, or a posterior below the threshold; not settled,
    not sent back and still waiting for its answers."""
    doubtful = Q(status=AggregatedLabel.UNRESOLVED) | Q(
        status=AggregatedLabel.MAJORITY, dawid_skene_confidence__lt=posterior_threshold(campaign)
    )
    return doubtful & Q(sent_back_at__isnull=True)


def queue(campaign: Campaign) -> QuerySet[AggregatedLabel]:
    rows = AggregatedLabel.objects.filter(waiting_q(campaign), campaign=campaign)
    return rows.select_related("turn").order_by("dawid_skene_confidence", "turn_id")


# --- what the reviewer sees ---------------------------------------------------------------------


@dataclass(frozen=True)
class ShownAnswer:
    worker_id: int
    worker: str
    answer: str
    method: str
    seconds: float
    quiz_accuracy: float | None
    dawid_skene_accuracy: float | None


def announce_waiting(campaign: Campaign, occurrence: str) -> None:
    """After an aggregation (`occurrence` names it, e.g. its job): the adjudication.waiting event,
    when items of the campaign wait for a reviewer (counted only when an endpoint wants the kind)."""

    def data() -> dict | None:
        waiting = queue(campaign).count()
        return {"campaign": campaign.pk, "campaign_name": campaign.name, "waiting": waiting} if waiting else None

    webhook_events.emit("adjudication.waiting", f"adjudication.waiting:{campaign.pk}:{occurrence}", data)


def item_evidence(row: AggregatedLabel) -> dict:
    """The answers to the item with each worker's figures over the whole campaign (quiz accuracy,
    Dawid-Skene accuracy), the suggestions the screen offered and the campaign's label set."""
    campaign = row.campaign
    figures = worker_figures(campaign)
    answers = item_answers(row)
    names = dict(Worker.objects.filter(pk__in=[a[0] for a in answers]).values_list("pk", "external_id"))
    shown = [
        ShownAnswer(
            worker, names.get(worker, str(worker)), text, method, round(seconds, 1), *figures.get(worker, (None, None))
        )
        for worker, text, method, seconds in answers
    ]
    return {"answers": shown, "suggestions": _suggestions(row), "labels": sorted(voting_labels(campaign))}


def item_answers(row: AggregatedLabel) -> list[tuple[int, str, str, float]]:
    """(worker, answer, method, seconds) of the item's counted answers, oldest first; a platform
    landing's identity counts as the worker it was merged into, as aggregation counts it."""
    rows = Response.objects.filter(
        counted_assignment_q("assignment__"),
        item__hit__campaign_id=row.campaign_id,
        item__target_turn_id=row.turn_id,
        item__quiz_question__isnull=True,
    ).order_by("pk")
    values = rows.values_list(
        Coalesce("assignment__worker__merged_into_id", "assignment__worker_id"),
        "label__name",
        "new_label_text",
        "method",
        "seconds_spent",
    )
    return [(worker, label or typed, method, seconds) for worker, label, typed, method, seconds in values]


def worker_figures(campaign: Campaign) -> dict[int, tuple[float | None, float | None]]:
    """worker -> (quiz accuracy, Dawid-Skene accuracy) over the campaign's counted answers.
    Dawid-Skene over a large campaign takes seconds, so the figures are cached until the counted
    answers change (their number, the newest answer, the counted assignments)."""
    key = _figures_key(campaign)
    cached = cache.get(key)
    if cached is not None:
        return cached
    known = known_labels()
    answers = load_answers(campaign)
    votes = votes_by_turn(answers, known, outside=set(known.values()) - voting_labels(campaign))
    opinion = dawid_skene((t, w, a) for t, held in votes.items() for w, a in held.answers)
    quiz = quiz_accuracy(
        (a.worker_id, normalise_answer(a.text, known), a.quiz_gold) for a in answers if a.quiz_gold is not None
    )
    workers = {a.worker_id for a in answers}
    figures = {
        worker: (
            _rounded(quiz[worker].rate) if worker in quiz else None,
            _rounded(opinion.worker_accuracy.get(worker)),
        )
        for worker in workers
    }
    cache.set(key, figures, FIGURES_SECONDS)
    return figures


FIGURES_SECONDS = 600


def _figures_key(campaign: Campaign) -> str:
    responses = Response.objects.filter(item__hit__campaign=campaign).aggregate(n=Count("pk"), last=Max("answered_at"))
    counted = Assignment.objects.filter(hit__campaign=campaign).counted().count()
    last = responses["last"].timestamp() if responses["last"] else 0
    return f"adjudication:workers:{campaign.pk}:{responses['n']}:{last}:{counted}"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _suggestions(row: AggregatedLabel) -> list[str]:
    item = HITItem.objects.filter(hit__campaign_id=row.campaign_id, target_turn_id=row.turn_id).order_by("pk").first()
    return list(item.choices) if item else []


# --- decisions ----------------------------------------------------------------------------------


def settle(row: AggregatedLabel, label_name: str, reviewer, reason: str) -> AggregatedLabel:
    """Make `label_name` the item's gold, by `reviewer`, for `reason`. Refused (nothing saved)
    without a reason, for a label outside the campaign's set, or for an item already settled."""
    reason = (reason or "").strip()
    if not reason:
        raise AdjudicationRefused("reason", "say why this label (it goes into the audit log)")
    label = Label.objects.by_name(label_name or "")
    if label is None or label.name not in voting_labels(row.campaign):
        raise AdjudicationRefused("label", f"{label_name!r} is not a label of this campaign")
    with transaction.atomic():
        locked = AggregatedLabel.objects.select_for_update().get(pk=row.pk)
        if locked.status == AggregatedLabel.ADJUDICATED:
            raise AdjudicationRefused("label", f"already settled by {locked.adjudicated_by} as {locked.label_text}")
        old = {"label": locked.label_text or None, "status": locked.status}
        now = timezone.now()
        AggregatedLabel.objects.filter(pk=locked.pk).update(
            label=label,
            label_text=label.name,
            status=AggregatedLabel.ADJUDICATED,
            adjudicated_by=reviewer,
            adjudicated_at=now,
            adjudication_reason=reason,
            sent_back_at=None,
            updated_at=now,
        )
        _write_gold(locked, label, reviewer, now, reason)
        new = {"label": label.name, "status": AggregatedLabel.ADJUDICATED}
        audit.record(audit.ADJUDICATED, reviewer, locked, old, new, reason)
    row.refresh_from_db()
    return row


def _write_gold(row: AggregatedLabel, label: Label, reviewer, at, reason: str) -> None:
    """The turn's crowd TurnLabel becomes the reviewer's label, its provenance saying so."""
    adjudicated = {"by": reviewer.get_username(), "at": at.isoformat(), "reason": reason}
    provenance = {
        "campaign": row.campaign_id,
        "votes": row.votes,
        "workers": row.answer_count,
        "agreement": row.agreement,
        "answers": row.answer_count,
        "adjudicated": adjudicated,
    }
    TurnLabel.objects.update_or_create(
        turn_id=row.turn_id,
        source=TurnLabel.CROWD,
        defaults={"label": label, "confidence": row.agreement, "provenance": provenance},
    )


def send_back(row: AggregatedLabel, reviewer, reason: str) -> int:
    """Ask for one more answer: the item leaves the queue until its answers change (aggregation
    brings it back), and a follow-up HIT offers it to a worker who has not answered it. Returns
    the HITs opened (0 when one still waits for answers: it leaves the queue all the same)."""
    reason = (reason or "").strip()
    if not reason:
        raise AdjudicationRefused("reason", "say why more answers are needed")
    with transaction.atomic():
        locked = AggregatedLabel.objects.select_for_update().get(pk=row.pk)
        if locked.status == AggregatedLabel.ADJUDICATED:
            raise AdjudicationRefused("label", f"already settled by {locked.adjudicated_by}")
        if locked.sent_back_at is not None:
            raise AdjudicationRefused("item", "already sent back; it returns once its answers change")
        now = timezone.now()
        AggregatedLabel.objects.filter(pk=locked.pk).update(sent_back_at=now)
        opened = follow_up_for_turns(locked.campaign, [locked.turn_id])
        new = {"sent_back_at": now.isoformat(), "follow_up_hits": [hit.pk for hit in opened]}
        audit.record(audit.SENT_BACK, reviewer, locked, {"status": locked.status}, new, reason)
    return len(opened)
