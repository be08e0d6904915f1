"""A campaign's publication on a platform and the link its workers arrive by: what the adapters
(labeling.platforms.mturk, .prolific) need of the platforms package, kept apart from its
`get_platform`, which imports them."""

from urllib.parse import urlencode

from django.db import IntegrityError, transaction
from django.urls import reverse

from labeling.models import HIT, Campaign, Publication, Worker
from labeling.platforms.base import PlatformError
from labeling.services.entry_tokens import TOKEN_PARAMETER, publication_token


def hit_url(base_url: str, hit: HIT) -> str:
    """The page a platform's worker is sent to for this HIT: the MTurk landing, which signs the
    worker in from MTurk's own parameters (appended by MTurk) and claims a HIT of the campaign.
    It carries the campaign's MTurk link token (labeling.services.entry_tokens); a link without it is refused.
    Site workers of a `local` campaign sign in and pick the campaign on the annotator home instead."""
    landing = reverse("labeling:platform_mturk")
    token = publication_token(hit.campaign, Worker.MTURK)  # the MTurk link's token, never the Prolific one's
    query = urlencode({"campaign": hit.campaign_id, "hit": hit.pk, TOKEN_PARAMETER: token})
    return f"{base_url.rstrip('/')}{landing}?{query}"


def publication_for(campaign: Campaign, platform: str, **defaults) -> Publication:
    """The campaign's Publication on `platform`, created on first use (the one writer of new rows).
    A campaign runs on one crowd platform: a second one is refused."""
    other = campaign.publications.exclude(platform=platform).first()
    if other is not None:
        raise PlatformError(f"campaign {campaign.pk} is already published on {other.platform}")
    try:
        with transaction.atomic():
            publication, _ = Publication.objects.get_or_create(campaign=campaign, platform=platform, defaults=defaults)
    except IntegrityError:  # two publishers at once: the other made it
        publication = Publication.objects.get(campaign=campaign, platform=platform)
    return publication
