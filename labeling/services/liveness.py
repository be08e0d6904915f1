"""What a campaign's HITs need of the crowd and the quiz pool, read from the tables for the campaign
page and the publish page (the arithmetic is labeling.crowd.liveness)."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Max

from labeling.crowd.liveness import CampaignNeeds, assess
from labeling.models import HIT, Campaign, Worker
from labeling.work import quiz_pool


def site_annotators() -> int:
    """Active site accounts that may take HITs: not staff, not a platform identity's account,
    not blocked."""
    users = get_user_model().objects.filter(is_active=True, is_staff=False)
    others = Worker.objects.filter(user__isnull=False).exclude(platform=Worker.SITE, status=Worker.ACTIVE)
    platform_or_blocked = others.values("user_id")  # no NULL in it: NOT IN (.., NULL) matches nothing
    return users.exclude(pk__in=platform_or_blocked).count()


def campaign_needs(
    campaign: Campaign, *, workers: int | None = None, hits_per_worker: int | None = None
) -> CampaignNeeds:
    """Whether the campaign's open seats can all be taken: its HITs (built, their quiz drawn) by
    `workers` different people taking at most `hits_per_worker` HITs each (default: the site's
    annotators, any number of HITs each), with the pool's usable items for HITs built later."""
    open_hits = HIT.objects.filter(campaign=campaign, seats_free__gt=0).exclude(kind=HIT.QUALIFICATION)
    figures = open_hits.aggregate(seats=Max("required_workers"))
    return assess(
        hits=open_hits.count(),
        seats_per_hit=figures["seats"] or campaign.workers_per_hit,
        quiz_per_hit=campaign.quiz_per_hit,
        exposure_cap=settings.QUIZ_MAX_EXPOSURES,
        items_per_seat=settings.QUIZ_ITEMS_PER_SEAT,
        pool_items=quiz_pool.pool_status().usable,
        built=True,
        workers=workers,
        hits_per_worker=hits_per_worker,
    )


def pool_items_for_more(campaign: Campaign, hits: int) -> int:
    """Pool items `hits` more HITs like the campaign's would draw (the campaign page's hint)."""
    return assess(
        hits=hits,
        seats_per_hit=campaign.workers_per_hit,
        quiz_per_hit=campaign.quiz_per_hit,
        exposure_cap=settings.QUIZ_MAX_EXPOSURES,
        items_per_seat=settings.QUIZ_ITEMS_PER_SEAT,
    ).pool_items_needed
