"""What is checked before anything is published on a paid platform, without calling it: the
hourly rate against the platform's minimum, and (MTurk) an https address for its ExternalQuestion.
The cost preview lists the refusals (the page offers no button then) and `publish` raises them.
The Prolific workspace's currency needs a call and is checked by the adapter when publishing.
"""

from collections import defaultdict
from dataclasses import replace
from decimal import ROUND_UP, Decimal
from statistics import median

from django.conf import settings
from django.db.models.functions import Coalesce

from labeling.models import HIT, Assignment, Campaign
from labeling.platforms.base import PlatformError
from labeling.platforms.costs import CostPreview, HourlyPay

MIN_MEASURED = Decimal("0.1")


def measured_minutes(campaign: Campaign, *, platform_timed: bool = False) -> Decimal | None:
    """The minutes a HIT takes, measured: each person's median from accepting a HIT to submitting
    it, then the median over people, on counted work only (a site worker's submitted work, a
    platform worker's once the platform confirmed it, under the proven worker). Made-up platform
    ids never confirmed move nothing, and one fast or slow person weighs as one. None until
    PLATFORM_MEASURED_MIN_HITS HITs were done; never under 0.1 min (a rate per hour stays finite).

    `platform_timed` (Prolific): timed as the platform times it, from its own start of the work to
    its completion, since Prolific checks the reward against that median and asks for adjustment
    payments below its minimum (https://researcher-help.prolific.com/en/article/4dd6a0): the time
    the platform reported (PlatformSubmission.time_taken_seconds) and, until it did, from the
    session's first landing (its check's wait, consent and practice included) to the submission
    here; both at least accepting -> submitting."""
    times = (
        Assignment.objects.filter(hit__campaign=campaign, submitted_at__isnull=False)
        .counted()
        .exclude(hit__kind=HIT.QUALIFICATION)  # the quiz is timed against its own estimate
        .annotate(person=Coalesce("worker__merged_into_id", "worker_id"))
        .values_list("person", "accepted_at", "submitted_at", "platform_assignment_id")
    )
    platform_times = _platform_times(campaign) if platform_timed else ({}, {})
    by_person: dict[int, list[float]] = defaultdict(list)
    for person, accepted, submitted, session in times:
        here = max((submitted - accepted).total_seconds(), 0.0)
        by_person[person].append(max([here, *_platform_seconds(platform_times, session, submitted)]))
    if sum(map(len, by_person.values())) < max(1, settings.PLATFORM_MEASURED_MIN_HITS):
        return None
    seconds = median(median(values) for values in by_person.values())
    return max(MIN_MEASURED, (Decimal(str(seconds)) / 60).quantize(MIN_MEASURED, rounding=ROUND_UP))


def _platform_times(campaign: Campaign) -> tuple[dict[str, int], dict[str, object]]:
    """(session -> seconds the platform reported, session -> its first landing) for the campaign."""
    from labeling.models import PlatformSubmission, ProlificSessionCheck

    reported = PlatformSubmission.objects.filter(
        publication__campaign=campaign, time_taken_seconds__isnull=False
    ).values_list("external_id", "time_taken_seconds")
    landed = ProlificSessionCheck.objects.filter(campaign=campaign).values_list("session_id", "created_at")
    return dict(reported), dict(landed)


def _platform_seconds(platform_times, session: str, submitted) -> list[float]:
    reported, landed = platform_times
    if session in reported:
        return [float(reported[session])]
    if session in landed:
        return [max((submitted - landed[session]).total_seconds(), 0.0)]
    return []


def hourly_pay(campaign: Campaign, minimum: float | None, *, platform_timed: bool = False) -> HourlyPay:
    return HourlyPay(
        currency=campaign.currency,
        reward=campaign.reward,
        estimated_minutes=campaign.estimated_minutes,
        minimum=None if minimum is None else Decimal(str(minimum)).quantize(Decimal("0.01")),
        measured_minutes=measured_minutes(campaign, platform_timed=platform_timed),
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
