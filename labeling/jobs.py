"""Labeling's background jobs (found by jobs' autodiscovery): thin wrappers that take ids."""

from pydantic import Field

from jobs.registry import JobParameters, register
from labeling.aggregate import aggregate_campaign
from labeling.models import Campaign
from labeling.tiebreak import create_tiebreak_hits


class AggregateCampaignParameters(JobParameters):
    campaign_id: int = Field(ge=1, title="Campaign id")


@register("labeling.aggregate_campaign", parameters=AggregateCampaignParameters)
def aggregate_campaign_job(job, campaign_id: int) -> dict:
    """Open tie-break HITs where they are due (when the campaign has tie-breaking on), then aggregate."""
    campaign = Campaign.objects.get(pk=campaign_id)
    tiebreak_hits = create_tiebreak_hits(campaign)
    return {"campaign": campaign_id, "tiebreak_hits": len(tiebreak_hits), **aggregate_campaign(campaign)}
