"""Claiming: a seat on a HIT for a worker, and the seats that lapse.

A claim locks the worker's row (one claim at a time per worker), then finds a HIT with a free seat
by one indexed SELECT ... FOR UPDATE SKIP LOCKED on the free-seat count (labeling.seats), counts
its seats again under that lock and takes one. An assignment past its time limit is expired
before every claim, freeing its seat.
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Case, Exists, IntegerField, OuterRef, Value, When
from django.utils import timezone

from labeling import fast_path, qualification, quiz_pool, seats
from labeling.models import HIT, Assignment, Campaign, HITItem, Worker


def expire_stale_assignments(now: datetime | None = None) -> int:
    """Mark accepted assignments past their time limit expired, freeing their seat. Returns how many.

    Run before every claim (holding no lock), so the common case (nothing lapsed) is one read of
    the partial index `assignment_live_expiry`. Lapsed rows are locked in id order before they
    change. A row another transaction holds is waited for, not skipped: when that one is another
    claim's expiry, the row is re-checked after it commits and left out (it is expired), so each
    freed seat is counted once however many claims run this at the same time, and this claim's
    search then sees the seat it freed. (Skipping it let a claim answer "no HIT left" while a
    seat was being freed.) An answer or submission holds the row for milliseconds and changes no
    seat.
    """
    now = now or timezone.now()
    lapsed = Assignment.objects.filter(status=Assignment.ACCEPTED, expires_at__lte=now)
    if not lapsed.exists():
        return 0
    with transaction.atomic():
        locked = list(lapsed.select_for_update().order_by("pk").values_list("pk", "hit_id"))
        Assignment.objects.filter(pk__in=[pk for pk, _ in locked]).update(status=Assignment.EXPIRED)
        seats.free(hit_id for _, hit_id in locked)
    return len(locked)


def live_assignment(worker: Worker, campaign: Campaign | None = None) -> Assignment | None:
    """The worker's accepted, unexpired assignment in an open campaign, if any."""
    assignments = Assignment.objects.live().filter(worker=worker, hit__campaign__status=Campaign.OPEN)
    if campaign is not None:
        assignments = assignments.filter(hit__campaign=campaign)
    return assignments.select_related("hit__campaign").order_by("accepted_at").first()


def claim_next_hit(
    worker: Worker, campaign: Campaign | None = None, *, prefer_hit_id: int | None = None
) -> Assignment | None:
    """Give the worker a seat on a HIT: their live assignment if they have one (in whichever open
    campaign), else a new one on the first open HIT (of `campaign`, when given) with a free seat
    that they have never held, `prefer_hit_id` first when it has one (the HIT a platform offered
    them). None when nothing is left, the worker is blocked, or the campaign is not open.

    The HIT is found by one indexed SELECT ... FOR UPDATE SKIP LOCKED on the free-seat count
    (labeling.seats); its seats are counted again under the lock before one is taken.
    """
    if worker.is_blocked or (campaign is not None and campaign.status != Campaign.OPEN):
        return None
    expire_stale_assignments()
    with transaction.atomic():
        # One claim at a time per worker, so a double click cannot take two HITs.
        locked_worker = Worker.objects.select_for_update().get(pk=worker.pk)
        if locked_worker.is_blocked:
            return None
        # One live HIT per worker across campaigns: finish (or let expire) the current one first.
        existing = live_assignment(locked_worker)
        if existing is not None:
            return existing
        hit = _lock_hit_with_free_seat(locked_worker, campaign, prefer_hit_id)
        if hit is None:
            return None
        minutes = hit.campaign.time_limit_minutes
        return Assignment.objects.create(
            hit=hit,
            worker=locked_worker,
            expires_at=timezone.now() + timedelta(minutes=minutes),
            seat=seats.slot_for_new_seat(hit.pk),  # under the HIT's row lock, taken above
        )


