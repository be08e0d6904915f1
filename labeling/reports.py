"""The campaign report: one plain dict that the researcher dashboard renders and the API returns.

What every campaign has (its progress and the payments due) is computed here; the figures of its
answers are its task type's (`TaskType.report`; a label campaign's: agreement, labels, workers,
anchoring), computed live from the counted answers, so the dashboard is right even before
aggregating.
"""

from collections import Counter
from decimal import Decimal

from django.db.models import Count, Q, Sum

from annotation.models import Label
from labeling import task_types
from labeling.models import HIT, Assignment, Campaign
from labeling.payments import WorkerDue, payments_due
from labeling.platforms.costs import money


def campaign_report(campaign: Campaign) -> dict:
    return {
        "campaign": {"id": campaign.pk, "name": campaign.name, "status": campaign.status},
        "progress": _progress(campaign),
        **task_types.of(campaign).report(campaign),
        "payments_due": _payments(campaign),
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _progress(campaign: Campaign) -> dict:
    hits = HIT.objects.filter(campaign=campaign).aggregate(
        hits=Count("pk"),
        tiebreak=Count("pk", filter=Q(kind=HIT.TIE_BREAK)),
        needed=Sum("required_workers"),
    )
    assignments = Assignment.objects.filter(hit__campaign=campaign)
    statuses = Counter(assignments.values_list("status", flat=True).iterator())
    pending = assignments.pending_confirmation().count()
    submitted = sum(statuses[s] for s in Assignment.DONE) - pending
    return {
        "hits": hits["hits"],
        "tiebreak_hits": hits["tiebreak"],
        "assignments_needed": hits["needed"] or 0,
        "assignments_submitted": submitted,
        # platform workers' submissions the platform has not confirmed: in no figure below yet
        "assignments_pending": pending,
        "assignments_in_progress": statuses[Assignment.ACCEPTED],
        "assignments_rejected": statuses[Assignment.REJECTED],
        "completion": _ratio(submitted, hits["needed"] or 0),
    }


def _payments(campaign: Campaign) -> dict:
    return format_due(campaign, payments_due(campaign))


def format_due(campaign: Campaign, due: list[WorkerDue]) -> dict:
    """Payments due as money in the campaign's currency, for pages and reports."""
    currency = campaign.currency
    return {
        "currency": currency,
        "total": money(sum((d.total for d in due), Decimal(0)), currency),
        "workers": [
            {
                "worker": d.worker,
                "rewards": money(d.rewards, currency),
                "bonuses": money(d.bonuses, currency),
                "total": money(d.total, currency),
            }
            for d in due
        ],
    }


def accept_proposed_label(text: str) -> Label:
    """Add a typed label to the taxonomy as kind "proposed" (or return the label it already names)."""
    name = " ".join(text.split())
    if not name:
        raise ValueError("an empty label cannot be accepted")
    if len(name) > Label._meta.get_field("name").max_length:
        raise ValueError(f"{name[:40]!r}… is too long for a label name")
    found = Label.objects.by_name(name)
    if found is not None:
        return found
    return Label.objects.create(name=name, kind=Label.PROPOSED, description="Proposed by the crowd through Other.")
