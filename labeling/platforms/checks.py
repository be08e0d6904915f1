"""What is checked before anything is published on a paid platform, without calling it: the
hourly rate against the platform's minimum, and (MTurk) an https address for its ExternalQuestion.
The cost preview lists the refusals (the page offers no button then) and `publish` raises them.
The Prolific workspace's currency needs a call and is checked by the adapter when publishing.
"""

from dataclasses import replace
from decimal import Decimal
from statistics import median

from django.conf import settings

from labeling.models import HIT, Assignment, Campaign
from labeling.platforms.base import PlatformError
from labeling.platforms.costs import CostPreview, HourlyPay


def measured_minutes(campaign: Campaign) -> Decimal | None:
    """The median minutes from accepting a HIT to submitting it, over the campaign's finished work;
    None until PLATFORM_MEASURED_MIN_HITS HITs were done."""
    times = (
        Assignment.objects.filter(hit__campaign=campaign, status__in=Assignment.FINAL, submitted_at__isnull=False)
        .exclude(hit__kind=HIT.QUALIFICATION)  # the quiz is timed against its own estimate
        .values_list("accepted_at", "submitted_at")
    )
    seconds = [(submitted - accepted).total_seconds() for accepted, submitted in times if submitted > accepted]
    if not seconds or len(seconds) < max(1, settings.PLATFORM_MEASURED_MIN_HITS):
        return None
    return (Decimal(str(median(seconds))) / 60).quantize(Decimal("0.1"))


def hourly_pay(campaign: Campaign, minimum: float | None) -> HourlyPay:
    return HourlyPay(
        currency=campaign.currency,
        reward=campaign.reward,
        estimated_minutes=campaign.estimated_minutes,
        minimum=None if minimum is None else Decimal(str(minimum)).quantize(Decimal("0.01")),
        measured_minutes=measured_minutes(campaign),
    )


def with_checks(preview: CostPreview, pay: HourlyPay, refusals: list[str]) -> CostPreview:
    return replace(preview, pay=pay, refusals=tuple(refusals))


def https_refusal(base_url: str, platform: str) -> list[str]:
    """MTurk shows an ExternalQuestion only from an https address
    (https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_ExternalQuestionArticle.html)."""
    if not base_url or base_url.lower().startswith("https://"):
        return []
    return [
        f"{platform} opens HITs only from an https address; the links would start with {base_url.split('?')[0]!r}: "
        "set SITE_URL to the site's https address"
    ]


def refuse_unless_publishable(campaign: Campaign, preview: CostPreview) -> None:
    if preview.refusals:
        raise PlatformError(f"campaign {campaign.pk} not published: " + "; ".join(preview.refusals))
