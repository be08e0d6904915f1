"""Labeling's background jobs (found by jobs' autodiscovery): thin wrappers that take ids."""

from pydantic import Field

from jobs.registry import JobParameters, register
from labeling import task_types
from labeling.aggregate import aggregate_campaign
from labeling.models import Campaign
from labeling.tiebreak import create_tiebreak_hits


class AggregateCampaignParameters(JobParameters):
    campaign_id: int = Field(ge=1, title="Campaign id")


@register("labeling.aggregate_campaign", parameters=AggregateCampaignParameters)
def aggregate_campaign_job(job, campaign_id: int) -> dict:
    """Aggregate with the campaign's task type; for a labeling campaign with tie-breaking on, open
    the tie-break HITs that are due first."""
    campaign = Campaign.objects.get(pk=campaign_id)
    task_type = task_types.of(campaign)
    if not task_type.uses_labels:
        return {"campaign": campaign_id, "task_type": task_type.name, **task_type.aggregate(campaign)}
    tiebreak_hits = create_tiebreak_hits(campaign)
    return {"campaign": campaign_id, "tiebreak_hits": len(tiebreak_hits), **aggregate_campaign(campaign)}
