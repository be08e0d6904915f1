"""Labeling's background jobs (found by jobs' autodiscovery): thin wrappers that take ids."""

from typing import Literal

from pydantic import Field

from annotation.record import audit
from jobs.registry import JobParameters, register
from jobs.runtime import report_progress
from labeling import task_types
from labeling.models import Campaign
from labeling.work import audit_trail


class AggregateCampaignParameters(JobParameters):
    campaign_id: int = Field(ge=1, title="Campaign id")


@register("labeling.aggregate_campaign", parameters=AggregateCampaignParameters)
def aggregate_campaign_job(job, campaign_id: int) -> dict:
    """Aggregate with the campaign's task type (a label campaign first opens the extra seats that
    are due: follow-up HITs under a redundancy policy, tie-break HITs under `fixed`)."""
    from labeling.services.adjudication import announce_waiting

    campaign = Campaign.objects.get(pk=campaign_id)
    with audit.acting_as(audit_trail.job_actor(job, audit_trail.AGGREGATION)):
        outcome = {"campaign": campaign_id, **task_types.of(campaign).aggregate(campaign)}
    announce_waiting(campaign, f"job-{job.pk}")
    return outcome


class PlatformSyncParameters(JobParameters):
    campaign_id: int | None = Field(None, ge=1, title="Campaign id (empty: every published campaign)")


@register("labeling.platform_sync", parameters=PlatformSyncParameters)
def platform_sync_job(job, campaign_id: int | None = None) -> dict:
    """Reconcile published campaigns with their crowd platform (labeling.platforms.sync).
    A publication another sync holds is skipped and reported; a platform error fails the job."""
    from labeling.models import Publication
    from labeling.platforms.sync import SyncBusy, sync_publication

    publications = Publication.objects.filter(status=Publication.ACTIVE).select_related("campaign").order_by("pk")
    if campaign_id is not None:
        publications = publications.filter(campaign_id=campaign_id)
    result: dict = {"publications": 0, "busy": 0}
    total = publications.count()
    for done, publication in enumerate(publications, start=1):
        try:
            with audit.acting_as(audit_trail.job_actor(job, audit_trail.PLATFORM_SYNC)):
                counts = sync_publication(publication)
        except SyncBusy:
            result["busy"] += 1
            continue
        result["publications"] += 1
        for key, value in counts.items():
            result[key] = result.get(key, 0) + value
        report_progress(job, done, total, f"synced {publication}")
    return result


class PlatformPublishParameters(JobParameters):
    campaign_id: int = Field(ge=1, title="Campaign id")
    platform: Literal["local", "mturk", "prolific"] = Field(title="Platform")
    base_url: str = Field(min_length=8, max_length=300, pattern=r"^https?://", title="The site's public address")


@register("labeling.platform_publish", parameters=PlatformPublishParameters)
def platform_publish_job(job, campaign_id: int, platform: str, base_url: str) -> dict:
    """Publish a campaign on a crowd platform (labeling.platforms.publish_campaign); safe to repeat."""
    from labeling.platforms import get_platform, publish_campaign

    campaign = Campaign.objects.get(pk=campaign_id)
    with audit.acting_as(audit_trail.job_actor(job, "platform-publish")):
        published = publish_campaign(campaign, get_platform(platform), base_url)
    return {"campaign": campaign_id, "platform": platform, "published": published}


class PlatformCloseParameters(JobParameters):
    campaign_id: int = Field(ge=1, title="Campaign id")


@register("labeling.platform_close", parameters=PlatformCloseParameters)
def platform_close_job(job, campaign_id: int) -> dict:
    """Stop offering a campaign's work on its platform (expire the HITs, stop the study)."""
    from labeling.models import Publication
    from labeling.platforms.sync import close_publication

    closed = 0
    for publication in Publication.objects.filter(campaign_id=campaign_id).exclude(status=Publication.CLOSED):
        close_publication(publication)
        closed += 1
    return {"campaign": campaign_id, "closed": closed}


class ModelRaterParameters(JobParameters):
    campaign_id: int = Field(ge=1, title="Campaign id")
    model_version_id: int | None = Field(
        None, ge=1, title="Model version id (empty: the chat model behind MODEL_RATER_ENDPOINT_URL)"
    )


@register("labeling.model_rater", parameters=ModelRaterParameters)
def model_rater_job(job, campaign_id: int, model_version_id: int | None = None) -> dict:
    """A model labels the campaign's items as a rater (labeling.services.raters.rate): a model version of
    ours through its predictions, or the chat model behind the configured endpoint."""
    from annotation.models import ModelVersion
    from labeling.services.raters.rate import endpoint_from_settings, rate_with_endpoint, rate_with_model_version

    campaign = Campaign.objects.get(pk=campaign_id)
    if model_version_id is not None:
        return rate_with_model_version(campaign, ModelVersion.objects.get(pk=model_version_id))
    progress = lambda done, total: report_progress(job, done, total, "items rated")  # noqa: E731
    return rate_with_endpoint(campaign, endpoint_from_settings(), progress=progress)


class FreeLapsedSeatsParameters(JobParameters):
    pass


@register("labeling.free_lapsed_seats", parameters=FreeLapsedSeatsParameters)
def free_lapsed_seats_job(job) -> dict:
    """Give back the seats that lapsed: accepted work past its time limit, and unproven platform
    work its platform did not confirm within the time limit plus PLATFORM_UNCONFIRMED_GRACE_MINUTES
    (Celery beat, every PLATFORM_SEAT_SWEEP_MINUTES; every claim does the same first)."""
    from labeling.actions.claim import expire_stale_assignments

    return {"expired": expire_stale_assignments()}


class CheckProlificSessionParameters(JobParameters):
    session_id: str = Field(pattern=r"^[A-Za-z0-9]{1,64}$", title="Prolific SESSION_ID")


@register("labeling.check_prolific_session", queue="landing", parameters=CheckProlificSessionParameters)
def check_prolific_session_job(job, session_id: str) -> dict:
    """Ask Prolific whether a landing's session is live (labeling.platforms.prolific_checks.run_check),
    retrying timeouts, 429 and 5xx with backoff, and store its answer for the landing's page to
    read. Queued by the landing, once per session id (again on a reload while Prolific does not list
    a new session yet); never started by hand. On the "landing" queue, which a worker process of
    its own serves (Procfile, docker-compose.yml): nothing else ever waits ahead of it."""
    from labeling.platforms.prolific_checks import run_check

    return run_check(session_id)
