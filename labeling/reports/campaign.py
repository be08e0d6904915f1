"""The campaign report: one plain dict that the researcher dashboard renders and the API returns.

What every campaign has (its progress and the payments due) is computed here; the figures of its
answers are its task type's (`TaskType.report`; a label campaign's: agreement, labels, workers,
anchoring), computed live from the counted answers, so the dashboard is right even before
aggregating.
"""

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Q, Sum

from annotation.models import AuditEntry, Label
from annotation.record import audit
from annotation.taxonomy import normalise_label_name
from labeling import task_types
from labeling.crowd.label_text import (
    LabelTextRefused,
    clean_label_text,
    look_alike_of,
    mixed_scripts,
    odd_letters,
    visible,
)
from labeling.models import HIT, Assignment, Campaign
from labeling.platforms.costs import money
from labeling.services.payments import WorkerDue, payments_due


def campaign_report(campaign: Campaign) -> dict:
    report = {
        "campaign": {"id": campaign.pk, "name": campaign.name, "status": campaign.status},
        "progress": _progress(campaign),
        **task_types.of(campaign).report(campaign),
        "payments_due": _payments(campaign),
    }
    _hide_refused_proposals(report)
    return report


def _hide_refused_proposals(report: dict) -> None:
    """A proposal a researcher refused leaves the queue (the audit log keeps it and its reason)."""
    other = report.get("other_answers")
    if not other or not other.get("proposed_labels"):
        return
    refused = refused_proposals()
    other["proposed_labels"] = [row for row in other["proposed_labels"] if _proposal_key(row["text"]) not in refused]


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


class ProposalRefused(ValueError):
    """A typed label that cannot join the taxonomy; `looks_like` names the label it reads as."""

    def __init__(self, message: str, looks_like: Label | None = None) -> None:
        super().__init__(message)
        self.looks_like = looks_like


@dataclass(frozen=True)
class ProposalReview:
    """What accepting a typed label would do, before it is done (the accept page shows it)."""

    name: str  # as it would be stored: NFKC, white space collapsed
    existing: Label | None  # the label it already names (case, width and spaces aside)
    looks_like: Label | None  # an existing label it resembles without being it (refused)
    refusal: str  # why it cannot be a label ("" when it can)


def review_proposal(text: str) -> ProposalReview:
    """Check a typed label against the taxonomy: control, direction, invisible and blank
    characters, length, the label it already names, look-alikes and mixed scripts
    (labeling.crowd.label_text, after UTS #39: https://www.unicode.org/reports/tr39/). A look-alike
    ("Sаd" with a Cyrillic а, "ꜱᴀᴅ" in small capitals) is refused: a second label that reads like
    the first would split its votes where no one can see it; its answers stay in the report as
    they are. A text refused for a hidden character names the label it reads as, if any."""
    labels = list(Label.objects.all())
    try:
        name = clean_label_text(text, max_length=10**6)
    except LabelTextRefused as refused:
        reads_as = look_alike_of(text, [label.name for label in labels])
        also = f"; it reads as the label “{reads_as}”" if reads_as else ""
        return ProposalReview(visible(text), None, None, f"“{visible(text)[:80]}”: {refused}{also}")
    if len(name) > Label._meta.get_field("name").max_length:
        return ProposalReview(name, None, None, f"{name[:40]!r}… is too long for a label name")
    existing = next((label for label in labels if normalise_label_name(label.name) == normalise_label_name(name)), None)
    resembled = look_alike_of(name, [label.name for label in labels]) if existing is None else None
    if resembled is not None:
        looks_like = next(label for label in labels if label.name == resembled)
        odd = "; ".join(odd_letters(name, resembled))
        return ProposalReview(
            name,
            None,
            looks_like,
            f"“{name}” looks like the label “{resembled}” ({odd}): answers typed so are a spelling of "
            f"{resembled} by eye, and a second label that reads the same would split its votes unseen",
        )
    scripts = mixed_scripts(name) if existing is None else []
    if scripts:
        return ProposalReview(
            name,
            None,
            None,
            f"“{name}” mixes letters of {' and '.join(scripts)}: a label is written in one script "
            "(Latin may join Han with kana, Bopomofo or Hangul), so no letter can pass for another's",
        )
    return ProposalReview(name, existing, None, "")


def accept_proposed_label(text: str, reason: str = "") -> Label:
    """Add a typed label to the taxonomy as kind "proposed" (or return the label it already
    names). The one writer of an accepted proposal; refuses (ProposalRefused) what
    review_proposal refuses, so no page or API call can create a look-alike. A new label is
    recorded in the audit log, by whoever acts now."""
    review = review_proposal(text)
    if review.refusal:
        raise ProposalRefused(review.refusal, review.looks_like)
    if review.existing is not None:
        return review.existing
    with transaction.atomic():
        label = Label.objects.create(
            name=review.name, kind=Label.PROPOSED, description="Proposed by the crowd through Other."
        )
        audit.record(audit.PROPOSAL_ACCEPTED, None, label, {"proposal": review.name}, {"label": label.name}, reason)
    return label


def refuse_proposed_label(text: str, reason: str) -> str:
    """Refuse a label typed through "Other": it leaves every campaign's proposals queue and stays
    an answer that votes for no label. The reason is required; the audit log is the record."""
    name = " ".join(text.split())
    if not name:
        raise ValueError("text: an empty proposal cannot be refused")
    if not (reason or "").strip():
        raise ValueError("reason: say why the proposal is refused")
    if Label.objects.by_name(name) is not None:
        raise ValueError(f"text: {name!r} is a label already")
    audit.record(audit.PROPOSAL_REFUSED, None, ("proposal", _proposal_key(name)), {"proposal": name}, None, reason)
    return name


def refused_proposals() -> set[str]:
    refused = AuditEntry.objects.filter(kind=audit.PROPOSAL_REFUSED, target_type="proposal")
    return set(refused.values_list("target_id", flat=True))


def _proposal_key(text: str) -> str:
    return " ".join(text.split()).casefold()[:64]
