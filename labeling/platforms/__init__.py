"""Crowd platforms: where HITs are offered. `publish_campaign` is the one way to publish and
labeling.platforms.sync the one way to reconcile; both drive an adapter from `get_platform`.

Adapters: `local` (the default: site accounts, nothing to call), `mturk`, `prolific`.
"""

from labeling.campaigns import set_campaign_status
from labeling.models import Campaign, Publication
from labeling.platforms.base import CrowdPlatform, ExternalResult, PlatformError
from labeling.platforms.publications import hit_url, publication_for

__all__ = [
    "PLATFORMS",
    "CrowdPlatform",
    "ExternalResult",
    "PlatformError",
    "get_platform",
    "hit_url",
    "publication_for",
    "publish_campaign",
]

PLATFORMS = ("local", "mturk", "prolific")


def get_platform(name: str) -> CrowdPlatform:
    if name == "local":
        from labeling.platforms.local import LocalPlatform

        return LocalPlatform()
    if name == "mturk":
        from labeling.platforms.mturk import MTurkPlatform

        return MTurkPlatform()
    if name == "prolific":
        from labeling.platforms.prolific import ProlificPlatform

        return ProlificPlatform()
    raise PlatformError(f"unknown crowd platform {name!r}; known: {', '.join(PLATFORMS)}")


def publish_campaign(campaign: Campaign, platform: CrowdPlatform, base_url: str) -> int:
    """Publish every HIT (or place) of the campaign not published yet and open the campaign
    (through `set_campaign_status`, like every status change); returns how many were published.

    Each external id is saved as soon as the platform returns it, so a failure half-way leaves
    the published ones recorded and a second run publishes only the rest. A closed campaign is
    refused before anything is sent.
    """
    campaign.refresh_from_db(fields=["status"])
    if campaign.status == Campaign.CLOSED:
        raise PlatformError(f"campaign {campaign.pk} is closed; a closed campaign cannot be published")
    published = platform.publish(campaign, base_url)
    Publication.objects.filter(campaign=campaign, platform=platform.name, status=Publication.DRAFT).update(
        status=Publication.ACTIVE
    )
    set_campaign_status(campaign, Campaign.OPEN)
    return published
