"""A campaign's qualification quiz as the platform adapters see it (labeling.services.qualification is the
step itself): the quiz's own pay checked against the platform's minimum hourly rate, and the row
that keeps the platform's qualification type (MTurk) or participant group (Prolific)."""

from decimal import Decimal

from django.db import IntegrityError, transaction

from labeling.models import HIT, Campaign, PlatformQualification
from labeling.platforms.costs import HourlyPay


def hourly_pay(campaign: Campaign, minimum) -> HourlyPay:
    """The quiz's hourly rate at its estimated minutes, against the platform's minimum."""
    return HourlyPay(
        currency=campaign.currency,
        reward=campaign.qualification_reward,
        estimated_minutes=campaign.qualification_minutes,
        minimum=None if minimum is None else Decimal(str(minimum)).quantize(Decimal("0.01")),
        measured_minutes=None,
    )


def pay_refusals(campaign: Campaign, minimum, platform: str, setting: str) -> list[str]:
    """Why the qualification quiz cannot be published on `platform` (its pay, its HIT)."""
    if not campaign.qualification_required:
        return []
    refusals = [
        f"the qualification quiz: {reason}" for reason in hourly_pay(campaign, minimum).refusals(platform, setting)
    ]
    if not HIT.objects.filter(campaign=campaign, kind=HIT.QUALIFICATION).exists():
        refusals.append("the campaign requires a qualification quiz but has no qualification HIT yet: build it first")
    return refusals


def platform_setup(campaign: Campaign, platform: str) -> PlatformQualification:
    """The campaign's qualification on `platform`, created on first use (what the adapters fill)."""
    try:
        with transaction.atomic():
            setup, _ = PlatformQualification.objects.get_or_create(campaign=campaign, platform=platform)
    except IntegrityError:  # two publishers at once: the other made it
        setup = PlatformQualification.objects.get(campaign=campaign, platform=platform)
    return setup