def open_hits_for(worker: Worker, campaign: Campaign | None, *, now: datetime | None = None):
    """The HITs the worker may claim, in claim order: open campaign, a free seat by the count,
    never held by this worker, no dialogue they hold elsewhere, no quiz item they have seen.
    Each exclusion is a NOT EXISTS probe of the candidate HIT's own rows (indexed by hit), so
    taking the first one reads the index `hit_free_seats` up to it and no further."""
    # never two seats of one item: a dialogue the worker already holds in another HIT (a tie-break
    # HIT, or the same dialogue bundled twice) keeps every HIT with it closed to them
    held_turns = HITItem.objects.filter(
        hit__in=Assignment.objects.holding_a_seat(now).filter(worker=worker).values("hit"),
        quiz_question__isnull=True,
        target_turn__isnull=False,
    ).values("target_turn_id")
    hits = HIT.objects.filter(campaign__status=Campaign.OPEN, seats_free__gt=0)
    if campaign is not None:
        hits = hits.filter(campaign=campaign)
    return hits.filter(
        ~Exists(Assignment.objects.filter(hit=OuterRef("pk"), worker=worker)),
        ~Exists(HITItem.objects.filter(hit=OuterRef("pk"), target_turn_id__in=held_turns)),
        # no quiz item twice
        ~Exists(HITItem.objects.filter(hit=OuterRef("pk"), quiz_question__in=quiz_pool.seen_by(worker))),
        qualification.claimable_q(worker),  # a campaign's qualification quiz first, paid HITs after a pass
    ).order_by("campaign_id", "position", "pk")


class _HitFull(Exception):
    def __init__(self, hit_id: int) -> None:
        super().__init__(hit_id)
        self.hit_id = hit_id


def _lock_hit_with_free_seat(worker: Worker, campaign: Campaign | None, prefer_hit_id: int | None = None) -> HIT | None:
    """Lock the first claimable HIT row, count its seats again and take one (the count in the
    row may be too high after a hand edit, see labeling.seats). Locked rows are skipped so
    concurrent claimers spread over HITs; only when every candidate is locked does a claimer
    wait for one.

    Each try runs in a savepoint that is rolled back when the HIT turns out full, which lets go
    of its lock: a claimer that waits then holds no HIT lock, so two claimers cannot deadlock.
    A HIT found full gets its true count written after that rollback.
    """
    if prefer_hit_id is None and fast_path.enabled():
        # the common claim: the search compiled once per process (fast_path.ClaimSearch)
        try:
            with transaction.atomic():
                hit = _CLAIM_SEARCH.first(worker, campaign, skip_locked=True) or _CLAIM_SEARCH.first(
                    worker, campaign, skip_locked=False
                )
                if hit is None:
                    return None
                if _take_seat(hit):
                    return hit
                raise _HitFull(hit.pk)
        except _HitFull as full:
            seats.recount(HIT.objects.filter(pk=full.hit_id))
            return _lock_hit_with_free_seat_by_orm(worker, campaign, None, [full.hit_id])
    return _lock_hit_with_free_seat_by_orm(worker, campaign, prefer_hit_id, [])


def _take_seat(hit: HIT) -> bool:
    """Count the locked HIT's seats again; if one is free, write the count less the seat taken
    now (the true figure: repairs a count a hand edit left high) and say so."""
    taken = _seats_taken(hit)
    if taken >= hit.required_workers:
        return False
    hit.seats_free = hit.required_workers - taken - 1
    seats.set_free(hit.pk, hit.seats_free)
    return True


def _lock_hit_with_free_seat_by_orm(
    worker: Worker, campaign: Campaign | None, prefer_hit_id: int | None, checked: list[int]
) -> HIT | None:
    """The search through the ORM: every claim with the fast path off; with it on, a platform's
    preferred HIT and the search after a HIT turned out full."""
    candidates = open_hits_for(worker, campaign)
    if prefer_hit_id is not None:
        first = Case(When(pk=prefer_hit_id, then=Value(0)), default=Value(1), output_field=IntegerField())
        candidates = candidates.order_by(first, "campaign_id", "position", "pk")
    for _attempt in range(10):
        try:
            with transaction.atomic():
                # the campaign comes along (unlocked: of=self) for the time limit; no second read
                remaining = candidates.exclude(pk__in=checked).select_related("campaign")
                hit = remaining.select_for_update(skip_locked=True, of=("self",)).first()
                if hit is None:
                    hit = remaining.select_for_update(of=("self",)).first()
                if hit is None:
                    return None
                if not _take_seat(hit):
                    raise _HitFull(hit.pk)
                return hit
        except _HitFull as full:
            checked.append(full.hit_id)
            seats.recount(HIT.objects.filter(pk=full.hit_id))
    return None


def _seats_taken(hit: HIT) -> int:
    return seats.taken(hit.pk)


_CLAIM_SEARCH = fast_path.ClaimSearch(open_hits_for)


def open_hit_count(worker: Worker, campaign: Campaign | None) -> int:
    """How many HITs the worker may claim (of `campaign`, when given): open_hits_for's count
    (the home page asks it for every open campaign; with the fast path on, by SQL compiled once)."""
    if fast_path.enabled():
        return _CLAIM_SEARCH.count(worker, campaign)
    return open_hits_for(worker, campaign).count()
