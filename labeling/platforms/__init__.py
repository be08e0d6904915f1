"""Crowd platforms: where HITs are offered. `publish_campaign` is the one way to publish."""

from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from labeling.campaigns import set_campaign_status
from labeling.models import HIT, Campaign
from labeling.platforms.base import CrowdPlatform, ExternalResult, PlatformError

__all__ = ["CrowdPlatform", "ExternalResult", "PlatformError", "get_platform", "hit_url", "publish_campaign"]


def get_platform(name: str) -> CrowdPlatform:
    if name == "local":
        from labeling.platforms.local import LocalPlatform

        return LocalPlatform()
    if name == "mturk":
        from labeling.platforms.mturk import MTurkPlatform

        return MTurkPlatform(sandbox=getattr(settings, "MTURK_SANDBOX", True))
    raise PlatformError(f"unknown crowd platform {name!r}; known: local, mturk")


def hit_url(base_url: str, hit: HIT) -> str:
    """The page a platform's worker is sent to for this HIT: the MTurk landing, which signs the
    worker in from MTurk's own parameters (appended by MTurk) and claims a HIT of the campaign.
    It carries the campaign's secret entry token; a link without it is refused.
    Site workers of a `local` campaign sign in and pick the campaign on the annotator home instead."""
    landing = reverse("labeling:platform_mturk")
    query = urlencode({"campaign": hit.campaign_id, "hit": hit.pk, "token": hit.campaign.entry_token})
    return f"{base_url.rstrip('/')}{landing}?{query}"


def publish_campaign(campaign: Campaign, platform: CrowdPlatform, base_url: str) -> int:
    """Publish every HIT of the campaign not published yet and open the campaign (through
    `set_campaign_status`, like every status change); returns how many HITs were published.

    Each HIT's external id is saved as soon as the platform returns it, so a failure half-way
    leaves the published ones recorded and a second run publishes only the rest. A closed
    campaign is refused before anything is sent.
    """
    campaign.refresh_from_db(fields=["status"])
    if campaign.status == Campaign.CLOSED:
        raise PlatformError(f"campaign {campaign.pk} is closed; a closed campaign cannot be published")
    published = 0
    for hit in campaign.hits.filter(external_id="").select_related("campaign").order_by("position"):
        external_id = platform.publish_hit(hit, hit_url(base_url, hit))
        HIT.objects.filter(pk=hit.pk, external_id="").update(external_id=external_id)
        published += 1
    set_campaign_status(campaign, Campaign.OPEN)
    return published
