"""A campaign's life: draft → open ⇄ paused → closed. One function, shared by pages, API and commands."""

from labeling.models import Campaign

ALLOWED = {
    Campaign.DRAFT: {Campaign.OPEN, Campaign.CLOSED},
    Campaign.OPEN: {Campaign.PAUSED, Campaign.CLOSED},
    Campaign.PAUSED: {Campaign.OPEN, Campaign.CLOSED},
    Campaign.CLOSED: set(),
}


class StatusChangeRefused(ValueError):
    pass


def set_campaign_status(campaign: Campaign, status: str) -> Campaign:
    """Move the campaign to `status`, refusing a move its current status does not allow.

    The update is conditional on the status read, so two researchers clicking at once cannot
    both succeed with contradictory moves.
    """
    if status not in ALLOWED:
        raise StatusChangeRefused(f"unknown status {status!r}")
    current = campaign.status
    if status == current:
        return campaign
    if status not in ALLOWED[current]:
        raise StatusChangeRefused(f"a {current} campaign cannot become {status}")
    if not Campaign.objects.filter(pk=campaign.pk, status=current).update(status=status):
        raise StatusChangeRefused("the campaign changed meanwhile; reload and try again")
    campaign.status = status
    return campaign
