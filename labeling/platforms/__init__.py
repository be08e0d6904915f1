"""Crowd platforms: where HITs are offered. `publish_campaign` is the one way to publish and
labeling.platforms.sync the one way to reconcile; both drive an adapter from `get_platform`.

Adapters: `local` (the default: site accounts, nothing to call), `mturk`, `prolific`.
"""

from labeling.models import Campaign, Publication
from labeling.platforms.base import CrowdPlatform, ExternalResult, PlatformError
from labeling.platforms.publications import hit_url, publication_for
from labeling.services.campaigns import set_campaign_status

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
    the published ones recorded and a second run publishes only the rest. A closed campaign, and
    one stopped on the platform ("Stop on the platform", sync.close_publication), are refused before
    anything is sent: more places on a stopped Prolific study make it recruit and pay again ("A
    completed study will become active again and resume recruiting",
    https://docs.prolific.com/api-reference/studies/update-study), and MTurk would take live HITs.
    """
    campaign.refresh_from_db(fields=["status"])
    if campaign.status == Campaign.CLOSED:
        raise PlatformError(f"campaign {campaign.pk} is closed; a closed campaign cannot be published")
    if campaign.publications.filter(platform=platform.name, status=Publication.CLOSED).exists():
        raise PlatformError(
            f"campaign {campaign.pk} was stopped on {platform.name}; publishing again would make it recruit and "
            "pay again while it stays stopped here. Copy the campaign to run more work"
        )
    published = platform.publish(campaign, base_url)
    Publication.objects.filter(campaign=campaign, platform=platform.name, status=Publication.DRAFT).update(
        status=Publication.ACTIVE
    )
    set_campaign_status(campaign, Campaign.OPEN)
    return published
