"""The one writer of HIT and HITItem rows.

`build_hits` (new HITs from ranked dialogues), the tie-break (more workers for unresolved items),
the crowd-results importer and the quiz pool all decide *what* goes on the screens; this writes
the rows, so numbering, worker counts and the one transaction are the same on every path.
"""

from collections.abc import Sequence

from django.db import transaction
from django.db.models import F

from labeling.models import HIT, Campaign, HITItem

_BATCH = 2000


def write_hits(
    campaign: Campaign,
    screens: Sequence[Sequence[HITItem]],
    *,
    kind: str = HIT.REGULAR,
    required_workers: int | None = None,
) -> list[HIT]:
    """Write one HIT per entry of `screens`, its screens in the order given; return the HITs.

    screens: per HIT, unsaved `HITItem`s that say what each screen shows (a dialogue and its
        target turn, or a quiz question; the frozen `choices`). Their `hit` and `position`
        (from 1) are set here. A screen may be a list of items, one per seat slot (their `seat`
        set: 1, 2, ...): a quiz screen whose item differs from seat to seat.
    kind: HIT.REGULAR, HIT.TIE_BREAK or HIT.FOLLOW_UP (one more seat under a redundancy policy).
    required_workers: answers each HIT needs; default `campaign.workers_per_hit`.

    HITs are numbered after the campaign's last one. All or nothing, in one transaction that
    locks the campaign row, so two writers at once never number their HITs alike.
    """
    if kind not in dict(HIT.KIND_CHOICES):
        raise ValueError(f"kind: unknown HIT kind {kind!r}")
    empty = [index for index, bundle in enumerate(screens) if not bundle]
    if empty:
        raise ValueError(f"screens: HIT {empty[0] + 1} of {len(screens)} has no screens")
    workers = campaign.workers_per_hit if required_workers is None else required_workers
    if workers < 1:
        raise ValueError("required_workers: a HIT needs at least one worker")
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk").first()
        last = campaign.hits.order_by("-position").values_list("position", flat=True).first() or 0
        hits = HIT.objects.bulk_create(
            [
                HIT(
                    campaign=campaign,
                    position=last + offset,
                    kind=kind,
                    required_workers=workers,
                    seats_free=workers,
                )
                for offset in range(1, len(screens) + 1)
            ],
            batch_size=_BATCH,
        )
        HITItem.objects.bulk_create(_placed(hits, screens), batch_size=_BATCH)
    return hits


def _placed(hits: list[HIT], screens: Sequence[Sequence[HITItem]]) -> list[HITItem]:
    items = []
    for hit, bundle in zip(hits, screens, strict=True):
        for position, screen in enumerate(bundle, start=1):
            for item in screen if isinstance(screen, list | tuple) else [screen]:
                item.hit, item.position = hit, position
                items.append(item)
    return items


def add_seat(hit: HIT, seats_before: int) -> bool:
    """One more worker for `hit`: required_workers seats_before -> seats_before + 1, and one more
    free seat, as one conditional UPDATE (a repeat with the same seats_before changes nothing).
    True when it moved."""
    moved = HIT.objects.filter(pk=hit.pk, required_workers=seats_before).update(
        required_workers=seats_before + 1, seats_free=F("seats_free") + 1
    )
    return bool(moved)
