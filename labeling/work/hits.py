"""The one writer of HIT and HITItem rows, and `build_hits`, which asks a campaign's task type
what its new HITs show and writes them.

A task type's `plan_screens` (new HITs from its source), the label type's tie-break and follow-up
seats, and the crowd-results importer all decide *what* goes on the screens; this writes the rows,
so numbering, worker counts and the one transaction are the same on every path.
"""

import random
from collections.abc import Sequence

from django.db import transaction
from django.db.models import F

from labeling import task_types
from labeling.models import HIT, Campaign, HITItem
from labeling.work import audit_trail

_BATCH = 2000


def build_hits(campaign: Campaign, source, *, seed: int | str | None = None, **options) -> list[HIT]:
    """New HITs for `campaign` from `source`, as its task type plans them (`plan_screens`, drawing
    with `seed`), written in one transaction: nothing is half-saved, a quiz seat reserved for them
    included. Returns the HITs.

    source: what the type builds screens from (last_turn_label: dialogues, in the order given;
        pairwise: its pairs and quiz dialogues). options: the type's own (last_turn_label:
        `suggester`, the model version whose top 3 the screens offer).
    """
    rng = random.Random(seed)
    with transaction.atomic():
        plan = task_types.of(campaign).plan_screens(campaign, source, rng, **options)
        hits = [
            hit for workers, screens in plan.groups for hit in write_hits(campaign, screens, required_workers=workers)
        ]
        if plan.suggestion_model is not None:
            record_suggestion_model(campaign, plan.suggestion_model)
    return hits


def record_suggestion_model(campaign: Campaign, version) -> Campaign:
    """Remember the model version whose top 3 the campaign's HITs offer (the newest build wins)."""
    if campaign.suggestion_model_id != getattr(version, "pk", None):
        audit_trail.setting_changed(campaign, "suggestion_model", campaign.suggestion_model_id, version)
    Campaign.objects.filter(pk=campaign.pk).update(suggestion_model=version)
    campaign.suggestion_model = version
    return campaign


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
