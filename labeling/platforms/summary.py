"""What the campaign page shows per platform: published, pending, approved, rejected, paid."""

from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, Q, Sum

from labeling.models import Assignment, Campaign, PaymentEntry, PlatformSubmission, Publication
from labeling.platforms.costs import money
from labeling.services.payments import payment_unsure, shares_unknown

REVIEW = (PlatformSubmission.FLAGGED, PlatformSubmission.UNMATCHED)


@dataclass
class PublicationSummary:
    publication: Publication
    published: int  # MTurk: HITs; Prolific: places
    published_unit: str
    pending: int  # our done work the platform has not confirmed yet
    awaiting: int  # submitted on the platform, no decision yet
    approved: int
    rejected: int
    returns_requested: int
    paid: str
    due: str
    review: list = field(default_factory=list)  # flagged and unmatched submissions
    unsure: list = field(default_factory=list)  # bonus payments whose outcome is unknown
    shares: list = field(default_factory=list)  # work approved in part on the platform, share unknown
    worker_url: str = ""


def campaign_platforms(campaign: Campaign) -> list[PublicationSummary]:
    return [_summary(campaign, publication) for publication in campaign.publications.order_by("pk")]


def _summary(campaign: Campaign, publication: Publication) -> PublicationSummary:
    decisions = dict(
        publication.submissions.values_list("decision").annotate(n=Count("pk")).values_list("decision", "n")
    )
    ledger = PaymentEntry.objects.filter(assignment__hit__campaign=campaign, worker__platform=publication.platform)
    amounts = ledger.aggregate(
        paid=Sum("amount", filter=Q(paid_at__isnull=False)), due=Sum("amount", filter=Q(paid_at__isnull=True))
    )
    if publication.platform == Publication.MTURK:
        published, unit = campaign.hits.exclude(external_id="").count(), "HITs"
    else:
        published, unit = publication.places, "places"
    pending = (
        Assignment.objects.pending_confirmation()
        .filter(hit__campaign=campaign, worker__platform=publication.platform)
        .count()
    )
    review = list(
        publication.submissions.filter(decision__in=REVIEW).select_related("assignment").order_by("first_seen_at")
    )
    return PublicationSummary(
        publication=publication,
        published=published,
        published_unit=unit,
        pending=pending,
        awaiting=decisions.get("", 0),
        approved=decisions.get(PlatformSubmission.APPROVED, 0),
        rejected=decisions.get(PlatformSubmission.REJECTED, 0),
        returns_requested=decisions.get(PlatformSubmission.RETURN_REQUESTED, 0),
        paid=money(amounts["paid"] or Decimal(0), campaign.currency),
        due=money(amounts["due"] or Decimal(0), campaign.currency),
        review=review,
        unsure=_unsure(campaign),
        shares=_shares_unknown(campaign),
        worker_url=_worker_url(publication),
    )


def _unsure(campaign: Campaign) -> list[dict]:
    rows = payment_unsure(campaign).values("platform_reference").annotate(entries=Count("pk"), amount=Sum("amount"))
    return [
        {
            "reference": row["platform_reference"],
            "entries": row["entries"],
            "amount": money(row["amount"], campaign.currency),
        }
        for row in rows
    ]


def _shares_unknown(campaign: Campaign) -> list[dict]:
    """Work the platform approved with part of its reward, decided on its own site: the share is not
    reported (labeling.platforms.sync.SHARE_UNKNOWN), so a researcher reads it there and records it."""
    from labeling.platforms.sync import SHARE_UNKNOWN

    ids = shares_unknown(campaign, SHARE_UNKNOWN)
    rows = Assignment.objects.filter(pk__in=ids).select_related("worker", "platform_submission").order_by("pk")
    return [
        {"assignment": a.pk, "submission": a.platform_submission.external_id, "worker": a.worker.external_id}
        for a in rows
    ]


def _worker_url(publication: Publication) -> str:
    if not publication.external_id:
        return ""
    from labeling.platforms import get_platform

    platform = get_platform(publication.platform)
    return platform.worker_preview_url(publication) if hasattr(platform, "worker_preview_url") else ""
