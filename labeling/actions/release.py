"""Releasing pending work: what platform identities nobody proved hold in a campaign, shown on
the campaign page, and the researcher's button that gives it back now instead of waiting for the
time limit plus PLATFORM_UNCONFIRMED_GRACE_MINUTES (labeling.actions.claim's sweep)."""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from labeling.models import Assignment, Campaign
from labeling.work import seats


@dataclass(frozen=True)
class Holdings:
    seats: int  # seats of HITs held (the phantom places below take none)
    phantom_places: int  # MTurk places beyond the seats (labeling.actions.claim.take_phantom_place)
    hits: int
    identities: int
    submitted: int  # of those, submitted and waiting for the platform's confirmation


def _held_unproven(campaign: Campaign):
    """Live or submitted-unconfirmed work of unproven identities in the campaign."""
    holding = Q(status=Assignment.ACCEPTED) | Q(status=Assignment.SUBMITTED, platform_confirmed_at__isnull=True)
    return Assignment.objects.filter(holding, hit__campaign=campaign, unproven=True)


def unproven_holdings(campaign: Campaign) -> Holdings:
    rows = list(_held_unproven(campaign).values_list("hit_id", "worker_id", "phantom", "status"))
    return Holdings(
        seats=sum(1 for _, _, phantom, _ in rows if not phantom),
        phantom_places=sum(1 for _, _, phantom, _ in rows if phantom),
        hits=len({hit for hit, _, _, _ in rows}),
        identities=len({worker for _, worker, _, _ in rows}),
        submitted=sum(1 for *_, status in rows if status == Assignment.SUBMITTED),
    )


def release_unproven(campaign: Campaign) -> Holdings:
    """Expire the campaign's work held by unproven identities (live, or submitted and not
    confirmed), freeing its seats; what it held is returned. Its answers never count (expired
    work is not done work); work a platform later confirms is out of reach here (sync's)."""
    with transaction.atomic():
        locked = list(
            _held_unproven(campaign)
            .select_for_update(of=("self",))
            .order_by("pk")
            .values_list("pk", "hit_id", "worker_id", "phantom", "status")
        )
        Assignment.objects.filter(pk__in=[row[0] for row in locked]).update(status=Assignment.EXPIRED)
        seats.free(hit for _, hit, _, phantom, _ in locked if not phantom)
    return Holdings(
        seats=sum(1 for row in locked if not row[3]),
        phantom_places=sum(1 for row in locked if row[3]),
        hits=len({row[1] for row in locked}),
        identities=len({row[2] for row in locked}),
        submitted=sum(1 for row in locked if row[4] == Assignment.SUBMITTED),
    )
